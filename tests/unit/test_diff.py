"""Comparing two cache tags (issue 8) on the command line: a synthetic pair with every kind
of change (tests/tag_pair.py), exact expectations written down by hand. In the app:
ui/test_diff_app.py."""

from __future__ import annotations

import json
from pathlib import Path

from tag_pair import EXPECTED, NEW, OLD, H, write_pair

from cachetui import cli


def test_diff_json_between_two_tags(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", OLD, NEW, str(root), "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out) == EXPECTED


def test_diff_the_other_way_swaps_added_and_removed(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", NEW, OLD, str(root), "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    for name, change in EXPECTED["packages"].items():
        assert out["packages"][name] == {
            "added": change["removed"],
            "removed": change["added"],
            "rebuilt": [[new, old] for old, new in change["rebuilt"]],
        }


def test_diff_of_a_tag_with_itself_finds_nothing_and_exits_1(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", OLD, OLD, str(root), "--json", "--no-cache"]) == 1
    assert json.loads(capsys.readouterr().out) == {"old": OLD, "new": OLD, "packages": {}}


def test_diff_between_two_sources(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", str(root / OLD), str(root / NEW), "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out) == EXPECTED  # each source's own tag names its side


def test_diff_text_lists_each_change_as_a_spec_line(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", OLD, NEW, str(root), "--no-cache"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{OLD} -> {NEW}: 4 packages changed; 2 specs added, 2 removed, 2 rebuilt"
    # Spack 1.x's spec lines: the root's tokens and /hash before the compiler
    assert (
        f"  + zlib@1.3.1 build_system=generic arch=linux-ubuntu24.04-x86_64_v3 /{H['zl-c']} "
        "%gcc@13.2.0" in out
    )
    assert (
        f"  ~ zlib@1.2 build_system=generic arch=linux-ubuntu24.04-x86_64_v3 /{H['zl-b']} "
        f"%gcc@13.2.0 -> /{H['zl-b2']}" in out
    )
    assert (
        f"  - py-numpy@2.1 build_system=generic arch=linux-ubuntu24.04-x86_64_v3 /{H['nu-d']} "
        "%gcc@13.2.0" in out
    )
    assert "m4" not in out


def test_an_unknown_tag_is_a_usage_error_naming_the_tags(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", "v9", NEW, str(root), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "'v9' is neither a cache tag among the sources" in err and OLD in err and NEW in err
