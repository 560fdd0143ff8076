"""Every file Spack writes, read as Spack reads it: for each Spack-written source in
../shared/real/spack, the specs, their fields and their dependencies equal what Spack 1.x
answered about them (expected/*.json). In the app: ui/test_spack_readers_app.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import SPACK_REAL

from cachetui import cli
from cachetui.service import IndexService
from cachetui.sources import read_file
from cachetui.sources.database import NODE_KINDS, deptype_names
from cachetui.spack_format import compiler_texts

REAL = SPACK_REAL
pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason="../shared/real/spack is not beside the repository"
)

SOURCES = REAL / "sources"
MIRRORS = (
    sorted(
        p.stem
        for p in (REAL / "expected").glob("*.json")
        if p.stem not in ("specfiles", "install-db")
    )
    if REAL.is_dir()
    else []
)
SPEC_FILES = json.loads((REAL / "expected" / "specfiles.json").read_text()) if REAL.is_dir() else {}


def expected(source: str) -> dict:
    return json.loads((REAL / "expected" / f"{source}.json").read_text())["mirror"]


def load(*paths: Path):
    return IndexService([str(p) for p in paths], use_cache=False).load()


def spack_edges(node: dict) -> list[tuple]:
    return sorted(
        (d["name"], d["hash"], tuple(sorted(d["deptypes"])), tuple(sorted(d["virtuals"])))
        for d in node["deps"]
    )


def graph_edges(graph, node: int) -> list[tuple]:
    return sorted(
        (d.name, d.hash, tuple(sorted(d.deptype_names)), tuple(sorted(d.virtuals)))
        for d in graph.dependencies(node)
    )


def compilers_of(index, row: int) -> list[str]:
    return sorted(text.rpartition("=")[2].lstrip("%") for text in compiler_texts(index, row))


@pytest.mark.parametrize("mirror", MIRRORS)
def test_every_spack_written_mirror_reads_as_spack_reads_it(mirror: str) -> None:
    want = expected(mirror)
    nodes = want["nodes"]
    report = load(SOURCES / mirror)
    index, graph = report.index, report.index.graph
    assert not report.errors
    # Spack lists its binaries and its externals; cachetui lists the binaries and keeps the
    # externals as the nodes edges lead to.
    binaries = {h for h in want["listed"] if not nodes[h]["external"]}
    assert {index.hashes[row] for row in range(index.n_specs)} == binaries and index.n_specs == len(
        binaries
    )
    for row in range(index.n_specs):
        node = nodes[index.hashes[row]]
        spec = index.spec(row)
        assert (spec.package, spec.version, spec.platform, spec.os, spec.target) == (
            node["name"],
            node["version"],
            node["platform"],
            node["os"],
            node["target"],
        ), node["name"]
        assert sorted(spec.variants) == sorted(node["variants"]) and compilers_of(
            index, row
        ) == sorted(node["compiler"])
        assert graph_edges(graph, graph.node_of_row(row)) == spack_edges(node), node["name"]
    for digest in set(want["listed"]) - binaries:
        external = next(n for n in range(graph.parts.n_nodes) if graph.hash(n) == digest)
        node = nodes[digest]
        assert (
            NODE_KINDS[graph.kind(external)],
            graph.name(external),
            graph.version(external),
            graph.external_path(external),
        ) == ("external", node["name"], node["version"], node["external_path"])


@pytest.mark.parametrize("name", sorted(SPEC_FILES))
def test_every_spec_file_reads_as_spack_reads_it(name: str) -> None:
    """Spec formats 1 to 5, clear-signed or not, JSON or Spack 0.16's YAML: every node with
    its fields, and every edge resolved (formats 1 and 2 name dependencies by name and by
    build_hash, not by the node's hash)."""
    path = next(p for p in SOURCES.rglob(name) if p.is_file())
    db, problems = read_file(str(path))
    assert db is not None and not problems, problems
    want = SPEC_FILES[name]
    assert db.hashes[0] == want["root"] and set(db.hashes) == set(want["nodes"])
    for at, digest in enumerate(db.hashes):
        node = want["nodes"][digest]
        assert (db.names[at], db.versions[at], db.platforms[at], db.oss[at], db.targets[at]) == (
            node["name"],
            node["version"],
            node["platform"],
            node["os"],
            node["target"],
        )
        assert sorted(db.variants[at]) == sorted(node["variants"]), node["name"]
        assert db.compilers[at] in (node["compiler"] or ["none"]), node["name"]
        edges = sorted(
            (
                db.names[db.edge_to[i]],
                db.hashes[db.edge_to[i]],
                tuple(sorted(deptype_names(db.edge_types[i]))),
                tuple(sorted(db.edge_virtuals[i])),
            )
            for i in range(len(db.edge_from))
            if db.edge_from[i] == at
        )
        assert edges == spack_edges(node), node["name"]
    # Loaded as a source: its root is the one binary listed, its dependencies a tree.
    index = load(path).index
    assert [index.hashes[row] for row in range(index.n_specs)] == [want["root"]]


def test_a_spec_manifest_given_alone_loads_from_its_mirror() -> None:
    """A v3 spec manifest names its spec file's blob; read from the mirror it sits in."""
    manifest = next(
        (SOURCES / "v3-migrated" / "v3" / "manifests" / "spec").rglob(
            "libdwarf-*-u5uz3dc*.spec.manifest.json"
        )
    )
    report = load(manifest)
    index = report.index
    assert not report.errors and [index.hashes[row] for row in range(index.n_specs)] == [
        "u5uz3dcch5if4eve4sef67o2rf2lbfgh"
    ]
    node = expected("v3-migrated")["nodes"]["u5uz3dcch5if4eve4sef67o2rf2lbfgh"]
    assert graph_edges(index.graph, index.graph.node_of_row(0)) == spack_edges(node)
    assert index.binary_files(0).manifest == str(manifest)


def test_a_spec_manifest_without_its_blob_says_so(tmp_path: Path) -> None:
    manifest = next(
        (SOURCES / "v3-migrated" / "v3" / "manifests" / "spec").rglob("libelf-*.spec.manifest.json")
    )
    alone = tmp_path / "mirror" / "v3" / "manifests" / "spec" / "libelf" / manifest.name
    alone.parent.mkdir(parents=True)
    shutil.copy(manifest, alone)
    report = load(alone)
    assert report.index.n_specs == 0
    assert [
        (p.source, "no such file" in p.message and "blobs/sha256/" in p.message)
        for p in report.errors
    ] == [(str(alone), True)]


@pytest.mark.parametrize(
    "mirror, ending",
    [
        ("v2-unsigned", ".spec.json"),
        ("v2-signed", ".spec.json.sig"),
        ("legacy-yaml-db6", ".spec.yaml"),
    ],
)
def test_spec_file_urls_name_the_file_the_mirror_holds(mirror: str, ending: str) -> None:
    index = load(SOURCES / mirror).index
    for row in range(index.n_specs):
        files = index.binary_files(row)
        assert files.spec_file.endswith(ending) and os.path.isfile(files.spec_file), files.spec_file
        assert os.path.isfile(files.tarball)


def test_an_install_database_lists_installed_specs_apart_from_binaries(capsys) -> None:
    """Spack's `buildcache list` shows none of an install database's specs as binaries (only
    its externals); cachetui lists them as installed specs, counted apart, with a facet."""
    want = expected("install-db")
    assert all(node["external"] for node in want["nodes"].values())  # Spack: no binary at all
    records = json.loads((SOURCES / "install-db" / "build_cache" / "index.json").read_text())[
        "database"
    ]["installs"]
    installed = {h for h, r in records.items() if r["installed"] and "external" not in r["spec"]}
    index = load(SOURCES / "install-db", SOURCES / "v2-unsigned").index
    kinds = {index.hashes[row]: index.field("kind", row) for row in range(index.n_specs)}
    assert {h for h, kind in kinds.items() if kind == "installed"} == installed
    assert {h for h, kind in kinds.items() if kind == "binary"} == {
        h for h, n in expected("v2-unsigned")["nodes"].items() if not n["external"]
    }
    assert dict(
        zip(index.facet_values["kind"], (b.bit_count() for b in index.facet_bits["kind"]))
    ) == {"binary": 6, "installed": len(installed)}
    # The externals are Spack's answer: kept apart, as the nodes installed specs depend on.
    graph = index.graph
    externals = {
        graph.hash(n): graph.external_path(n)
        for n in range(graph.parts.n_nodes)
        if NODE_KINDS[graph.kind(n)] == "external"
    }
    assert {h: path for h, path in externals.items() if h in want["nodes"]} == {
        h: n["external_path"] for h, n in want["nodes"].items()
    }
    # A query and the command line say which is which.
    sources = [str(SOURCES / "install-db"), str(SOURCES / "v2-unsigned"), "--no-cache"]
    assert cli.main(["search", "kind=installed", "--json", "--limit", "0", *sources]) == 0
    assert {s["hash"]: s["kind"] for s in json.loads(capsys.readouterr().out)["specs"]} == {
        h: "installed" for h in installed
    }
    assert cli.main(["stats", *sources]) == 0
    assert f"(6 binaries, {len(installed)} installed)" in capsys.readouterr().out.splitlines()[0]


def test_a_spec_installed_and_in_a_cache_is_listed_as_each(tmp_path: Path) -> None:
    """The same hash in a build cache and in an install database: a binary and an installed
    spec, not a duplicate dropped."""
    cache = json.loads((SOURCES / "v2-unsigned" / "build_cache" / "index.json").read_text())
    digest, record = next(
        (h, r) for h, r in cache["database"]["installs"].items() if r.get("in_buildcache")
    )
    local = {
        "database": {
            "version": "8",
            "installs": {
                digest: {
                    "spec": record["spec"],
                    "installed": True,
                    "ref_count": 0,
                    "path": "/opt/x",
                    "explicit": True,
                }
            },
        }
    }
    (tmp_path / "install").mkdir()
    (tmp_path / "install" / "index.json").write_text(json.dumps(local))
    report = load(SOURCES / "v2-unsigned", tmp_path / "install")
    index = report.index
    assert sorted(index.field("kind", row) for row in index.lookup_hash(digest)) == [
        "binary",
        "installed",
    ]
    assert not [p for p in report.problems if digest in p.message]


def test_a_compiler_no_record_holds_is_named_by_its_edge(tmp_path: Path) -> None:
    """An index whose compiler record is missing: the edge still names it (Spack's `%c=gcc`)."""
    cache = json.loads((SOURCES / "v2-unsigned" / "build_cache" / "index.json").read_text())
    installs = cache["database"]["installs"]
    gcc = next(h for h, r in installs.items() if r["spec"]["name"] == "gcc")
    del installs[gcc]
    (tmp_path / "build_cache").mkdir()
    (tmp_path / "build_cache" / "index.json").write_text(json.dumps(cache))
    index = load(tmp_path).index
    users = [
        row
        for row in range(index.n_specs)
        if any(d.hash == gcc for d in index.graph.dependencies(index.graph.node_of_row(row)))
    ]
    with_c = [
        row
        for row in users
        if any("c" in d.virtuals for d in index.graph.dependencies(index.graph.node_of_row(row)))
    ]
    assert with_c and all(index.field("compiler", row) == "gcc" for row in with_c)
    assert all(
        compiler_texts(index, row) == ["%c=gcc"] or compiler_texts(index, row) == ["%c,cxx=gcc"]
        for row in with_c
    )
