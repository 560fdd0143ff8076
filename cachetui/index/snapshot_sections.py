"""The sections of an on-disk index (snapshot.py writes and maps the file): what an Index's
parts and its dependency graph are saved as (arrays, or blobs of bytes, each named), and
those sections read back as parts, every code, offset and length checked first."""

from __future__ import annotations

from typing import Any

import numpy as np

from cachetui.index.graph import GraphParts
from cachetui.index.parts import TEXT_COLUMNS, IndexParts
from cachetui.index.strings import Ragged, StringTable
from cachetui.model import FACETS
from cachetui.sources.mirror import SPEC_FILE_SUFFIXES

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


def index_sections(parts: IndexParts) -> list[tuple[str, Any]]:
    """An Index's parts as sections: numpy arrays, or bytes-like blobs (see is_blob)."""
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
    return sections


def graph_sections(graph: GraphParts) -> list[tuple[str, Any]]:
    """The dependency graph's arrays and node hashes as sections."""
    return [(f"graph.{name}", getattr(graph, name)) for name in _GRAPH_ARRAYS] + [
        ("graph.node_hashes", graph.node_hashes)
    ]


def graph_header(graph: GraphParts) -> dict[str, Any]:
    """The dependency graph's tables (names, versions, ...): they go in its file's header."""
    return {
        "names": graph.names,
        "versions": graph.versions,
        "compilers": graph.compilers,
        "virtual_sets": graph.virtual_sets,
        "external_paths": [[n, p] for n, p in graph.external_paths.items()],
    }


def _table(name: str, table: StringTable) -> list[tuple[str, Any]]:
    return [(f"{name}.offsets", table.offsets), (f"{name}.blob", table.blob)]


def _ragged(name: str, lists: Ragged) -> list[tuple[str, Any]]:
    return [(f"{name}.offsets", lists.offsets), (f"{name}.values", lists.values)]


def is_blob(name: str) -> bool:
    """Whether the section `name` is a blob of bytes (else an array of integers)."""
    return (
        name in ("hashes", "graph.node_hashes")
        or name.startswith("bits.")
        or name.endswith(".blob")
    )


def graph_parts(header: dict[str, Any], pieces: dict[str, Any], rows: int) -> GraphParts:
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


def index_parts(header: dict[str, Any], pieces: dict[str, Any]) -> IndexParts:
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
        origins=_origins(header["origins"]),
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


def _origins(origins: dict[str, Any]) -> dict[str, list]:
    """source -> [mirror root, layout, v2 spec-file ending], each part as the builder can
    have written it, else None."""
    return {
        str(k): [
            None if v[0] is None else str(v[0]),
            v[1] if v[1] in (2, 3) else None,
            v[2] if len(v) > 2 and v[2] in SPEC_FILE_SUFFIXES else None,
        ]
        for k, v in origins.items()
    }


def _string_table(pieces: dict[str, Any], name: str) -> StringTable:
    table = StringTable(pieces[f"{name}.offsets"], pieces[f"{name}.blob"])
    if table.offsets.dtype != np.int64:
        raise ValueError(f"{name} offsets")
    table.check()
    return table
