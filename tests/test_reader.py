"""The cache.spack.io summary reader, against the real seeds and crafted variations."""

from __future__ import annotations

import json
from collections import Counter
import os
from pathlib import Path

import pytest

from cachetui.model import normalise_compiler
from cachetui import sources
from cachetui.sources import discover, load_files, read_file
from conftest import SAMPLE_FILES, SHARED_SEEDS, fake_hash, record, write_summary

SEEDS = SAMPLE_FILES + (sorted(SHARED_SEEDS.glob("*.txt")) if SHARED_SEEDS.is_dir() else [])


def _meta(path: Path) -> dict:
    for line in path.read_text().splitlines():
        if line.startswith("meta: "):
            return json.loads(line[len("meta: "):])
    raise AssertionError("seed without meta")


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_seed_matches_its_own_meta(path: Path) -> None:
    loaded = read_file(str(path))
    meta = _meta(path)
    specs = loaded.specs
    assert loaded.problems == []
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
    files, problems = discover([str(tmp_path)])
    loaded = {Path(f.path).name: f for f in load_files(files)}
    assert len(loaded["whatever.bin"].specs) == 129
    assert loaded["specs.md"].specs == []
    assert "no YAML front matter" in loaded["specs.md"].problems[0].message


def test_directories_are_walked_recursively_and_hidden_entries_skipped(tmp_path: Path) -> None:
    write_summary(tmp_path / "a" / "b" / "c" / "x.md", "deep", [record(fake_hash(1))])
    write_summary(tmp_path / ".git" / "x.md", "hidden", [record(fake_hash(2))])
    files, _ = discover([str(tmp_path)])
    assert [Path(f).parent.name for f in files] == ["c"]


def test_normalisation(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "p.md", "pkg", [
        record(fake_hash(1), compiler="gcc@=11.4.0", size=1234, tarball="https://example.invalid/x.spack"),
        record(fake_hash(2), compiler="none", size="-"),
        {"versions": ["2.0"], "target": "aarch64", "platform": "linux", "os": "rhel8", "hash": fake_hash(3).upper(),
         "stacks": ["z", "a", "z"], "compiler": "gcc@13.2.0"},  # any key order, no size/tarball/variants
    ], tag="develop-2025-03-23")
    specs = read_file(str(path)).specs
    assert [s.compiler for s in specs] == ["gcc@11.4.0", "none", "gcc@13.2.0"]
    assert [s.size for s in specs] == [1234, None, None]
    assert specs[0].tarball == "https://example.invalid/x.spack" and specs[1].tarball is None
    assert specs[2].hash == fake_hash(3) and specs[2].stacks == ("a", "z") and specs[2].variants == ()
    assert {s.tag for s in specs} == {"develop-2025-03-23"}


def test_meta_that_disagrees_is_a_warning_and_spec_details_wins(tmp_path: Path) -> None:
    meta = {"num_specs": 5, "oss": ["ubuntu24.04", "centos7"], "stacks": ["root"], "num_specs_by_stack": {"root": 9}}
    path = write_summary(tmp_path / "p.md", "pkg", [record(fake_hash(1)), record(fake_hash(2))], meta=meta)
    loaded = read_file(str(path))
    assert len(loaded.specs) == 2
    messages = [p.message for p in loaded.problems]
    assert all(p.severity == "warning" for p in loaded.problems)
    assert any("num_specs 5" in m and "has 2" in m for m in messages)
    assert any("oss" in m and "centos7" in m for m in messages)
    assert any("num_specs_by_stack" in m for m in messages)


def test_yaml_fallback_reads_block_style_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "block.md"
    path.write_text(
        "---\ntitle: blocky\ncategories:\n  - package\n  - v0.21.0\nspec_details:\n"
        f"  - hash: {fake_hash(9)}\n    versions: ['1.0']\n    compiler: gcc@=11.4.0\n"
        "    os: ubuntu22.04\n    platform: linux\n    target: x86_64_v3\n    stacks: [root]\n    size: '-'\n---\n"
    )
    loaded = read_file(str(path))
    assert loaded.problems == []
    [spec] = loaded.specs
    assert (spec.package, spec.tag, spec.compiler, spec.version) == ("blocky", "v0.21.0", "gcc@11.4.0", "1.0")


@pytest.mark.parametrize("content, reason", [
    ("", "empty file"),
    ("\0\1\2binary", "binary file"),
    ("---\ntitle: x\n", "not closed"),
    ("---\ntitle: x\nmeta: {\"num_specs\": 1}\n---\n", "meta but no spec_details"),
    ("---\ntitle: x\nspec_details: {\"a\": 1}\n---\n", "should be a list"),
    ('---\ntitle: x\nspec_details: [{"hash": "abc", \n---\n', "invalid JSON"),
    ("plain text\n", "no YAML front matter"),
])
def test_broken_files_become_problems_naming_file_and_reason(tmp_path: Path, content: str, reason: str) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(content.encode())
    good = write_summary(tmp_path / "good" / "specs.md", "good", [record(fake_hash(1))])
    files, _ = discover([str(tmp_path)])
    results = {f.path: f for f in load_files(files)}
    assert len(results[str(good)].specs) == 1  # the rest still loads
    [problem] = results[str(bad)].problems
    assert problem.source == str(bad) and reason in problem.message and problem.severity == "error"


def test_bad_records_are_skipped_with_a_problem_and_good_ones_kept(tmp_path: Path) -> None:
    path = write_summary(tmp_path / "p.md", "pkg", [
        record(fake_hash(1)), record("not-a-hash"), record("short"), {"hash": fake_hash(2)}, "junk",
    ])
    loaded = read_file(str(path))
    assert [s.hash for s in loaded.specs] == [fake_hash(1)]
    text = " | ".join(p.message for p in loaded.problems)
    assert "record 2 skipped: 'hash' is not 32 base32 characters" in text
    assert "1 more records skipped: 'hash' is not 32 base32 characters" in text
    assert "record 4 skipped: missing 'versions'" in text
    assert "record 5 skipped: a record should be a mapping" in text


def test_missing_source_is_a_problem(tmp_path: Path) -> None:
    files, problems = discover([str(tmp_path / "nope")])
    assert files == [] and problems[0].message == "no such file or directory"


def test_unreadable_file_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # chmod cannot stop root (CI runs as root), so the OS refusal is simulated.
    path = write_summary(tmp_path / "p.md", "pkg", [record(fake_hash(1))])

    def refuse(file, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(sources, "open", refuse, raising=False)
    [problem] = read_file(str(path)).problems
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
    files, _ = discover([str(tmp_path)])
    results = {Path(f.path).name: f for f in load_files(files)}
    assert len(results["good.md"].specs) == 1
    assert "not a regular file" in results["pipe"].problems[0].message


def test_yaml_aliases_are_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.md"
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"] + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(8)]
    bomb.write_text("---\ntitle: bomb\n" + "\n".join(levels) + f"\nspec_details:\n  - hash: {fake_hash(1)}\n---\n")
    [problem] = read_file(str(bomb)).problems
    assert "aliases" in problem.message and problem.source == str(bomb)


def test_messages_about_meta_stay_short(tmp_path: Path) -> None:
    meta = {"versions": ["v" * 10_000] + [f"x{i}" for i in range(50)]}
    path = write_summary(tmp_path / "p.md", "pkg", [record(fake_hash(1))], meta=meta)
    [problem] = read_file(str(path)).problems
    assert len(problem.message) < 600 and "and 46 more" in problem.message
