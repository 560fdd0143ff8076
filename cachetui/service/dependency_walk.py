"""The dependencies of your spec and of a cached one that differ, each followed down both
graphs to the first spec that differs in its own fields: "zlib-ng: +shared vs ~shared".

A walk is iterative (a graph may be thousands of levels deep) and each pair of specs (yours,
the cache's) is compared once an environment: the misses of an environment mostly differ by
the same few dependencies below them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from cachetui.model import EnvironmentSpec, NodeKind
from cachetui.service.differences import Difference, Fields, differing_tokens

if TYPE_CHECKING:
    from cachetui.index.graph import Graph
    from cachetui.index.store import Index

# (name, your hash, the cache's node) of a dependency whose hashes differ; None: that side
# has no dependency of that name.
Edge = tuple[str, "str | None", "int | None"]


class DependencyWalk:
    def __init__(
        self,
        index: Index,
        graph: Graph,
        specs: dict[str, EnvironmentSpec],
        row_fields: Callable[[int], Fields],
    ) -> None:
        self.index, self.graph, self.specs = index, graph, specs
        self._row_fields = row_fields
        self._hashes = np.frombuffer(graph.parts.node_hashes, dtype="S32")
        row_nodes = graph.parts.row_nodes
        rows = np.flatnonzero(row_nodes >= 0)[::-1]  # the first row of a node wins
        self._node_rows = np.full(graph.parts.n_nodes, -1, dtype=np.int64)
        self._node_rows[row_nodes[rows]] = rows
        self._edges: dict[tuple[str, int], list[Edge]] = {}
        self._below: dict[tuple[str, int], tuple[Difference, ...]] = {}
        self._my_edges: dict[str, dict[str, tuple[str, bytes]]] = {}
        self._my_hashes: dict[str, frozenset[bytes]] = {}
        self._my_fields: dict[str, Fields] = {}
        self._node_fields: dict[int, Fields] = {}

    def direct(self, spec: EnvironmentSpec, row: int) -> int:
        """How many direct dependency hashes of `spec` and of the cached `row` are not the
        other's (a dependency that differs on both sides counts twice): a ranking, counted
        from the two sets of hashes, with no name read."""
        node = self.graph.node_of_row(row)
        if node is None:
            return 0
        parts = self.graph.parts
        start, end = int(parts.edge_starts[node]), int(parts.edge_starts[node + 1])
        theirs = self._hashes[parts.edge_to[start:end]].tolist()
        mine = self._my_hash_set(spec)
        shared = sum(1 for hash_ in theirs if hash_ in mine)
        return len(mine) + len(theirs) - 2 * shared

    def differences(self, spec: EnvironmentSpec, row: int) -> list[Difference]:
        """Each spec that differs below `spec` and the cached `row`, named once (by the first
        way down to it). A compiler that differs is the `compiler` difference already."""
        node = self.graph.node_of_row(row)
        if node is None:
            return []
        compiler = spec.compiler.split("@", 1)[0]
        compiler_differs = self.index.field("compiler", row) != spec.compiler
        found: dict[str, Difference] = {}
        for name, mine, theirs in self.differing_edges(spec, node):
            if name == compiler and compiler_differs:
                continue
            for difference in self._differing(name, mine, theirs):
                found.setdefault(difference.field, difference)
        return list(found.values())

    def differing_edges(self, spec: EnvironmentSpec, node: int) -> list[Edge]:
        found = self._edges.get((spec.hash, node))
        if found is None:
            found = self._edges[(spec.hash, node)] = self._compare_edges(spec, node)
        return found

    def _compare_edges(self, spec: EnvironmentSpec, node: int) -> list[Edge]:
        parts = self.graph.parts
        start, end = int(parts.edge_starts[node]), int(parts.edge_starts[node + 1])
        targets = parts.edge_to[start:end]
        names = parts.names
        theirs = {
            names[code]: (target, hash_)  # hashes compared as bytes: no decoding
            for code, target, hash_ in zip(
                parts.name_codes[targets].tolist(),
                targets.tolist(),
                self._hashes[targets].tolist(),
            )
        }
        mine = self._edges_of(spec)
        return [
            (
                name,
                mine[name][0] if name in mine else None,
                theirs[name][0] if name in theirs else None,
            )
            for name in sorted(mine.keys() | theirs.keys())
            if name not in mine or name not in theirs or theirs[name][1] != mine[name][1]
        ]

    def _my_hash_set(self, spec: EnvironmentSpec) -> frozenset[bytes]:
        hashes = self._my_hashes.get(spec.hash)
        if hashes is None:
            hashes = self._my_hashes[spec.hash] = frozenset(
                h for _, h in self._edges_of(spec).values()
            )
        return hashes

    def _edges_of(self, spec: EnvironmentSpec) -> dict[str, tuple[str, bytes]]:
        edges = self._my_edges.get(spec.hash)
        if edges is None:
            edges = self._my_edges[spec.hash] = {
                name: (hash_, hash_.encode("ascii")) for name, hash_, _ in spec.dependencies
            }
        return edges

    # -- the walk -------------------------------------------------------------------------

    def _differing(self, name: str, mine: str | None, theirs: int | None) -> tuple[Difference, ...]:
        known = self._known(name, mine, theirs)
        if known is not None:
            return known
        assert mine is not None and theirs is not None  # (_known answers for a missing side)
        self._resolve(name, self.specs[mine], theirs)
        return self._below[(mine, theirs)]

    def _known(
        self, name: str, mine: str | None, theirs: int | None
    ) -> tuple[Difference, ...] | None:
        """What the pair comes to when it needs no walk (a side missing, a hash the cache's
        index has no record of) or was walked already; None: it needs one."""
        spec = self.specs.get(mine) if mine is not None else None
        field = f"dependency:{name}"
        if spec is None or theirs is None:
            return (Difference(field, _spec_text(spec, mine), self._node_text(theirs), (name,)),)
        if self.graph.kind(theirs) == NodeKind.UNRESOLVED:
            cache = f"/{self.graph.hash(theirs)[:7]} (no record in the cache)"
            return (Difference(field, _spec_text(spec, mine), cache, (name,)),)
        return self._below.get((spec.hash, theirs))

    def _resolve(self, name: str, spec: EnvironmentSpec, node: int) -> None:
        """Compare the pair and, where their own fields agree, every pair below it that
        differs, deepest first; each result kept in `_below`."""
        stack: list[tuple[str, EnvironmentSpec, int, list[Edge] | None]] = [
            (name, spec, node, None)
        ]
        while stack:
            name, spec, node, edges = stack.pop()
            key = (spec.hash, node)
            if edges is None:
                if key in self._below:  # walked meanwhile, or under way above: a cycle
                    continue
                self._below[key] = ()  # under way: a cycle back to this pair adds nothing
                own = differing_tokens(self._fields_of_mine(spec), self._fields_of_node(node))
                if own is not None:
                    self._below[key] = (Difference(f"dependency:{name}", *own, (name,)),)
                    continue
                edges = self.differing_edges(spec, node)
                stack.append((name, spec, node, edges))  # again, once what is below is known
                for below, mine, theirs in edges:
                    if self._known(below, mine, theirs) is None:
                        assert mine is not None and theirs is not None
                        stack.append((below, self.specs[mine], theirs, None))
                continue
            found: dict[str, Difference] = {}
            for below, mine, theirs in edges:
                for d in self._known(below, mine, theirs) or ():
                    found.setdefault(d.field, d)
            out = tuple(
                Difference(d.field, d.yours, d.cache, (name, *d.path)) for d in found.values()
            )
            # The same fields and nothing below that differs: only the hashes tell them apart.
            self._below[key] = out or (
                Difference(
                    f"dependency:{name}",
                    f"/{spec.hash[:7]}",
                    f"/{self.graph.hash(node)[:7]}",
                    (name,),
                ),
            )

    def _fields_of_mine(self, spec: EnvironmentSpec) -> Fields:
        fields = self._my_fields.get(spec.hash)
        if fields is None:
            fields = self._my_fields[spec.hash] = Fields.of(spec)
        return fields

    def _fields_of_node(self, node: int) -> Fields:
        """A cache node's own fields: a binary's from its row, else what the graph knows (an
        external's, or a spec not in the cache: its version and compiler)."""
        fields = self._node_fields.get(node)
        if fields is None:
            row = int(self._node_rows[node])
            if row >= 0:
                fields = self._row_fields(row)
            else:
                graph = self.graph
                fields = Fields(
                    graph.version(node) or None, graph.compiler(node), None, None, None, None
                )
            self._node_fields[node] = fields
        return fields

    def _node_text(self, node: int | None) -> str | None:
        if node is None:
            return None
        name, version = self.graph.name(node), self.graph.version(node)
        return f"{name}@{version}" if version else f"{name} /{self.graph.hash(node)[:7]}"


def _spec_text(spec: EnvironmentSpec | None, hash_: str | None) -> str | None:
    if hash_ is None:
        return None
    return f"{spec.name}@{spec.version}" if spec is not None else f"/{hash_[:7]}"
