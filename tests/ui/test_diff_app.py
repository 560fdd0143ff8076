"""Comparing two cache tags (issue 8) in the app: `t` switches tags, the diff screen lists
the changes of a synthetic pair (tests/tag_pair.py). On the command line: unit/test_diff.py."""

from __future__ import annotations

from pathlib import Path

from helpers import loaded_at, settle, status
from tag_pair import EXPECTED, NEW, OLD, H, write_pair

from cachetui.tui.app import CacheTUI
from cachetui.tui.screens.diff import ChangeList, DiffPackageList, DiffScreen
from cachetui.tui.screens.main import MainScreen
from cachetui.tui.widgets.spec_list import SpecList


async def test_t_switches_between_tags(tmp_path: Path) -> None:
    root = write_pair(tmp_path / "cache")
    app = CacheTUI([str(root)])
    async with loaded_at(app, (80, 24)) as pilot:
        assert status(app) == "5 of 5 packages · 12 of 12 specs"
        await pilot.press("t")
        await pilot.press(*"07")
        listed: list[str] = []
        for _ in range(40):
            await pilot.pause(0.05)
            options = app.screen.query("CommandList")
            if options:
                listed = [
                    str(options.first().get_option_at_index(i).prompt).split("\n")[0]
                    for i in range(options.first().option_count)
                ]
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
    app = CacheTUI()
    async with loaded_at(app, (80, 24)) as pilot:
        await pilot.press("t")
        assert [n.message for n in app._notifications] == ["One cache tag is loaded: develop"]


async def test_the_diff_screen_lists_changes_and_goes_to_a_spec(tmp_path: Path) -> None:
    root = write_pair(tmp_path / "cache")
    app = CacheTUI([str(root)])
    async with loaded_at(app, (80, 24)) as pilot:
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
        assert summary.startswith(
            f"{OLD} -> {NEW}: 4 packages changed; 2 specs added, 2 removed, 2 rebuilt"
        )
        packages = screen.query_one(DiffPackageList)
        assert packages.names == sorted(EXPECTED["packages"])
        await pilot.press("end")  # zlib
        await pilot.pause()
        changes = screen.query_one(ChangeList)
        index = app.service.index
        assert [index.hashes[r] for r in changes.rows] == [
            H["zl-c"],
            H["zl-b2"],
        ]  # added, then rebuilt (new)
        await pilot.press("enter", "down", "enter")  # to the changes; the rebuilt one; go
        await settle(app, pilot)
        assert not isinstance(app.screen, DiffScreen)
        specs = app.screen.query_one(SpecList)
        assert (
            index.hashes[specs.highlighted_row] == H["zl-b2"]
            and index.field("tag", specs.highlighted_row) == NEW
        )


async def test_a_comparison_asked_for_again_is_instant_and_a_superseded_one_never_shows(
    tmp_path: Path,
) -> None:
    root = write_pair(tmp_path / "cache")
    app = CacheTUI([str(root)])
    async with loaded_at(app, (80, 24)) as pilot:
        main = app.screen
        main.compare(OLD, NEW)
        main.compare(NEW, OLD)  # asked before the first is shown: only this one may show
        await settle(app, pilot)
        assert isinstance(app.screen, DiffScreen) and app.screen.changes.old.label == NEW
        assert [s for s in app.screen_stack if isinstance(s, DiffScreen)] == [app.screen]
        await pilot.press("escape")
        assert (
            isinstance(app.screen, MainScreen)
            and app.service.comparisons.known(app.service.index, OLD, NEW)
            and app.service.comparisons.known(app.service.index, NEW, OLD)
        )
        main.compare(OLD, NEW)  # worked out already: shown at once, no worker
        await pilot.pause()
        assert isinstance(app.screen, DiffScreen) and app.screen.changes.old.label == OLD
