"""`cachetui check`: an environment against caches built from its own specs, some as they
are and some changed in one field each. The report names exactly the field that differs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from environments import (
    HDF5,
    by_name,
    changed,
    closure,
    node_of,
    real_nodes,
    with_node,
    write_cache,
    write_lockfile,
)
from helpers import SPACK_REAL, fake_hash

from cachetui.cli import main
from cachetui.model import DepType, EnvironmentSpec
from cachetui.sources.environment import read_environment

pytestmark = pytest.mark.skipif(not SPACK_REAL.exists(), reason="needs ../shared/real")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys, lock: Path, cache: Path) -> tuple[int, dict]:
    code, out, err = run(capsys, "check", str(lock), str(cache), "--json", "--no-cache")
    return code, json.loads(out)


@pytest.fixture
def env_nodes() -> dict[str, dict]:
    return closure(real_nodes(), HDF5)


@pytest.fixture
def lock(tmp_path: Path, env_nodes) -> Path:
    return write_lockfile(tmp_path / "env" / "spack.lock", env_nodes, [HDF5])


def spec_of(report: dict, name: str) -> dict:
    return next(s for s in report["specs"] if s["name"] == name)


def test_every_spec_in_the_cache_is_a_hit(capsys, tmp_path, env_nodes, lock) -> None:
    cache = write_cache(tmp_path / "cache", env_nodes)
    code, report = check_json(capsys, lock, cache)
    assert code == 0
    summary = report["summary"]
    externals = sum(1 for n in env_nodes.values() if n.get("external"))
    assert summary["specs"] == len(env_nodes)
    assert summary["hits"] == len(env_nodes) - externals
    assert (summary["misses"], summary["externals"]) == (0, externals)
    assert (summary["roots"], summary["roots_covered"]) == (1, 1)
    assert {s["hash"] for s in report["specs"]} == set(env_nodes)
    assert spec_of(report, "hdf5")["root"] is True
    assert all(s["status"] in ("hit", "external") for s in report["specs"])


# Each change and the one difference the report must name: (package, change, field, yours,
# cache). The packages are leaves of the environment, so nothing below them changes too.
ONE_FIELD_CHANGES = [
    ("xz", lambda n: n.update(version="5.2.5"), "version", "5.2.4", "5.2.5"),
    (
        "libsigsegv",
        lambda n: n["annotations"].update(compiler="gcc@=10.2.0"),
        "compiler",
        "gcc@9.4.0",
        "gcc@10.2.0",
    ),
    (
        "libiconv",
        lambda n: n["arch"].update(platform_os="rhel8"),
        "os",
        "ubuntu20.04",
        "rhel8",
    ),
    (
        "util-macros",
        lambda n: n["arch"]["target"].update(name="icelake"),
        "target",
        "skylake_avx512",
        "icelake",
    ),
    ("pkgconf", lambda n: n["arch"].update(platform="freebsd"), "platform", "linux", "freebsd"),
    ("zlib", lambda n: n["parameters"].update(pic=False), "variant:pic", "+pic", "~pic"),
]


def test_a_miss_names_exactly_the_field_that_differs(capsys, tmp_path, env_nodes, lock) -> None:
    cache_nodes = dict(env_nodes)
    for name, change, *_ in ONE_FIELD_CHANGES:
        old = by_name(env_nodes, name)
        assert not env_nodes[old].get("dependencies"), f"{name} is not a leaf"
        cache_nodes = with_node(cache_nodes, old, changed(env_nodes[old], change))
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cache_nodes))
    assert code == 1
    for name, _, field, yours, cache in ONE_FIELD_CHANGES:
        spec = spec_of(report, name)
        assert spec["status"] == "miss", name
        assert len(spec["nearest"]) == 1
        assert spec["nearest"][0]["differences"] == [
            {"field": field, "yours": yours, "cache": cache}
        ], name
    assert report["summary"]["misses"] == len(ONE_FIELD_CHANGES)
    assert report["summary"]["roots_covered"] == 0  # hdf5 hits, but not what it links with
    assert spec_of(report, "hdf5")["status"] == "hit"


def rebuilt_chain(nodes: dict[str, dict], names: list[str], change) -> dict[str, dict]:
    """`names[-1]` changed by `change`, and each name before it rebuilt against the one after
    it (the same fields, a new hash): what a cache built with one different leaf holds."""
    out = dict(nodes)
    below_old = by_name(nodes, names[-1])
    below_new = changed(nodes[below_old], change)
    out = with_node(out, below_old, below_new)
    for name in reversed(names[:-1]):
        old = by_name(nodes, name)

        def relink(node, old_hash=below_old, new_hash=below_new["hash"]):
            for edge in node["dependencies"]:
                if edge["hash"] == old_hash:
                    edge["hash"] = new_hash

        new = changed(nodes[old], relink)
        out = with_node(out, old, new)
        below_old, below_new = old, new
    return out


def test_a_dependency_only_difference_is_named_down_to_the_spec_that_differs(
    capsys, tmp_path, env_nodes, lock
) -> None:
    # hdf5 rebuilt against a zlib that is ~shared: hdf5's own fields are the same.
    cache_nodes = rebuilt_chain(
        env_nodes, ["hdf5", "zlib"], lambda n: n["parameters"].update(shared=False)
    )
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cache_nodes))
    assert code == 1
    nearest = spec_of(report, "hdf5")["nearest"]
    assert nearest[0]["differences"] == [
        {"field": "dependency:zlib", "yours": "+shared", "cache": "~shared", "path": ["zlib"]}
    ]
    assert spec_of(report, "zlib")["nearest"][0]["differences"] == [
        {"field": "variant:shared", "yours": "+shared", "cache": "~shared"}
    ]


def test_a_difference_two_levels_down_is_followed(capsys, tmp_path, env_nodes, lock) -> None:
    # m4 -> libsigsegv: m4 rebuilt against a libsigsegv of another version.
    chain = ["m4", "libsigsegv"]
    assert by_name(env_nodes, "libsigsegv") in {
        d["hash"] for d in env_nodes[by_name(env_nodes, "m4")]["dependencies"]
    }
    parents = [
        h
        for h, n in env_nodes.items()
        if by_name(env_nodes, "m4") in {d["hash"] for d in n.get("dependencies", [])}
    ]
    top = env_nodes[parents[0]]["name"]
    cache_nodes = rebuilt_chain(env_nodes, [top, *chain], lambda n: n.update(version="2.14"))
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cache_nodes))
    differences = spec_of(report, top)["nearest"][0]["differences"]
    assert differences == [
        {
            "field": "dependency:libsigsegv",
            "yours": "@2.12",
            "cache": "@2.14",
            "path": ["m4", "libsigsegv"],
        }
    ]


def test_nearest_are_ranked_by_how_little_differs(capsys, tmp_path, env_nodes, lock) -> None:
    zlib = by_name(env_nodes, "zlib")
    node = env_nodes[zlib]
    two = changed(node, lambda n: n.update(version="1.3") or n["parameters"].update(pic=False))
    one = changed(node, lambda n: n["parameters"].update(pic=False))
    three = changed(
        node,
        lambda n: n.update(version="1.3") or n["parameters"].update(pic=False, shared=False),
    )
    four = changed(
        node,
        lambda n: (
            n.update(version="1.3")
            or n["parameters"].update(pic=False, shared=False, optimize=False)
        ),
    )
    cache_nodes = with_node(env_nodes, zlib, two)
    for extra in (four, one, three):
        cache_nodes[extra["hash"]] = extra
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cache_nodes))
    nearest = spec_of(report, "zlib")["nearest"]
    assert [n["hash"] for n in nearest] == [one["hash"], two["hash"], three["hash"]]
    assert [len(n["differences"]) for n in nearest] == [1, 2, 3]


def test_externals_are_listed_apart_and_do_not_count_as_misses(capsys, tmp_path, env_nodes) -> None:
    perl = by_name(env_nodes, "perl")
    env = dict(env_nodes)
    env[perl] = {**env[perl], "external": {"path": "/usr", "module": None}}
    lock = write_lockfile(tmp_path / "spack.lock", env, [HDF5])
    cache = write_cache(tmp_path / "cache", {h: n for h, n in env_nodes.items() if h != perl})
    code, report = check_json(capsys, lock, cache)
    assert code == 0
    assert spec_of(report, "perl")["status"] == "external"
    assert report["summary"]["externals"] >= 1
    assert report["summary"]["roots_covered"] == 1


def test_a_package_the_cache_lacks_is_a_miss_with_no_nearest(
    capsys, tmp_path, env_nodes, lock
) -> None:
    zlib = by_name(env_nodes, "zlib")
    cache = write_cache(tmp_path / "cache", {h: n for h, n in env_nodes.items() if h != zlib})
    code, out, _ = run(capsys, "check", str(lock), str(cache), "--no-cache")
    assert code == 1
    assert "miss      zlib@1.2.11" in out
    assert "no cached spec of this package" in out
    assert out.strip().splitlines()[-1].startswith(f"{len(env_nodes) - 1} of {len(env_nodes)}")


def test_text_report_shows_each_difference(capsys, tmp_path, env_nodes, lock) -> None:
    zlib = by_name(env_nodes, "zlib")
    cache_nodes = with_node(
        env_nodes, zlib, changed(env_nodes[zlib], lambda n: n["parameters"].update(pic=False))
    )
    code, out, _ = run(
        capsys, "check", str(lock), str(write_cache(tmp_path / "c", cache_nodes)), "--no-cache"
    )
    assert code == 1
    assert "variant:pic: +pic vs ~pic" in out
    assert "0 of 1 root wholly from the cache" in out


def test_an_environment_that_cannot_be_read_is_a_usage_error(capsys, tmp_path) -> None:
    bad = tmp_path / "spack.lock"
    bad.write_text("{not json")
    code, out, err = run(capsys, "check", str(bad), "--no-cache")
    assert code == 2
    assert str(bad) in err and not out


ENVIRONMENTS = Path(__file__).parent.parent / "fixtures" / "environments"
LOCKFILES = sorted(ENVIRONMENTS.glob("v*.spack.lock"))


def test_there_is_a_lockfile_of_every_version() -> None:
    assert [p.name for p in LOCKFILES] == [f"v{n}.spack.lock" for n in range(1, 7)]


@pytest.mark.parametrize("lock", LOCKFILES, ids=lambda p: p.name)
def test_every_lockfile_version_hits_and_misses(capsys, tmp_path: Path, lock: Path) -> None:
    specs = read_environment(str(lock)).specs
    nodes = {s.hash: node_of(s) for s in specs}
    code, report = check_json(capsys, lock, write_cache(tmp_path / "as-is", nodes))
    assert code == 0
    externals = {s.hash for s in specs if s.external}
    assert {s["hash"]: s["status"] for s in report["specs"]} == {
        s.hash: "external" if s.hash in externals else "hit" for s in specs
    }
    # A spec a root links with (no external), in the cache at another version.
    by_hash = {s.hash: s for s in specs}
    root = next(s for s in specs if s.root)
    leaf = next(
        by_hash[h]
        for _, h, bits in root.dependencies
        if bits & (DepType.LINK | DepType.RUN) and h in by_hash and not by_hash[h].external
    )
    other = changed(nodes[leaf.hash], lambda n: n.update(version=leaf.version + ".99"))
    cache = write_cache(tmp_path / "changed", with_node(nodes, leaf.hash, other))
    code, report = check_json(capsys, lock, cache)
    assert code == 1
    missed = [s for s in report["specs"] if s["status"] == "miss"]
    assert [s["hash"] for s in missed] == [leaf.hash]
    assert missed[0]["nearest"][0]["differences"] == [
        {"field": "version", "yours": leaf.version, "cache": leaf.version + ".99"}
    ]

    def links_with(spec, hash_: str) -> bool:
        return spec.hash == hash_ or any(
            bits & (DepType.LINK | DepType.RUN) and h in by_hash and links_with(by_hash[h], hash_)
            for _, h, bits in spec.dependencies
        )

    roots = [s for s in specs if s.root]
    assert report["summary"]["roots_covered"] == sum(not links_with(r, leaf.hash) for r in roots)
    assert report["summary"]["roots_covered"] < len(roots)


def test_an_environment_directory_a_spec_file_and_an_install_database(
    capsys, tmp_path: Path
) -> None:
    for given, kind in (
        (ENVIRONMENTS / "env-dir", "spack.lock"),
        (ENVIRONMENTS / "openmpi.spec.json", "spec file"),
        (ENVIRONMENTS / "install-db", "install database"),
    ):
        specs = read_environment(str(given)).specs
        cache = write_cache(tmp_path / given.name, {s.hash: node_of(s) for s in specs})
        code, report = check_json(capsys, given, cache)
        assert code == 0, given
        assert report["environment"] == str(given) and report["format"].startswith(kind)
        assert report["summary"]["roots"] >= 1 and report["summary"]["misses"] == 0


def test_the_best_of_many_rebuilds_is_found(capsys, tmp_path, env_nodes, lock) -> None:
    """A cache holding many rebuilds of a package with the same own fields: the one whose
    dependencies differ least ranks first, wherever it lies among them."""
    zlib, hdf5 = by_name(env_nodes, "zlib"), HDF5
    cache_nodes = {h: n for h, n in env_nodes.items() if h != hdf5}
    for version in range(20):  # rebuilt against zlibs of other versions
        other_zlib = changed(env_nodes[zlib], lambda n, v=version: n.update(version=f"9.{v}"))
        cache_nodes[other_zlib["hash"]] = other_zlib

        def relink(node, new=other_zlib["hash"]):
            for edge in node["dependencies"]:
                if edge["hash"] == zlib:
                    edge["hash"] = new

        rebuilt = changed(env_nodes[hdf5], relink)
        cache_nodes[rebuilt["hash"]] = rebuilt
    best = changed(env_nodes[hdf5], lambda n: None)  # the same in every way but its hash
    cache_nodes[best["hash"]] = best
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cache_nodes))
    nearest = spec_of(report, "hdf5")["nearest"]
    assert nearest[0]["hash"] == best["hash"]
    assert nearest[0]["differences"] == [] and "recipe" in nearest[0]["note"]
    assert nearest[1]["differences"] == [
        {
            "field": "dependency:zlib",
            "yours": "@1.2.11",
            "cache": nearest[1]["differences"][0]["cache"],
            "path": ["zlib"],
        }
    ]


def chain(length: int, leaf_variant: bool) -> dict[str, dict]:
    """pkg0 -> pkg1 -> ... -> pkg<length-1>, Spack 1.x nodes; the leaf +shared or ~shared."""
    hashes = [fake_hash(n, "ch" if leaf_variant else "cx") for n in range(length)]
    nodes = {}
    for at, hash_ in enumerate(hashes):
        below = (
            [{"name": f"pkg{at + 1}", "hash": hashes[at + 1], "parameters": {"deptypes": ["link"]}}]
            if at + 1 < length
            else []
        )
        nodes[hash_] = {
            "name": f"pkg{at}",
            "version": "1.0",
            "arch": {"platform": "linux", "platform_os": "ubuntu24.04", "target": "x86_64_v3"},
            "parameters": {"shared": leaf_variant} if at == length - 1 else {},
            "dependencies": below,
            "hash": hash_,
        }
    return nodes


def test_a_difference_five_hundred_levels_down_is_found(capsys, tmp_path) -> None:
    mine, cached = chain(500, True), chain(500, False)
    lock = write_lockfile(tmp_path / "spack.lock", mine, [next(iter(mine))])
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cached))
    assert code == 1
    [difference] = spec_of(report, "pkg0")["nearest"][0]["differences"]
    assert difference["field"] == "dependency:pkg499"
    assert (difference["yours"], difference["cache"]) == ("+shared", "~shared")
    assert difference["path"] == [f"pkg{n}" for n in range(1, 500)]


def test_a_cache_without_dependencies_says_why_nothing_differs(capsys, tmp_path) -> None:
    from cachetui.service import IndexService

    index = IndexService(None, use_cache=False).load().index  # summaries: no graph
    row = 0
    spec = index.spec(row)
    node = node_of(
        EnvironmentSpec(
            fake_hash(1, "zz"),
            spec.package,
            spec.version,
            spec.compiler,
            spec.platform,
            spec.os,
            spec.target,
            spec.variants,
            (),
        )
    )
    lock = write_lockfile(tmp_path / "spack.lock", {node["hash"]: node}, [node["hash"]])
    code, out, _ = run(capsys, "check", str(lock), "--no-cache")
    assert code == 1
    assert f"nearest {spec.package}@{spec.version} /{index.hashes[row][:7]}" in out
    assert "0 differences" in out and "holds no dependencies to compare" in out


def test_a_dependency_the_cache_has_no_record_of(capsys, tmp_path, env_nodes, lock) -> None:
    zlib = by_name(env_nodes, "zlib")
    gone = fake_hash(7, "gone")

    def relink(node):
        for edge in node["dependencies"]:
            if edge["hash"] == zlib:
                edge["hash"] = gone

    cache_nodes = with_node(env_nodes, HDF5, changed(env_nodes[HDF5], relink))
    code, report = check_json(capsys, lock, write_cache(tmp_path / "cache", cache_nodes))
    [difference] = spec_of(report, "hdf5")["nearest"][0]["differences"]
    assert difference == {
        "field": "dependency:zlib",
        "yours": "zlib@1.2.11",
        "cache": f"/{gone[:7]} (no record in the cache)",
        "path": ["zlib"],
    }


def test_a_check_that_fails_costs_the_load_nothing(tmp_path, env_nodes, lock, monkeypatch) -> None:
    from cachetui.service import IndexService, check

    def broken(index, environment):
        raise RuntimeError("a bug")

    monkeypatch.setattr(check, "check_environment", broken)
    cache = write_cache(tmp_path / "cache", env_nodes)
    service = IndexService([str(cache)], use_cache=False, environment=str(lock))
    report = service.load()
    assert report.index.n_specs == len(env_nodes) and service.check is None
    assert any(
        "could not check the environment: RuntimeError: a bug" in p.message for p in report.problems
    )


def test_a_lockfile_whose_only_hash_is_bad_says_which(capsys, tmp_path) -> None:
    lock = tmp_path / "spack.lock"
    lock.write_text(
        '{"_meta": {"file-type": "spack-lockfile", "lockfile-version": 6},'
        ' "roots": [{"hash": "NOT-A-HASH", "spec": "zlib"}],'
        ' "concrete_specs": {"NOT-A-HASH":'
        ' {"name": "zlib", "version": "1.3", "hash": "NOT-A-HASH"}}}'
    )
    code, out, err = run(capsys, "check", str(lock), "--no-cache")
    assert code == 2 and not out
    assert f"{lock}: spack.lock v6 holds no concrete specs" in err and "'NOT-A-HASH'" in err
