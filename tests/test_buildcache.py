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


# -- over HTTP: a real server on 127.0.0.1 ------------------------------------------------

import functools  # noqa: E402
import gzip  # noqa: E402
import hashlib  # noqa: E402
import threading  # noqa: E402
from collections import Counter  # noqa: E402
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402


class _Handler(SimpleHTTPRequestHandler):
    requests: Counter  # path -> GETs answered with a body (200)

    def log_message(self, *args):  # keep the test output clean
        pass

    def send_response(self, code, message=None):
        if code == 200 and self.command == "GET":
            self.requests[self.path] += 1
        super().send_response(code, message)


@pytest.fixture
def serve():
    """serve(directory) -> (base URL, Counter of bodies sent by path); stopped after the test."""
    servers = []

    def start(directory: Path):
        handler = type("Handler", (_Handler,), {"requests": Counter()})
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", handler.requests, server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_v3_mirror_root_over_http_loads_like_the_local_one(serve, tmp_path):
    base, requests, _ = serve(FIXTURES)
    report = load(f"{base}/db-v8/", tmp_path)
    index = report.index
    want = expected("db-v8")
    got = sorted((row_record(index, row, f"{base}/db-v8") for row in range(index.n_specs)), key=lambda r: r["hash"])
    assert [r["hash"] for r in got] == [e["hash"] for e in want["listed"]]
    for record, wanted in zip(got, want["listed"]):
        assert record["compiler"] == wanted["compiler"] and record["dependencies"] == wanted["dependencies"]
        assert record["manifest_url"] == wanted["manifest_url"]  # under the URL's root
    assert requests["/db-v8/v3/manifests/index/index.manifest.json"] == 1
    assert index.field("source", 0).startswith(base)  # named by its URL, not the cache file


def test_a_v2_index_is_fetched_again_only_when_its_hash_changes(serve, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(FIXTURES / "db-v7", mirror)
    base, requests, _ = serve(mirror)
    cache = tmp_path / "cache"
    first = load(f"{base}/", cache)
    assert first.index.n_specs == len(expected("db-v7")["listed"])
    assert requests["/build_cache/index.json"] == 1

    again = load(f"{base}/", cache)
    assert again.from_snapshot and again.index.n_specs == first.index.n_specs
    assert requests["/build_cache/index.json"] == 1  # the hash matched: the body was not sent again

    # Spack rewrites the index and its hash: the next start sees the change.
    index_file = mirror / "build_cache" / "index.json"
    data = json.loads(index_file.read_text())
    key = next(iter(data["database"]["installs"]))
    del data["database"]["installs"][key]
    index_file.write_text(json.dumps(data))
    (mirror / "build_cache" / "index.json.hash").write_text(hashlib.sha256(index_file.read_bytes()).hexdigest())
    changed = load(f"{base}/", cache)
    assert requests["/build_cache/index.json"] == 2
    assert not changed.from_snapshot
    assert key not in set(changed.index.hashes)


def test_a_tag_map_over_http_labels_tags_and_stacks_and_reports_what_it_cannot_fetch(serve, tmp_path):
    base, _, _ = serve(FIXTURES)
    report = load(f"{base}/tag-map/cache_spack_io_index.json", tmp_path)
    index = report.index
    got = sorted((index.hashes[r], index.field("tag", r), list(index.stacks(r))) for r in range(index.n_specs))
    assert got == sorted((e["hash"], e["tag"], e["stacks"]) for e in expected("tag-map")["listed"])
    # The s3:// entry cannot be reached here: one problem naming it; the rest loaded.
    unreachable = [p for p in report.problems if "binaries.spack.io/develop/tutorial" in p.source]
    assert len(unreachable) == 1 and "cannot resolve host binaries.spack.io" in unreachable[0].message


def test_url_failures_are_clear_problems_and_the_rest_still_loads(serve, tmp_path):
    site = tmp_path / "site"
    (site / "broken" / "build_cache").mkdir(parents=True)
    (site / "broken" / "build_cache" / "index.json").write_text("<html>not json</html>")
    (site / "truncated").mkdir()
    (site / "truncated" / "index.json.gz").write_bytes(gzip.compress(b'{"database": {"version": "8", "installs": {}}}' * 50)[:40])
    base, _, _ = serve(site)
    service = IndexService([f"{base}/nothing-here/build_cache/index.json", f"{base}/broken/", f"{base}/truncated/index.json.gz",
                            str(FIXTURES / "db-v6" / "index.json")], cache_dir=tmp_path / "cache")
    report = service.load()
    messages = {p.source: p.message for p in report.problems}
    assert messages[f"{base}/nothing-here/build_cache/index.json"] == "not found (HTTP 404)"
    assert messages[f"{base}/broken/build_cache/index.json"] == (
        "neither a cache.spack.io package summary (no YAML front matter) nor a Spack build-cache index (not JSON)")
    assert "truncated gzip" in messages[f"{base}/truncated/index.json.gz"]
    assert report.index.n_specs == len(expected("db-v6")["listed"])  # the local source still loaded


def test_offline_a_fetched_index_is_used_from_the_cache_with_a_warning(serve, tmp_path):
    base, _, server = serve(FIXTURES)
    cache = tmp_path / "cache"
    first = load(f"{base}/db-v7/", cache)
    server.shutdown()
    server.server_close()
    again = load(f"{base}/db-v7/", cache)
    assert again.index.n_specs == first.index.n_specs
    notes = [p for p in again.problems if p.severity == "warning" and "using the copy" in p.message]
    assert notes and "connection refused" in notes[0].message


# -- the on-disk index keeps the graph ---------------------------------------------------


def _deps_by_hash(index) -> dict[str, list[tuple[str, str, int]]]:
    graph = index.graph
    return {index.hashes[r]: [(d.name, d.hash, d.deptypes) for d in graph.dependencies(graph.node_of_row(r))] for r in range(index.n_specs)}


def test_the_graph_survives_the_on_disk_index_and_a_damaged_graph_file_is_rebuilt(tmp_path):
    source = FIXTURES / "db-v7"
    cold = load(source, tmp_path)
    assert not cold.from_snapshot
    want = _deps_by_hash(cold.index)
    assert any(want.values())
    warm = load(source, tmp_path)
    assert warm.from_snapshot and _deps_by_hash(warm.index) == want
    used_by = {warm.index.hashes[r]: len(warm.index.graph.dependents(warm.index.graph.node_of_row(r))) for r in range(warm.index.n_specs)}
    assert used_by == {cold.index.hashes[r]: len(cold.index.graph.dependents(cold.index.graph.node_of_row(r))) for r in range(cold.index.n_specs)}

    graph_file = next(tmp_path.glob("*.graph"))
    data = bytearray(graph_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph_file.write_bytes(bytes(data))
    damaged = load(source, tmp_path)
    assert damaged.from_snapshot and damaged.index.n_specs == cold.index.n_specs
    assert not damaged.index.graph  # no graph, no crash, and a reason to show
    assert "checksum mismatch" in damaged.index.graph_problem
    rebuilt = load(source, tmp_path)  # the snapshot was dropped with it: built again
    assert not rebuilt.from_snapshot and _deps_by_hash(rebuilt.index) == want
