"""The on-disk index: a snapshot of a built Index, so the next start skips the sources.

Format (no pickle, so a tampered file cannot run code):
    MAGIC, the header's length, a JSON header (the sources, the stamps of every file and
    directory read, the load problems, small tables, the layout of the sections), then
    the sections, each aligned to 64 bytes, then a CRC-32 of it all.
Every column, string table and list is a section: an array, or a blob of bytes. The file
is memory-mapped and the sections used where they lie; nothing is decoded per row, and a
string (a source path, a variant, a tarball URL) is decoded only when something reads it.
A snapshot is used only when its magic, format version and checksum are right, every
stamp still matches (so no source was edited, added, removed or renamed; checking takes
a stat per path, no directory listing) and every code, offset and length in it is in
range; anything else is rebuilt from the sources. The stamps are checked before the
checksum, so a stale snapshot costs no read of its sections.
It is written to a temporary file and renamed into place, so concurrent writers cannot
leave a torn file behind, and a running app keeps reading the file it mapped.
What the sections are and how they are checked as they are read: snapshot_sections.py.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from cachetui import __version__
from cachetui.index.graph import GraphParts
from cachetui.index.snapshot_sections import (
    graph_header,
    graph_parts,
    graph_sections,
    index_parts,
    index_sections,
    is_blob,
)
from cachetui.index.store import Index
from cachetui.model import LoadProblem
from cachetui.sources import Stamp, stamp_of

MAGIC = b"CACHETUI-INDEX\n"
# 2: per-package facet histograms; 3: package ids fixed for mixed-case names; 4: dependency
# graph; 5: mapped, every string table and per-row string a section (tarball URLs, sizes);
# 6: multi-valued variants of index records written `name:=a,b`, as Spack prints them;
# 7: values quoted and multi-valued ones sorted as Spack prints them, the spec file a v2
# mirror holds, installed specs a kind of their own.
FORMAT = 7
_DIGEST = 4  # CRC-32 of the rest: catches damage and truncation (tampering is caught by validation)
_ALIGN = 64


class SnapshotError(Exception):
    """The snapshot is absent, stale, foreign or damaged: rebuild from the sources."""


class GraphError(Exception):
    """The dependency graph could not be read from the snapshot (str() says why)."""


class NeedsRevalidation(SnapshotError):
    """Built from fetched files: usable only once the fetches say nothing changed."""


class NoSnapshotYet(SnapshotError):
    """No on-disk index for these sources yet: the usual first start, nothing to report."""


class SourcesChanged(SnapshotError):
    """A source was edited, added, removed or renamed since it was written (or its fetches
    said something new): the usual reason to rebuild, nothing to report."""


def snapshot_path(cache_dir: Path, sources: list[str]) -> Path:
    key = hashlib.blake2b(
        "\0".join(os.path.abspath(s) for s in sources).encode("utf-8", "surrogateescape"),
        digest_size=12,
    ).hexdigest()
    return cache_dir / f"index-{key}.cachetui"


def save(
    path: Path,
    index: Index,
    problems: list[LoadProblem],
    sources: list[str],
    stamps: list[Stamp],
    files: int,
    fetched: bool = False,
    read: list[str] | None = None,
) -> None:
    """Write atomically (temp file, then rename). Raises OSError when the disk says no.

    The dependency graph goes in a file of its own beside it, read only when something
    asks for dependencies: `stats`, `search` and `lookup` never pay for it."""
    parts = index.parts
    sections = index_sections(parts)
    graph = index.graph.parts
    token = os.urandom(8).hex() if graph.n_nodes else None  # pairs this file with its graph file
    if token is not None:
        _write(
            _graph_path(path),
            {"format": FORMAT, "token": token, "rows": index.n_specs, **graph_header(graph)},
            graph_sections(graph),
        )
    header = {
        "format": FORMAT,
        "cachetui": __version__,
        "sources": [os.path.abspath(s) for s in sources],
        "stamps": stamps,
        "files": files,
        "fetched": fetched,
        "read": read,  # the files read, once resolved (for fetched sources: the downloads)
        "rows": index.n_specs,
        "stack_names": parts.stack_names,
        "facet_values": parts.facet_values,
        "problems": [[p.source, p.message, p.severity] for p in problems],
        "origins": parts.origins,
        "graph_token": token,
    }
    _write(path, header, sections)


def _graph_path(path: Path) -> Path:
    return path.with_name(path.name + ".graph")


def _write(path: Path, header: dict[str, Any], sections: list[tuple[str, Any]]) -> None:
    """MAGIC, the header's length, the header, the sections (numpy arrays, or bytes-like
    blobs), each at a multiple of 64 bytes from the start of the file, then the CRC-32."""
    layout, payload = [], []
    for name, data in sections:
        if isinstance(data, np.ndarray):
            # .data: the array's bytes as a memoryview (as memoryview(array) gives them)
            dtype, raw = data.dtype.str, np.ascontiguousarray(data).reshape(-1).view(np.uint8).data
        else:
            dtype, raw = "bytes", memoryview(data).cast("B")
        layout.append({"name": name, "dtype": dtype, "length": len(raw)})
        payload.append(raw)
    # Offsets depend on the header's length, which depends on the offsets: lay the sections
    # out after a header with room for them, then pad the header to that room.
    room, head = 0, b""
    while len(MAGIC) + 8 + len(head) > room:  # twice at most: offsets take a few more digits
        room = _aligned(len(MAGIC) + 8 + len(head) + 24 * len(layout) + 64)
        offset = room
        for entry in layout:
            entry["offset"] = offset
            offset = _aligned(offset + entry["length"])
        head = json.dumps({**header, "layout": layout}, ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    head += b" " * (room - len(MAGIC) - 8 - len(head))
    crc = 0
    piece: bytes | memoryview
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            written = 0
            for piece in (MAGIC, len(head).to_bytes(8, "little"), head):
                crc = zlib.crc32(piece, crc)
                written += out.write(piece)
            for entry, raw in zip(layout, payload):
                gap = b"\0" * (entry["offset"] - written)
                for piece in (gap, raw):
                    crc = zlib.crc32(piece, crc)
                    written += out.write(piece)
            out.write(crc.to_bytes(_DIGEST, "little"))
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


class _Mapped:
    """A snapshot file, mapped: its header at once, its sections once asked for."""

    def __init__(self, path: Path) -> None:
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < len(MAGIC) + 8 + _DIGEST:
                    raise SnapshotError("not a cachetui index (or truncated)")
                self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise NoSnapshotYet("no on-disk index yet") from None
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise SnapshotError(f"cannot read it: {reason}") from None
        data = self.data
        if data[: len(MAGIC)] != MAGIC:
            raise SnapshotError("not a cachetui index (or truncated)")
        start = len(MAGIC) + 8
        head_length = int.from_bytes(data[len(MAGIC) : start], "little")
        if head_length > len(data) - start - _DIGEST:
            raise SnapshotError("not a cachetui index (or truncated)")
        try:
            header = json.loads(data[start : start + head_length])
        except (ValueError, UnicodeDecodeError):
            self.check()  # a damaged file says so; a well-formed one with a bad header is foreign
            raise SnapshotError("unreadable header") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise SnapshotError("written by another version of cachetui")
        self.header: dict[str, Any] = header

    def check(self) -> None:
        """The checksum over the whole file: damage anywhere, or a truncation."""
        body = memoryview(self.data)[:-_DIGEST]
        try:
            if zlib.crc32(body).to_bytes(_DIGEST, "little") != self.data[-_DIGEST:]:
                raise SnapshotError("damaged or truncated (checksum mismatch)")
        finally:
            body.release()

    def sections(self) -> dict[str, Any]:
        """name -> a read-only numpy array, or a memoryview for a blob; each checked to lie in
        the file and to be of the kind its name says (a forged kind would crash later)."""
        view = memoryview(self.data)
        end = len(self.data) - _DIGEST
        pieces: dict[str, Any] = {}
        try:
            for entry in self.header["layout"]:
                name, offset, length = (
                    str(entry["name"]),
                    int(entry["offset"]),
                    int(entry["length"]),
                )
                if offset < 0 or length < 0 or offset + length > end:
                    raise ValueError(f"{name} lies outside the file")
                if (entry["dtype"] == "bytes") != is_blob(name):
                    raise ValueError(f"{name} holds the wrong kind of data")
                if entry["dtype"] == "bytes":
                    pieces[name] = view[offset : offset + length]
                else:
                    dtype = np.dtype(entry["dtype"])
                    if dtype.kind not in "iub" or length % dtype.itemsize:
                        raise ValueError(f"{name} is not an array of integers")
                    pieces[name] = np.frombuffer(
                        self.data, dtype=dtype, count=length // dtype.itemsize, offset=offset
                    )
        except (KeyError, TypeError, ValueError) as error:
            raise SnapshotError(f"inconsistent contents ({error})") from None
        return pieces


def load(
    path: Path,
    sources: list[str],
    revalidated: bool = False,
    files: list[str] | None = None,
    problems: list[LoadProblem] | None = None,
) -> tuple[Index, list[LoadProblem], int]:
    """The Index saved at `path` for exactly these sources, unchanged since (every file and
    directory stamp still the same), or SnapshotError saying why not. Once the sources were
    resolved (URLs fetched), also the same `files`, and every resolve problem among the
    snapshot's (a 404 that was not there before is news)."""
    mapped = _Mapped(path)
    header = mapped.header
    if header.get("cachetui") != __version__:
        raise SnapshotError("written by another version of cachetui")
    if header.get("fetched") and not revalidated:
        raise NeedsRevalidation("built from fetched files")
    if header.get("sources") != [os.path.abspath(s) for s in sources] or not _unchanged(
        header.get("stamps")
    ):
        raise SourcesChanged("the sources changed since it was written")
    if files is not None and header.get("read") != files:
        raise SourcesChanged("the sources changed since it was written")
    try:
        saved = [LoadProblem(str(s), str(m), str(v)) for s, m, v in header["problems"]]
    except (KeyError, TypeError, ValueError) as error:
        raise SnapshotError(f"inconsistent contents ({error})") from None
    if problems and any(p not in saved for p in problems):
        raise SourcesChanged("the sources changed since it was written")
    mapped.check()
    try:
        parts = index_parts(header, mapped.sections())
        files_read = int(header["files"])
        token = header["graph_token"]
        rows = int(header["rows"])
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise SnapshotError(f"inconsistent contents ({error})") from None
    if token is None:
        return Index(parts), saved, files_read
    return Index(parts, graph_loader=lambda: _load_graph(path, str(token), rows)), saved, files_read


def _load_graph(path: Path, token: str, rows: int) -> GraphParts:
    """The graph file that belongs with the snapshot at `path`. On any fault the snapshot is
    removed (the next start rebuilds both) and GraphError says why."""
    try:
        mapped = _Mapped(_graph_path(path))
        header = mapped.header
        if header.get("token") != token or header.get("rows") != rows:
            raise SnapshotError("its dependency file belongs to another snapshot")
        mapped.check()
        pieces = mapped.sections()
        try:
            return graph_parts(header, pieces, rows)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise SnapshotError(f"dependency file inconsistent ({error})") from None
    except SnapshotError as why:
        try:
            path.unlink()
        except OSError:
            pass
        raise GraphError(
            f"dependency data in the on-disk index not readable ({why}); "
            "it is rebuilt at the next start"
        ) from None


def _unchanged(stamps: Any) -> bool:
    if not isinstance(stamps, list):
        return False
    try:
        return all(
            stamp_of(path) == (path, size, mtime, ctime) for path, size, mtime, ctime in stamps
        )
    except (TypeError, ValueError):
        return False


# tests/unit/test_snapshot.py reads a mapped file's parts by the name this had here.
_parts = index_parts
