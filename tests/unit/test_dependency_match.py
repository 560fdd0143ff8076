"""`^dependency` as a walk up the graph: the array walk against a plain one, on real indexes."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from helpers import BUILDCACHE, SPACK_REAL

from cachetui.index.dependency_match import _reaching
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
