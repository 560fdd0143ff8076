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

from cachetui.sources.database import NODE_KINDS, UNRESOLVED, DatabaseFile, record_rank, deptype_names, BUILD, LINK, RUN


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
    reverse_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # edge ids, by target
    row_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # index row -> node, -1: none

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
        nodes = self._edge_sources()[edges]
        if len(nodes) > 1:
            order = np.lexsort((np.frombuffer(p.node_hashes, dtype="S32")[nodes], self._version_rank()[p.version_codes[nodes]],
                                self._name_rank()[p.name_codes[nodes]]))
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
            for n, name, version, h, t, v, k in zip(nodes.tolist(), p.name_codes[nodes].tolist(), p.version_codes[nodes].tolist(), hashes,
                                                     p.edge_types[edges].tolist(), p.edge_virtuals[edges].tolist(), p.kinds[nodes].tolist())
        ]

    def _edge_sources(self) -> np.ndarray:
        """edge id -> the node it leaves (the CSR row it is in)."""
        sources = getattr(self, "_sources", None)
        if sources is None:
            p = self.parts
            sources = self._sources = np.repeat(np.arange(p.n_nodes, dtype=np.int32), np.diff(p.edge_starts))
        return sources


class DependencyView(Sequence[Dependency]):
    """The other ends of some edges, made into Dependency records as they are read."""

    def __init__(self, graph: Graph, nodes: np.ndarray, edges: np.ndarray) -> None:
        self._graph, self._nodes, self._edges = graph, nodes, edges

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, item):  # type: ignore[override]
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


def build_graph(files: Iterable[DatabaseFile], row_hashes: bytes | memoryview) -> GraphParts:
    """One graph from every database's nodes and edges. A hash in several files is one node:
    its first record wins (over a mere mention by an edge), and its edges are that record's."""
    node_of: dict[str, int] = {}
    hashes: list[str] = []
    names: list[str] = []
    versions: list[str] = []
    compilers: list[str] = []
    kinds: list[int] = []
    compiler_sources: list[int] = []
    external_paths: dict[int, str] = {}
    edge_from: list[np.ndarray] = []
    edge_to: list[np.ndarray] = []
    edge_types: list[np.ndarray] = []
    edge_virtuals: list[list[tuple[str, ...]]] = []
    for db in files:
        ids = np.empty(len(db.hashes), dtype=np.int32)
        owns = np.zeros(len(db.hashes), dtype=bool)  # this file's record of the node is the one kept
        if not node_of:  # the first file: every node is new (the common case: one index)
            node_of = dict(zip(db.hashes, range(len(db.hashes))))
            hashes, names, versions, compilers = list(db.hashes), list(db.names), list(db.versions), list(db.compilers)
            kinds, compiler_sources = list(db.kinds), list(db.compiler_sources)
            ids[:] = np.arange(len(db.hashes))
            owns[:] = np.frombuffer(bytes(db.kinds), dtype=np.uint8) != UNRESOLVED
            external_paths.update(db.external_paths)
        else:
            for at, hash_ in enumerate(db.hashes):
                node = node_of.get(hash_)
                if node is None:
                    node = node_of[hash_] = len(hashes)
                    hashes.append(hash_)
                    names.append(db.names[at])
                    versions.append(db.versions[at])
                    compilers.append(db.compilers[at])
                    kinds.append(db.kinds[at])
                    compiler_sources.append(db.compiler_sources[at])
                    owns[at] = db.kinds[at] != UNRESOLVED
                    if at in db.external_paths:
                        external_paths[node] = db.external_paths[at]
                elif kinds[node] == UNRESOLVED and db.kinds[at] != UNRESOLVED:
                    names[node], versions[node], compilers[node] = db.names[at], db.versions[at], db.compilers[at]
                    kinds[node], compiler_sources[node] = db.kinds[at], db.compiler_sources[at]
                    owns[at] = True
                    if at in db.external_paths:
                        external_paths[node] = db.external_paths[at]
                elif record_rank(db.kinds[at]) > record_rank(kinds[node]):
                    # A better record of a hash already known (a binary in another cache, or
                    # over a spec file's dependency): its fields; the edges stay the first's.
                    names[node], versions[node], compilers[node] = db.names[at], db.versions[at], db.compilers[at]
                    kinds[node], compiler_sources[node] = db.kinds[at], db.compiler_sources[at]
                ids[at] = node
        if len(db.edge_from):
            sources = np.frombuffer(db.edge_from, dtype=np.int32)
            keep = owns[sources]
            edge_from.append(ids[sources[keep]])
            edge_to.append(ids[np.frombuffer(db.edge_to, dtype=np.int32)[keep]])
            edge_types.append(np.frombuffer(db.edge_types, dtype=np.uint8)[keep])
            edge_virtuals.append([v for v, k in zip(db.edge_virtuals, keep.tolist()) if k])
    n = len(hashes)
    if not n:
        return GraphParts(row_nodes=np.full(len(row_hashes) // 32, -1, dtype=np.int32))

    sources = np.concatenate(edge_from) if edge_from else np.zeros(0, np.int32)
    targets = np.concatenate(edge_to) if edge_to else np.zeros(0, np.int32)
    types = np.concatenate(edge_types) if edge_types else np.zeros(0, np.uint8)
    virtual_code: dict[tuple[str, ...], int] = {(): 0}
    virtuals = np.fromiter((virtual_code.setdefault(v, len(virtual_code)) for part in edge_virtuals for v in part), dtype=np.int32, count=len(sources))
    order = np.argsort(sources, kind="stable")  # edges grouped by node, in file order
    sources, targets, types, virtuals = sources[order], targets[order], types[order], virtuals[order]
    starts = np.concatenate(([0], np.cumsum(np.bincount(sources, minlength=n)))).astype(np.int64)
    reverse = np.argsort(targets, kind="stable").astype(np.int32)
    reverse_starts = np.concatenate(([0], np.cumsum(np.bincount(targets, minlength=n)))).astype(np.int64)

    row_nodes = np.fromiter((node_of.get(h, -1) for h in _split(row_hashes)), dtype=np.int32, count=len(row_hashes) // 32)
    name_table, name_codes = _interned(names)
    version_table, version_codes = _interned(versions)
    compiler_table, compiler_codes = _interned(compilers)
    return GraphParts(
        node_hashes="".join(hashes).encode("ascii"), names=name_table, versions=version_table, compilers=compiler_table,
        name_codes=name_codes, version_codes=version_codes, compiler_codes=compiler_codes,
        kinds=np.array(kinds, dtype=np.uint8), compiler_sources=np.array(compiler_sources, dtype=np.uint8),
        external_paths=external_paths, edge_starts=starts, edge_to=targets.astype(np.int32), edge_types=types,
        edge_virtuals=virtuals, virtual_sets=[list(v) for v in virtual_code], reverse_starts=reverse_starts,
        reverse_edges=reverse, row_nodes=row_nodes,
    )


def _split(blob: bytes | memoryview) -> Iterable[str]:
    text = str(blob, "ascii")
    return (text[i : i + 32] for i in range(0, len(text), 32))


def _interned(values: list[str]) -> tuple[list[str], np.ndarray]:
    table: dict[str, int] = {}
    codes = np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int32, count=len(values))
    return list(table), codes
