"""`^dependency` as a walk up the graph: the array walk against a plain one, on real indexes."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from helpers import BUILDCACHE, SPACK_REAL

from cachetui.index.dependency_match import _reached_by_layers, _reaching, link_run_layers
from cachetui.service import IndexService
from cachetui.sources.database import LINK, RUN

V3_RICH = SPACK_REAL / "sources" / "v3-rich"  # deep: 151 records


def plain_reaching(graph, seeds: set[int], link_run: np.ndarray) -> set[int]:
    """Every node with a path of link/run edges to a seed: a breadth-first walk, edge by edge."""
    parents: dict[int, list[int]] = {}
    sources = graph.edge_sources()
    for edge, (source, target) in enumerate(zip(sources.tolist(), graph.parts.edge_to.tolist())):
        if link_run[edge]:
            parents.setdefault(target, []).append(source)
    reached, queue = set(seeds), list(seeds)
    while queue:
        for parent in parents.get(queue.pop(), []):
            if parent not in reached:
                reached.add(parent)
                queue.append(parent)
    return reached


@pytest.mark.parametrize(
    "wide_share", [1, 16, 10**9]
)  # levels always gathered; as shipped; always scanned
@pytest.mark.parametrize(
    "source",
    [BUILDCACHE / "db-v8", BUILDCACHE / "both-layouts", BUILDCACHE / "tag-map", V3_RICH],
    ids=lambda p: p.name,
)
def test_the_array_walk_reaches_what_a_plain_walk_does(
    source: Path, wide_share: int, monkeypatch
) -> None:
    if not source.exists():
        pytest.skip("../shared/real/spack is not beside the repository")
    monkeypatch.setattr("cachetui.index.dependency_match.WIDE_SHARE", wide_share)
    graph = IndexService([str(source)], use_cache=False).load().index.graph
    p = graph.parts
    link_run = (p.edge_types & (LINK | RUN)) != 0
    rng = random.Random(17)
    trials = [{n} for n in range(p.n_nodes)] + [
        set(rng.sample(range(p.n_nodes), k))
        for k in {min(2, p.n_nodes), min(5, p.n_nodes), p.n_nodes // 3}
        for _ in range(5)
    ]
    walked_wide = 0
    for seeds in trials:
        flags = np.zeros(p.n_nodes, dtype=bool)
        flags[list(seeds)] = True
        got = set(np.flatnonzero(_reaching(graph, flags, link_run)).tolist())
        assert got == plain_reaching(graph, seeds, link_run), sorted(seeds)
        walked_wide += len(got) > 2 * len(seeds)
    assert walked_wide  # some walks went several levels up (the wide scan among them)


@pytest.mark.parametrize(
    "source",
    [BUILDCACHE / "db-v8", BUILDCACHE / "both-layouts", BUILDCACHE / "tag-map", V3_RICH],
    ids=lambda p: p.name,
)
def test_the_layered_walk_reaches_what_a_plain_walk_does(source: Path) -> None:
    """The walk `^` takes on a graph without cycles: one pass over the link/run edges in
    layers by the height of their child."""
    if not source.exists():
        pytest.skip("../shared/real/spack is not beside the repository")
    graph = IndexService([str(source)], use_cache=False).load().index.graph
    p = graph.parts
    link_run = (p.edge_types & (LINK | RUN)) != 0
    layers = link_run_layers(graph)
    assert layers is not None
    rng = random.Random(23)
    trials = [{n} for n in range(p.n_nodes)] + [
        set(rng.sample(range(p.n_nodes), min(k, p.n_nodes))) for k in (2, 5, 9) for _ in range(5)
    ]
    for seeds in trials:
        flags = np.zeros(p.n_nodes, dtype=bool)
        flags[list(seeds)] = True
        got = set(np.flatnonzero(_reached_by_layers(layers, flags)).tolist())
        assert got == plain_reaching(graph, seeds, link_run), sorted(seeds)


def test_a_cycle_of_link_edges_falls_back_to_the_level_walk(tmp_path: Path) -> None:
    """A crafted index whose link edges go round: no layers, and `^` still answers."""
    import json

    def node(name: str, digest: str, to: str) -> dict:
        edge = {"name": "x", "hash": to, "parameters": {"deptypes": ["link"], "virtuals": []}}
        return {"name": name, "version": "1", "hash": digest, "dependencies": [edge]}

    a, b = "a" * 32, "b" * 32
    installs = {
        h: {"spec": node(n, h, t), "in_buildcache": True}
        for n, h, t in (("pa", a, b), ("pb", b, a))
    }
    (tmp_path / "build_cache").mkdir()
    (tmp_path / "build_cache" / "index.json").write_text(
        json.dumps({"database": {"version": "8", "installs": installs}})
    )
    index = IndexService([str(tmp_path)], use_cache=False).load().index
    assert link_run_layers(index.graph) is None
    from cachetui.index.evaluate import evaluate
    from cachetui.index.filter import Filter

    result = evaluate(index, Filter("^pb"), exact=True)
    assert {index.package_name(row) for row in index.rows_in(result.mask)} == {"pa", "pb"}
