"""A large build-cache index is read in parts, by loader processes, and the result is the
index read whole: every row, every dependency, every compiler named across parts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

from cachetui.service import IndexService
from cachetui.sources import parallel, split


@pytest.fixture(scope="module")
def index_20k(tmp_path_factory) -> Path:
    """A database v8 of 20,000 binaries with ~6 edges each (benchmarks/make_index.py): ~30 MB."""
    out = tmp_path_factory.mktemp("index-20k")
    subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "make_index.py"),
            "--specs",
            "20000",
            "--packages",
            "400",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out


def view(report) -> tuple:
    """Every row with its dependencies and dependents, and every node of the graph, by hash."""
    index, graph = report.index, report.index.graph
    rows = []
    for row in range(index.n_specs):
        node = graph.node_of_row(row)
        deps = sorted(
            (d.hash, d.name, d.version, d.deptype_names, d.virtuals, d.kind_name)
            for d in graph.dependencies(node)
        )
        rows.append(
            (index.spec(row), graph.compiler_source(node), deps, len(graph.dependents(node)))
        )
    nodes = sorted(
        (graph.hash(n), graph.name(n), graph.version(n), graph.compiler(n), graph.kind(n))
        for n in range(graph.parts.n_nodes)
    )
    return (
        sorted(rows, key=lambda r: r[0].hash),
        nodes,
        [(p.source, p.message) for p in report.problems],
    )


def small_parts(monkeypatch, part_bytes: int = 2_000_000) -> None:
    monkeypatch.setattr(split, "SPLIT_BYTES", 2 * part_bytes)
    monkeypatch.setattr(split, "PART_BYTES", part_bytes)


def test_read_in_parts_by_loader_processes_it_is_the_index_read_whole(
    index_20k: Path, monkeypatch
) -> None:
    whole = IndexService([str(index_20k)], use_cache=False).load()
    assert whole.index.n_specs > 19_000 and len(whole.index.graph.parts.edge_to) > 100_000
    small_parts(monkeypatch)
    plan = split.plan(
        str(index_20k / "build_cache" / "index.json"),
        "x",
        (index_20k / "build_cache" / "index.json").stat().st_size,
    )
    assert (
        plan is not None and len(plan.ranges) >= 10
    )  # really cut, and so edges and compilers cross parts
    parted = IndexService([str(index_20k)], use_cache=False).load()
    assert view(parted) == view(whole)


def test_read_in_parts_in_one_process_it_is_the_index_read_whole(
    index_20k: Path, monkeypatch
) -> None:
    whole = IndexService([str(index_20k)], use_cache=False).load()
    small_parts(monkeypatch)
    monkeypatch.setattr(parallel, "default_workers", lambda: 1)
    assert view(IndexService([str(index_20k)], use_cache=False).load()) == view(whole)


def test_a_cut_in_a_wrong_place_reads_the_file_whole(index_20k: Path, monkeypatch) -> None:
    whole = IndexService([str(index_20k)], use_cache=False).load()
    small_parts(monkeypatch)
    cut = split.plan

    def wrong(*args, **kwargs):
        planned = cut(*args, **kwargs)
        start, end = planned.ranges[1]
        planned.ranges[1:2] = [(start, start + 777), (start + 777, end)]  # inside a record
        return planned

    monkeypatch.setattr(split, "plan", wrong)
    assert view(IndexService([str(index_20k)], use_cache=False).load()) == view(whole)


def test_a_v3_index_blob_is_read_in_parts_too(index_20k: Path, tmp_path: Path, monkeypatch) -> None:
    mirror = tmp_path / "v3"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "make_index.py"),
            "--specs",
            "20000",
            "--packages",
            "400",
            "--out",
            str(mirror),
            "--layout",
            "v3",
        ],
        check=True,
        capture_output=True,
    )
    whole = IndexService([str(mirror)], use_cache=False).load()
    small_parts(monkeypatch)
    from cachetui.sources import large_database, resolve

    [manifest] = resolve.resolve([str(mirror)], None).files
    assert large_database(manifest) is not None  # the manifest's blob is what is cut
    assert view(IndexService([str(mirror)], use_cache=False).load()) == view(whole)


def test_a_large_install_database_is_read_in_parts_as_installed_specs(
    index_20k: Path, tmp_path: Path, monkeypatch
) -> None:
    """No record says `in_buildcache`: a local install database, its specs listed as
    installed, in parts as whole."""
    import json

    data = json.loads((index_20k / "build_cache" / "index.json").read_text())
    for record in data["database"]["installs"].values():
        record.pop("in_buildcache", None)
    (tmp_path / "build_cache").mkdir()
    (tmp_path / "build_cache" / "index.json").write_text(json.dumps(data))
    whole = IndexService([str(tmp_path)], use_cache=False).load()
    assert whole.index.n_specs > 19_000 and whole.index.facet_values["kind"] == ["installed"]
    small_parts(monkeypatch)
    assert view(IndexService([str(tmp_path)], use_cache=False).load()) == view(whole)
