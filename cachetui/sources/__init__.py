"""Turn SOURCE arguments into Spec records and LoadProblems.

A SOURCE is a file or a directory walked recursively. Files are recognised by their
content, never by their name. Every file that cannot be loaded becomes a LoadProblem
naming the file and the reason; the rest still loads.
"""

from __future__ import annotations

import gc
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cachetui.model import LoadProblem
from cachetui.sources.clearsign import strip_clearsign
from cachetui.sources.columns import ColumnChunk
from cachetui.sources.database import DatabaseFile, NotADatabase, looks_like_database, read_database
from cachetui.sources.mirror import (
    MIRROR_DIRECTORIES,
    V2_INDEX,
    V3_INDEX,
    Origin,
    index_blob_of,
    local_index,
    origin_of,
    spec_blob_of,
)
from cachetui.sources.nodes import NodeColumns
from cachetui.sources.specfile import (
    looks_like_spec_file,
    looks_like_spec_yaml,
    read_old_page,
    read_spec_file,
    read_spec_yaml,
)
from cachetui.sources.split import Plan
from cachetui.sources.summary import (
    NotASummary,
    OlderPage,
    SummaryFile,
    read_summary,
    read_summary_bytes,
)

Loaded = SummaryFile | DatabaseFile


@dataclass(frozen=True)
class SourceFile:
    """A local file to read, what its location says, and how to name it to the user."""

    path: str
    origin: Origin | None = None
    shown_as: str | None = None  # the URL it was fetched from; None: the path

    @property
    def name(self) -> str:
        return self.shown_as or self.path


# A cache.spack.io summary of the biggest package is a few MB; anything far larger is
# not one, and reading it whole could exhaust memory on a small build host.
MAX_FILE_BYTES = 256 * 1024 * 1024
# A build cache's index of a million specs is over a gigabyte.
MAX_DATABASE_BYTES = 8 * 1024**3


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
            problems.append(LoadProblem(source, _os_reason(error)))
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
            problems.append(LoadProblem(directory, _os_reason(error)))
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
                problems.append(LoadProblem(entry.path, _os_reason(error)))
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


def read_file(
    path: str, origin: Origin | None = None, shown: str | None = None
) -> tuple[Loaded | None, list[LoadProblem]]:
    """Load one file, whatever it holds (recognised by content); never raises for bad content.

    (what it holds or None, problems); problems name `shown` (the URL it came from) or the path.
    """
    name = shown or path
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None, [
                LoadProblem(name, "not a regular file (a pipe, socket or device?); skipped")
            ]
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
            kind = _kind_of(head)
            limit = (
                MAX_DATABASE_BYTES
                if kind in ("database", "manifest", "spec manifest", "gzip")
                else MAX_FILE_BYTES
            )
            if info.st_size > limit:
                return None, [
                    LoadProblem(
                        name,
                        f"file is {info.st_size:,} bytes, "
                        f"larger than the {limit:,}-byte limit; skipped",
                    )
                ]
            data = b""
            if kind != "gzip":  # read again from the start: `head + rest` would copy the whole file
                data = head if len(head) < _SNIFF_BYTES else (handle.seek(0), handle.read())[1]
    except OSError as error:
        return None, [LoadProblem(name, _os_reason(error))]
    if kind == "gzip":
        # Inflated whole only if its first bytes are a build-cache document: a directory
        # of tarballs (build_cache/, a downloads folder) must not be decompressed to learn
        # that it holds none.
        inner = _kind_of(_gunzipped_head(path))
        if inner not in ("database", "manifest", "spec manifest", "spec file", "clearsigned"):
            return None, [
                LoadProblem(
                    name, "gzip data, but not a Spack build-cache index, manifest or spec file"
                )
            ]
        from cachetui.sources.fetch import (
            FetchError,
            read_body,
        )  # (urllib and ssl: only when needed)

        try:
            data = read_body(Path(path), name, MAX_DATABASE_BYTES)
        except FetchError as error:
            return None, [LoadProblem(name, error.reason)]
        kind = _kind_of(data[:_SNIFF_BYTES])
    if not data or data.isspace():  # (strip() would copy the whole file)
        return None, [LoadProblem(name, "empty file")]
    if kind == "clearsigned":
        data = strip_clearsign(data)
        kind = _kind_of(data[:_SNIFF_BYTES])
    if data[:3] == b"\xef\xbb\xbf" and kind != "text":
        data = data[3:]  # a byte-order mark before JSON
    try:
        if kind == "database":
            return _database(read_database(data, name), name)
        if kind == "manifest":
            return _database(_read_index_manifest(data, path, origin, name), name)
        if kind == "spec file":
            return _database(read_spec_file(data, name), name)
        if kind == "spec manifest":
            return _database(_read_spec_manifest(data, path, origin, name), name)
        if kind == "spec yaml":
            return _database(read_spec_yaml(data, name), name)
        if kind == "tag map":
            return None, [
                LoadProblem(
                    name,
                    "a map of tags to stacks (cache_spack_io_index.json) found inside a directory; "
                    "name it as a SOURCE to load the indexes it lists",
                )
            ]
        if kind == "json":
            return None, [LoadProblem(name, _NOT_KNOWN_JSON)]
    except NotADatabase as reason:
        return None, [LoadProblem(name, str(reason))]
    except RecursionError:
        return None, [LoadProblem(name, "data is nested too deeply to read")]
    return _summary_or_page(data, path, name)


def _summary_or_page(data: bytes, path: str, name: str) -> tuple[Loaded | None, list[LoadProblem]]:
    if b"\0" in data[:8192]:
        return None, [LoadProblem(name, "binary file, not a cache.spack.io summary")]
    fallback = os.path.basename(os.path.dirname(path))
    summary = read_summary_bytes(data, name, fallback)
    if summary is not None and summary.records:
        return summary, summary.problems
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, [LoadProblem(name, f"not UTF-8 text (bad byte at offset {error.start})")]
    try:
        summary = read_summary(text, name, fallback_package=fallback)
    except OlderPage as page:
        try:
            return _database(read_old_page(page.front, path, page.tag), name)
        except NotADatabase as reason:
            return None, [LoadProblem(name, str(reason))]
    except NotASummary as reason:
        return None, [LoadProblem(name, str(reason))]
    except RecursionError:
        return None, [LoadProblem(name, "data is nested too deeply to read")]
    if not summary.records and not summary.problems:
        summary.problems.append(LoadProblem(name, "summary lists no specs", "warning"))
    return summary, summary.problems


def _database(db: DatabaseFile, name: str) -> tuple[DatabaseFile, list[LoadProblem]]:
    if not db.listed and not any(p.severity == "error" for p in db.problems):
        db.problems.append(LoadProblem(name, "lists no binaries", "warning"))
    return db, db.problems


def _gunzipped_head(path: str) -> bytes:
    """The first few KB of a gzip file, inflated (b"" if it cannot be)."""
    import zlib

    try:
        with open(path, "rb") as handle:
            return zlib.decompressobj(31).decompress(handle.read(64 * 1024), _SNIFF_BYTES)
    except (OSError, zlib.error):
        return b""


def _read_index_manifest(data: bytes, path: str, origin: Origin | None, name: str) -> DatabaseFile:
    """A local v3 index manifest: the database in the blob it names, under the mirror root."""
    body = _manifest_blob(data, path, origin, name, index_blob_of, "index", MAX_DATABASE_BYTES)
    return read_database(body, name)


def _read_spec_manifest(data: bytes, path: str, origin: Origin | None, name: str) -> DatabaseFile:
    """A local v3 spec manifest: the spec file in the blob it names, under the mirror root."""
    from cachetui.sources.specfile import MAX_SPEC_FILE_BYTES

    body = _manifest_blob(data, path, origin, name, spec_blob_of, "spec", MAX_SPEC_FILE_BYTES)
    return read_spec_file(body, name)


def _manifest_blob(
    data: bytes, path: str, origin: Origin | None, name: str, blob_of, kind: str, limit: int
) -> bytes:
    """The (inflated) blob a manifest names, from the mirror root its path is in."""
    root = (
        origin.root
        if origin is not None and origin.root is not None
        else origin_of(os.path.abspath(path)).root
    )
    if root is None:
        raise NotADatabase(
            f"a v3 {kind} manifest outside a mirror (no v3/manifests/{kind}/ above it): "
            "cannot find its blob"
        )
    from cachetui.sources.fetch import FetchError, read_body

    try:
        blob = os.path.join(root, *blob_of(data, name).split("/"))
        return read_body(Path(blob), blob, limit)
    except FetchError as error:
        raise NotADatabase(
            f"{error.reason}" if error.url == name else f"{error.url}: {error.reason}"
        ) from None


_SNIFF_BYTES = 4096


def _kind_of(head: bytes) -> str:
    """What a file holds, from its first bytes."""
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"-----BEGIN PGP SIGNED MESSAGE-----"):
        return "clearsigned"
    if not text.startswith(b"{"):
        return "spec yaml" if looks_like_spec_yaml(text) else "text"
    if looks_like_database(text):
        return "database"
    if looks_like_spec_file(text):
        return "spec file"
    if re.match(rb'\{\s*"(version|data)"\s*:', text) and b"application/vnd.spack.db" in text:
        return "manifest"
    if re.match(rb'\{\s*"(version|data)"\s*:', text) and b"application/vnd.spack.spec" in text:
        return "spec manifest"
    if re.match(rb'\{\s*"[^"]+"\s*:\s*\[\s*(\]|\{\s*"(label|url)")', text):
        return "tag map"
    return "json"


_NOT_KNOWN_JSON = (
    "JSON, but not a Spack build-cache index, spec file, index or spec manifest, or tag map"
)


def large_database(file: str | SourceFile) -> Plan | None:
    """How to read a file in parts (sources/split.py), when it is a large plain database, or
    a v3 index manifest whose blob is one; None for anything else (read whole)."""
    from cachetui.sources.split import SPLIT_BYTES, plan

    path, origin, shown = (
        (file, None, None) if isinstance(file, str) else (file.path, file.origin, file.shown_as)
    )
    try:
        size = os.stat(path).st_size
        if size < _SNIFF_BYTES and path.endswith("index.manifest.json"):  # a v3 index: its blob
            root = (
                origin.root
                if origin is not None and origin.root is not None
                else origin_of(os.path.abspath(path)).root
            )
            if root is None:
                return None
            with open(path, "rb") as handle:
                path = os.path.join(root, *index_blob_of(handle.read(), shown or path).split("/"))
            size = os.stat(path).st_size
        if size <= SPLIT_BYTES:
            return None
        with open(path, "rb") as handle:
            if not looks_like_database(handle.read(_SNIFF_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")):
                return None
    except (
        Exception
    ):  # an unreadable file, a manifest naming no blob: the whole-file reader says why
        return None
    return plan(path, file if isinstance(file, str) else file.name, size)


def read_large(
    plan_: Plan,
    source: str,
    origin: Origin | None,
    parts: list[NodeColumns],
    problems: list[LoadProblem],
) -> ColumnChunk:
    """One chunk from a large database's parts, read (in parts, by any process) as planned."""
    from cachetui.sources.database import version_problems
    from cachetui.sources.nodes import merge
    from cachetui.sources.split import version_text

    chunk = ColumnChunk()
    nodes = merge(parts)
    chunk.problems.extend(version_problems(version_text(plan_), plan_.name))
    chunk.problems.extend(problems)
    chunk.add_columns(nodes, source, origin)
    if not chunk.rows and not any(p.severity == "error" for p in chunk.problems):
        chunk.problems.append(LoadProblem(plan_.name, "lists no binaries", "warning"))
    return chunk


def read_batch(files: list[str | SourceFile]) -> ColumnChunk:
    """Read `files` into one chunk of columns (runs in a loader process, or in-process)."""
    chunk = ColumnChunk()
    with gc_paused():
        for file in files:
            path, origin, shown = (
                (file, None, None)
                if isinstance(file, str)
                else (file.path, file.origin, file.shown_as)
            )
            loaded, problems = read_file(path, origin, shown)
            if loaded is None:
                chunk.problems.extend(problems)
                chunk.files += 1
            elif isinstance(loaded, DatabaseFile):
                chunk.add_database(loaded, shown or path, origin)
            else:
                chunk.add(loaded, path)
    return chunk.seal()


@contextmanager
def gc_paused() -> Iterator[None]:
    """A load allocates millions of small containers and no cycles; the cyclic collector
    would walk them again and again (measured: it triples the parse time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _os_reason(error: OSError) -> str:
    return error.strerror.lower() if error.strerror else str(error)


# Loader processes, re-exported: the service reads through these names. An import cycle:
# parallel.py imports this package's readers (read_batch, read_large, large_database) back
# from it, inside its functions today; importing it last, once everything above is defined,
# keeps the cycle working wherever in parallel.py those imports go. The names are bound one by
# one because ruff's import sorting would split `import X as X` re-exports into five imports.
from cachetui.sources import parallel  # noqa: E402 (import cycle: parallel imports this package)

PARALLEL_MIN_FILES = parallel.PARALLEL_MIN_FILES
LoaderPool = parallel.LoaderPool
Progress = parallel.Progress
expect_many_files = parallel.expect_many_files
read_chunks = parallel.read_chunks
