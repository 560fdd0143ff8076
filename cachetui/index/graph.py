"""The dependency graph of every database loaded: nodes by hash, edges in both directions.

A node is a hash: a binary (one or more rows of the index: the same hash in several tags),
or a record kept only so that edges resolve (an external, a spec not in the cache), or a
hash an edge names that no record holds. Edges live in compressed rows (CSR): the edges of
node n are edge_to[edge_starts[n]:edge_starts[n + 1]]; "used by" is the same, reversed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from cachetui.model import LANGUAGES
from cachetui.sources.database import BUILD, LINK, NODE_KINDS, RUN, deptype_names
from cachetui.sources.nodes import NodeColumns, merge


@dataclass
class GraphParts:
    node_hashes: bytes = b""  # 32 ASCII bytes a node
    names: list[str] = field(default_factory=list)  # interned text, by code
    versions: list[str] = field(default_factory=list)
    compilers: list[str] = field(default_factory=list)
    name_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    version_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    compiler_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    kinds: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    compiler_sources: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    external_paths: dict[int, str] = field(default_factory=dict)
    edge_starts: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    edge_to: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    edge_types: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    edge_virtuals: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    virtual_sets: list[list[str]] = field(default_factory=list)
    reverse_starts: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    reverse_edges: np.ndarray = field(
        default_factory=lambda: np.zeros(0, np.int32)
    )  # edge ids, by target
    row_nodes: np.ndarray = field(
        default_factory=lambda: np.zeros(0, np.int32)
    )  # index row -> node, -1: none

    @property
    def n_nodes(self) -> int:
        return len(self.node_hashes) // 32


@dataclass(frozen=True)
class Dependency:
    """One edge, seen from either end: `node` is the other end."""

    node: int
    name: str
    version: str
    hash: str
    deptypes: int  # bits: BUILD, LINK, RUN, TEST
    virtuals: tuple[str, ...]
    kind: int  # BINARY, EXTERNAL, ...

    @property
    def deptype_names(self) -> list[str]:
        return deptype_names(self.deptypes)

    @property
    def link_or_run(self) -> bool:
        return bool(self.deptypes & (LINK | RUN))

    @property
    def build_only(self) -> bool:
        return not self.link_or_run and bool(self.deptypes & BUILD)

    @property
    def kind_name(self) -> str:
        return NODE_KINDS[self.kind] if 0 <= self.kind < len(NODE_KINDS) else "?"


class Graph:
    def __init__(self, parts: GraphParts) -> None:
        self.parts = parts

    def __bool__(self) -> bool:
        return self.parts.n_nodes > 0

    def node_of_row(self, row: int) -> int | None:
        nodes = self.parts.row_nodes
        if not 0 <= row < len(nodes):
            return None
        node = int(nodes[row])
        return node if node >= 0 else None

    def hash(self, node: int) -> str:
        return self.parts.node_hashes[node * 32 : node * 32 + 32].decode("ascii")

    def name(self, node: int) -> str:
        return self.parts.names[self.parts.name_codes[node]]

    def version(self, node: int) -> str:
        return self.parts.versions[self.parts.version_codes[node]]

    def compiler(self, node: int) -> str:
        return self.parts.compilers[self.parts.compiler_codes[node]]

    def kind(self, node: int) -> int:
        return int(self.parts.kinds[node])

    def compiler_source(self, node: int) -> int:
        return int(self.parts.compiler_sources[node])

    def external_path(self, node: int) -> str | None:
        return self.parts.external_paths.get(node)

    def compilers_of(self, node: int) -> list[tuple[tuple[str, ...], str, str]]:
        """(languages, name, version) of each node `node` has a compiler edge to (one that
        provides c, cxx or fortran), in the order Spack lists the languages."""
        edges, starts, languages = self._language_edges()
        p = self.parts
        start, end = int(starts[node]), int(starts[node + 1])
        found: dict[int, int] = {}
        for target, bits in zip(
            p.edge_to[edges[start:end]].tolist(), languages[start:end].tolist()
        ):
            found[target] = found.get(target, 0) | bits
        ordered = sorted(
            found.items(), key=lambda item: (item[1] & -item[1], item[0])
        )  # by first language
        return [
            (
                tuple(language for at, language in enumerate(LANGUAGES) if bits >> at & 1),
                self.name(target),
                self.version(target),
            )
            for target, bits in ordered
        ]

    def _language_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges that provide a language, where each node's begin among them (CSR, as the
        edges are grouped by node) and a bit a language each (c 1, cxx 2, fortran 4): found
        once, with array work over every edge; a spec line then slices, never searches
        (a searchsorted a row cast the million sources each time: 74 us a line)."""
        cached = getattr(self, "_languages", None)
        if cached is None:
            p = self.parts
            set_bits = np.array(
                [
                    sum(1 << at for at, language in enumerate(LANGUAGES) if language in vs)
                    for vs in p.virtual_sets
                ]
                or [0],
                dtype=np.uint8,
            )
            bits = set_bits[p.edge_virtuals] if len(p.edge_virtuals) else np.zeros(0, np.uint8)
            edges = np.flatnonzero(bits)
            starts = np.searchsorted(
                self.edge_sources()[edges], np.arange(p.n_nodes + 1, dtype=np.int32)
            )
            cached = self._languages = (edges, starts, bits[edges])
        return cached

    def dependencies(self, node: int) -> list[Dependency]:
        p = self.parts
        edges = np.arange(int(p.edge_starts[node]), int(p.edge_starts[node + 1]))
        return self._ends(p.edge_to[edges], edges)

    def dependents(self, node: int) -> DependencyView:
        """What uses `node` ("used by"), each with the edge's types, in name, version, hash
        order. A runtime library can have a hundred thousand dependents: they are sorted
        as arrays, and each record is made only when it is read."""
        p = self.parts
        edges = p.reverse_edges[int(p.reverse_starts[node]) : int(p.reverse_starts[node + 1])]
        nodes = self.edge_sources()[edges]
        if len(nodes) > 1:
            order = np.lexsort(
                (
                    np.frombuffer(p.node_hashes, dtype="S32")[nodes],
                    self._version_rank()[p.version_codes[nodes]],
                    self._name_rank()[p.name_codes[nodes]],
                )
            )
            nodes, edges = nodes[order], edges[order]
        return DependencyView(self, nodes, edges)

    def _name_rank(self) -> np.ndarray:
        rank = getattr(self, "_names_ranked", None)
        if rank is None:
            rank = self._names_ranked = _text_rank(self.parts.names)
        return rank

    def _version_rank(self) -> np.ndarray:
        rank = getattr(self, "_versions_ranked", None)
        if rank is None:
            rank = self._versions_ranked = _text_rank(self.parts.versions)
        return rank

    def _ends(self, nodes: np.ndarray, edges: np.ndarray) -> list[Dependency]:
        """Dependency records for the other ends of `edges`, column by column: a runtime
        library can have tens of thousands of dependents, and the pane asks on every move."""
        p = self.parts
        names, versions = p.names, p.versions
        hashes = np.frombuffer(p.node_hashes, dtype="S32")[nodes].tolist()
        virtual_sets = [tuple(v) for v in p.virtual_sets]
        return [
            Dependency(n, names[name], versions[version], h.decode("ascii"), t, virtual_sets[v], k)
            for n, name, version, h, t, v, k in zip(
                nodes.tolist(),
                p.name_codes[nodes].tolist(),
                p.version_codes[nodes].tolist(),
                hashes,
                p.edge_types[edges].tolist(),
                p.edge_virtuals[edges].tolist(),
                p.kinds[nodes].tolist(),
            )
        ]

    def edge_sources(self) -> np.ndarray:
        """edge id -> the node it leaves (the CSR row it is in)."""
        sources = getattr(self, "_sources", None)
        if sources is None:
            p = self.parts
            sources = self._sources = np.repeat(
                np.arange(p.n_nodes, dtype=np.int32), np.diff(p.edge_starts)
            )
        return sources


class DependencyView(Sequence[Dependency]):
    """The other ends of some edges, made into Dependency records as they are read."""

    def __init__(self, graph: Graph, nodes: np.ndarray, edges: np.ndarray) -> None:
        self._graph, self._nodes, self._edges = graph, nodes, edges

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return self._graph._ends(self._nodes[item], self._edges[item])
        if item < 0:
            item += len(self._nodes)
        if not 0 <= item < len(self._nodes):
            raise IndexError(item)
        return self._graph._ends(self._nodes[item : item + 1], self._edges[item : item + 1])[0]

    def __iter__(self) -> Iterator[Dependency]:
        for start in range(0, len(self._nodes), 4096):
            yield from self[start : start + 4096]


def _text_rank(values: list[str]) -> np.ndarray:
    rank = np.empty(len(values), dtype=np.int64)
    rank[sorted(range(len(values)), key=values.__getitem__)] = np.arange(len(values))
    return rank


def build_graph(files: Iterable[NodeColumns], row_hashes: bytes | memoryview) -> GraphParts:
    """One graph from every database's nodes and edges. A hash in several files is one node:
    its best record's fields, its first record's edges (sources/nodes.py: merge)."""
    merged = merge(list(files))
    rows = len(row_hashes) // 32
    n = merged.n_nodes
    if not n:
        return GraphParts(row_nodes=np.full(rows, -1, dtype=np.int32))
    sources = np.frombuffer(merged.edge_from, dtype=np.int32)
    targets = np.frombuffer(merged.edge_to, dtype=np.int32)
    types = np.frombuffer(merged.edge_types, dtype=np.uint8)
    virtuals = np.frombuffer(merged.edge_virtuals, dtype=np.int32)
    order = np.argsort(sources, kind="stable")  # edges grouped by node, in file order
    sources, targets, types, virtuals = (
        sources[order],
        targets[order],
        types[order],
        virtuals[order],
    )
    starts = np.concatenate(([0], np.cumsum(np.bincount(sources, minlength=n)))).astype(np.int64)
    reverse = np.argsort(targets, kind="stable").astype(np.int32)
    reverse_starts = np.concatenate(([0], np.cumsum(np.bincount(targets, minlength=n)))).astype(
        np.int64
    )
    return GraphParts(
        node_hashes=merged.hashes,
        names=list(merged.tables["name"]),
        versions=list(merged.tables["version"]),
        compilers=list(merged.tables["compiler"]),
        name_codes=_int32(merged.codes["name"]),
        version_codes=_int32(merged.codes["version"]),
        compiler_codes=_int32(merged.codes["compiler"]),
        kinds=np.frombuffer(merged.kinds, dtype=np.uint8).copy(),
        compiler_sources=np.frombuffer(merged.compiler_sources, dtype=np.uint8).copy(),
        external_paths=dict(merged.external_paths),
        edge_starts=starts,
        edge_to=targets.astype(np.int32),
        edge_types=types,
        edge_virtuals=virtuals,
        virtual_sets=[list(v) for v in merged.virtual_sets],
        reverse_starts=reverse_starts,
        reverse_edges=reverse,
        row_nodes=_nodes_of(merged.hashes, row_hashes),
    )


def _int32(codes) -> np.ndarray:
    return (
        np.frombuffer(codes, dtype=np.int32).copy()
        if not isinstance(codes, np.ndarray)
        else codes.astype(np.int32)
    )


def _nodes_of(node_hashes: bytes, row_hashes: bytes | memoryview) -> np.ndarray:
    """The node of each row's hash, -1 where none: a sort and a search, then the whole
    hashes compared (two hashes may share their first 8 characters)."""
    rows = len(row_hashes) // 32
    if not rows:
        return np.zeros(0, dtype=np.int32)
    nodes = np.frombuffer(node_hashes, dtype="S32")
    wanted = np.frombuffer(row_hashes, dtype="S32")
    node_keys = np.frombuffer(node_hashes, dtype=">u8").reshape(-1, 4)[:, 0]
    row_keys = np.frombuffer(row_hashes, dtype=">u8").reshape(-1, 4)[:, 0]
    order = np.argsort(node_keys, kind="stable")
    sorted_keys = node_keys[order]
    at = np.searchsorted(sorted_keys, row_keys)
    found = at < len(sorted_keys)
    out = np.full(rows, -1, dtype=np.int32)
    candidate = order[np.minimum(at, len(order) - 1)]
    exact = found & (nodes[candidate] == wanted)
    out[exact] = candidate[exact]
    # A row whose key is shared by several nodes, and not the first of them: look on.
    for row in np.flatnonzero(
        found & ~exact & (sorted_keys[np.minimum(at, len(order) - 1)] == row_keys)
    ).tolist():
        position = int(at[row])
        while position < len(order) and sorted_keys[position] == row_keys[row]:
            if nodes[order[position]] == wanted[row]:
                out[row] = order[position]
                break
            position += 1
    return out
