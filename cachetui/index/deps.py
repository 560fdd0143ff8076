"""What a spec depends on and what depends on it, as the detail pane and `cachetui deps` show it.

`dependency_tree` walks the link/run edges (what a binary needs at run time) depth first,
as `spack spec` prints a DAG: each node once, at its first place; later mentions are marked
as repeats and not expanded again. Build-only dependencies (compilers, build tools) are
listed apart: they are not in the installed prefix's closure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cachetui.index.graph import Dependency, Graph
from cachetui.index.store import Index

MOST_LINES = 2000  # a tree larger than this is cut (and says so)


@dataclass(frozen=True)
class TreeLine:
    depth: int  # 1 for a direct dependency
    dependency: Dependency
    repeated: bool = False  # already shown above; not expanded again


@dataclass(frozen=True)
class Dependencies:
    """Everything the detail pane shows about a spec's place in the graph."""

    tree: list[TreeLine]  # link/run, transitively
    build: list[Dependency]  # direct build-only dependencies
    used_by: Sequence[Dependency]  # direct dependents, in name order (made as they are read)
    cut: bool = False  # the tree had more than MOST_LINES lines

    @property
    def empty(self) -> bool:
        return not (self.tree or self.build or self.used_by)


def dependencies_of(index: Index, row: int, most: int = MOST_LINES) -> Dependencies | None:
    """None when the spec's source holds no dependency information (a cache.spack.io summary)."""
    graph = index.graph
    node = graph.node_of_row(row) if graph else None
    if node is None:
        return None
    tree, cut = dependency_tree(graph, node, most)
    direct = graph.dependencies(node)
    build = _sorted([d for d in direct if d.build_only])
    return Dependencies(tree=tree, build=build, used_by=graph.dependents(node), cut=cut)


def dependency_tree(graph: Graph, node: int, most: int = MOST_LINES) -> tuple[list[TreeLine], bool]:
    """What `node` needs at run time: its link/run dependencies, transitively."""
    return _walk(node, lambda n: _sorted([d for d in graph.dependencies(n) if d.link_or_run]), most)


def reverse_tree(graph: Graph, node: int, most: int = MOST_LINES) -> tuple[list[TreeLine], bool]:
    """What depends on `node`, transitively, through any kind of edge."""
    return _walk(node, lambda n: list(graph.dependents(n)), most)


def _walk(
    node: int, children: Callable[[int], list[Dependency]], most: int
) -> tuple[list[TreeLine], bool]:
    """Depth first, each node expanded once (later mentions marked as repeats), with an
    explicit stack (a deep DAG must not recurse); (lines, whether cut at `most`)."""
    lines: list[TreeLine] = []
    seen = {node}
    stack: list[tuple[int, Dependency]] = [(1, d) for d in reversed(children(node))]
    while stack:
        if len(lines) >= most:
            return lines, True
        depth, dependency = stack.pop()
        if dependency.node in seen:
            lines.append(TreeLine(depth, dependency, repeated=True))
            continue
        seen.add(dependency.node)
        lines.append(TreeLine(depth, dependency))
        stack.extend((depth + 1, d) for d in reversed(children(dependency.node)))
    return lines, False


def rows_of(index: Index, dependency: Dependency, tag: str | None = None) -> list[int]:
    """The rows (binaries) of a dependency's hash; those in `tag` first."""
    rows = index.lookup_hash(dependency.hash)
    if tag is not None:
        rows.sort(key=lambda r: index.field("tag", r) != tag)
    return rows


def _sorted(dependencies: list[Dependency]) -> list[Dependency]:
    return sorted(dependencies, key=lambda d: (d.name, d.version, d.hash))
