"""The cache.spack.io summary reader, against the real seeds and crafted variations."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from helpers import SAMPLE_FILES, SHARED_SEEDS, fake_hash, record, write_summary

from cachetui.model import LoadProblem, Spec, normalise_compiler
from cachetui.service import IndexService
from cachetui.sources import discover, read_file


def load(*paths) -> tuple[list[Spec], list[LoadProblem]]:
    """Specs as the index shows them (normalised), and every load problem."""
    report = IndexService([str(p) for p in paths]).load()
    return [report.index.spec(r) for r in range(report.index.n_specs)], report.problems


def problems_of(path) -> list[LoadProblem]:
    return read_file(str(path))[1]


SEEDS = SAMPLE_FILES + (sorted(SHARED_SEEDS.glob("*.txt")) if SHARED_SEEDS.is_dir() else [])


def _meta(path: Path) -> dict:
    for line in path.read_text().splitlines():
        if line.startswith("meta: "):
            return json.loads(line[len("meta: ") :])
    raise AssertionError("seed without meta")


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_seed_matches_its_own_meta(path: Path) -> None:
    specs, problems = load(path)
    meta = _meta(path)
    assert problems == []
    assert len(specs) == meta["num_specs"]
    assert Counter(s for spec in specs for s in spec.stacks) == Counter(meta["num_specs_by_stack"])
    assert {s.version for s in specs} == set(meta["versions"])
    assert {s.compiler for s in specs} == {normalise_compiler(c) for c in meta["compilers"]}
    assert {s.os for s in specs} == set(meta["oss"])
    assert {s.platform for s in specs} == set(meta["platforms"])
    assert {s.target for s in specs} == set(meta["targets"])
    assert {s for spec in specs for s in spec.stacks} == set(meta["stacks"])
    assert {s.tag for s in specs} == {"develop"}
    assert len({s.hash for s in specs}) == len(specs)


def test_file_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    odd = tmp_path / "whatever.bin"
    odd.write_bytes(SAMPLE_FILES[0].read_bytes())
    (tmp_path / "specs.md").write_text("# just a readme\n")
    specs, problems = load(tmp_path)
    assert {Path(s.source).name for s in specs} == {"whatever.bin"} and len(specs) == _meta(
        SAMPLE_FILES[0]
    )["num_specs"]
    [problem] = problems
    assert Path(problem.source).name == "specs.md" and "no YAML front matter" in problem.message


def test_directories_are_walked_recursively_and_hidden_entries_skipped(tmp_path: Path) -> None:
    write_summary(tmp_path / "a" / "b" / "c" / "x.md", "deep", [record(fake_hash(1))])
    write_summary(tmp_path / ".git" / "x.md", "hidden", [record(fake_hash(2))])
    files, _ = discover([str(tmp_path)])
    assert [Path(f).parent.name for f in files] == ["c"]


def test_normalisation(tmp_path: Path) -> None:
    path = write_summary(
        tmp_path / "p.md",
        "pkg",
        [
            record(
                fake_hash(1),
                compiler="gcc@=11.4.0",
                size=1234,
                tarball="https://example.invalid/x.spack",
            ),
            record(fake_hash(2), compiler="none", size="-"),
            {
                "versions": ["2.0"],
                "target": "aarch64",
                "platform": "linux",
                "os": "rhel8",
                "hash": fake_hash(3).upper(),
                "stacks": ["z", "a", "z"],
                "compiler": "gcc@13.2.0",
            },  # any key order, no size/tarball/variants
        ],
        tag="develop-2025-03-23",
    )
    specs, problems = load(path)
    by_hash = {s.hash: s for s in specs}
    first, second, third = by_hash[fake_hash(1)], by_hash[fake_hash(2)], by_hash[fake_hash(3)]
    assert problems == []
    assert [first.compiler, second.compiler, third.compiler] == ["gcc@11.4.0", "none", "gcc@13.2.0"]
    assert [first.size, second.size, third.size] == [1234, None, None]
    assert first.tarball == "https://example.invalid/x.spack" and second.tarball is None
    assert third.stacks == ("a", "z") and third.variants == () and third.version == "2.0"
    assert {s.tag for s in specs} == {"develop-2025-03-23"}


def test_meta_that_disagrees_is_a_warning_and_spec_details_wins(tmp_path: Path) -> None:
    meta = {
        "num_specs": 5,
        "oss": ["ubuntu24.04", "centos7"],
        "stacks": ["root"],
        "num_specs_by_stack": {"root": 9},
    }
    path = write_summary(
        tmp_path / "p.md", "pkg", [record(fake_hash(1)), record(fake_hash(2))], meta=meta
    )
    specs, problems = load(path)
    assert len(specs) == 2
    messages = [p.message for p in problems]
    assert all(p.severity == "warning" for p in problems)
    assert any("num_specs 5" in m and "has 2" in m for m in messages)
    assert any("oss" in m and "centos7" in m for m in messages)
    assert any("num_specs_by_stack" in m for m in messages)


@pytest.mark.parametrize("listed", [["gcc@13.3.0", "none"], ["gcc@13.3.0"]])
def test_meta_listing_none_as_a_compiler_or_leaving_it_out_both_agree(
    tmp_path: Path, listed: list[str]
) -> None:
    """The generator Spack 1.x runs lists specs built without a compiler as "none" in meta
    (real develop files: arkouda, ampt); older ones left them out. Neither is a disagreement."""
    records = [record(fake_hash(1), compiler="gcc@13.3.0"), record(fake_hash(2), compiler="none")]
    meta = {"num_specs": 2, "compilers": listed}
    specs, problems = load(write_summary(tmp_path / "p.md", "pkg", records, meta=meta))
    assert len(specs) == 2 and problems == []
    _, problems = load(
        write_summary(
            tmp_path / "q.md", "pkg", records[:1], meta={"compilers": ["gcc@13.3.0", "none"]}
        )
    )
    assert [p.message for p in problems] == [
        "meta compilers lists none not in spec_details; using spec_details"
    ]


def test_yaml_fallback_reads_block_style_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "block.md"
    path.write_text(
        "---\ntitle: blocky\ncategories:\n  - package\n  - v0.21.0\nspec_details:\n"
        f"  - hash: {fake_hash(9)}\n    versions: ['1.0']\n    compiler: gcc@=11.4.0\n"
        "    os: ubuntu22.04\n    platform: linux\n    target: x86_64_v3\n    stacks: [root]\n    "
        "size: '-'\n---\n"
    )
    [spec], problems = load(path)
    assert problems == []
    assert (spec.package, spec.tag, spec.compiler, spec.version) == (
        "blocky",
        "v0.21.0",
        "gcc@11.4.0",
        "1.0",
    )


@pytest.mark.parametrize(
    "content, reason",
    [
        ("", "empty file"),
        ("\0\1\2binary", "binary file"),
        ("---\ntitle: x\n", "not closed"),
        ('---\ntitle: x\nmeta: {"num_specs": 1}\n---\n', "meta but no spec_details"),
        ('---\ntitle: x\nspec_details: {"a": 1}\n---\n', "should be a list"),
        ('---\ntitle: x\nspec_details: [{"hash": "abc", \n---\n', "invalid JSON"),
        ("plain text\n", "no YAML front matter"),
    ],
)
def test_broken_files_become_problems_naming_file_and_reason(
    tmp_path: Path, content: str, reason: str
) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(content.encode())
    good = write_summary(tmp_path / "good" / "specs.md", "good", [record(fake_hash(1))])
    specs, problems = load(tmp_path)
    assert [s.source for s in specs] == [str(good)]  # the rest still loads
    [problem] = problems
    assert problem.source == str(bad) and reason in problem.message and problem.severity == "error"


def test_bad_records_are_skipped_with_a_problem_and_good_ones_kept(tmp_path: Path) -> None:
    path = write_summary(
        tmp_path / "p.md",
        "pkg",
        [
            record(fake_hash(1)),
            record("not-a-hash"),
            record("short"),
            {"hash": fake_hash(2)},
            "junk",
        ],
    )
    specs, problems = load(path)
    assert [s.hash for s in specs] == [fake_hash(1)]
    text = " | ".join(p.message for p in problems)
    assert "record 2 skipped: 'hash' is not 32 base32 characters" in text
    assert "1 more records skipped: 'hash' is not 32 base32 characters" in text
    assert "record 4 skipped: missing 'versions'" in text
    assert "record 5 skipped: a record should be a mapping" in text


def test_a_short_and_a_long_hash_do_not_add_up_to_two_good_ones(tmp_path: Path) -> None:
    short, long = fake_hash(1)[:31], fake_hash(2) + "a"
    path = write_summary(
        tmp_path / "p.md", "pkg", [record(short), record(long), record(fake_hash(3))]
    )
    specs, problems = load(path)
    assert [s.hash for s in specs] == [fake_hash(3)]
    assert "record 1 skipped: 'hash' is not 32 base32 characters" in " | ".join(
        p.message for p in problems
    )


def test_missing_source_is_a_problem(tmp_path: Path) -> None:
    files, problems = discover([str(tmp_path / "nope")])
    assert files == [] and problems[0].message == "no such file or directory"


def test_unreadable_file_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # chmod cannot stop root (CI runs as root), so the OS refusal is simulated.
    path = write_summary(tmp_path / "p.md", "pkg", [record(fake_hash(1))])

    def refuse(file, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr("cachetui.sources.read.open", refuse, raising=False)
    [problem] = problems_of(path)
    assert problem.source == str(path) and problem.message == "permission denied"


def test_directory_symlink_loop_terminates(tmp_path: Path) -> None:
    write_summary(tmp_path / "a" / "specs.md", "pkg", [record(fake_hash(1))])
    (tmp_path / "a" / "loop").symlink_to(tmp_path)
    files, problems = discover([str(tmp_path)])
    assert len(files) == 1
    assert any("already visited" in p.message for p in problems)


def test_a_named_pipe_is_skipped_not_read(tmp_path: Path) -> None:
    # Opening a FIFO for reading blocks until a writer comes: it must never be opened.
    write_summary(tmp_path / "good.md", "good", [record(fake_hash(1))])
    os.mkfifo(tmp_path / "pipe")
    specs, problems = load(tmp_path)
    assert len(specs) == 1
    [problem] = problems
    assert problem.source.endswith("pipe") and "not a regular file" in problem.message


def test_yaml_aliases_are_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.md"
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"] + [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}]"
        for i in range(8)
    ]
    bomb.write_text(
        "---\ntitle: bomb\n"
        + "\n".join(levels)
        + f"\nspec_details:\n  - hash: {fake_hash(1)}\n---\n"
    )
    [problem] = problems_of(bomb)
    assert "aliases" in problem.message and problem.source == str(bomb)


def test_messages_about_meta_stay_short(tmp_path: Path) -> None:
    meta = {"versions": ["v" * 10_000] + [f"x{i}" for i in range(50)]}
    path = write_summary(tmp_path / "p.md", "pkg", [record(fake_hash(1))], meta=meta)
    [problem] = problems_of(path)
    assert len(problem.message) < 600 and "and 46 more" in problem.message


def test_stack_and_variant_lists_are_read_by_meaning_not_spelling(tmp_path: Path) -> None:
    # The fast path keys stack and variant lists by their JSON text; spacing, order and
    # escapes must not split one value in two, and a wrong type must not slip through.
    path = write_summary(
        tmp_path / "p.md",
        "pkg",
        [
            record(fake_hash(1), stacks=["b", "a"], variants=["+mpi"]),
            record(fake_hash(2), stacks=["a", "b"], variants=["+mpi"]),
        ],
        meta={"num_specs": 3, "stacks": ["a", "b"], "num_specs_by_stack": {"a": 3, "b": 3}},
    )
    text = path.read_text().replace(
        "}]\n---",
        f'}}, {{"hash": "{fake_hash(3)}", "versions": ["1.0"], "compiler": "gcc@13.2.0", '
        '"os": "ubuntu24.04", "platform": "linux", "target": "x86_64_v3", '
        '"stacks":["a" ,"b","a"], "variants":["\\u002bmpi"]}]\n---',
    )
    path.write_text(text)
    specs, problems = load(path)
    assert problems == []  # meta's per-stack counts agree: each spec counted once per stack
    assert (
        len(specs) == 3
        and {s.stacks for s in specs} == {("a", "b")}
        and {s.variants for s in specs} == {("+mpi",)}
    )


@pytest.mark.parametrize(
    "stacks, kept, reason",
    [
        ("null", 2, None),  # no stacks: a spec without any
        ('"root"', 1, "'stacks' should be a list of strings"),
        ("[1, 2]", 1, "'stacks' should be a list of strings"),
    ],
)
def test_odd_stack_values_take_the_careful_path(
    tmp_path: Path, stacks: str, kept: int, reason: str | None
) -> None:
    path = write_summary(
        tmp_path / "p.md", "pkg", [record(fake_hash(1)), record(fake_hash(2), stacks=["ODD"])]
    )
    path.write_text(path.read_text().replace('["ODD"]', stacks))
    specs, problems = load(path)
    assert len(specs) == kept
    if reason is None:
        assert problems == [] and sorted(s.stacks for s in specs) == [(), ("root",)]
    else:
        [problem] = problems
        assert "record 2 skipped" in problem.message and reason in problem.message


def test_stack_lists_stay_right_when_the_decoded_memo_overflows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cachetui.sources import summary

    monkeypatch.setattr(summary, "_DECODED_MOST", 2)
    monkeypatch.setattr(summary, "_DECODED", {column: {} for column in summary.LIST_COLUMNS})
    expected = {}
    for n in range(12):
        stacks = [f"s{n % 5}", f"t{n % 3}"]
        write_summary(
            tmp_path / f"p{n}" / "specs.md",
            f"p{n}",
            [record(fake_hash(n), stacks=stacks, variants=[f"v={n % 4}"])],
        )
        expected[fake_hash(n)] = (tuple(sorted(stacks)), (f"v={n % 4}",))
    specs, problems = load(tmp_path)
    assert problems == [] and {s.hash: (s.stacks, s.variants) for s in specs} == expected
    assert all(len(memo) <= 2 for memo in summary._DECODED.values())
