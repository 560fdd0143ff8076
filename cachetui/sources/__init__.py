"""Turn SOURCE arguments into Spec records and LoadProblems.

A SOURCE is a file or a directory walked recursively. Files are recognised by their
content, never by their name. Every file that cannot be loaded becomes a LoadProblem
naming the file and the reason; the rest still loads.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cachetui.model import LoadProblem, Spec
from cachetui.sources.summary import NotASummary, read_summary

# A cache.spack.io summary of the biggest package is a few MB; anything far larger is
# not one, and reading it whole could exhaust memory on a small build host.
MAX_FILE_BYTES = 256 * 1024 * 1024


@dataclass
class LoadedFile:
    path: str
    specs: list[Spec] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)


# Progress callback: (files done, files found so far, specs loaded so far).
Progress = Callable[[int, int, int], None]


def discover(sources: list[str]) -> tuple[list[str], list[LoadProblem]]:
    """Every candidate file under `sources`, in a stable order, and the sources that are not there."""
    files: list[str] = []
    problems: list[LoadProblem] = []
    for source in sources:
        path = Path(source).expanduser()
        try:
            if path.is_dir():
                files.extend(_walk(path, problems))
            elif path.is_file():
                files.append(str(path))
            elif path.exists():
                problems.append(LoadProblem(source, "not a regular file or directory"))
            else:
                problems.append(LoadProblem(source, "no such file or directory"))
        except OSError as error:
            problems.append(LoadProblem(source, _os_reason(error)))
    return files, problems


def _walk(root: Path, problems: list[LoadProblem]) -> Iterator[str]:
    """Files below `root`, sorted, skipping hidden entries; safe against symlink loops."""
    seen: set[tuple[int, int]] = set()

    def on_error(error: OSError) -> None:
        problems.append(LoadProblem(error.filename or str(root), _os_reason(error)))

    for directory, subdirs, names in os.walk(root, onerror=on_error, followlinks=True):
        try:
            info = os.stat(directory)
        except OSError as error:
            on_error(error)
            subdirs[:] = []
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen:  # a symlink loop, or the same tree linked twice
            problems.append(LoadProblem(directory, "directory already visited (symlink loop?); skipped", "warning"))
            subdirs[:] = []
            continue
        seen.add(key)
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield os.path.join(directory, name)


def read_file(path: str) -> LoadedFile:
    """Load one file; never raises for bad content."""
    loaded = LoadedFile(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            loaded.problems.append(LoadProblem(path, "not a regular file (a pipe, socket or device?); skipped"))
            return loaded
        size = info.st_size
        if size > MAX_FILE_BYTES:
            loaded.problems.append(LoadProblem(path, f"file is {size:,} bytes, larger than the {MAX_FILE_BYTES:,}-byte limit; skipped"))
            return loaded
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        loaded.problems.append(LoadProblem(path, _os_reason(error)))
        return loaded
    if not data.strip():
        loaded.problems.append(LoadProblem(path, "empty file"))
        return loaded
    if b"\0" in data[:8192]:
        loaded.problems.append(LoadProblem(path, "binary file, not a cache.spack.io summary"))
        return loaded
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        loaded.problems.append(LoadProblem(path, f"not UTF-8 text (bad byte at offset {error.start})"))
        return loaded
    try:
        summary = read_summary(text, path, fallback_package=os.path.basename(os.path.dirname(path)))
    except NotASummary as reason:
        loaded.problems.append(LoadProblem(path, str(reason)))
    except RecursionError:
        loaded.problems.append(LoadProblem(path, "data is nested too deeply to read"))
    else:
        loaded.specs = summary.specs
        loaded.problems = summary.problems
        if not summary.specs and not summary.problems:
            loaded.problems.append(LoadProblem(path, "summary lists no specs", "warning"))
    return loaded


def load_files(files: list[str], progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> Iterator[LoadedFile]:
    """Read `files` in order, reporting progress about every 2% and on the last file."""
    step = max(1, len(files) // 50)
    specs = 0
    for done, path in enumerate(files, start=1):
        if cancelled is not None and cancelled():
            return
        loaded = read_file(path)
        specs += len(loaded.specs)
        yield loaded
        if progress is not None and (done % step == 0 or done == len(files)):
            progress(done, len(files), specs)


def _os_reason(error: OSError) -> str:
    return error.strerror.lower() if error.strerror else str(error)
