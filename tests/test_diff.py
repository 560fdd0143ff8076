"""Comparing two cache tags (issue 8): a synthetic pair with every kind of change, exact
expectations written down by hand."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import fake_hash, record, write_summary

from cachetui import cli

OLD, NEW = "develop-2025-06-01", "develop-2025-07-01"
H = {name: fake_hash(n, name[:2]) for n, name in enumerate(
    ["zl-a", "zl-b", "zl-b2", "zl-c", "nu-d", "cm-e", "op-f", "op-g", "op-h", "m4-m"], start=1)}


def write_pair(root: Path) -> Path:
    """Two tags; per package: unchanged, rebuilt, added, removed, and a pairing by variants."""
    def put(tag: str, package: str, records: list[dict]) -> None:
        write_summary(root / tag / package / "specs.md", package, records, tag=tag)

    put(OLD, "zlib", [record(H["zl-a"], "1.3"), record(H["zl-b"], "1.2")])
    put(NEW, "zlib", [record(H["zl-a"], "1.3"), record(H["zl-b2"], "1.2"), record(H["zl-c"], "1.3.1")])
    put(OLD, "py-numpy", [record(H["nu-d"], "2.1")])
    put(NEW, "cmake", [record(H["cm-e"], "3.30", stacks=("e4s",))])
    # Two openssl builds differing only in variants; the new tag has one, ~shared: it pairs
    # with the old ~shared (rebuilt), and the old +shared is removed.
    put(OLD, "openssl", [record(H["op-f"], "3.4", variants=("+shared",)), record(H["op-g"], "3.4", variants=("~shared",))])
    put(NEW, "openssl", [record(H["op-h"], "3.4", variants=("~shared",))])
    put(OLD, "m4", [record(H["m4-m"], "1.4")])
    put(NEW, "m4", [record(H["m4-m"], "1.4")])  # the same hash in both: unchanged, not listed
    return root


EXPECTED = {
    "old": OLD, "new": NEW,
    "packages": {
        "cmake": {"added": [H["cm-e"]], "removed": [], "rebuilt": []},
        "openssl": {"added": [], "removed": [H["op-f"]], "rebuilt": [[H["op-g"], H["op-h"]]]},
        "py-numpy": {"added": [], "removed": [H["nu-d"]], "rebuilt": []},
        "zlib": {"added": [H["zl-c"]], "removed": [], "rebuilt": [[H["zl-b"], H["zl-b2"]]]},
    },
}


def test_diff_json_between_two_tags(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", OLD, NEW, str(root), "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out) == EXPECTED


def test_diff_the_other_way_swaps_added_and_removed(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", NEW, OLD, str(root), "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    for name, change in EXPECTED["packages"].items():
        assert out["packages"][name] == {"added": change["removed"], "removed": change["added"],
                                         "rebuilt": [[new, old] for old, new in change["rebuilt"]]}


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
    assert f"  + zlib@1.3.1 build_system=generic arch=linux-ubuntu24.04-x86_64_v3 /{H['zl-c']} %gcc@13.2.0" in out
    assert f"  ~ zlib@1.2 build_system=generic arch=linux-ubuntu24.04-x86_64_v3 /{H['zl-b']} %gcc@13.2.0 -> /{H['zl-b2']}" in out
    assert f"  - py-numpy@2.1 build_system=generic arch=linux-ubuntu24.04-x86_64_v3 /{H['nu-d']} %gcc@13.2.0" in out
    assert "m4" not in out


def test_an_unknown_tag_is_a_usage_error_naming_the_tags(tmp_path: Path, capsys) -> None:
    root = write_pair(tmp_path / "cache")
    assert cli.main(["diff", "v9", NEW, str(root), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "'v9' is neither a cache tag among the sources" in err and OLD in err and NEW in err


async def test_t_switches_between_tags(tmp_path: Path) -> None:
    from conftest import settle, status

    from cachetui.tui.app import CacheTUI

    root = write_pair(tmp_path / "cache")
    app = CacheTUI([str(root)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert status(app) == "5 of 5 packages · 12 of 12 specs"
        await pilot.press("t")
        await pilot.press(*"07")
        listed: list[str] = []
        for _ in range(40):
            await pilot.pause(0.05)
            options = app.screen.query("CommandList")
            if options:
                listed = [str(options.first().get_option_at_index(i).prompt).split("\n")[0] for i in range(options.first().option_count)]
                if listed == [f"Tag: {NEW}"]:
                    break
        assert listed == [f"Tag: {NEW}"]  # the tags only: no commands, filters or packages
        await pilot.press("enter")
        await settle(app, pilot)
        assert status(app).startswith("4 of 5 packages · 6 of 12 specs")
        await pilot.press("t", *"all tags", "enter")
        await settle(app, pilot)
        assert status(app) == "5 of 5 packages · 12 of 12 specs"


async def test_t_with_one_tag_says_so() -> None:
    from conftest import settle

    from cachetui.tui.app import CacheTUI

    app = CacheTUI()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        assert [n.message for n in app._notifications] == ["One cache tag is loaded: develop"]


async def test_the_diff_screen_lists_changes_and_goes_to_a_spec(tmp_path: Path) -> None:
    from conftest import settle

    from cachetui.tui.app import CacheTUI
    from cachetui.tui.screens.diff import ChangeList, DiffPackageList, DiffScreen
    from cachetui.tui.widgets.spec_list import SpecList

    root = write_pair(tmp_path / "cache")
    app = CacheTUI([str(root)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("c", *"06 -> 07")
        for _ in range(40):
            await pilot.pause(0.05)
            options = app.screen.query("CommandList")
            if options and options.first().option_count == 1:
                break
        await pilot.press("enter")
        for _ in range(40):  # the diff is worked out in a worker
            await pilot.pause(0.05)
            if isinstance(app.screen, DiffScreen):
                break
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        summary = str(screen.query_one("#diff-summary").render())
        assert summary.startswith(f"{OLD} -> {NEW}: 4 packages changed; 2 specs added, 2 removed, 2 rebuilt")
        packages = screen.query_one(DiffPackageList)
        assert packages.names == sorted(EXPECTED["packages"])
        await pilot.press("end")  # zlib
        await pilot.pause()
        changes = screen.query_one(ChangeList)
        index = app.service.index
        assert [index.hashes[r] for r in changes.rows] == [H["zl-c"], H["zl-b2"]]  # added, then rebuilt (new)
        await pilot.press("enter", "down", "enter")  # to the changes; the rebuilt one; go
        await settle(app, pilot)
        assert not isinstance(app.screen, DiffScreen)
        specs = app.screen.query_one(SpecList)
        assert index.hashes[specs.highlighted_row] == H["zl-b2"] and index.field("tag", specs.highlighted_row) == NEW


async def test_a_comparison_asked_for_again_is_instant_and_a_superseded_one_never_shows(tmp_path: Path) -> None:
    from conftest import settle

    from cachetui.tui.app import CacheTUI
    from cachetui.tui.screens.diff import DiffScreen
    from cachetui.tui.screens.main import MainScreen

    root = write_pair(tmp_path / "cache")
    app = CacheTUI([str(root)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        main = app.screen
        main.compare(OLD, NEW)
        main.compare(NEW, OLD)  # asked before the first is shown: only this one may show
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen) and app.screen.changes.old.label == NEW
        assert [s for s in app.screen_stack if isinstance(s, DiffScreen)] == [app.screen]
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen) and app.service.comparisons.known(app.service.index, OLD, NEW) and app.service.comparisons.known(app.service.index, NEW, OLD)
        main.compare(OLD, NEW)  # worked out already: shown at once, no worker
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen) and app.screen.changes.old.label == OLD
