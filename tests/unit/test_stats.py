"""The stats screen's figures (index/stats.py). The charts and the view that shows them
(widgets/stats_view.py): ui/test_stats_view.py.

Expected figures are counted here from the sample files read with plain json (helpers'
SAMPLE), never from the index's own bitsets."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from helpers import SAMPLE, bits_of

from cachetui.index.filter import Filter
from cachetui.index.stats import CHART_FACETS, Summary, summarize, title_for
from cachetui.service import IndexService

FIELD = {"stack": "stacks", "os": "os", "target": "target", "compiler": "compiler"}


@pytest.fixture(scope="module")
def index():
    return IndexService(use_cache=False).load().index


def _values(record: dict, facet: str) -> list[str]:
    if facet == "stack":
        return list(record["stacks"])
    if facet == "compiler":
        return [record["compiler"].replace("@=", "@")]  # Spack 1.x writes gcc@=11.4.0
    return [record[FIELD[facet]]]


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(
        ((value, n) for value, n in counts.items() if n), key=lambda item: (-item[1], item[0])
    )


def expected(records: list[dict], top: int = 10, matrix_limit: int = 60) -> Summary:
    """A Summary counted from the records alone."""
    facets = {
        facet: _ranked(Counter(v for rec in records for v in _values(rec, facet)))
        for facet in CHART_FACETS
    }
    stacks = [s for s, _ in facets["stack"][:matrix_limit]]
    targets = [t for t, _ in facets["target"][:matrix_limit]]
    matrix = [
        [sum(1 for rec in records if s in rec["stacks"] and rec["target"] == t) for t in targets]
        for s in stacks
    ]
    packages = _ranked(Counter(SAMPLE.package_of[rec["hash"]] for rec in records))
    return Summary(
        specs=len(records),
        packages=len(packages),
        facets=facets,
        matrix_stacks=stacks,
        matrix_targets=targets,
        matrix=matrix,
        top_packages=packages[:top],
    )


# -- the figures -----------------------------------------------------------------------------


def test_summary_of_every_spec_matches_the_sample_files(index) -> None:
    assert summarize(index, index.all_rows) == expected(SAMPLE.records)


def test_summary_of_a_filter_matches_the_sample_files(index) -> None:
    mask = bits_of(index, "os", "ubuntu22.04")
    assert summarize(index, mask) == expected(
        [rec for rec in SAMPLE.records if rec["os"] == "ubuntu22.04"]
    )
    both = mask & bits_of(index, "stack", "e4s")
    assert summarize(index, both) == expected(
        [rec for rec in SAMPLE.records if rec["os"] == "ubuntu22.04" and "e4s" in rec["stacks"]]
    )


def test_summary_figures_written_by_hand(index) -> None:
    summary = summarize(index, index.all_rows)
    assert (summary.specs, summary.packages) == (336, 3)
    assert summary.top_packages == [
        ("py-ml-dtypes", 129),
        ("py-safetensors", 116),
        ("py-mpi4py", 91),
    ]
    assert summary.facets["os"] == [
        ("ubuntu24.04", 197),
        ("ubuntu22.04", 80),
        ("sequoia", 54),
        ("ubuntu20.04", 5),
    ]
    assert summary.facets["target"] == [
        ("x86_64_v3", 181),
        ("aarch64", 137),
        ("neoverse_v2", 12),
        ("neoverse_v1", 6),
    ]
    assert summary.facets["compiler"][:2] == [("gcc@13.2.0", 197), ("gcc@11.4.0", 70)]
    assert summary.facets["stack"][:3] == [
        ("root", 336),
        ("ml-linux-x86_64-cpu", 82),
        ("ml-linux-x86_64-cuda", 76),
    ]
    assert len(summary.facets["stack"]) == 14
    assert sum(n for _, n in summary.facets["stack"]) > summary.specs  # a spec is in several stacks
    assert summary.matrix_stacks[0] == "root" and summary.matrix_targets == [
        "x86_64_v3",
        "aarch64",
        "neoverse_v2",
        "neoverse_v1",
    ]
    assert summary.matrix[0] == [181, 137, 12, 6]  # every spec is in root
    assert summary.matrix[1] == [82, 0, 0, 0]  # ml-linux-x86_64-cpu
    assert summary.matrix_max == 181

    ubuntu22 = summarize(index, bits_of(index, "os", "ubuntu22.04"))
    assert ubuntu22.specs == 80
    assert ubuntu22.facets["os"] == [("ubuntu22.04", 80)]


def test_random_masks_match_a_row_by_row_count(index) -> None:
    """Against the index's own row fields, row by row: the bitset arithmetic is exact."""
    draw = random.Random(8)
    for _ in range(20):
        rows = [r for r in range(index.n_specs) if draw.random() < draw.choice((0.02, 0.3, 0.9))]
        summary = summarize(index, index.rows_of(rows), top=2, matrix_limit=3)
        by = {
            "stack": Counter(s for r in rows for s in index.stacks(r)),
            **{
                facet: Counter(index.field(facet, r) for r in rows)
                for facet in ("os", "target", "compiler")
            },
        }
        assert summary.specs == len(rows)
        assert summary.facets == {facet: _ranked(by[facet]) for facet in CHART_FACETS}
        packages = _ranked(Counter(index.package_name(r) for r in rows))
        assert (summary.packages, summary.top_packages) == (len(packages), packages[:2])
        assert summary.matrix_stacks == [s for s, _ in _ranked(by["stack"])[:3]]
        assert summary.matrix_targets == [t for t, _ in _ranked(by["target"])[:3]]
        assert summary.matrix == [
            [
                sum(1 for r in rows if s in index.stacks(r) and index.field("target", r) == t)
                for t in summary.matrix_targets
            ]
            for s in summary.matrix_stacks
        ]


def test_limits_and_an_empty_mask(index) -> None:
    summary = summarize(index, index.all_rows, top=2, matrix_limit=3)
    assert summary.top_packages == [("py-ml-dtypes", 129), ("py-safetensors", 116)]
    assert summary.packages == 3
    assert summary.matrix_stacks == ["root", "ml-linux-x86_64-cpu", "ml-linux-x86_64-cuda"]
    assert summary.matrix == [[181, 137, 12], [82, 0, 0], [76, 0, 0]]
    assert summarize(index, index.all_rows, top=0).top_packages == []

    empty = summarize(index, 0)
    assert (empty.specs, empty.packages, empty.top_packages, empty.matrix, empty.matrix_max) == (
        0,
        0,
        [],
        [],
        0,
    )
    assert empty.facets == {facet: [] for facet in CHART_FACETS}


def test_ties_go_by_name(synthetic) -> None:
    index = IndexService([str(synthetic)], use_cache=False).load().index
    summary = summarize(index, index.all_rows)
    assert summary.facets["os"] == [
        ("ubuntu22.04", 3),
        ("ubuntu24.04", 2),
        ("rhel8", 1),
        ("sequoia", 1),
    ]
    assert summary.top_packages == [("zlib", 4), ("py-numpy", 2), ("zlib-ng", 1)]
    rhel_or_sequoia = bits_of(index, "os", "rhel8") | bits_of(index, "os", "sequoia")
    assert summarize(index, rhel_or_sequoia).top_packages == [("py-numpy", 1), ("zlib", 1)]
    assert summarize(index, rhel_or_sequoia, top=1).top_packages == [("py-numpy", 1)]
    assert summarize(index, rhel_or_sequoia).facets["compiler"] == [("gcc@11.4.0", 1), ("none", 1)]


def test_the_title_says_what_the_stats_are_of() -> None:
    assert title_for(Filter()) == "Stats · all specs"
    assert (
        title_for(Filter.of(" zlib ", {"os": {"ubuntu24.04", "ubuntu22.04"}, "stack": {"e4s"}}))
        == 'Stats · "zlib" · os: ubuntu22.04, ubuntu24.04 · stack: e4s'
    )
