"""The binaries that have a dependency a query asks for, as Spack 1.x decides it
(`Spec.satisfies`, which `spack buildcache list QUERY` applies to every binary).

`%name` is a direct dependency: an edge from the binary to a `name` node, of any type, that
provides one of the virtuals when the query names some (`%c,cxx=gcc`). A binary written
before spec format 5 has no compiler edges: its compiler (the annotation, or the old
`compiler` field) stands for `%` instead, as in Spack. `^name` is a dependency anywhere in
the binary's link/run graph, or one of its direct build dependencies.

Array work over the graph's edges, never a loop over binaries: a node test per distinct
name and version, then edge masks, then one walk up the reverse edges for `^`. A summary
(cache.spack.io) names no dependencies but the compiler: `%gcc@13` is its compiler column,
and `^` cannot be answered there.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from weakref import WeakKeyDictionary

import numpy as np

from cachetui.index.graph import Graph
from cachetui.index.query import Dependency, NodeConstraint, QueryError
from cachetui.index.store import Index
from cachetui.sources.database import BUILD, COMPILER_SOURCES, LINK, RUN

# Nodes whose compiler came from the old `compiler` field or an annotation: written before
# spec format 5, with no compiler edges.
_OLD_FORMAT_SOURCES = np.array(
    [source in ("legacy-field", "annotation") for source in COMPILER_SOURCES]
)

# A level of the `^` walk whose nodes have more than this share of every edge is scanned.
WIDE_SHARE = 16

_CACHE: WeakKeyDictionary[Index, dict[Dependency, int]] = WeakKeyDictionary()
_LAYERS: WeakKeyDictionary[Graph, Layers | None] = WeakKeyDictionary()


def dependency_rows(index: Index, dependency: Dependency, constraint_rows) -> int:
    """The bitset of rows whose binary has `dependency`. `constraint_rows(NodeConstraint)`
    gives the rows meeting a node constraint (match.py), to test dependencies that are
    binaries themselves. Raises QueryError for `^` where no source has dependencies."""
    cache = _CACHE.setdefault(index, {})
    mask = cache.get(dependency)
    if mask is not None:
        return mask
    graph = index.graph
    if not dependency.direct and not graph:
        raise QueryError(
            "dependencies (^) are not in cache.spack.io summaries: "
            "load a build cache's index for them",
            dependency.start,
            dependency.end,
        )
    flags = np.zeros(index.n_specs, dtype=bool)
    with_node = np.zeros(index.n_specs, dtype=bool)
    if graph:
        row_nodes = graph.parts.row_nodes
        with_node = row_nodes >= 0
        flags[with_node] = _parents_with(index, graph, dependency, constraint_rows)[
            row_nodes[with_node]
        ]
    if dependency.direct and not with_node.all():  # summaries: the compiler is all they name
        compiler = index.row_flags(
            index.rows_where("compiler", dependency.matches_compiler, ("dependency", dependency))
        )
        flags |= compiler & ~with_node
    mask = index.mask_of_flags(flags)
    if len(cache) >= 64:
        cache.clear()
    cache[dependency] = mask
    return mask


def _parents_with(
    index: Index, graph: Graph, dependency: Dependency, constraint_rows
) -> np.ndarray:
    """A bool a node: whether that node has `dependency` (as the root of the query)."""
    p = graph.parts
    edge_ok = _edges_to(index, graph, dependency, constraint_rows)
    sources = graph.edge_sources()
    out = np.zeros(p.n_nodes, dtype=bool)
    if dependency.direct:
        out[sources[edge_ok]] = True
        old = _OLD_FORMAT_SOURCES[p.compiler_sources]
        if old.any():
            compiler_ok = np.fromiter(
                map(dependency.matches_compiler, p.compilers), dtype=bool, count=len(p.compilers)
            )
            out[old] = compiler_ok[p.compiler_codes[old]]
        return out
    link_run = (p.edge_types & (LINK | RUN)) != 0
    out[sources[edge_ok & link_run]] = True
    if out.any():  # (else nothing reaches anything)
        layers = link_run_layers(graph)
        out = _reached_by_layers(layers, out) if layers else _reaching(graph, out, link_run)
    out[sources[edge_ok & ((p.edge_types & BUILD) != 0)]] = True
    return out


def _edges_to(index: Index, graph: Graph, dependency: Dependency, constraint_rows) -> np.ndarray:
    """A bool an edge: whether its child is what `dependency` asks for, through that edge."""
    p = graph.parts
    virtual_sets = [frozenset(v) for v in p.virtual_sets]
    child_ok = _nodes_meeting(index, graph, dependency.node, constraint_rows)
    for nested in dependency.dependencies:  # `^openmpi %gcc`: openmpi's own direct dependency
        child_ok &= _parents_with(index, graph, nested, constraint_rows)
    if dependency.name:
        names = np.fromiter(
            (_name_matches(dependency.name, n) for n in p.names), dtype=bool, count=len(p.names)
        )
        named = names[p.name_codes]
    else:
        named = np.ones(p.n_nodes, dtype=bool)
    edge_ok = (named & child_ok)[p.edge_to]
    if dependency.virtuals:
        wanted = set(dependency.virtuals)
        provides = np.fromiter(
            (bool(wanted & v) for v in virtual_sets), dtype=bool, count=len(virtual_sets)
        )
        edge_ok &= provides[p.edge_virtuals]
    if dependency.name and any(dependency.name in v for v in virtual_sets):
        # `%mpi`, `^c`: a virtual; any edge that provides it, whatever the provider is called
        provides = np.fromiter(
            (dependency.name in v for v in virtual_sets), dtype=bool, count=len(virtual_sets)
        )
        edge_ok |= provides[p.edge_virtuals]
    return edge_ok


def _nodes_meeting(index: Index, graph: Graph, node: NodeConstraint, constraint_rows) -> np.ndarray:
    """A bool a node: its version is among those asked, and it is a binary whose row meets
    the other constraints (a node that is no binary has no variants or architecture here)."""
    p = graph.parts
    ok = np.ones(p.n_nodes, dtype=bool)
    for versions in node.versions:
        held = np.fromiter(
            (bool(v) and versions.contains(v) for v in p.versions),
            dtype=bool,
            count=len(p.versions),
        )
        ok &= held[p.version_codes]
    if node.hash_prefixes:
        hashes = np.frombuffer(p.node_hashes, dtype="S32")
        for prefix in node.hash_prefixes:
            ok &= np.char.startswith(hashes, prefix.encode("ascii"))
    if node.variants or node.fields:
        rows = index.row_flags(
            constraint_rows(NodeConstraint(variants=node.variants, fields=node.fields))
        )
        binary = np.zeros(p.n_nodes, dtype=bool)
        found = p.row_nodes >= 0
        binary[p.row_nodes[found & rows]] = True
        ok &= binary
    return ok


def _name_matches(wanted: str, name: str) -> bool:
    return fnmatchcase(name, wanted) if "*" in wanted else name == wanted


def _reaching(graph: Graph, seeds: np.ndarray, edge_mask: np.ndarray) -> np.ndarray:
    """`seeds` and every node with a path of `edge_mask` edges to one of them, a level at a
    time. A narrow level gathers its nodes' reverse edges. Once a level is wide (a runtime
    library's users: most of a million nodes), the edges still able to add a node (theirs
    unreached) are scanned instead, and that set shrinks with every level: ^gcc-runtime
    at 1M went from 218 ms (gathering, np.unique) to about 60."""
    p = graph.parts
    sources = graph.edge_sources()
    reached = seeds.copy()
    fresh = seeds
    frontier = np.flatnonzero(seeds)
    pending: np.ndarray | None = None  # once wide: the edges whose source is not reached yet
    scanned = False
    wide = len(p.edge_to) // WIDE_SHARE
    while len(frontier):
        if not scanned:
            starts = p.reverse_starts[frontier]
            counts = p.reverse_starts[frontier + 1] - starts
            total = int(counts.sum())
            if not total:
                break
            scanned = total > wide
        if pending is not None:
            parents = sources[pending[fresh[p.edge_to[pending]]]]
        elif scanned:  # the first wide level: every edge, once
            hit = fresh[p.edge_to]
            hit &= edge_mask
            parents = sources[hit]
        else:
            offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
            edges = p.reverse_edges[offsets]
            parents = sources[edges[edge_mask[edges]]]
        fresh = np.zeros(
            len(reached), dtype=bool
        )  # deduplicated by flags: np.unique sorts, 10x the time
        fresh[parents[~reached[parents]]] = True
        reached |= fresh
        frontier = np.flatnonzero(fresh)
        if pending is not None:
            pending = pending[~reached[sources[pending]]]
        elif scanned:
            pending = np.flatnonzero(edge_mask & ~reached[sources]).astype(np.int32)
    return reached


class Layers:
    """The link/run edges in layers by the height of their child (a node with no link/run
    dependency 0; any other one more than its highest dependency): once the layers below an
    edge's are done, whether its child reaches a seed is final, so a `^` walk is one pass over
    the edges, a slice a layer. (The level-by-level walk above does a pass over what is left
    for every level: at a million specs ^mpi took 64 ms in it, 20-25 this way.)"""

    def __init__(self, children: np.ndarray, parents: np.ndarray, bounds: list[int]) -> None:
        self.children, self.parents, self.bounds = children, parents, bounds


def link_run_layers(graph: Graph) -> Layers | None:
    """The graph's link/run edges in layers (worked out once a graph); None when they have a
    cycle (Spack's graphs have none; a crafted file may): then the level walk answers."""
    if graph not in _LAYERS:
        _LAYERS[graph] = _layers_of(graph)
    return _LAYERS[graph]


def _layers_of(graph: Graph) -> Layers | None:
    p = graph.parts
    sources = graph.edge_sources()
    link_run = (p.edge_types & (LINK | RUN)) != 0
    edges = np.flatnonzero(link_run)
    left = np.bincount(sources[edges], minlength=p.n_nodes)  # dependencies not yet placed
    height = np.full(p.n_nodes, -1, dtype=np.int32)
    frontier = np.flatnonzero(left == 0)
    level = 0
    while len(frontier):  # Kahn's order, a whole height at a time
        height[frontier] = level
        starts = p.reverse_starts[frontier]
        counts = p.reverse_starts[frontier + 1] - starts
        total = int(counts.sum())
        if not total:
            break
        offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
        reverse = p.reverse_edges[offsets]
        placed = np.bincount(sources[reverse[link_run[reverse]]], minlength=p.n_nodes)
        left -= placed
        frontier = np.flatnonzero((placed > 0) & (left == 0))
        level += 1
    if (height < 0).any():
        return None  # a cycle: some node never had all its dependencies placed
    child_height = height[p.edge_to[edges]]
    order = np.argsort(child_height, kind="stable")
    edges = edges[order]
    bounds = np.searchsorted(child_height[order], np.arange(level + 1)).tolist()
    return Layers(p.edge_to[edges].astype(np.int32), sources[edges].astype(np.int32), bounds)


def _reached_by_layers(layers: Layers, seeds: np.ndarray) -> np.ndarray:
    """`seeds` and every node with a path of link/run edges to one of them."""
    reached = seeds.copy()
    children, parents, bounds = layers.children, layers.parents, layers.bounds
    for start, end in zip(bounds[:-1], bounds[1:]):
        if start != end:
            reached[parents[start:end][reached[children[start:end]]]] = True
    return reached
