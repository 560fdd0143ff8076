"""The command line: JSON shapes, text output, exit codes, and no Textual import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import (
    BUILDCACHE,
    SAMPLE,
    SAMPLE_FILES,
    fake_hash,
    raw_front_matter,
    record,
    write_summary,
)

from cachetui import __version__
from cachetui.cli import main

SPEC_KEYS = {
    "package",
    "version",
    "compiler",
    "platform",
    "os",
    "target",
    "hash",
    "variants",
    "stacks",
    "tag",
    "size",
    "tarball",
    "source",
    "kind",
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_json_shape_and_counts(capsys) -> None:
    code, out, err = run(capsys, "stats", "--json")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert set(data) == {"packages", "specs", "kinds", "tags", "facets", "problems"}
    assert (data["packages"], data["specs"], data["tags"], data["kinds"]) == (
        len(SAMPLE.packages),
        SAMPLE.specs,
        {"develop": SAMPLE.specs},
        {"binary": SAMPLE.specs},
    )
    assert set(data["facets"]) == {"stack", "os", "target", "compiler", "platform"}
    assert data["facets"]["stack"]["root"] == SAMPLE.specs
    assert data["facets"]["platform"] == {p: SAMPLE.count(platform=p) for p in ("darwin", "linux")}
    assert data["facets"]["os"] == {
        o: SAMPLE.count(os=o) for o in {r["os"] for r in SAMPLE.records}
    }
    assert data["problems"] == []


def test_stats_reports_problems_in_json_and_on_stderr(capsys, synthetic: Path) -> None:
    (synthetic / "junk.txt").write_text("hello")
    code, out, err = run(capsys, "stats", str(synthetic), "--json")
    data = json.loads(out)
    assert code == 0 and data["specs"] == 7 and data["tags"] == {"develop": 6, "v1.0.0": 1}
    [problem] = data["problems"]
    assert problem["source"].endswith("junk.txt") and "front matter" in problem["error"]
    assert "junk.txt" in err


def test_stats_text_is_aligned(capsys) -> None:
    code, out, _ = run(capsys, "stats")
    assert code == 0 and out.startswith(
        f"{len(SAMPLE.packages)} packages, {SAMPLE.specs} specs from {len(SAMPLE.packages)} files"
    )
    block = out.split("\n\n")[2].splitlines()  # the stack table
    assert block[0].split() == ["stack", "specs"]
    assert len({len(line) for line in block}) == 1  # right-aligned counts: equal widths


def test_lookup_unique_ambiguous_missing(capsys) -> None:
    code, out, _ = run(capsys, "lookup", "/2FEOVA4", "--json")
    [spec] = json.loads(out)["specs"]
    assert code == 0 and set(spec) == SPEC_KEYS
    assert (spec["package"], spec["version"], spec["compiler"], spec["os"]) == (
        "py-mpi4py",
        "4.0.1",
        "gcc@11.4.0",
        "ubuntu22.04",
    )
    assert (
        spec["hash"] == "2feova4prghd2gkebr23if6bojkyydpt"
        and spec["size"] is None
        and spec["tarball"] is None
    )

    code, out, _ = run(capsys, "lookup", "2")
    expected = sum(h.startswith("2") for h in SAMPLE.hashes)
    assert code == 0 and out.startswith(f"{expected} specs have a hash starting with '2':")
    assert "2feova4prghd2gkebr23if6bojkyydpt  py-mpi4py@4.0.1" in out

    code, out, err = run(capsys, "lookup", "zzzz", "--json")
    assert code == 1 and json.loads(out)["specs"] == []
    code, out, err = run(capsys, "lookup", "zzzz")
    assert code == 1 and out == "" and "no spec has a hash starting with 'zzzz'" in err


def test_lookup_text_for_one_spec_gives_the_install_command(capsys) -> None:
    code, out, _ = run(capsys, "lookup", "2feova4")
    assert code == 0 and "install   spack install /2feova4prghd2gkebr23if6bojkyydpt" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["lookup", "a" * 33],
        ["lookup", "ab$"],
        ["search", " "],
        ["search", "x", "--limit", "-1"],
        ["frobnicate"],
        ["stats", "--bogus"],
    ],
)
def test_bad_usage_exits_2(capsys, argv) -> None:
    with pytest.raises(SystemExit) as raised:
        code = main(argv)
        raise SystemExit(code)
    assert raised.value.code == 2
    assert capsys.readouterr().err


def test_nothing_loadable_exits_2_with_reason(capsys, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("not a summary")
    code, out, err = run(capsys, "stats", str(tmp_path))
    assert code == 2 and out == "" and "nothing loadable" in err and "x.txt" in err


def test_search_json_ranked_with_specs_of_listed_packages(capsys, synthetic: Path) -> None:
    code, out, _ = run(capsys, "search", "zlib", str(synthetic), "--json")
    data = json.loads(out)
    assert code == 0
    assert data["packages"] == [{"name": "zlib", "specs": 4}, {"name": "zlib-ng", "specs": 1}]
    assert [s["package"] for s in data["specs"]] == ["zlib"] * 4 + ["zlib-ng"]
    assert all(set(s) == SPEC_KEYS for s in data["specs"])
    assert {s["tag"] for s in data["specs"]} == {"develop", "v1.0.0"}


def test_search_limit_caps_each_list_and_zero_means_no_cap(capsys, synthetic: Path) -> None:
    data = json.loads(run(capsys, "search", "zlib", str(synthetic), "--json", "--limit", "1")[1])
    assert [p["name"] for p in data["packages"]] == ["zlib"] and len(data["specs"]) == 1
    data = json.loads(run(capsys, "search", "zlib", str(synthetic), "--json", "--limit", "0")[1])
    assert len(data["packages"]) == 2 and len(data["specs"]) == 5


def test_search_default_limit_is_100(capsys, tmp_path: Path) -> None:
    write_summary(tmp_path / "big.md", "big", [record(fake_hash(i)) for i in range(150)])
    data = json.loads(run(capsys, "search", "big", str(tmp_path), "--json")[1])
    assert len(data["specs"]) == 100


def test_search_typo_and_no_match(capsys) -> None:
    code, out, _ = run(capsys, "search", "pymp4py")
    assert code == 0 and out.splitlines()[1].split() == [
        "py-mpi4py",
        str(SAMPLE.specs_of["py-mpi4py"]),
    ]
    code, out, err = run(capsys, "search", "qqqqxxxx", "--json")
    assert code == 1 and json.loads(out) == {"packages": [], "specs": []}


def test_text_output_never_carries_terminal_escapes(capsys, tmp_path: Path) -> None:
    write_summary(
        tmp_path / "evil.md",
        "evil\x1b]52;c;aGk=\x07pkg",
        [record(fake_hash(1), stacks=("root\x1b[2J",))],
    )
    code, out, _ = run(capsys, "search", "evil", str(tmp_path))
    assert code == 0 and "\x1b" not in out and "\\x1b]52" in out and "root\\x1b[2J" in out
    code, out, _ = run(capsys, "search", "evil", str(tmp_path), "--json")
    assert not any(c in out for c in "\x1b\x07\x9b\u202e")  # escaped, also C1 and bidi
    assert (
        json.loads(out)["specs"][0]["package"] == "evil\x1b]52;c;aGk=\x07pkg"
    )  # the data stays exact


def test_json_escapes_c1_controls_and_bidi_marks(capsys, tmp_path: Path) -> None:
    name = "csi\x9b2Jrtl\u202eevil"
    write_summary(tmp_path / "x.md", name, [record(fake_hash(1))])
    code, out, _ = run(capsys, "search", "csi", str(tmp_path), "--json")
    assert "\\u009b" in out and "\\u202e" in out and "\x9b" not in out and "\u202e" not in out
    assert json.loads(out)["packages"][0]["name"] == name


def test_bad_prefix_is_refused_before_loading(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "lookup", "a" * 40, str(tmp_path / "missing"))
    assert code == 2 and "bad hash prefix" in err and "no such file" not in err


def test_version_and_help(capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["--version"])
    assert raised.value.code == 0 and capsys.readouterr().out.strip() == f"cachetui {__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "stats" in out and "lookup" in out and "search" in out and "SOURCE" in out


def test_app_with_only_missing_sources_exits_2(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "missing"))
    assert code == 2 and "no such file or directory" in err


@pytest.mark.parametrize("argv", [["stats", "--json"], ["lookup", "2feova4"], ["search", "mpi"]])
def test_subcommands_do_not_import_textual(argv) -> None:
    probe = (
        "import sys\nfrom cachetui.cli import main\ncode = main(sys.argv[1:])\n"
        "assert not any(m == 'textual' or m.startswith('textual.') for m in sys.modules), "
        "'textual imported'\n"
        "raise SystemExit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_the_app_paints_before_the_index_libraries_load() -> None:
    """Starting the app imports neither numpy nor the readers: they load in the worker."""
    probe = (
        "import sys\nfrom cachetui.cli import main\nfrom cachetui.tui.app import "
        "CacheTUI\nCacheTUI()\n"
        "heavy = [m for m in ('numpy', 'msgspec', 'yaml', 'rapidfuzz', 'cachetui.sources', "
        "'cachetui.index.store') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_search_takes_spec_syntax_and_lists_only_matching_specs(capsys) -> None:
    wanted = [
        r
        for r in SAMPLE.records
        if r["os"] == "ubuntu22.04" and r["compiler"].replace("@=", "@") == "gcc@11.4.0"
    ]
    code, out, _ = run(capsys, "search", "os=ubuntu22.04 %gcc@11.4", "--json", "--limit", "0")
    data = json.loads(out)
    assert code == 0 and 0 < len(wanted) < SAMPLE.specs
    assert sorted(s["hash"] for s in data["specs"]) == sorted(r["hash"] for r in wanted)
    assert sum(p["specs"] for p in data["packages"]) == len(wanted)


def test_search_csv_has_a_header_and_a_line_per_matching_spec(capsys) -> None:
    import csv
    import io

    code, out, _ = run(capsys, "search", "py-mpi4py os=ubuntu22.04", "--csv", "--limit", "0")
    lines = list(csv.DictReader(io.StringIO(out)))
    wanted = {r["hash"] for r in SAMPLE.records if r["os"] == "ubuntu22.04"} & {
        r["hash"]
        for r in raw_front_matter(next(p for p in SAMPLE_FILES if p.parent.name == "py-mpi4py"))[
            "spec_details"
        ]
    }
    assert code == 0 and {line["hash"] for line in lines} == wanted
    assert all(line["package"] == "py-mpi4py" and line["os"] == "ubuntu22.04" for line in lines)
    assert list(lines[0]) == [
        "package",
        "version",
        "compiler",
        "platform",
        "os",
        "target",
        "hash",
        "variants",
        "stacks",
        "tag",
        "size",
        "tarball",
        "source",
        "kind",
    ]


def test_search_with_a_bad_query_points_at_it(capsys) -> None:
    code, out, err = run(capsys, "search", "zlib@2.4:1.0")
    assert code == 2 and out == ""
    assert "bad query: the range 2.4:1.0 is empty" in err and "zlib@2.4:1.0\ncachetui" not in err
    assert err.splitlines()[-1] == "     ^^^^^^^"


def test_lookup_says_a_prefix_is_ambiguous(capsys) -> None:
    code, out, _ = run(capsys, "lookup", "/2")
    expected = sum(h.startswith("2") for h in SAMPLE.hashes)
    assert code == 0 and out.rstrip().endswith(
        f"ambiguous: give more characters of the hash to name one of these {expected}"
    )


def test_lookup_takes_a_pasted_log_line(capsys) -> None:
    full = SAMPLE.hashes[0]
    code = main(["lookup", f"==> Installing py-thing-1.0-{full.upper()} [3/9]"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith(f"hash      {full}")
    code = main(
        ["lookup", "==> Installing py-thing-1.0 [3/9]"]
    )  # no hash in it: a usage error, as before
    assert code == 2 and "bad hash prefix" in capsys.readouterr().err


# -- deps -------------------------------------------------------------------------------


def _hash_of(fixture: str, name: str) -> str:
    listed = json.loads((BUILDCACHE / fixture / "expected.json").read_text())["listed"]
    return next(e["hash"] for e in listed if e["name"] == name)


def test_deps_prints_the_link_run_tree_apart_from_build_dependencies(capsys) -> None:
    cmake = _hash_of("db-v8", "cmake")
    code, out, _ = run(capsys, "deps", cmake[:7], str(BUILDCACHE / "db-v8"), "--no-cache")
    assert code == 0
    lines = out.splitlines()
    # As Spack 1.x writes it: variants in its order, the hash, then each compiler with its languages
    assert lines[0] == (
        "cmake@3.30.5~doc~ncurses+ownlibs~qtgui build_system=generic build_type=Release "
        f"arch=linux-ubuntu22.04-x86_64_v3 /{cmake} %c=gcc@10.2.1 %cxx=llvm@17.0.6"
    )
    link_run = lines[lines.index("depends on (link/run):") + 1 : lines.index("build dependencies:")]
    build = lines[lines.index("build dependencies:") + 1 :]
    assert any(line.startswith("  zlib@1.3.1 /") for line in link_run)
    assert any(
        line.startswith("    gcc-runtime@") and line.endswith("(see above)") for line in link_run
    )  # under zlib, shown once
    assert any(
        line.startswith("  gcc@10.2.1 /") and "%c" in line and "(external)" in line
        for line in build
    )
    assert not any("gcc@10.2.1" in line for line in link_run)


def test_deps_json_and_reverse(capsys) -> None:
    runtime = _hash_of("db-v8", "gcc-runtime")
    code, out, _ = run(
        capsys, "deps", runtime, str(BUILDCACHE / "db-v8"), "--no-cache", "--json", "--reverse"
    )
    assert code == 0
    record = json.loads(out)
    assert record["spec"]["hash"] == runtime and record["reverse"] is True
    users = {(d["name"], d["depth"], d["repeated"]) for d in record["dependents"]}
    assert {
        ("cmake", 1, False),
        ("fftpack", 1, False),
        ("zlib", 1, False),
        ("cmake", 2, True),
    } == users
    cmake = _hash_of("db-v8", "cmake")
    code, out, _ = run(capsys, "deps", cmake, str(BUILDCACHE / "db-v8"), "--no-cache", "--json")
    record = json.loads(out)
    assert [d["name"] for d in record["dependencies"] if d["depth"] == 1] == ["gcc-runtime", "zlib"]
    assert {d["name"]: d["kind"] for d in record["build"]}["gcc"] == "external"
    assert record["spec"]["manifest"].endswith(
        f"/v3/manifests/spec/cmake/cmake-3.30.5-{cmake}.spec.manifest.json"
    )


def test_deps_of_a_summary_spec_says_there_is_no_dependency_information(capsys) -> None:
    code, out, _ = run(capsys, "deps", SAMPLE.hashes[0])
    assert code == 0 and "no dependency information" in out
    code, out, _ = run(capsys, "deps", SAMPLE.hashes[0], "--json")
    assert json.loads(out)["dependencies"] is None


def test_deps_missing_and_ambiguous_prefixes(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "deps", "/zzzzzz", str(BUILDCACHE / "db-v8"), "--no-cache")
    assert code == 1 and "no spec has a hash starting with" in err
    node = {
        "version": "1.0",
        "arch": {"platform": "linux", "platform_os": "rhel8", "target": "x86_64"},
    }
    installs = {
        h: {"spec": dict(node, name=n, hash=h), "in_buildcache": True}
        for n, h in (("one", "abcd" + "a" * 28), ("two", "abce" + "a" * 28))
    }
    (tmp_path / "index.json").write_text(
        json.dumps({"database": {"version": "8", "installs": installs}})
    )
    code, _, err = run(capsys, "deps", "abc", str(tmp_path / "index.json"), "--no-cache")
    assert code == 2 and "2 specs have a hash starting with 'abc'; give more characters" in err
    assert "one@1.0" in err and "two@1.0" in err
