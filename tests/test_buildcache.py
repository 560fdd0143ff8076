"""Spack build caches: every database version and layout, checked against expectations
written by hand from the format notes (tests/fixtures/buildcache/*/expected.json)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cachetui.index.graph import Graph
from cachetui.service import IndexService
from cachetui.sources.database import COMPILER_SOURCES, split_flags

FIXTURES = Path(__file__).parent / "fixtures" / "buildcache"
# fixture -> the SOURCE a user would give (the mirror root, or the file)
ENTRY = {
    "db-v5": "index.json", "db-legacy": "index.json", "db-v6": "index.json", "db-v7": "", "db-v8": "",
    "db-v8-gzip": "", "both-layouts": "", "tag-map": "cache_spack_io_index.json", "old-site": "",
}


def load(source: Path | str, tmp_path: Path | None = None):
    service = IndexService([str(source)], cache_dir=tmp_path, use_cache=tmp_path is not None)
    return service.load()


def expected(name: str) -> dict:
    return json.loads((FIXTURES / name / "expected.json").read_text())


def row_record(index, row: int, root: str) -> dict:
    """What the index says of a row, in expected.json's terms."""
    graph: Graph = index.graph
    node = graph.node_of_row(row)
    variants, flags = split_flags(index.variants(row))
    record = {
        "hash": index.hashes[row], "name": index.package_name(row), "version": index.field("version", row),
        "compiler": index.field("compiler", row), "platform": index.field("platform", row),
        "os": index.field("os", row), "target": index.field("target", row), "variants": sorted(variants),
        "flags": {f.split("=", 1)[0]: f.split("=", 1)[1].strip('"').split(" ") for f in flags},
        "compiler_source": COMPILER_SOURCES[graph.compiler_source(node)] if node is not None else "none",
        "dependencies": [{"name": d.name, "hash": d.hash, "deptypes": sorted(d.deptype_names), "virtuals": list(d.virtuals)}
                         for d in graph.dependencies(node)] if node is not None else [],
        "tag": index.field("tag", row), "stacks": list(index.stacks(row)),
    }
    files = index.binary_files(row)
    for key, value in (("spec_file_url", files.spec_file), ("tarball_url", files.tarball), ("manifest_url", files.manifest)):
        if value is not None:
            record[key] = value.replace(root, "<root>", 1)
    return record


@pytest.mark.parametrize("name", sorted(ENTRY))
def test_each_database_version_and_layout_loads_as_the_notes_say(name):
    want = expected(name)
    root = str(FIXTURES / name)
    report = load(Path(root) / ENTRY[name] if ENTRY[name] else root)
    index = report.index
    got = sorted((row_record(index, row, root) for row in range(index.n_specs)), key=lambda r: (r["hash"], r["tag"]))
    assert [(r["hash"]) for r in got] == [e["hash"] for e in want["listed"]]
    for record, wanted in zip(got, want["listed"]):
        for key, value in wanted.items():
            if key == "tag" and value is None:
                continue
            assert record.get(key) == value, f"{name} {wanted['name']} {key}"
    # The records kept only for the dependencies are nodes of the graph, not rows.
    graph = index.graph
    nodes = {graph.hash(n) for n in range(graph.parts.n_nodes)}
    assert set(want["unlisted"]) <= nodes
    assert not set(want["unlisted"]) & set(index.hashes)
