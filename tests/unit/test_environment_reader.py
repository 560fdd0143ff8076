"""A user's Spack environment read into its concrete specs (issue 20): every lockfile
version (1 to 6), an environment directory, a spec file, an install database; the fields
normalised exactly as a build cache's index is (checked against real indexes from
../shared); every unreadable input an EnvironmentUnreadable naming the file and the problem.

The fixtures (tests/fixtures/environments/) are one small environment written in the shape
of each lockfile version: hdf5 (a root) -> cmake (external, build), openmpi, zlib (a root);
in v6 (Spack 1.x) also gcc (external, the c/cxx compiler), gcc-runtime and compiler-wrapper.
A hash reads as what it is: `hdf5dagc...` is hdf5's DAG hash in the v3 file, `hdf5bldc...`
its build hash (the lockfile key of v2 and v3)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, SPACK_REAL, fake_hash

from cachetui.model import DepType, EnvironmentUnreadable
from cachetui.service import IndexService
from cachetui.sources.environment import MAX_ENVIRONMENT_BYTES, read_environment

ENVS = FIXTURES / "environments"
BUILD, LINK = int(DepType.BUILD), int(DepType.LINK)
LETTER = dict(zip(range(1, 7), "abcdef"))  # the letter each version's hashes carry


def dag(tag: str, version: int) -> str:
    return (tag + "dag" + LETTER[version]).ljust(32, "q")


def by_name(env) -> dict:
    specs = {spec.name: spec for spec in env.specs}
    assert len(specs) == len(env.specs), "one spec a package in the fixtures"
    return specs


# What each version's file holds: (os, target, compiler of the packages built)
ARCH = {
    1: ("ubuntu18.04", "x86_64", "gcc@9.3.0"),
    2: ("ubuntu20.04", "skylake", "gcc@9.3.0"),
    3: ("ubuntu20.04", "skylake", "gcc@9.3.0"),
    4: ("ubuntu20.04", "skylake", "gcc@12.3.0"),
    5: ("ubuntu22.04", "x86_64_v3", "gcc@12.3.0"),
    6: ("ubuntu22.04", "x86_64_v3", "gcc@13.2.0"),
}


@pytest.mark.parametrize("version", range(1, 7))
def test_every_lockfile_version_gives_dag_hashes_fields_roots_and_externals(version):
    env = read_environment(str(ENVS / f"v{version}.spack.lock"))
    assert env.format == f"spack.lock v{version}"
    assert env.source == env.path == str(ENVS / f"v{version}.spack.lock")
    assert env.problems == []
    specs = by_name(env)
    spack1 = version == 6
    assert set(specs) == {"hdf5", "cmake", "openmpi", "zlib"} | (
        {"gcc", "gcc-runtime", "compiler-wrapper"} if spack1 else set()
    )
    tags = {"hdf5": "hdf5", "cmake": "cmak", "openmpi": "ompi", "zlib": "zlib", "gcc": "gccc"}
    tags |= {"gcc-runtime": "gcrt", "compiler-wrapper": "cwrp"}
    for name, spec in specs.items():
        assert spec.hash == dag(tags[name], version), name  # never the build hash (v2, v3)
        assert (spec.platform, spec.os, spec.target) == ("linux", *ARCH[version][:2])
    assert {n for n, s in specs.items() if s.root} == {"hdf5", "zlib"}
    assert {n for n, s in specs.items() if s.external} == {"cmake"} | ({"gcc"} if spack1 else set())
    hdf5, openmpi, zlib = specs["hdf5"], specs["openmpi"], specs["zlib"]
    assert (hdf5.version, openmpi.version, zlib.version) == ("1.14.3", "4.1.6", "1.3")
    # The compiler: a node field (v1-5), the c/cxx build dependency (Spack 1.x)
    assert hdf5.compiler == openmpi.compiler == zlib.compiler == ARCH[version][2]
    assert specs["cmake"].compiler == ("none" if spack1 else ARCH[version][2])
    build_system = version >= 4
    assert hdf5.variants == (
        ("+mpi", "api=default", "build_system=cmake", "~fortran")
        if build_system
        else ("+mpi", "api=default", "~fortran")
    )
    assert openmpi.variants == (
        ("build_system=autotools", "fabrics:=ofi,ucx") if build_system else ("fabrics:=ofi,ucx",)
    )
    # Edges name DAG hashes, whatever the file names them by (a key: build hash in v2, v3)
    expected = {
        ("cmake", dag("cmak", version), BUILD),
        ("openmpi", dag("ompi", version), BUILD | LINK),
        ("zlib", dag("zlib", version), BUILD | LINK),
    }
    if spack1:
        expected |= {
            ("gcc", dag("gccc", version), BUILD),
            ("gcc-runtime", dag("gcrt", version), LINK),
            ("compiler-wrapper", dag("cwrp", version), BUILD),
        }
    assert set(hdf5.dependencies) == expected
    assert len(hdf5.dependencies) == len(expected)
    assert zlib.dependencies == (
        (
            ("compiler-wrapper", dag("cwrp", version), BUILD),
            ("gcc", dag("gccc", version), BUILD),
            ("gcc-runtime", dag("gcrt", version), LINK),
        )
        if spack1
        else ()
    )


@pytest.mark.parametrize("version", [2, 3])
def test_build_hash_keys_are_not_taken_for_dag_hashes(version):
    """In v2 and v3 the keys of concrete_specs (and the hashes edges and roots name) are
    build hashes: none of them may come out as a spec's hash or a dependency's."""
    lock = json.loads((ENVS / f"v{version}.spack.lock").read_text())
    keys = set(lock["concrete_specs"])
    build_keys = {k for k in keys if "bld" in k}
    assert build_keys, "the fixture keys some specs by build hash"
    env = read_environment(str(ENVS / f"v{version}.spack.lock"))
    hashes = {spec.hash for spec in env.specs}
    named = {hash_ for spec in env.specs for _, hash_, _ in spec.dependencies}
    assert not (hashes | named) & build_keys
    assert named <= hashes


def test_an_environment_directory_reads_its_lockfile():
    path = ENVS / "env-dir"
    env = read_environment(str(path))
    assert env.path == str(path)
    assert env.source == str(path / "spack.lock")
    assert env.format == "spack.lock v6"
    assert {s.name for s in env.specs if s.root} == {"hdf5", "zlib"}


def test_a_directory_with_only_a_manifest_says_to_concretize():
    with pytest.raises(EnvironmentUnreadable) as raised:
        read_environment(str(ENVS / "not-concretized"))
    message = str(raised.value)
    assert message.startswith(str(ENVS / "not-concretized") + ": ")
    assert "not concretized" in message and "spack concretize" in message


def test_a_manifest_named_as_a_file_says_to_concretize():
    path = ENVS / "not-concretized" / "spack.yaml"
    with pytest.raises(EnvironmentUnreadable, match=r"spack\.yaml.*spack concretize"):
        read_environment(str(path))


def test_a_spec_file_roots_its_first_node():
    env = read_environment(str(ENVS / "openmpi.spec.json"))
    assert env.format == "spec file v4"
    specs = by_name(env)
    assert set(specs) == {"openmpi", "zlib"}
    assert specs["openmpi"].root and not specs["zlib"].root
    assert specs["openmpi"].hash == "ompispcf".ljust(32, "q")
    assert specs["openmpi"].dependencies == (("zlib", "zlibspcf".ljust(32, "q"), BUILD | LINK),)
    assert specs["zlib"].variants == ("+optimize", "+shared", "build_system=makefile")
    assert specs["openmpi"].compiler == "gcc@12.3.0"


def test_a_clear_signed_and_a_gzipped_spec_file_read_as_the_plain_one(tmp_path):
    plain = (ENVS / "openmpi.spec.json").read_bytes()
    signed = tmp_path / "openmpi.spec.json.sig"
    signed.write_bytes(
        b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"
        + plain
        + b"-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n"
    )
    zipped = tmp_path / "openmpi.spec.json.gz"
    zipped.write_bytes(gzip.compress(plain))
    want = read_environment(str(ENVS / "openmpi.spec.json")).specs
    assert read_environment(str(signed)).specs == want
    assert read_environment(str(zipped)).specs == want


@pytest.mark.parametrize(
    "where", ["install-db", "install-db/.spack-db", "install-db/.spack-db/index.json"]
)
def test_an_install_database_gives_installed_records_with_explicit_roots(where):
    env = read_environment(str(ENVS / where))
    assert env.source == str(ENVS / "install-db" / ".spack-db" / "index.json")
    assert env.format == "install database v8"
    specs = by_name(env)
    # compiler-wrapper's record says `installed: false`: skipped (zlib's edge to it stays)
    assert set(specs) == {"zlib", "gcc", "gcc-runtime"}
    assert [n for n, s in specs.items() if s.root] == ["zlib"]
    assert [n for n, s in specs.items() if s.external] == ["gcc"]
    assert specs["zlib"].compiler == "gcc@13.2.0"
    assert ("compiler-wrapper", "cwrpinsf".ljust(32, "q"), BUILD) in specs["zlib"].dependencies
    assert env.problems == []


def test_a_build_cache_index_is_not_taken_for_an_install_database(tmp_path):
    db = json.loads((ENVS / "install-db" / ".spack-db" / "index.json").read_text())
    for record in db["database"]["installs"].values():
        record["in_buildcache"] = True
    path = tmp_path / "index.json"
    path.write_text(json.dumps(db))
    with pytest.raises(EnvironmentUnreadable, match="build cache's index"):
        read_environment(str(path))


def test_edges_to_hashes_no_spec_holds_are_kept_and_warned(tmp_path):
    lock = json.loads((ENVS / "v5.spack.lock").read_text())
    del lock["concrete_specs"][dag("zlib", 5)]
    path = tmp_path / "spack.lock"
    path.write_text(json.dumps(lock))
    env = read_environment(str(path))
    specs = by_name(env)
    assert "zlib" not in specs
    assert ("zlib", dag("zlib", 5), BUILD | LINK) in specs["openmpi"].dependencies
    assert [p.severity for p in env.problems] == ["warning", "warning"]
    text = " ".join(p.message for p in env.problems)
    assert "no spec in the file holds: zlib /zlibdag" in text
    assert "1 root(s) name no spec" in text  # zlib was a root too


def test_included_environments_add_their_specs_and_roots(tmp_path):
    outer = json.loads((ENVS / "v6.spack.lock").read_text())
    inner = json.loads((ENVS / "v5.spack.lock").read_text())
    outer["include_concrete"] = {
        "/envs/inner": {"roots": inner["roots"][:1], "concrete_specs": inner["concrete_specs"]}
    }
    path = tmp_path / "spack.lock"
    path.write_text(json.dumps(outer))
    env = read_environment(str(path))
    roots = {(s.name, s.hash) for s in env.specs if s.root}
    assert roots == {
        ("hdf5", dag("hdf5", 6)),
        ("zlib", dag("zlib", 6)),
        ("hdf5", dag("hdf5", 5)),
    }
    assert len(env.specs) == 7 + 4


def test_older_lockfiles_with_two_specs_of_one_dag_hash_keep_the_first(tmp_path):
    """Lockfiles v1-3 key by build hash: two keys may hold one DAG hash (Spack's own
    legacy_env/v2.lock does)."""
    lock = json.loads((ENVS / "v3.spack.lock").read_text())
    twin = json.loads(json.dumps(lock["concrete_specs"]["hdf5bldc".ljust(32, "q")]))
    twin["version"] = "1.14.4"
    lock["concrete_specs"]["hdf5twnc".ljust(32, "q")] = twin
    path = tmp_path / "spack.lock"
    path.write_text(json.dumps(lock))
    env = read_environment(str(path))
    hdf5 = [s for s in env.specs if s.name == "hdf5"]
    assert [(s.hash, s.version) for s in hdf5] == [(dag("hdf5", 3), "1.14.3")]
    assert any("share their DAG hash" in p.message for p in env.problems)


def test_an_unknown_lockfile_version_is_read_with_a_warning(tmp_path):
    lock = json.loads((ENVS / "v6.spack.lock").read_text())
    lock["_meta"]["lockfile-version"] = 7
    path = tmp_path / "spack.lock"
    path.write_text(json.dumps(lock))
    env = read_environment(str(path))
    assert env.format == "spack.lock v7"
    assert len(env.specs) == 7
    assert [p.message for p in env.problems] == [
        "lockfile version 7 is not one cachetui knows (1 to 6); read as the nearest"
    ]


# -- bad input: each an EnvironmentUnreadable naming the file and the problem ------------------


def _bad(tmp_path: Path, name: str, data: bytes | str) -> str:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return str(path)


V6_TEXT = (ENVS / "v6.spack.lock").read_text()
BAD_INPUTS = {
    "not JSON": ("spack.lock", "this is not json\n", "not valid JSON"),
    "JSON, not a lockfile": ("other.json", '{"name": "x", "version": 1}', "JSON, but not"),
    "a JSON array": ("list.json", "[1, 2, 3]", "not a JSON object"),
    "no concrete_specs": (
        "spack.lock",
        '{"_meta": {"file-type": "spack-lockfile", "lockfile-version": 6}, "roots": []}',
        "without concrete_specs",
    ),
    "empty concrete_specs": (
        "spack.lock",
        '{"_meta": {"lockfile-version": 5}, "roots": [], "concrete_specs": {}}',
        "concrete_specs is empty",
    ),
    "concrete_specs not an object": (
        "spack.lock",
        '{"_meta": {"lockfile-version": 5}, "roots": [], "concrete_specs": [1]}',
        "concrete_specs is not an object",
    ),
    "truncated": ("spack.lock", V6_TEXT[: len(V6_TEXT) // 2], "not valid JSON"),
    "binary": ("spack.lock", bytes(range(256)) * 4, "binary file"),
    "empty": ("spack.lock", b"", "empty file"),
    "bad UTF-8 in a string": ("spack.lock", b'{"_meta": "\xff\xfe"}', "not valid UTF-8"),
    "nodes in no known shape": (
        "spack.lock",
        '{"_meta": {"lockfile-version": 5}, "concrete_specs": {"a": 1, "b": [2]}}',
        "no concrete spec in the lockfile is in a known shape",
    ),
    "deeply nested": (
        "spack.lock",
        '{"_meta": {"lockfile-version": 6}, "roots": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "nested too deeply",
    ),
    "broken gzip": ("spack.lock.gz", b"\x1f\x8b\x08\x00garbage", "gzip"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_unreadable_naming_the_file_and_the_problem(tmp_path, case):
    name, data, problem = BAD_INPUTS[case]
    path = _bad(tmp_path, name, data)
    with pytest.raises(EnvironmentUnreadable) as raised:
        read_environment(path)
    message = str(raised.value)
    assert message.startswith(path + ": "), message
    assert problem in message, message
    assert "Traceback" not in message


def test_a_missing_path_and_a_directory_without_a_lockfile_are_unreadable(tmp_path):
    missing = str(tmp_path / "nowhere" / "spack.lock")
    with pytest.raises(EnvironmentUnreadable, match=r"nowhere/spack\.lock: no such file"):
        read_environment(missing)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(EnvironmentUnreadable) as raised:
        read_environment(str(tmp_path))
    assert str(raised.value).startswith(f"{tmp_path}: a directory without a spack.lock")


def test_a_file_over_the_size_limit_is_not_read(tmp_path, monkeypatch):
    import cachetui.sources.environment as environment

    monkeypatch.setattr(environment, "MAX_ENVIRONMENT_BYTES", 1000)
    path = _bad(tmp_path, "spack.lock", V6_TEXT)
    with pytest.raises(EnvironmentUnreadable, match="larger than the 1,000-byte limit"):
        read_environment(path)
    zipped = _bad(tmp_path, "spack.lock.gz", gzip.compress(V6_TEXT.encode()))  # small on disk
    with pytest.raises(EnvironmentUnreadable, match="larger than the 1,000-byte limit"):
        read_environment(zipped)
    assert MAX_ENVIRONMENT_BYTES == 256 * 1024 * 1024


# -- against real files from Spack (../shared) ---------------------------------------------

real = pytest.mark.skipif(
    not SPACK_REAL.is_dir(), reason="../shared/real/spack is not beside the repository"
)
V3_RICH = SPACK_REAL / "sources" / "v3-rich"


def _index_records(mirror: Path) -> dict:
    """A v3 mirror's index (its one index blob), read with plain json."""
    (blob,) = [p for p in (mirror / "blobs").rglob("*") if p.is_file()]
    data = blob.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)["database"][
        "installs"
    ]


def _as_v6(records: dict) -> dict:
    """The records as a lockfile v6 (Spack 1.x) holds them: keyed by DAG hash, as they are."""
    roots = [h for h, r in records.items() if r.get("in_buildcache")][:5]
    return {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": 6, "specfile-version": 5},
        "roots": [{"hash": h, "spec": records[h]["spec"]["name"]} for h in roots],
        "concrete_specs": {h: r["spec"] for h, r in records.items()},
    }


def _legacy_compiler(spec: dict, records: dict) -> dict | None:
    """A Spack 1.x node's compiler as the node field of spec formats 1-4."""
    annotated = (spec.get("annotations") or {}).get("compiler")
    if annotated:
        name, version = annotated.split("@", 1)
        return {"name": name, "version": version.lstrip("=")}
    for edge in spec.get("dependencies", []):
        if {"c", "cxx", "fortran"} & set(edge["parameters"]["virtuals"]):
            target = records[edge["hash"]]["spec"]
            return {"name": target["name"], "version": target["version"]}
    return None


def _as_old(records: dict, version: int) -> dict:
    """The records as a lockfile v2 (wrapped {name: node}, edges {name: {hash, type}}) or v3
    (edges [{name, build_hash, type}]) holds them: keyed by a build hash of their own."""
    keys = {h: fake_hash(at, prefix="b") for at, h in enumerate(records)}
    specs = {}
    for h, record in records.items():
        node = {k: v for k, v in record["spec"].items() if k not in ("annotations", "dependencies")}
        compiler = _legacy_compiler(record["spec"], records)
        if compiler:
            node["compiler"] = compiler
        edges = [
            (e["name"], keys[e["hash"]], e["parameters"]["deptypes"])
            for e in record["spec"].get("dependencies", [])
        ]
        if version == 2:
            name = node.pop("name")
            if edges:
                node["dependencies"] = {n: {"hash": k, "type": t} for n, k, t in edges}
            specs[keys[h]] = {name: node}
        else:
            if edges:
                node["dependencies"] = [
                    {"name": n, "build_hash": k, "type": t} for n, k, t in edges
                ]
            specs[keys[h]] = node
    roots = [h for h, r in records.items() if r.get("in_buildcache")][:5]
    return {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": version},
        "roots": [{"hash": keys[h], "spec": records[h]["spec"]["name"]} for h in roots],
        "concrete_specs": specs,
    }


@real
@pytest.mark.parametrize("version", [6, 3, 2])
def test_lockfile_fields_equal_the_cache_index_rows_of_the_same_specs(tmp_path, version):
    """The same specs, read from a cache's index and from a lockfile (of Spack 1.x, and of
    an older shape: wrapped nodes, build-hash keys, the compiler a node field), give
    byte-identical fields: what compares an environment with a cache."""
    records = _index_records(V3_RICH)
    lock = _as_v6(records) if version == 6 else _as_old(records, version)
    path = tmp_path / "spack.lock"
    path.write_text(json.dumps(lock))
    env = read_environment(str(path))
    assert env.problems == []
    assert env.format == f"spack.lock v{version}"
    index = IndexService([str(V3_RICH)], use_cache=False).load().index
    assert {s.hash for s in env.specs} == set(records)
    compared = 0
    for spec in env.specs:
        rows = index.lookup_hash(spec.hash)
        assert spec.external == (records[spec.hash]["spec"].get("external") is not None)
        if spec.external:
            assert rows == []  # an external is no row of the cache
            continue
        (row,) = rows
        assert spec.name == index.package_name(row)
        assert spec.version == index.field("version", row)
        assert spec.compiler == index.field("compiler", row)
        assert (spec.platform, spec.os, spec.target) == (
            index.field("platform", row),
            index.field("os", row),
            index.field("target", row),
        )
        assert spec.variants == index.variants(row)
        want = {(e["name"], e["hash"]) for e in records[spec.hash]["spec"].get("dependencies", [])}
        assert {(n, h) for n, h, _ in spec.dependencies} == want
        compared += 1
    assert compared == index.n_specs == 148
    assert sum(s.root for s in env.specs) == 5


@real
def test_a_real_install_database_gives_what_spack_answered():
    path = SPACK_REAL / "sources" / "install-db" / "build_cache" / "index.json"
    spack = json.loads((SPACK_REAL / "expected" / "install-db.json").read_text())["mirror"]
    env = read_environment(str(path))
    assert env.format == "install database v8"
    specs = {s.hash: s for s in env.specs}
    assert len(specs) == 8
    # Spack's answer covers the nodes `buildcache list` shows of it (its two externals)
    assert set(spack["nodes"]) <= set(specs)
    for hash_, node in spack["nodes"].items():
        spec = specs[hash_]
        assert (spec.name, spec.version, spec.os, spec.target, spec.external) == (
            node["name"],
            node["version"],
            node["os"],
            node["target"],
            node["external"],
        )
        assert sorted(spec.variants) == sorted(node["variants"])
        assert [spec.compiler] == node["compiler"]
        assert sorted(h for _, h, _ in spec.dependencies) == sorted(d["hash"] for d in node["deps"])
    assert [s.name for s in env.specs if s.root] == ["hdf5"]  # the one explicit record


@real
def test_a_real_signed_spec_file_roots_the_spec_spack_names():
    specfiles = json.loads((SPACK_REAL / "expected" / "specfiles.json").read_text())
    name = "linux-ubuntu18.04-haswell-gcc-8.4.0-zlib-1.2.12-g7otk5dra3hifqxej36m5qzm7uyghqgb"
    path = SPACK_REAL / "sources" / "specfiles" / "signed_json" / f"{name}.spec.json.sig"
    spack = specfiles[path.name]
    env = read_environment(str(path))
    assert env.format.startswith("spec file v")
    assert [s.hash for s in env.specs if s.root] == [spack["root"]]
    assert {s.hash: s.name for s in env.specs} == {
        h: node["name"] for h, node in spack["nodes"].items()
    }


@real
def test_an_install_prefix_directory_is_read_through_its_database(tmp_path):
    prefix = tmp_path / "opt" / "spack"
    (prefix / ".spack-db").mkdir(parents=True)
    shutil.copy(
        SPACK_REAL / "sources" / "install-db" / "build_cache" / "index.json",
        prefix / ".spack-db" / "index.json",
    )
    env = read_environment(str(prefix))
    assert env.source == str(prefix / ".spack-db" / "index.json")
    assert len(env.specs) == 8
