"""Spack build caches: every database version and layout, checked against expectations
written by hand from the format notes (tests/fixtures/buildcache/*/expected.json)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import BUILDCACHE

from cachetui.index.graph import Graph
from cachetui.model import split_flags
from cachetui.service import IndexService
from cachetui.sources.database import COMPILER_SOURCES
from cachetui.spack_format import unquoted

# fixture -> the SOURCE a user would give (the mirror root, or the file)
ENTRY = {
    "db-v5": "index.json",
    "db-legacy": "index.json",
    "db-v6": "index.json",
    "db-v7": "",
    "db-v8": "",
    "db-v8-gzip": "",
    "both-layouts": "",
    "tag-map": "cache_spack_io_index.json",
    "old-site": "",
}


def load(source: Path | str, tmp_path: Path | None = None):
    service = IndexService([str(source)], cache_dir=tmp_path, use_cache=tmp_path is not None)
    return service.load()


def expected(name: str) -> dict:
    return json.loads((BUILDCACHE / name / "expected.json").read_text())


def row_record(index, row: int, root: str) -> dict:
    """What the index says of a row, in expected.json's terms."""
    graph: Graph = index.graph
    node = graph.node_of_row(row)
    variants, flags = split_flags(index.variants(row))
    record = {
        "hash": index.hashes[row],
        "name": index.package_name(row),
        "version": index.field("version", row),
        "compiler": index.field("compiler", row),
        "platform": index.field("platform", row),
        "os": index.field("os", row),
        "target": index.field("target", row),
        "variants": sorted(variants),
        "flags": {f.split("=", 1)[0]: unquoted(f.split("=", 1)[1]).split(" ") for f in flags},
        "compiler_source": COMPILER_SOURCES[graph.compiler_source(node)]
        if node is not None
        else "none",
        "dependencies": [
            {
                "name": d.name,
                "hash": d.hash,
                "deptypes": sorted(d.deptype_names),
                "virtuals": list(d.virtuals),
            }
            for d in graph.dependencies(node)
        ]
        if node is not None
        else [],
        "tag": index.field("tag", row),
        "stacks": list(index.stacks(row)),
    }
    files = index.binary_files(row)
    for key, value in (
        ("spec_file_url", files.spec_file),
        ("tarball_url", files.tarball),
        ("manifest_url", files.manifest),
    ):
        if value is not None:
            record[key] = value.replace(root, "<root>", 1)
    return record


@pytest.mark.parametrize("name", sorted(ENTRY))
def test_each_database_version_and_layout_loads_as_the_notes_say(name):
    want = expected(name)
    root = str(BUILDCACHE / name)
    report = load(Path(root) / ENTRY[name] if ENTRY[name] else root)
    index = report.index
    got = sorted(
        (row_record(index, row, root) for row in range(index.n_specs)),
        key=lambda r: (r["hash"], r["tag"]),
    )
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
        server = ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(directory))
        )
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", handler.requests, server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_v3_mirror_root_over_http_loads_like_the_local_one(serve, tmp_path):
    base, requests, _ = serve(BUILDCACHE)
    report = load(f"{base}/db-v8/", tmp_path)
    index = report.index
    want = expected("db-v8")
    got = sorted(
        (row_record(index, row, f"{base}/db-v8") for row in range(index.n_specs)),
        key=lambda r: r["hash"],
    )
    assert [r["hash"] for r in got] == [e["hash"] for e in want["listed"]]
    for record, wanted in zip(got, want["listed"]):
        assert (
            record["compiler"] == wanted["compiler"]
            and record["dependencies"] == wanted["dependencies"]
        )
        assert record["manifest_url"] == wanted["manifest_url"]  # under the URL's root
    assert requests["/db-v8/v3/manifests/index/index.manifest.json"] == 1
    assert index.field("source", 0).startswith(base)  # named by its URL, not the cache file


def test_a_v2_index_is_fetched_again_only_when_its_hash_changes(serve, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(BUILDCACHE / "db-v7", mirror)
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
    (mirror / "build_cache" / "index.json.hash").write_text(
        hashlib.sha256(index_file.read_bytes()).hexdigest()
    )
    changed = load(f"{base}/", cache)
    assert requests["/build_cache/index.json"] == 2
    assert not changed.from_snapshot
    assert key not in set(changed.index.hashes)


def test_a_tag_map_over_http_labels_tags_and_stacks_and_reports_what_it_cannot_fetch(
    serve, tmp_path
):
    base, _, _ = serve(BUILDCACHE)
    report = load(f"{base}/tag-map/cache_spack_io_index.json", tmp_path)
    index = report.index
    got = sorted(
        (index.hashes[r], index.field("tag", r), list(index.stacks(r)))
        for r in range(index.n_specs)
    )
    assert got == sorted((e["hash"], e["tag"], e["stacks"]) for e in expected("tag-map")["listed"])
    # The s3:// entry cannot be reached here: one problem naming it; the rest loaded.
    unreachable = [p for p in report.problems if "binaries.spack.io/develop/tutorial" in p.source]
    assert (
        len(unreachable) == 1 and "cannot resolve host binaries.spack.io" in unreachable[0].message
    )


def test_url_failures_are_clear_problems_and_the_rest_still_loads(serve, tmp_path):
    site = tmp_path / "site"
    (site / "broken" / "build_cache").mkdir(parents=True)
    (site / "broken" / "build_cache" / "index.json").write_text("<html>not json</html>")
    (site / "truncated").mkdir()
    (site / "truncated" / "index.json.gz").write_bytes(
        gzip.compress(b'{"database": {"version": "8", "installs": {}}}' * 50)[:40]
    )
    base, _, _ = serve(site)
    service = IndexService(
        [
            f"{base}/nothing-here/build_cache/index.json",
            f"{base}/broken/",
            f"{base}/truncated/index.json.gz",
            str(BUILDCACHE / "db-v6" / "index.json"),
        ],
        cache_dir=tmp_path / "cache",
    )
    report = service.load()
    messages = {p.source: p.message for p in report.problems}
    assert messages[f"{base}/nothing-here/build_cache/index.json"] == "not found (HTTP 404)"
    assert messages[f"{base}/broken/build_cache/index.json"] == (
        "neither a cache.spack.io package summary (no YAML front matter) nor a Spack build-cache "
        "index (not JSON)"
    )
    assert "truncated gzip" in messages[f"{base}/truncated/index.json.gz"]
    assert report.index.n_specs == len(expected("db-v6")["listed"])  # the local source still loaded


def test_offline_a_fetched_index_is_used_from_the_cache_with_a_warning(serve, tmp_path):
    base, _, server = serve(BUILDCACHE)
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
    return {
        index.hashes[r]: [
            (d.name, d.hash, d.deptypes) for d in graph.dependencies(graph.node_of_row(r))
        ]
        for r in range(index.n_specs)
    }


def test_the_graph_survives_the_on_disk_index_and_a_damaged_graph_file_is_rebuilt(tmp_path):
    source = BUILDCACHE / "db-v7"
    cold = load(source, tmp_path)
    assert not cold.from_snapshot
    want = _deps_by_hash(cold.index)
    assert any(want.values())
    warm = load(source, tmp_path)
    assert warm.from_snapshot and _deps_by_hash(warm.index) == want
    used_by = {
        warm.index.hashes[r]: len(warm.index.graph.dependents(warm.index.graph.node_of_row(r)))
        for r in range(warm.index.n_specs)
    }
    assert used_by == {
        cold.index.hashes[r]: len(cold.index.graph.dependents(cold.index.graph.node_of_row(r)))
        for r in range(cold.index.n_specs)
    }

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


# -- bad, odd and hostile input: a clear problem, and the rest still loads --------------

V8_NODE = {
    "version": "1.0",
    "arch": {"platform": "linux", "platform_os": "rhel8", "target": "x86_64"},
}


def _hash(label: str) -> str:
    import base64

    return base64.b32encode(hashlib.sha1(label.encode()).digest()).decode().lower()


def _database(path: Path, specs: dict[str, list[str]], bad: dict | None = None) -> dict[str, str]:
    """A v8 database at `path`: name -> the names it links to. Returns name -> hash."""
    hashes = {name: _hash(str(path) + name) for name in specs}
    installs = {
        hashes[name]: {
            "spec": dict(
                V8_NODE,
                name=name,
                hash=hashes[name],
                dependencies=[
                    {
                        "name": d,
                        "hash": hashes.get(d) or _hash(d),
                        "parameters": {"deptypes": ["link"], "virtuals": []},
                    }
                    for d in deps
                ],
            ),
            "in_buildcache": True,
        }
        for name, deps in specs.items()
    }
    installs.update(bad or {})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"database": {"version": "8", "installs": installs}}))
    return hashes


def _problems(report) -> dict[str, str]:
    return {p.source: p.message for p in report.problems}


def test_a_gzip_file_that_is_not_an_index_is_not_inflated_to_find_out(tmp_path):
    (tmp_path / "pkg.spack").write_bytes(
        gzip.compress(b"\0" * 50_000_000)
    )  # a tarball, as far as we care
    _database(tmp_path / "db" / "index.json", {"zlib": []})
    report = load(tmp_path)
    assert (
        _problems(report)[str(tmp_path / "pkg.spack")]
        == "gzip data, but not a Spack build-cache index, manifest or spec file"
    )
    assert report.index.n_specs == 1


def test_broken_sources_of_every_kind_are_problems_and_the_rest_loads(tmp_path):
    good = tmp_path / "good.json"
    _database(good, {"zlib": []})
    nested = tmp_path / "nested-map.json"
    nested.write_text(
        '{"develop": [{"label": "x", "url": "y", "z": ' + "[" * 100_000 + "]" * 100_000 + "}]}"
    )
    truncated = tmp_path / "map.json.gz"
    truncated.write_bytes(
        gzip.compress(b'{"develop": [{"label": "root", "url": "good.json"}]}' * 20)[:30]
    )
    nul = tmp_path / "nul-map.json"
    nul.write_text(json.dumps({"develop": [{"label": "root", "url": "a\0b"}]}))
    sources = ["http://[::1/x", str(nested), str(truncated), str(nul), str(good)]
    report = IndexService(sources, use_cache=False).load()
    problems = _problems(report)
    assert "Invalid IPv6 URL" in problems["http://[::1/x"]
    assert (
        problems[str(nested)] == "data is nested too deeply to read"
        or "nested" in problems[str(nested)]
    )
    assert problems[str(truncated)]  # a gzip cut short: named, and skipped
    assert any("null" in m.lower() for s, m in problems.items() if s.endswith("a\0b"))
    assert report.index.n_specs == 1  # good.json still loaded


def test_one_bad_record_is_skipped_and_named(tmp_path):
    hashes = _database(
        tmp_path / "index.json",
        {"zlib": [], "cmake": ["zlib"]},
        bad={
            _hash("bad"): {
                "spec": dict(V8_NODE, name="bad", version={"no": 1}),
                "in_buildcache": "yes",
            }
        },
    )
    report = load(tmp_path / "index.json")
    assert sorted(report.index.hashes) == sorted(hashes.values())
    assert (
        f"1 install record(s) skipped: '{_hash('bad')}'"
        in _problems(report)[str(tmp_path / "index.json")]
    )


def test_a_database_without_edges_has_empty_dependencies_and_resolves_others_edges(
    tmp_path, capsys
):
    from cachetui.cli import main

    leaf = _database(tmp_path / "a.json", {"zlib": []})
    _database(tmp_path / "b.json", {"app": ["zlib"]})
    json.loads(json.dumps(leaf))
    (tmp_path / "b.json").write_text(
        (tmp_path / "b.json").read_text().replace(_hash("zlib"), leaf["zlib"])
    )
    assert main(["deps", leaf["zlib"], str(tmp_path / "a.json"), "--no-cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dependencies"] == []
    report = load(tmp_path)
    index = report.index
    app = next(r for r in range(index.n_specs) if index.package_name(r) == "app")
    (zlib,) = index.graph.dependencies(index.graph.node_of_row(app))
    assert (zlib.name, zlib.version, zlib.kind_name) == ("zlib", "1.0", "binary")


def test_no_binaries_is_a_warning_naming_the_file(tmp_path):
    path = tmp_path / "index.json"
    path.write_text(json.dumps({"database": {"version": "8", "installs": {}}}))
    _database(tmp_path / "other.json", {"zlib": []})
    assert _problems(load(tmp_path))[str(path)] == "lists no binaries"


def test_a_local_path_named_like_a_ref_gives_no_tag(tmp_path):
    shutil.copytree(BUILDCACHE / "db-v7", tmp_path / "develop" / "mymirror")
    index = load(tmp_path / "develop").index
    assert {index.field("tag", r) for r in range(index.n_specs)} == {"untagged"}
    assert {s for r in range(index.n_specs) for s in index.stacks(r)} == set()


def _older_page(page: Path, sizes: tuple[int, int] | None = None) -> tuple[str, str]:
    """An older cache.spack.io page listing two spec files: app (with its dependency lib) and
    lib alone, each with its archive_size when `sizes` gives them. (lib hash, app hash)."""
    page.mkdir(parents=True)
    lib, app = _hash("lib"), _hash("app")

    def node(name, h, deps):
        return dict(
            V8_NODE,
            name=name,
            hash=h,
            dependencies=[{"name": d, "hash": dh, "type": ["link"]} for d, dh in deps],
        )

    files = [[node("app", app, [("lib", lib)]), node("lib", lib, [])], [node("lib", lib, [])]]
    for at, nodes in enumerate(files):
        document: dict = {"spec": {"_meta": {"version": 3}, "nodes": nodes}}
        if sizes is not None:
            document["archive_size"] = sizes[at]
        (page / f"spec-{at}.json").write_text(json.dumps(document))
    (page / "index.md").write_text(
        "---\ntitle: app\ncategory: package\nspec_files: [spec-0.json, spec-1.json]\n---\n"
    )
    return lib, app


def test_an_older_page_lists_a_spec_file_root_that_another_lists_as_a_dependency(tmp_path):
    page = tmp_path / "_cache" / "app"
    lib, app = _older_page(page)
    index = load(page / "index.md").index
    assert sorted(index.hashes) == sorted([lib, app])


def test_sniffing_takes_spaced_json_and_crlf_spec_files(tmp_path):
    h = _hash("spaced")
    text = json.dumps(
        {"spec": {"_meta": {"version": 3}, "nodes": [dict(V8_NODE, name="spaced", hash=h)]}},
        indent=1,
    ).replace("\n", "\r\n")
    (tmp_path / "a.spec.json").write_text("{ " + text[1:])
    assert load(tmp_path / "a.spec.json").index.hashes[0] == h


def test_a_tag_map_that_lists_itself_is_read_once(tmp_path, monkeypatch):
    _database(tmp_path / "develop.json", {"zlib": []})
    (tmp_path / "map.json").write_text(
        json.dumps(
            {
                "develop": [
                    {"label": "root", "url": "develop.json"},
                    {"label": "again", "url": "map.json"},
                ]
            }
        )
    )
    monkeypatch.chdir(tmp_path)
    report = load("map.json")  # named relatively; it names itself from where it is
    assert report.files == 1 and report.index.n_specs == 1


def test_local_v3_changes_are_seen_by_the_next_start(tmp_path):
    root = tmp_path / "m"
    shutil.copytree(BUILDCACHE / "both-layouts", root)
    v3 = root / "v3" / "manifests" / "index" / "index.manifest.json"
    saved = v3.read_bytes()
    v3.unlink()
    cache = tmp_path / "cache"
    assert load(root, cache).index.n_specs == 2  # v2 only, for now
    v3.write_bytes(saved)  # the v3 index appears
    assert load(root, cache).index.n_specs == 3
    blob = next(p for p in (root / "blobs").rglob("*") if p.is_file())
    kept = blob.read_bytes()
    blob.unlink()
    assert load(root, cache).index.n_specs == 0 or "no such file" in " ".join(
        _problems(load(root, cache)).values()
    )
    blob.write_bytes(kept)  # the blob put right
    assert load(root, cache).index.n_specs == 3


def test_urls_root_without_slash_file_urls_and_a_remote_map_naming_local_files(serve, tmp_path):
    base, _, _ = serve(BUILDCACHE / "db-v8")
    assert load(base, tmp_path / "c1").index.n_specs == len(
        expected("db-v8")["listed"]
    )  # http://127.0.0.1:PORT
    assert load((BUILDCACHE / "db-v7").as_uri(), tmp_path / "c2").index.n_specs == len(
        expected("db-v7")["listed"]
    )
    site = tmp_path / "site"
    site.mkdir()
    (site / "map.json").write_text(
        json.dumps(
            {"develop": [{"label": "root", "url": (BUILDCACHE / "db-v6" / "index.json").as_uri()}]}
        )
    )
    base, _, _ = serve(site)
    report = load(f"{base}/map.json", tmp_path / "c3")
    assert report.index.n_specs == 0
    assert (
        "may only list http(s) and s3 URLs"
        in _problems(report)[(BUILDCACHE / "db-v6" / "index.json").as_uri()]
    )


def test_a_fetched_index_that_is_gone_is_reported_not_shown_from_the_cache(serve, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(BUILDCACHE / "db-v7", mirror)
    base, _, _ = serve(mirror)
    cache = tmp_path / "cache"
    url = f"{base}/build_cache/index.json"
    assert load(url, cache).index.n_specs == len(expected("db-v7")["listed"])
    (mirror / "build_cache" / "index.json").unlink()
    (mirror / "build_cache" / "index.json.hash").unlink()
    gone = load(url, cache)
    assert not gone.from_snapshot and gone.index.n_specs == 0
    assert _problems(gone)[url] == "not found (HTTP 404)"


def test_an_older_page_keeps_each_spec_files_size(tmp_path):
    """Every spec file's archive_size reaches its binary (once only the last one did)."""
    page = tmp_path / "_cache" / "develop" / "app"
    lib, app = _older_page(page, sizes=(1000, 2000))
    index = load(page / "index.md").index
    assert {index.hashes[row]: index.size(row) for row in range(index.n_specs)} == {
        app: 1000,
        lib: 2000,
    }
