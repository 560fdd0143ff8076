"""One local file read, whatever it holds: a build-cache index (plain, gzipped, or the
blob a v3 manifest names), a spec file, an older cache.spack.io page, or a cache.spack.io
summary. Every file that cannot be loaded becomes a LoadProblem naming the file and the
reason; the rest still loads.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cachetui.model import LoadProblem
from cachetui.sources.clearsign import strip_clearsign
from cachetui.sources.database import DatabaseFile, NotADatabase, read_database
from cachetui.sources.discover import os_reason
from cachetui.sources.mirror import Origin, index_blob_of, origin_of, spec_blob_of
from cachetui.sources.sniff import SNIFF_BYTES, gunzipped_head, kind_of
from cachetui.sources.specfile import read_old_page, read_spec_file, read_spec_yaml
from cachetui.sources.summary import (
    NotASummary,
    OlderPage,
    SummaryFile,
    read_summary,
    read_summary_bytes,
)

Loaded = SummaryFile | DatabaseFile

# A cache.spack.io summary of the biggest package is a few MB; anything far larger is
# not one, and reading it whole could exhaust memory on a small build host.
MAX_FILE_BYTES = 256 * 1024 * 1024
# A build cache's index of a million specs is over a gigabyte.
MAX_DATABASE_BYTES = 8 * 1024**3


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
            head = handle.read(SNIFF_BYTES)
            kind = kind_of(head)
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
                data = head if len(head) < SNIFF_BYTES else (handle.seek(0), handle.read())[1]
    except OSError as error:
        return None, [LoadProblem(name, os_reason(error))]
    if kind == "gzip":
        data, problem = _inflated(path, name)
        if problem is not None:
            return None, [problem]
        kind = kind_of(data[:SNIFF_BYTES])
    if not data or data.isspace():  # (strip() would copy the whole file)
        return None, [LoadProblem(name, "empty file")]
    if kind == "clearsigned":
        data = strip_clearsign(data)
        kind = kind_of(data[:SNIFF_BYTES])
    if data[:3] == b"\xef\xbb\xbf" and kind != "text":
        data = data[3:]  # a byte-order mark before JSON
    return _read_as(kind, data, path, origin, name)


def _inflated(path: str, name: str) -> tuple[bytes, LoadProblem | None]:
    """A gzip file's data, inflated; or why it is not read."""
    # Inflated whole only if its first bytes are a build-cache document: a directory
    # of tarballs (build_cache/, a downloads folder) must not be decompressed to learn
    # that it holds none.
    inner = kind_of(gunzipped_head(path))
    if inner not in ("database", "manifest", "spec manifest", "spec file", "clearsigned"):
        return b"", LoadProblem(
            name, "gzip data, but not a Spack build-cache index, manifest or spec file"
        )
    from cachetui.sources.fetch import (
        FetchError,
        read_body,
    )  # (urllib and ssl: only when needed)

    try:
        return read_body(Path(path), name, MAX_DATABASE_BYTES), None
    except FetchError as error:
        return b"", LoadProblem(name, error.reason)


def _read_as(
    kind: str, data: bytes, path: str, origin: Origin | None, name: str
) -> tuple[Loaded | None, list[LoadProblem]]:
    """The file's data read by the reader its kind names (a summary or an older page when
    none does)."""
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


_NOT_KNOWN_JSON = (
    "JSON, but not a Spack build-cache index, spec file, index or spec manifest, or tag map"
)


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
