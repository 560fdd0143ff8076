"""Hostile text: data that tries to style, link, click, drive the terminal or break the layout.

Package names, versions, compilers, os/targets, variants, stacks, tags, dependency names,
virtuals, external paths and file names carry Textual/Rich markup (`[bold red]`, `[link=…]`,
`[@click=app.quit]`), terminal escapes (OSC 52 clipboard writes, ESC[2J, OSC 8 links), other
C0 and C1 controls, bidirectional overrides, and 10,000-character values. Everywhere they are
shown (every widget, the help, notifications, CLI text) they must appear literally or as
visible escapes (`\\x1b`); JSON output keeps them exact. Here: the escaping itself and the
command line's text, CSV and JSON; the app: ui/test_hostile_app.py; the corpus: tests/hostile.py.

Each test fails when cachetui.textsafe.visible is made the identity in every module that
imports it, except the JSON test, which fails when JSON output is escaped like text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import (
    BAD_DIR,
    COMPILER,
    COMPILER_VERSION,
    DATABASE_TAGS,
    EXTERNAL,
    GONE,
    HOSTILE,
    ROOT,
    SHOWN,
    UNSAFE,
    VIRTUALS,
    database_hash,
    dir_name,
    escaped,
    shown,
    summary_hash,
    write_hostile_sources,
)

from cachetui.spack_format import quote_if_needed


@pytest.fixture
def sources(tmp_path: Path) -> list[str]:
    return write_hostile_sources(tmp_path / "hostile")


def test_each_hostile_class_is_escaped_as_written_here() -> None:
    from cachetui.textsafe import visible

    for key, value in HOSTILE.items():
        assert visible(value) == SHOWN[key] == escaped(value), key
        assert not UNSAFE.search(SHOWN[key])


# -- the command line ---------------------------------------------------------------------------


def run(capsys, *argv: str) -> tuple[int, str, str]:
    from cachetui.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_safe_text(text: str) -> None:
    """Text for a terminal: no raw control (but the line ends) or bidi character."""
    for line in text.split("\n"):
        assert not UNSAFE.search(line), line[:300]


def test_cli_text_outputs_show_hostile_values_escaped(capsys, sources: list[str]) -> None:
    common = (*sources, "--no-cache")
    bad_dir = escaped(BAD_DIR)
    code, out, err = run(capsys, "stats", *common)
    assert code == 0
    assert_safe_text(out)
    assert_safe_text(err)
    for key in HOSTILE:
        for value in (
            f"s{SHOWN[key]}",
            f"os{SHOWN[key]}",
            f"t{SHOWN[key]}",
            f"gcc@{SHOWN[key]}",
            f"tag-{SHOWN[key]}",
        ):
            assert f"\n{value} " in out, value[:60]
    assert f"/summaries/{bad_dir}/specs.md: spec_details record 1 skipped" in err
    assert (
        f"meta versions lists {SHOWN['clear']}{SHOWN['bold']}, {SHOWN['osc52']}{SHOWN['bidi']} not "
        "in spec_details" in err
    )

    for n, key in enumerate(HOSTILE):  # one spec: every field
        code, out, err = run(capsys, "lookup", summary_hash(n), *common)
        assert code == 0
        assert_safe_text(out)
        for field in (
            f"p-{key}-{SHOWN[key]}@1.{SHOWN[key]}",
            f"gcc@{SHOWN[key]}",
            f"linux-os{SHOWN[key]}-t{SHOWN[key]}",
            f"+v{SHOWN[key]} k={SHOWN[key]}",
            f"root, s{SHOWN[key]}",
            f"tag-{SHOWN[key]}",
            f"https://binaries.example/{SHOWN[key]}.spack",
            f"/summaries/{escaped(dir_name(key, HOSTILE[key]))[:40]}",
        ):
            assert field in out, (key, field[:60])

    for argv in (("lookup", "hs"), ("search", "/hs"), ("search", "/hd")):  # tables
        code, out, err = (
            run(capsys, *argv, *common, "--limit", "0")
            if argv[0] == "search"
            else run(capsys, *argv, *common)
        )
        assert code == 0
        assert_safe_text(out)
        prefix = argv[1][-2:]
        for n, key in enumerate(HOSTILE):
            digest, package = (
                (summary_hash(n), f"p-{key}-{SHOWN[key]}@1.")
                if prefix == "hs"
                else (database_hash(n), f"d-{key}-{SHOWN[key]}@2.")
            )
            assert f"{digest}  {package}{SHOWN[key]}" in out, (argv, key)

    code, out, err = run(capsys, "deps", database_hash(80), *common)
    assert code == 0
    assert_safe_text(out)
    for n, key in enumerate(HOSTILE):
        virtual = f" %virt-{SHOWN[key]}" if key in VIRTUALS else ""
        assert (
            f"  d-{key}-{SHOWN[key]}@2.{SHOWN[key]} /{database_hash(n)[:7]} [link]{virtual}\n"
            in out
        ), key
    assert (
        f"  {shown(COMPILER)}@{shown(COMPILER_VERSION)} /{database_hash(90)[:7]} [build] %c\n"
        in out
    )
    assert f"  {shown(EXTERNAL)}@1.0 /{database_hash(91)[:7]} [build] (external)\n" in out
    assert f"  {shown(GONE)} /{database_hash(92)[:7]} [run] (not in this index)\n" in out
    code, out, err = run(capsys, "deps", database_hash(0), *common, "--reverse")
    assert (
        code == 0
        and f"d-bold-{SHOWN['bold']}@2.{SHOWN['bold']}" in out
        and f"  {ROOT}@1.0 /{database_hash(80)[:7]} [link] %virt-[bold red]x[/]" in out
    )
    assert_safe_text(out)

    # Hostile arguments are echoed escaped too.
    for argv in (
        ("search", f"p-{HOSTILE['clear']}{HOSTILE['bidi']}"),
        ("search", f"zzz{HOSTILE['osc52']}"),
        ("lookup", f"{HOSTILE['osc8']}"),
        ("deps", f"{HOSTILE['c1']}"),
    ):
        code, out, err = run(capsys, *argv, *common)
        assert code in (1, 2) and err
        assert_safe_text(out)
        assert_safe_text(err)


def test_cli_csv_cells_are_escaped(capsys, sources: list[str]) -> None:
    import csv
    import io

    code, out, err = run(capsys, "search", "/hs", *sources, "--no-cache", "--csv")
    assert code == 0
    assert_safe_text(out)
    rows = {row["hash"]: row for row in csv.DictReader(io.StringIO(out))}
    for n, (key, value) in enumerate(HOSTILE.items()):
        row = rows[summary_hash(n)]
        assert (
            row["package"] == SHOWN[key].join(("p-" + key + "-", "")) == escaped(f"p-{key}-{value}")
        )
        assert (row["version"], row["compiler"], row["os"], row["target"], row["tag"]) == (
            escaped(f"1.{value}"),
            escaped(f"gcc@{value}"),
            escaped(f"os{value}"),
            escaped(f"t{value}"),
            escaped(f"tag-{value}"),
        )
        assert row["variants"] == escaped(f"+v{value} k={value}") and row["stacks"] == escaped(
            f"root s{value}"
        )
        assert row["tarball"] == escaped(f"https://binaries.example/{value}.spack")


def test_cli_json_keeps_the_data_exact(capsys, sources: list[str]) -> None:
    common = (*sources, "--no-cache")

    def decoded(*argv: str, options: tuple[str, ...] = ()):
        code, out, err = run(capsys, *argv, *common, "--json", *options)
        assert code == 0
        assert_safe_text(out)  # C0 controls escaped by JSON itself, C1 and bidi as \\u escapes
        return json.loads(out)

    specs = {spec["hash"]: spec for spec in decoded("lookup", "hs")["specs"]}
    for n, (key, value) in enumerate(HOSTILE.items()):
        spec = specs[summary_hash(n)]
        assert (
            spec["package"],
            spec["version"],
            spec["compiler"],
            spec["os"],
            spec["target"],
            spec["tag"],
        ) == (
            f"p-{key}-{value}",
            f"1.{value}",
            f"gcc@{value}",
            f"os{value}",
            f"t{value}",
            f"tag-{value}",
        ), key
        assert spec["variants"] == [f"+v{value}", f"k={value}"] and spec["stacks"] == [
            "root",
            f"s{value}",
        ]
        assert spec["tarball"] == f"https://binaries.example/{value}.spack"
        assert spec["source"].endswith(f"/{dir_name(key, value)}/specs.md")

    found = decoded("search", "/hd", options=("--limit", "0"))
    assert {p["name"] for p in found["packages"]} == {f"d-{k}-{v}" for k, v in HOSTILE.items()} | {
        ROOT,
        COMPILER,
    }
    for spec in found["specs"]:
        if spec["package"].startswith("d-") and spec["package"] != ROOT:
            value = HOSTILE[spec["package"].split("-")[1]]
            assert (spec["version"], spec["os"], spec["target"]) == (
                f"2.{value}",
                f"os{value}",
                f"t{value}",
            )
            # (a value with characters Spack quotes is written quoted, as Spack prints it)
            assert (
                f"+v{value}" in spec["variants"]
                and f"k={quote_if_needed(value)}" in spec["variants"]
            )
            assert spec["tag"] in {f"dtag-{HOSTILE[k]}" for k in DATABASE_TAGS} and spec[
                "stacks"
            ] == ["d" + spec["tag"][1:].replace("tag-", "stack-", 1)]
    assert {s["compiler"] for s in found["specs"] if s["package"] == ROOT} == {
        f"{COMPILER}@{COMPILER_VERSION}"
    }

    record = decoded("deps", database_hash(80))
    names = {
        (d["name"], tuple(d["virtuals"]), d["kind"])
        for d in record["dependencies"] + record["build"]
    }
    assert names == {
        (f"d-{k}-{v}", (f"virt-{v}",) if k in VIRTUALS else (), "binary")
        for k, v in HOSTILE.items()
    } | {(COMPILER, ("c",), "binary"), (EXTERNAL, (), "external"), (GONE, (), "not in this index")}
    assert {d["version"] for d in record["dependencies"] if d["name"].startswith("d-")} == {
        f"2.{v}" for v in HOSTILE.values()
    }

    stats = decoded("stats")
    for _key, value in HOSTILE.items():
        assert stats["facets"]["stack"][f"s{value}"] == 1 and stats["tags"][f"tag-{value}"] == 1
        assert stats["facets"]["compiler"][f"gcc@{value}"] == 1
    bad_dir = BAD_DIR
    assert {(p["source"].rsplit("/summaries/", 1)[-1], p["error"]) for p in stats["problems"]} == {
        (f"{bad_dir}/specs.md", "spec_details record 1 skipped: missing 'hash'"),
        (
            f"{bad_dir}/specs.md",
            f"meta versions lists {HOSTILE['clear']}{HOSTILE['bold']}, "
            f"{HOSTILE['osc52']}{HOSTILE['bidi']} not in spec_details and omits 1.0; using "
            "spec_details",
        ),
    }
