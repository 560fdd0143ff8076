"""The on-disk index: a snapshot of a built Index, so the next start skips the sources.

Format (no pickle, so a tampered file cannot run code):
    MAGIC, then a JSON header (tables, array layout, the stamps of every source, file and
    directory read, the load problems), then the raw arrays, then a CRC-32 of it all.
A snapshot is used only when its magic, format version and checksum are right, every
stamp still matches (so no source was edited, added, removed or renamed; checking takes
a stat per path, no directory listing) and every code in it is in range; anything else
is rebuilt from the sources.
It is written to a temporary file and renamed into place, so concurrent writers
cannot leave a torn file behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from cachetui import __version__
from cachetui.index.graph import GraphParts
from cachetui.index.store import Index, IndexParts
from cachetui.model import FACETS, LoadProblem
from cachetui.sources import Stamp, stamp_of

MAGIC = b"CACHETUI-INDEX\n"
FORMAT = 4  # 2: per-package facet histograms; 3: package ids fixed for mixed-case names; 4: dependency graph
_DIGEST = 4  # CRC-32 of the rest: catches damage and truncation (tampering is caught by validation)
_ARRAYS = ("starts", "hash_order")
_GRAPH_ARRAYS = ("name_codes", "version_codes", "compiler_codes", "kinds", "compiler_sources", "edge_starts", "edge_to",
                 "edge_types", "edge_virtuals", "reverse_starts", "reverse_edges", "row_nodes")


class SnapshotError(Exception):
    """The snapshot is absent, stale, foreign or damaged: rebuild from the sources."""


class GraphError(Exception):
    """The dependency graph could not be read from the snapshot (str() says why)."""


class NeedsRevalidation(SnapshotError):
    """Built from fetched files: usable only once the fetches say nothing changed."""


def snapshot_path(cache_dir: Path, sources: list[str]) -> Path:
    key = hashlib.blake2b("\0".join(os.path.abspath(s) for s in sources).encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    return cache_dir / f"index-{key}.cachetui"


def save(path: Path, index: Index, problems: list[LoadProblem], sources: list[str], stamps: list[Stamp], files: int,
         fetched: bool = False, read: list[str] | None = None) -> None:
    """Write atomically (temp file, then rename). Raises OSError when the disk says no.

    The dependency graph goes in a file of its own beside it, read only when something
    asks for dependencies: `stats`, `search` and `lookup` never pay for it."""
    parts = index.parts
    arrays: list[tuple[str, np.ndarray]] = [("starts", parts.starts), ("hash_order", parts.hash_order)]
    arrays += [(f"codes.{c}", a) for c, a in parts.codes.items()]
    arrays += [(f"histogram.{f}", parts.facet_histograms[f]) for f in FACETS]
    blobs: list[tuple[str, bytes]] = [("hashes", parts.hash_blob)]
    blobs += [(f"bits.{f}.{i}", b) for f in FACETS for i, b in enumerate(parts.facet_bits[f])]
    graph = index.graph.parts
    token = os.urandom(8).hex() if graph.n_nodes else None  # pairs this file with its graph file
    if token is not None:
        _write(_graph_path(path), {"format": FORMAT, "token": token, "rows": index.n_specs, **_graph_header(graph)},
               [(f"graph.{name}", getattr(graph, name)) for name in _GRAPH_ARRAYS], [("graph.node_hashes", graph.node_hashes)])
    header = {
        "format": FORMAT,
        "cachetui": __version__,
        "sources": [os.path.abspath(s) for s in sources],
        "stamps": stamps,
        "files": files,
        "fetched": fetched,
        "read": read,  # the files read, once resolved (for fetched sources: the downloads)
        "rows": index.n_specs,
        "packages": parts.packages,
        "values": parts.values,
        "stack_names": parts.stack_names,
        "stacksets": parts.stacksets,
        "variantsets": parts.variantsets,
        "sizes": [[r, s] for r, s in parts.sizes.items()],
        "tarballs": [[r, t] for r, t in parts.tarballs.items()],
        "facet_values": parts.facet_values,
        "problems": [[p.source, p.message, p.severity] for p in problems],
        "origins": parts.origins,
        "graph_token": token,
    }
    _write(path, header, arrays, blobs)


def _graph_header(graph: GraphParts) -> dict[str, Any]:
    return {"names": graph.names, "versions": graph.versions, "compilers": graph.compilers, "virtual_sets": graph.virtual_sets,
            "external_paths": [[n, p] for n, p in graph.external_paths.items()]}


def _graph_path(path: Path) -> Path:
    return path.with_name(path.name + ".graph")


def _write(path: Path, header: dict[str, Any], arrays: list[tuple[str, np.ndarray]], blobs: list[tuple[str, bytes]]) -> None:
    layout, payload, offset = [], [], 0
    for name, array in arrays:
        data = np.ascontiguousarray(array).tobytes()
        layout.append({"name": name, "dtype": array.dtype.str, "offset": offset, "length": len(data)})
        payload.append(data)
        offset += len(data)
    for name, data in blobs:
        layout.append({"name": name, "dtype": "bytes", "offset": offset, "length": len(data)})
        payload.append(data)
        offset += len(data)
    head = json.dumps({**header, "layout": layout}, ensure_ascii=False).encode("utf-8")
    crc = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for piece in (MAGIC, len(head).to_bytes(8, "little"), head, *payload):
                crc = zlib.crc32(piece, crc)
                out.write(piece)
            out.write(crc.to_bytes(_DIGEST, "little"))
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, pieces by name) of a file `_write` wrote; SnapshotError if it is not one."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SnapshotError("no on-disk index yet") from None
    except OSError as error:
        raise SnapshotError(f"cannot read it: {error.strerror or error}") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 8 + _DIGEST:
        raise SnapshotError("not a cachetui index (or truncated)")
    body, digest = memoryview(data)[:-_DIGEST], data[-_DIGEST:]
    if zlib.crc32(body).to_bytes(_DIGEST, "little") != digest:
        raise SnapshotError("damaged or truncated (checksum mismatch)")
    start = len(MAGIC) + 8
    head_length = int.from_bytes(data[len(MAGIC) : start], "little")
    try:
        header = json.loads(data[start : start + head_length])
    except ValueError:
        raise SnapshotError("unreadable header") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SnapshotError("written by another version of cachetui")
    payload = body[start + head_length :]
    pieces: dict[str, Any] = {}
    try:
        for entry in header["layout"]:
            offset, length = int(entry["offset"]), int(entry["length"])
            if offset < 0 or length < 0 or offset + length > len(payload):
                raise ValueError(f"{entry['name']} lies outside the file")
            raw = payload[offset : offset + length]
            is_blob = entry["name"] in ("hashes", "graph.node_hashes") or entry["name"].startswith("bits.")
            if (entry["dtype"] == "bytes") != is_blob:  # a forged kind would crash later, not be caught
                raise ValueError(f"{entry['name']} holds the wrong kind of data")
            pieces[entry["name"]] = bytes(raw) if entry["dtype"] == "bytes" else np.frombuffer(raw, dtype=np.dtype(entry["dtype"]))
    except (KeyError, TypeError, ValueError) as error:
        raise SnapshotError(f"inconsistent contents ({error})") from None
    return header, pieces


def load(path: Path, sources: list[str], revalidated: bool = False, files: list[str] | None = None,
         problems: list[LoadProblem] | None = None) -> tuple[Index, list[LoadProblem], int]:
    """The Index saved at `path` for exactly these sources, unchanged since (every file and
    directory stamp still the same), or SnapshotError saying why not. Once the sources were
    resolved (URLs fetched), also the same `files`, and every resolve problem among the
    snapshot's (a 404 that was not there before is news)."""
    header, pieces = _read(path)
    if header.get("cachetui") != __version__:
        raise SnapshotError("written by another version of cachetui")
    if header.get("fetched") and not revalidated:
        raise NeedsRevalidation("built from fetched files")
    if header.get("sources") != [os.path.abspath(s) for s in sources] or not _unchanged(header.get("stamps")):
        raise SnapshotError("the sources changed since it was written")
    if files is not None and header.get("read") != files:
        raise SnapshotError("the sources changed since it was written")
    try:
        saved = [LoadProblem(s, m, v) for s, m, v in header["problems"]]
    except (KeyError, TypeError, ValueError) as error:
        raise SnapshotError(f"inconsistent contents ({error})") from None
    if problems and any(p not in saved for p in problems):
        raise SnapshotError("the sources changed since it was written")
    problems = saved
    try:
        parts = _parts(header, pieces)
        files = int(header["files"])
        token = header["graph_token"]
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise SnapshotError(f"inconsistent contents ({error})") from None
    rows = int(header["rows"])
    if token is None:
        return Index(parts), problems, files
    return Index(parts, graph_loader=lambda: _load_graph(path, token, rows)), problems, files


def _load_graph(path: Path, token: str, rows: int) -> GraphParts:
    """The graph file that belongs with the snapshot at `path`. On any fault the snapshot is
    removed (the next start rebuilds both) and GraphError says why."""
    try:
        header, pieces = _read(_graph_path(path))
        if header.get("token") != token or header.get("rows") != rows:
            raise SnapshotError("its dependency file belongs to another snapshot")
        try:
            return _graph(header, pieces, rows)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise SnapshotError(f"dependency file inconsistent ({error})") from None
    except SnapshotError as why:
        try:
            path.unlink()
        except OSError:
            pass
        raise GraphError(f"dependency data in the on-disk index not readable ({why}); it is rebuilt at the next start") from None


def _graph(header: dict[str, Any], pieces: dict[str, Any], rows: int) -> GraphParts:
    """The dependency graph, every id and code checked to be in range."""
    graph = GraphParts(
        node_hashes=pieces["graph.node_hashes"], names=list(map(str, header["names"])), versions=list(map(str, header["versions"])),
        compilers=list(map(str, header["compilers"])), virtual_sets=[list(map(str, v)) for v in header["virtual_sets"]],
        external_paths={int(n): str(p) for n, p in header["external_paths"]},
        **{name: pieces[f"graph.{name}"] for name in _GRAPH_ARRAYS},
    )
    n, edges = graph.n_nodes, len(graph.edge_to)
    if len(graph.node_hashes) != 32 * n or len(graph.row_nodes) != rows:
        raise ValueError("graph nodes")
    limits = {"name_codes": (n, len(graph.names)), "version_codes": (n, len(graph.versions)), "compiler_codes": (n, len(graph.compilers)),
              "kinds": (n, 256), "compiler_sources": (n, 256), "edge_to": (edges, n), "edge_types": (edges, 256),
              "edge_virtuals": (edges, len(graph.virtual_sets)), "reverse_edges": (edges, edges)}
    for name, (length, limit) in limits.items():
        array = getattr(graph, name)
        if len(array) != length or (length and (int(array.min()) < 0 or int(array.max()) >= limit)):
            raise ValueError(f"graph {name} out of range")
    for name in ("edge_starts", "reverse_starts"):
        starts = getattr(graph, name)
        if len(starts) != n + 1 or starts[0] != 0 or starts[-1] != edges or (np.diff(starts) < 0).any():
            raise ValueError(f"graph {name}")
    if rows and (int(graph.row_nodes.min()) < -1 or int(graph.row_nodes.max()) >= n):
        raise ValueError("graph row_nodes")
    return graph


def _unchanged(stamps: Any) -> bool:
    if not isinstance(stamps, list):
        return False
    try:
        return all(stamp_of(path) == (path, size, mtime, ctime) for path, size, mtime, ctime in stamps)
    except (TypeError, ValueError):
        return False


def _parts(header: dict[str, Any], pieces: dict[str, Any]) -> IndexParts:
    rows = int(header["rows"])
    values = {c: list(map(str, v)) for c, v in header["values"].items()}
    codes = {name.split(".", 1)[1]: array for name, array in pieces.items() if name.startswith("codes.")}
    packages = list(map(str, header["packages"]))
    stack_names = list(map(str, header["stack_names"]))
    stacksets = [[int(s) for s in ss] for ss in header["stacksets"]]
    variantsets = [list(map(str, v)) for v in header["variantsets"]]
    starts, order = pieces["starts"], pieces["hash_order"]
    # Every code in range, so that a crafted file can never make the app index out of bounds.
    bounds = {**{c: len(values[c]) for c in values}, "package": len(packages), "stackset": len(stacksets), "variantset": len(variantsets)}
    for column, limit in bounds.items():
        array = codes[column]
        if len(array) != rows or (rows and (int(array.min()) < 0 or int(array.max()) >= limit)):
            raise ValueError(f"column {column} out of range")
    if len(starts) != len(packages) + 1 or starts[0] != 0 or starts[-1] != rows or (np.diff(starts) < 0).any():
        raise ValueError("package ranges")
    if len(order) != rows or (rows and not np.array_equal(np.bincount(order, minlength=rows), np.ones(rows, dtype=np.int64))):
        raise ValueError("hash order")
    if len(pieces["hashes"]) != 32 * rows or any(s < 0 or s >= len(stack_names) for ss in stacksets for s in ss):
        raise ValueError("hashes or stacks")
    facet_values = {f: list(map(str, v)) for f, v in header["facet_values"].items()}
    facet_bits = {f: [pieces[f"bits.{f}.{i}"] for i in range(len(facet_values[f]))] for f in FACETS}
    if any(len(b) != (rows + 7) // 8 for bits in facet_bits.values() for b in bits):
        raise ValueError("facet bitsets")
    histograms = {f: pieces[f"histogram.{f}"].astype(np.int32).reshape(len(packages), len(facet_values[f])) for f in FACETS}
    if any(h.size and int(h.min()) < 0 for h in histograms.values()):
        raise ValueError("facet histograms")
    return IndexParts(
        origins={str(k): [None if v[0] is None else str(v[0]), v[1] if v[1] in (2, 3) else None] for k, v in header["origins"].items()},
        packages=packages, starts=starts.astype(np.int64), values=values, codes=codes, stack_names=stack_names,
        stacksets=stacksets, variantsets=variantsets, hash_blob=pieces["hashes"], hash_order=order.astype(np.int32),
        sizes={int(r): int(s) for r, s in header["sizes"]}, tarballs={int(r): str(t) for r, t in header["tarballs"]},
        facet_values=facet_values, facet_bits=facet_bits, facet_histograms=histograms,
    )
