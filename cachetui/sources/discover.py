"""The walk: every candidate file under the SOURCE paths, and the stamps that tell whether
any of them changed since.

A SOURCE is a file or a directory walked recursively. Files are recognised later by their
content (sniff.py), never by their name, so the walk lists every file it meets, except in a
mirror root, where it takes the index alone.
"""

from __future__ import annotations

import os
import stat

from cachetui.model import LoadProblem
from cachetui.sources.mirror import MIRROR_DIRECTORIES, V2_INDEX, V3_INDEX, local_index

# What tells whether a path changed: (path, size, mtime_ns, ctime_ns). A directory's
# ctime moves whenever an entry is added, removed or renamed in it (or its mode changes),
# so the stamps of every file and directory seen tell whether a source tree changed
# without listing it again. A source that is missing is stamped (path, -1, 0, 0).
Stamp = tuple[str, int, int, int]
MISSING = -1
DIRECTORY = -2


def stamp_of(path: str) -> Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return (path, MISSING, 0, 0)
    size = DIRECTORY if stat.S_ISDIR(info.st_mode) else info.st_size
    return (path, size, info.st_mtime_ns, info.st_ctime_ns)


def discover(sources: list[str]) -> tuple[list[str], list[LoadProblem]]:
    """Every candidate file under `sources`, in a stable order, and the sources that are not
    there."""
    files, _, problems = discover_stamped(sources)
    return files, problems


def discover_stamped(sources: list[str]) -> tuple[list[str], list[Stamp], list[LoadProblem]]:
    """As `discover`, plus the stamps of every source, directory and file seen."""
    files: list[str] = []
    stamps: list[Stamp] = []
    problems: list[LoadProblem] = []
    for source in sources:
        path = os.path.expanduser(source)
        try:
            info = os.stat(path)
        except FileNotFoundError:
            stamps.append((path, MISSING, 0, 0))
            problems.append(LoadProblem(source, "no such file or directory"))
            continue
        except OSError as error:
            stamps.append((path, MISSING, 0, 0))
            problems.append(LoadProblem(source, os_reason(error)))
            continue
        if stat.S_ISDIR(info.st_mode):
            stamps.append((path, DIRECTORY, info.st_mtime_ns, info.st_ctime_ns))
            _walk(path, (info.st_dev, info.st_ino), files, stamps, problems)
        elif stat.S_ISREG(info.st_mode):
            files.append(path)
            stamps.append((path, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
        else:
            stamps.append((path, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
            problems.append(LoadProblem(source, "not a regular file or directory"))
    return files, stamps, problems


def _walk(
    root: str,
    root_key: tuple[int, int],
    files: list[str],
    stamps: list[Stamp],
    problems: list[LoadProblem],
) -> None:
    """Files below `root` (each directory's files, then its subdirectories, by name),
    skipping hidden entries; follows symlinks but never visits a directory twice."""
    seen = {root_key}
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(
                    (e for e in scan if not e.name.startswith(".")), key=lambda e: e.name
                )
        except OSError as error:
            problems.append(LoadProblem(directory, os_reason(error)))
            continue
        subdirs = []
        # (Asked only where a mirror's directory is listed: two failed stats a directory were
        # a third of the walk of a 10,000-package tree.)
        mirror = (
            local_index(directory)
            if any(e.name in ("v3", "build_cache") for e in entries)
            else None
        )
        if mirror is not None:
            # A mirror root: its index, not its tarballs, spec files or loose files; but its
            # other directories may be mirrors too (binaries.spack.io: <ref>/<stack>/).
            files.append(mirror[0])
            # Both layouts' index paths: a v3 index that appears later (in a v3/ the walk
            # does not enter) is seen by its stamp, without listing anything.
            stamps.extend(
                stamp_of(os.path.join(directory, *index.split("/")))
                for index in (V3_INDEX, V2_INDEX)
            )
            entries = [e for e in entries if e.name not in MIRROR_DIRECTORIES and e.is_dir()]
        for entry in entries:
            try:
                info = entry.stat()  # follows symlinks
            except OSError as error:
                problems.append(LoadProblem(entry.path, os_reason(error)))
                continue
            if stat.S_ISDIR(info.st_mode):
                key = (info.st_dev, info.st_ino)
                if key in seen:  # a symlink loop, or the same tree linked twice
                    problems.append(
                        LoadProblem(
                            entry.path,
                            "directory already visited (symlink loop?); skipped",
                            "warning",
                        )
                    )
                    continue
                seen.add(key)
                subdirs.append(entry.path)
                stamps.append((entry.path, DIRECTORY, info.st_mtime_ns, info.st_ctime_ns))
            else:
                files.append(entry.path)
                stamps.append((entry.path, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
        pending.extend(reversed(subdirs))


def os_reason(error: OSError) -> str:
    """An OSError as a problem says it (`permission denied`), without its errno and path."""
    return error.strerror.lower() if error.strerror else str(error)
