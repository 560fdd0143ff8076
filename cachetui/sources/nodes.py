"""A database's nodes and edges in arrays: what the dependency graph is built from.

A node is a record of the database (a binary, an external, a spec not in the cache), or a
hash that one of its edges names and none of its records holds (UNRESOLVED: another file,
or another part of a large file read by another process, may hold it). Node columns are
codes into tables of distinct values; edges go from a node to a node. Compact to send from
a loader process (arrays and small tables), and merged with array look-ups
(index/graph.py), never a Python object per node or edge.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported when first needed (merge), not with this module
    from typing import TypeAlias

    import numpy as np

    # A column of ints: an array.array as a loader builds it, an ndarray once merge() put
    # several together (np.frombuffer reads either).
    IntColumn: TypeAlias = "array[int] | np.ndarray"

# The node columns: name, version, compiler (`gcc@13.2.0`, or "none"), platform, os,
# target, and the variants (a tuple of strings).
NODE_COLUMNS = ("name", "version", "compiler", "platform", "os", "target", "variants")


@dataclass
class NodeColumns:
    hashes: bytes = b""  # 32 ASCII bytes a node
    tables: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in NODE_COLUMNS})
    codes: dict[str, IntColumn] = field(
        default_factory=lambda: {c: array("i") for c in NODE_COLUMNS}
    )
    # BINARY, EXTERNAL, ... (database.py)
    kinds: IntColumn = field(default_factory=lambda: array("B"))
    compiler_sources: IntColumn = field(default_factory=lambda: array("B"))  # COMPILER_SOURCES
    # The node a c/cxx/fortran build edge leads to (its compiler), -1 where none: it names
    # the compiler once that node is known, which may be only when parts are put together.
    compiler_targets: IntColumn = field(default_factory=lambda: array("i"))
    external_paths: dict[int, str] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)  # node -> bytes, where a spec file says
    edge_from: IntColumn = field(default_factory=lambda: array("i"))
    edge_to: IntColumn = field(default_factory=lambda: array("i"))
    # BUILD | LINK | RUN | TEST bits
    edge_types: IntColumn = field(default_factory=lambda: array("B"))
    edge_virtuals: IntColumn = field(default_factory=lambda: array("i"))  # codes into virtual_sets
    virtual_sets: list[tuple[str, ...]] = field(default_factory=lambda: [()])

    @property
    def n_nodes(self) -> int:
        return len(self.hashes) // 32

    def value(self, column: str, node: int) -> Any:
        return self.tables[column][self.codes[column][node]]


def coded(values: Sequence[Any]) -> tuple[list[Any], array]:
    """(distinct values in order of first use, each value's code): look-ups in C."""
    table = list(dict.fromkeys(values))
    position = {v: i for i, v in enumerate(table)}
    return table, array("i", map(position.__getitem__, values))


# How much a record tells, by node kind (BINARY, EXTERNAL, NOT_IN_CACHE, UNRESOLVED,
# DEPENDENCY_ONLY, INSTALLED, NOT_INSTALLED in database.py): a listed spec most, a hash only
# an edge named least.
RECORD_RANKS = (3, 2, 2, 0, 1, 3, 2)
_UNRESOLVED = 3
_LEGACY_COMPILER, _DEPENDENCY_COMPILER = 1, 2  # COMPILER_SOURCES positions


def merge(inputs: list[NodeColumns]) -> NodeColumns:
    """One set of nodes from several (database files, or the parts of one large file read by
    different processes). A hash is one node: its fields come from its best record (a
    binary over an external or a spec not in the cache, over a spec file's dependency, over
    a hash only an edge named; the first of equals), its edges from its first record that is
    not a mere mention. A compiler named by a c/cxx/fortran edge is worked out again once
    every node is known: its node may be in another part. Array operations throughout."""
    import numpy as np

    inputs = [i for i in inputs if i.n_nodes]
    if len(inputs) <= 1:  # one file: its compilers were worked out with every node at hand
        return inputs[0] if inputs else NodeColumns()
    counts = np.array([i.n_nodes for i in inputs], dtype=np.int64)
    base = np.concatenate(([0], np.cumsum(counts)))
    offsets = base[:-1].tolist()  # each input's first occurrence among all inputs'
    n = int(base[-1])
    blob = b"".join(i.hashes for i in inputs)
    hashes = np.frombuffer(blob, dtype="S32")
    kinds = np.concatenate([np.frombuffer(i.kinds, dtype=np.uint8) for i in inputs])
    node, first = _nodes_of(blob, hashes, n)
    kept, owns = _kept_records(kinds, node, len(first), n)

    out = NodeColumns(hashes=hashes[np.sort(first)].tobytes())
    codes = _merged_node_columns(out, inputs, kept)
    out.kinds = kinds[kept]
    _merge_compilers(out, codes, inputs, offsets, kept, node)
    for i, b in zip(inputs, offsets):
        for local, path in i.external_paths.items():
            if kept[node[b + local]] == b + local:
                out.external_paths.setdefault(int(node[b + local]), path)
        for local, size in i.sizes.items():
            out.sizes.setdefault(int(node[b + local]), size)
    _merge_edges(out, inputs, offsets, node, owns)
    return out


def _nodes_of(blob: bytes, hashes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(each occurrence's node, each node's first occurrence): occurrences of one hash are one
    node, nodes numbered by first occurrence."""
    import numpy as np

    # Occurrences of one hash, grouped: by their first 8 characters (a 64-bit sort), or by the
    # whole hash where two hashes share those (as good as never).
    keys = np.frombuffer(blob, dtype=">u8").reshape(-1, 4)[:, 0]
    order = np.argsort(keys, kind="stable")
    same_key = keys[order][1:] == keys[order][:-1]
    if (same_key & (hashes[order][1:] != hashes[order][:-1])).any():
        order = np.argsort(hashes, kind="stable")
        same_key = hashes[order][1:] == hashes[order][:-1]
    starts = np.concatenate(([True], ~same_key))
    group = np.empty(n, dtype=np.int64)
    group[order] = np.cumsum(starts) - 1
    # Nodes numbered by first occurrence (a stable sort keeps each group's first in front).
    first = order[starts]
    node_of_group = np.empty(len(first), dtype=np.int64)
    node_of_group[np.argsort(first, kind="stable")] = np.arange(len(first))
    return node_of_group[group], first


def _kept_records(
    kinds: np.ndarray, node: np.ndarray, nodes: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """(each node's record, whether each occurrence owns its node's edges)."""
    import numpy as np

    position = np.arange(n, dtype=np.int64)
    # Each node's record: the best rank, the first of those; its edges: the first record
    # that is not a mere mention.
    rank = np.array(RECORD_RANKS, dtype=np.int8)[kinds]
    best = np.lexsort((position, -rank, node))
    kept = np.empty(nodes, dtype=np.int64)
    leads = np.concatenate(([True], node[best][1:] != node[best][:-1]))
    kept[node[best[leads]]] = best[leads]
    real = np.flatnonzero(kinds != _UNRESOLVED)[::-1]
    owner = np.full(nodes, -1, dtype=np.int64)
    owner[node[real]] = real  # (reversed: the earliest is written last)
    owns = np.zeros(n, dtype=bool)
    owns[owner[owner >= 0]] = True
    return kept, owns


def _merged_node_columns(
    out: NodeColumns, inputs: list[NodeColumns], kept: np.ndarray
) -> dict[str, np.ndarray]:
    """Fill `out`'s node columns from each node's kept record; the codes, as ndarrays."""
    import numpy as np

    codes: dict[str, np.ndarray] = {}  # out.codes, typed as the ndarrays they are here
    for column in NODE_COLUMNS:
        table: dict[Any, int] = {}
        merged = np.concatenate(
            [
                _codes_into(table, i.tables[column])[np.frombuffer(i.codes[column], dtype=np.int32)]
                for i in inputs
            ]
        )
        out.tables[column] = list(table)
        out.codes[column] = codes[column] = merged[kept].astype(np.int32)
    return codes


def _merge_compilers(
    out: NodeColumns,
    codes: dict[str, np.ndarray],
    inputs: list[NodeColumns],
    offsets: list[int],
    kept: np.ndarray,
    node: np.ndarray,
) -> None:
    """Each node's compiler source and target, and its compiler where an edge names it."""
    import numpy as np

    nodes = len(kept)
    sources = np.concatenate([np.frombuffer(i.compiler_sources, dtype=np.uint8) for i in inputs])[
        kept
    ]
    targets = np.concatenate(
        [_shifted(i.compiler_targets, b, i.n_nodes) for i, b in zip(inputs, offsets)]
    )
    # A compiler named by an edge, now that its node may have been found in another part.
    chosen = targets[kept]
    has = (chosen >= 0) & (sources != _LEGACY_COMPILER)
    target_node = np.full(nodes, -1, dtype=np.int64)
    target_node[has] = node[chosen[has]]
    versions = out.tables["version"]
    with_version = np.array([bool(v) for v in versions], dtype=bool)
    has &= with_version[codes["version"][np.maximum(target_node, 0)]]
    if has.any():
        pairs = np.stack(
            (codes["name"][target_node[has]], codes["version"][target_node[has]]), axis=1
        )
        distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
        compilers = {c: i for i, c in enumerate(out.tables["compiler"])}
        names = out.tables["name"]
        lut = np.array(
            [
                compilers.setdefault(f"{names[a]}@{versions[b]}", len(compilers))
                for a, b in distinct.tolist()
            ],
            dtype=np.int32,
        )
        out.tables["compiler"] = list(compilers)
        codes["compiler"][has] = lut[inverse.reshape(-1)]
        sources[has] = _DEPENDENCY_COMPILER
    out.compiler_sources = sources
    out.compiler_targets = target_node.astype(np.int32)


def _merge_edges(
    out: NodeColumns,
    inputs: list[NodeColumns],
    offsets: list[int],
    node: np.ndarray,
    owns: np.ndarray,
) -> None:
    """Edges of the records that own them, between nodes."""
    import numpy as np

    virtual_code: dict[tuple[str, ...], int] = {(): 0}
    edge_from, edge_to, edge_types, edge_virtuals = [], [], [], []
    for i, b in zip(inputs, offsets):
        if not len(i.edge_from):
            continue
        sources_ = np.frombuffer(i.edge_from, dtype=np.int32) + b
        keep = owns[sources_]
        edge_from.append(node[sources_[keep]])
        edge_to.append(node[np.frombuffer(i.edge_to, dtype=np.int32)[keep] + b])
        edge_types.append(np.frombuffer(i.edge_types, dtype=np.uint8)[keep])
        edge_virtuals.append(
            _codes_into(virtual_code, i.virtual_sets)[
                np.frombuffer(i.edge_virtuals, dtype=np.int32)[keep]
            ]
        )
    if edge_from:
        out.edge_from = np.concatenate(edge_from).astype(np.int32)
        out.edge_to = np.concatenate(edge_to).astype(np.int32)
        out.edge_types = np.concatenate(edge_types)
        out.edge_virtuals = np.concatenate(edge_virtuals).astype(np.int32)
    out.virtual_sets = list(virtual_code)


def _codes_into(table: dict, values: list[Any]) -> Any:
    """Each value's code in `table` (value -> code), added where new: a look-up array."""
    import numpy as np

    for value in values:
        if value not in table:
            table[value] = len(table)
    return np.fromiter(map(table.__getitem__, values), dtype=np.int32, count=len(values))


def _shifted(local: IntColumn, by: int, nodes: int) -> Any:
    """An input's compiler targets as occurrences among all inputs' nodes (-1 stays -1)."""
    import numpy as np

    if not len(local):
        return np.full(nodes, -1, dtype=np.int64)
    targets = np.frombuffer(local, dtype=np.int32).astype(np.int64)
    return np.where(targets >= 0, targets + by, -1)
