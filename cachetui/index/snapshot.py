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
from cachetui.index.store import TEXT_COLUMNS, Index, IndexParts
from cachetui.index.strings import Ragged, StringTable
from cachetui.model import FACETS, LoadProblem
from cachetui.sources import Stamp, stamp_of
from cachetui.sources.mirror import SPEC_FILE_SUFFIXES

MAGIC = b"CACHETUI-INDEX\n"
# 2: per-package facet histograms; 3: package ids fixed for mixed-case names; 4: dependency
# graph; 5: mapped, every string table and per-row string a section (tarball URLs, sizes);
# 6: multi-valued variants of index records written `name:=a,b`, as Spack prints them;
# 7: values quoted and multi-valued ones sorted as Spack prints them, the spec file a v2
# mirror holds, installed specs a kind of their own.
FORMAT = 7
_DIGEST = 4  # CRC-32 of the rest: catches damage and truncation (tampering is caught by validation)
_ALIGN = 64
_GRAPH_ARRAYS = (
    "name_codes",
    "version_codes",
    "compiler_codes",
    "kinds",
    "compiler_sources",
    "edge_starts",
    "edge_to",
    "edge_types",
    "edge_virtuals",
    "reverse_starts",
    "reverse_edges",
    "row_nodes",
)


class SnapshotError(Exception):
    """The snapshot is absent, stale, foreign or damaged: rebuild from the sources."""


class GraphError(Exception):
    """The dependency graph could not be read from the snapshot (str() says why)."""


class NeedsRevalidation(SnapshotError):
    """Built from fetched files: usable only once the fetches say nothing changed."""


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
    sections: list[tuple[str, Any]] = [
        ("starts", parts.starts),
        ("hash_order", parts.hash_order),
        ("hashes", parts.hash_blob),
    ]
    sections += [(f"codes.{c}", a) for c, a in parts.codes.items()]
    sections += [(f"histogram.{f}", parts.facet_histograms[f]) for f in FACETS]
    sections += [(f"bits.{f}.{i}", b) for f in FACETS for i, b in enumerate(parts.facet_bits[f])]
    sections += _table("packages", StringTable.of(parts.packages)) + _table(
        "variant_tokens", parts.variant_tokens
    )
    sections += [
        (name, table) for c in TEXT_COLUMNS for name, table in _table(f"table.{c}", parts.values[c])
    ]
    sections += _ragged("stacksets", parts.stacksets) + _ragged("variantsets", parts.variantsets)
    if parts.sizes is not None:
        sections.append(("sizes", parts.sizes))
    graph = index.graph.parts
    token = os.urandom(8).hex() if graph.n_nodes else None  # pairs this file with its graph file
    if token is not None:
        _write(
            _graph_path(path),
            {"format": FORMAT, "token": token, "rows": index.n_specs, **_graph_header(graph)},
            [(f"graph.{name}", getattr(graph, name)) for name in _GRAPH_ARRAYS]
            + [("graph.node_hashes", graph.node_hashes)],
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


def _table(name: str, table: StringTable) -> list[tuple[str, Any]]:
    return [(f"{name}.offsets", table.offsets), (f"{name}.blob", table.blob)]


def _ragged(name: str, lists: Ragged) -> list[tuple[str, Any]]:
    return [(f"{name}.offsets", lists.offsets), (f"{name}.values", lists.values)]


def _graph_header(graph: GraphParts) -> dict[str, Any]:
    return {
        "names": graph.names,
        "versions": graph.versions,
        "compilers": graph.compilers,
        "virtual_sets": graph.virtual_sets,
        "external_paths": [[n, p] for n, p in graph.external_paths.items()],
    }


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
            raise SnapshotError("no on-disk index yet") from None
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
                if (entry["dtype"] == "bytes") != _is_blob(name):
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


def _is_blob(name: str) -> bool:
    return (
        name in ("hashes", "graph.node_hashes")
        or name.startswith("bits.")
        or name.endswith(".blob")
    )


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
        raise SnapshotError("the sources changed since it was written")
    if files is not None and header.get("read") != files:
        raise SnapshotError("the sources changed since it was written")
    try:
        saved = [LoadProblem(str(s), str(m), str(v)) for s, m, v in header["problems"]]
    except (KeyError, TypeError, ValueError) as error:
        raise SnapshotError(f"inconsistent contents ({error})") from None
    if problems and any(p not in saved for p in problems):
        raise SnapshotError("the sources changed since it was written")
    mapped.check()
    try:
        parts = _parts(header, mapped.sections())
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
            return _graph(header, pieces, rows)
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


def _graph(header: dict[str, Any], pieces: dict[str, Any], rows: int) -> GraphParts:
    """The dependency graph, every id and code checked to be in range."""
    graph = GraphParts(
        node_hashes=bytes(pieces["graph.node_hashes"]),
        names=list(map(str, header["names"])),
        versions=list(map(str, header["versions"])),
        compilers=list(map(str, header["compilers"])),
        virtual_sets=[list(map(str, v)) for v in header["virtual_sets"]],
        external_paths={int(n): str(p) for n, p in header["external_paths"]},
        **{name: pieces[f"graph.{name}"] for name in _GRAPH_ARRAYS},
    )
    n, edges = graph.n_nodes, len(graph.edge_to)
    if len(graph.node_hashes) != 32 * n or len(graph.row_nodes) != rows:
        raise ValueError("graph nodes")
    limits = {
        "name_codes": (n, len(graph.names)),
        "version_codes": (n, len(graph.versions)),
        "compiler_codes": (n, len(graph.compilers)),
        "kinds": (n, 256),
        "compiler_sources": (n, 256),
        "edge_to": (edges, n),
        "edge_types": (edges, 256),
        "edge_virtuals": (edges, len(graph.virtual_sets)),
        "reverse_edges": (edges, edges),
    }
    for name, (length, limit) in limits.items():
        array = getattr(graph, name)
        if len(array) != length or (length and (int(array.min()) < 0 or int(array.max()) >= limit)):
            raise ValueError(f"graph {name} out of range")
    for name in ("edge_starts", "reverse_starts"):
        starts = getattr(graph, name)
        if (
            len(starts) != n + 1
            or starts[0] != 0
            or starts[-1] != edges
            or (np.diff(starts) < 0).any()
        ):
            raise ValueError(f"graph {name}")
    if rows and (int(graph.row_nodes.min()) < -1 or int(graph.row_nodes.max()) >= n):
        raise ValueError("graph row_nodes")
    return graph


def _unchanged(stamps: Any) -> bool:
    if not isinstance(stamps, list):
        return False
    try:
        return all(
            stamp_of(path) == (path, size, mtime, ctime) for path, size, mtime, ctime in stamps
        )
    except (TypeError, ValueError):
        return False


def _parts(header: dict[str, Any], pieces: dict[str, Any]) -> IndexParts:
    """The Index's parts over the mapped sections, every code, offset and length checked,
    so that a crafted file can never make the app index out of bounds."""
    rows = int(header["rows"])
    stack_names = list(map(str, header["stack_names"]))
    packages = [str(p) for p in _string_table(pieces, "packages")]
    values = {c: _string_table(pieces, f"table.{c}") for c in TEXT_COLUMNS}
    variant_tokens = _string_table(pieces, "variant_tokens")
    stacksets = Ragged(pieces["stacksets.offsets"], pieces["stacksets.values"])
    stacksets.check(len(stack_names))
    variantsets = Ragged(pieces["variantsets.offsets"], pieces["variantsets.values"])
    variantsets.check(len(variant_tokens))
    codes = {
        name.split(".", 1)[1]: array for name, array in pieces.items() if name.startswith("codes.")
    }
    starts, order = pieces["starts"], pieces["hash_order"]
    bounds = {
        **{c: len(values[c]) for c in TEXT_COLUMNS},
        "package": len(packages),
        "stackset": len(stacksets),
        "variantset": len(variantsets),
    }
    for column, limit in bounds.items():
        array = codes[column]
        if len(array) != rows or (rows and (int(array.min()) < 0 or int(array.max()) >= limit)):
            raise ValueError(f"column {column} out of range")
    if (
        len(starts) != len(packages) + 1
        or starts[0] != 0
        or starts[-1] != rows
        or (np.diff(starts) < 0).any()
    ):
        raise ValueError("package ranges")
    if len(order) != rows or (
        rows
        and not np.array_equal(np.bincount(order, minlength=rows), np.ones(rows, dtype=np.int64))
    ):
        raise ValueError("hash order")
    if len(pieces["hashes"]) != 32 * rows:
        raise ValueError("hashes")
    sizes = pieces.get("sizes")
    if sizes is not None and (len(sizes) != rows or sizes.dtype != np.int64):
        raise ValueError("sizes")
    facet_values = {f: list(map(str, v)) for f, v in header["facet_values"].items()}
    facet_bits = {f: [pieces[f"bits.{f}.{i}"] for i in range(len(facet_values[f]))] for f in FACETS}
    if any(len(b) != (rows + 7) // 8 for bits in facet_bits.values() for b in bits):
        raise ValueError("facet bitsets")
    histograms = {
        f: pieces[f"histogram.{f}"]
        .astype(np.int32, copy=False)
        .reshape(len(packages), len(facet_values[f]))
        for f in FACETS
    }
    if any(h.size and int(h.min()) < 0 for h in histograms.values()):
        raise ValueError("facet histograms")
    return IndexParts(
        origins={
            str(k): [
                None if v[0] is None else str(v[0]),
                v[1] if v[1] in (2, 3) else None,
                v[2] if len(v) > 2 and v[2] in SPEC_FILE_SUFFIXES else None,
            ]
            for k, v in header["origins"].items()
        },
        packages=packages,
        starts=starts.astype(np.int64, copy=False),
        values=values,
        codes=codes,
        stack_names=stack_names,
        stacksets=stacksets,
        variant_tokens=variant_tokens,
        variantsets=variantsets,
        hash_blob=pieces["hashes"],
        hash_order=order.astype(np.int32, copy=False),
        sizes=sizes,
        facet_values=facet_values,
        facet_bits=facet_bits,
        facet_histograms=histograms,
    )


def _string_table(pieces: dict[str, Any], name: str) -> StringTable:
    table = StringTable(pieces[f"{name}.offsets"], pieces[f"{name}.blob"])
    if table.offsets.dtype != np.int64:
        raise ValueError(f"{name} offsets")
    table.check()
    return table
