"""The app, driven headless with Pilot at a pinned terminal size."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import (
    SAMPLE,
    fake_hash,
    key_event,
    loaded_at,
    record,
    screen_lines,
    screen_strips,
    screen_text,
    settle,
    status,
    type_key,
    write_summary,
)
from textual import events
from textual.widgets import Input

from cachetui.index.filter import Filter
from cachetui.tui.app import HELP_OWNERS, CacheTUI
from cachetui.tui.keys import key_entries
from cachetui.tui.screens.hash_lookup import HashLookupScreen
from cachetui.tui.screens.help import HelpScreen
from cachetui.tui.screens.problems import ProblemsScreen
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.line_list import LineList
from cachetui.tui.widgets.package_list import PackageList
from cachetui.tui.widgets.spec_list import SpecList

SIZE = (120, 40)


def detail(app) -> str:
    return str(app.screen.query_one("#detail-body").render())


def listed(app) -> list[str]:
    packages = app.screen.query_one(PackageList)
    return [app.service.index.packages[p] for p in packages.packages]


async def focus_facet(app, pilot, facet: str, value: str) -> None:
    sidebar = app.screen.query_one(FacetSidebar)
    sidebar.focus()
    sidebar.cursor = sidebar.lines.index((facet, value))
    await pilot.pause()


async def test_status_line_after_load() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE):
        assert status(app) == SAMPLE.status()
        assert listed(app) == SAMPLE.packages
        assert app.focused is app.screen.query_one(PackageList)


async def test_search_narrows_the_list_and_status() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"safet")
        await settle(app, pilot)
        n = SAMPLE.specs_of["py-safetensors"]
        assert listed(app) == ["py-safetensors"]
        assert status(app) == f"1 of 3 packages · {n} of {SAMPLE.specs} specs"
        assert app.screen.query_one(SpecList).count == n
        await pilot.press(*"zzzzz")
        await settle(app, pilot)
        assert listed(app) == [] and status(app) == f"0 of 3 packages · 0 of {SAMPLE.specs} specs"


async def test_typo_search_finds_mpi4py() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"pymp4py")
        await settle(app, pilot)
        assert listed(app)[0] == "py-mpi4py"


async def test_facet_toggle_changes_list_counts_and_other_facets(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        sidebar = app.screen.query_one(FacetSidebar)
        assert status(app) == "3 of 3 packages · 7 of 7 specs"
        await focus_facet(app, pilot, "os", "ubuntu22.04")
        await pilot.press("space")
        await settle(app, pilot)
        assert listed(app) == ["zlib", "zlib-ng"]
        assert status(app) == "2 of 3 packages · 3 of 7 specs"
        assert app.screen.query_one(PackageList).counts == [2, 1]
        assert sidebar.counts["tag"] == {"develop": 2, "v1.0.0": 1}
        assert sidebar.counts["os"]["sequoia"] == 1  # its own facet's alternatives stay visible
        # OR within a facet.
        sidebar.cursor = sidebar.lines.index(("os", "sequoia"))
        await pilot.press("enter")
        await settle(app, pilot)
        assert (
            listed(app) == ["py-numpy", "zlib", "zlib-ng"]
            and status(app) == "3 of 3 packages · 4 of 7 specs"
        )
        # Toggle both off again.
        await pilot.press("enter")
        sidebar.cursor = sidebar.lines.index(("os", "ubuntu22.04"))
        await pilot.press("space")
        await settle(app, pilot)
        assert status(app) == "3 of 3 packages · 7 of 7 specs"


async def test_facet_toggle_by_mouse(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        sidebar = app.screen.query_one(FacetSidebar)
        line = sidebar.lines.index(("platform", "darwin"))
        await pilot.click(FacetSidebar, offset=(3, line + 1))  # +1: the border
        await settle(app, pilot)
        assert listed(app) == ["py-numpy"] and status(app) == "1 of 3 packages · 1 of 7 specs"


async def test_moving_the_highlight_updates_the_detail_pane() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        index = app.service.index
        specs = app.screen.query_one(SpecList)
        first, second = specs.rows[0], specs.rows[1]
        assert index.hashes[first] in detail(app)
        specs.focus()
        await pilot.press("down")
        await pilot.pause()
        text = detail(app)
        assert index.hashes[second] in text and index.hashes[first] not in text
        assert f"spack install /{index.hashes[second]}" in text
        await pilot.press("k")
        await pilot.pause()
        assert index.hashes[first] in detail(app)
        # Moving in the package list changes the spec list and the detail.
        app.screen.query_one(PackageList).focus()
        await pilot.press("j")
        await pilot.pause()
        assert specs.border_title == "Specs of py-mpi4py" and "py-mpi4py@4.0.1" in detail(app)


async def test_detail_shows_every_field(tmp_path: Path) -> None:
    write_summary(
        tmp_path / "p.md",
        "pkg",
        [
            record(
                fake_hash(1),
                "2.0",
                variants=("+mpi", "~cuda", "libs=shared,static"),
                stacks=("e4s", "root"),
                size=2048,
                tarball="https://binaries.example/x.spack",
            )
        ],
    )
    app = CacheTUI([str(tmp_path)])
    async with loaded_at(app, SIZE):
        text = detail(app)
        for expected in (
            fake_hash(1),
            "pkg@2.0",
            "gcc@13.2.0",
            "linux-ubuntu24.04-x86_64_v3",
            "+mpi",
            "~cuda",
            "libs=shared,static",
            "e4s",
            "root",
            "2.0 KiB",
            "develop",
            "https://binaries.example/x.spack",
            str(tmp_path / "p.md"),
            f"spack install /{fake_hash(1)}",
        ):
            assert expected in text, expected


async def test_hash_lookup_jumps_to_the_spec() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"/2feova4", "enter")
        await settle(app, pilot)
        packages, specs = app.screen.query_one(PackageList), app.screen.query_one(SpecList)
        assert app.service.index.packages[packages.highlighted_package] == "py-mpi4py"
        assert app.service.index.hashes[specs.highlighted_row] == "2feova4prghd2gkebr23if6bojkyydpt"
        assert "2feova4prghd2gkebr23if6bojkyydpt" in detail(app)
        assert app.focused is specs


async def test_hash_lookup_clears_filters_that_hide_the_spec(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        await focus_facet(app, pilot, "os", "sequoia")
        await pilot.press("space")
        await settle(app, pilot)
        assert listed(app) == ["py-numpy"]
        await pilot.press("slash", *"/cccc", "enter")
        await settle(app, pilot)
        assert app.service.index.hashes[
            app.screen.query_one(SpecList).highlighted_row
        ] == fake_hash(4, "cccc")
        # The facet is cleared; the search text stays, and lists what it matches.
        assert status(app) == "1 of 3 packages · 1 of 7 specs"
        assert app.screen.filter.selected == {} and app.screen.query_one("#search").value == "/cccc"


async def test_going_to_a_spec_while_the_search_asks_what_summaries_cannot_answer(
    synthetic: Path,
) -> None:
    """`^zlib` on summaries is refused (red box, last list kept); going to a spec from the
    hash lookup then clears that search instead of failing on it."""
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"zlib ^zlib")
        await settle(app, pilot)
        assert app.screen.query_one("#search").has_class("-invalid")
        index = app.service.index
        numpy = next(r for r in range(index.n_specs) if index.package_name(r) == "py-numpy")
        app.screen.jump_to(numpy)  # not among what the last answer (zlib) shows
        await settle(app, pilot)
        assert app.is_running and app.screen.query_one("#search").value == ""
        assert app.screen.query_one(SpecList).highlighted_row == numpy


async def test_ambiguous_hash_offers_a_choice(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"/aaa", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, HashLookupScreen)
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, HashLookupScreen)
        assert app.service.index.hashes[
            app.screen.query_one(SpecList).highlighted_row
        ] == fake_hash(2, "aaab")


async def test_missing_hash_says_so() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"/zzzzzz", "enter")
        await settle(app, pilot)
        assert "no match" in screen_text(app)  # the hint under the search box
        # Textual keeps no public list of notifications; toasts are not in the headless paint.
        assert any(
            "No spec has a hash starting with /zzzzzz" in n.message for n in app._notifications
        )


async def test_help_lists_every_binding() -> None:
    app = CacheTUI()
    async with loaded_at(app, (120, 60)) as pilot:  # tall enough for every line at once
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        lines = screen_lines(app)
        for _ in range(6):  # and what scrolling down shows
            await pilot.press("pagedown")
            lines += screen_lines(app)
        entries = key_entries(HELP_OWNERS)
        assert len(entries) >= 14
        for entry in entries:
            line = next((line for line in lines if f" {entry.id} " in line + " "), None)
            assert (
                line is not None
                and entry.keys in line
                and entry.tooltip[:12] in line
                and entry.description[:8] in line
            ), entry.id
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_keys_in_one_burst_after_slash_reach_the_search_box() -> None:
    """A paste, typing over a slow SSH link, a browser's websocket frame: `/safet` arrives
    at once. The keys after `/` are typed into the search box (they went to the package
    list, where `e` opened the export dialog)."""
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        for key in "/safet":
            event = key_event(key)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(app, pilot)
        search = app.screen.query_one("#search", Input)
        assert app.focused is search and search.value == "safet"
        assert status(app).startswith("1 of 3 packages")
        search.value = ""
        await pilot.press("slash", *"2feo")  # in the box, `/` is text: a hash prefix
        assert search.value == "/2feo"


async def test_slash_focuses_search_and_tab_moves_between_panes() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash")
        assert app.focused.id == "search"
        order = []
        for _ in range(5):
            await pilot.press("tab")
            order.append(app.focused.id)
        assert order == ["packages", "specs", "detail", "facets", "search"]
        await pilot.press("shift+tab")
        assert app.focused.id == "facets"


async def test_q_quits_outside_the_search_box_and_is_typed_inside_it() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", "q", "question_mark", "j")
        assert app.screen.query_one("#search").value == "q?j" and app.is_running
        await pilot.press("escape", "q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_ctrl_q_quits_from_the_search_box() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", "ctrl+q")
        await pilot.pause()
    assert not app.is_running


async def test_markup_in_data_is_shown_literally(tmp_path: Path) -> None:
    name = "[bold red]evil[/] [@click=app.quit]x"
    write_summary(
        tmp_path / "p.md", name, [record(fake_hash(1), stacks=("[link=http://x]s[/link]",))]
    )
    app = CacheTUI([str(tmp_path)])
    async with loaded_at(app, SIZE) as pilot:
        assert listed(app) == [name]
        assert name in detail(app) and "[link=http://x]s[/link]" in detail(app)
        assert "[bold red]evil" in screen_text(app)
        await pilot.press("slash", *"evil")
        await settle(app, pilot)
        assert app.is_running and status(app) == "1 of 1 packages · 1 of 1 specs"


async def test_load_problems_are_counted_in_the_status_line(synthetic: Path) -> None:
    (synthetic / "broken.md").write_text("---\nspec_details: [\n---\n")
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        assert status(app) == "3 of 3 packages · 7 of 7 specs · 1 load problems (p)"
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ProblemsScreen)
        text = screen_text(app)
        assert "broken.md" in text and "error" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, ProblemsScreen)


async def test_markup_in_a_border_title_cannot_crash_or_style(tmp_path: Path) -> None:
    write_summary(tmp_path / "p.md", "a[/]b[/nope]", [record(fake_hash(1))])
    app = CacheTUI([str(tmp_path)])
    async with loaded_at(app, SIZE):
        assert app.is_running and "Specs of a[/]b[/nope]" in screen_text(app)


def _bold_lines(app, widget) -> list[str]:
    """Painted lines inside `widget` that carry the cursor's bold style."""
    region = widget.content_region
    strips = screen_strips(app)[region.y : region.bottom]
    cropped = [strip.crop(region.x, region.right) for strip in strips]
    return [strip.text for strip in cropped if any(seg.style and seg.style.bold for seg in strip)]


async def test_cursor_repaints_when_the_list_is_scrolled() -> None:
    app = CacheTUI()
    async with loaded_at(app, (100, 24)) as pilot:
        specs = app.screen.query_one(SpecList)
        specs.focus()
        await pilot.press("G")
        await pilot.pause()
        assert specs.scroll_offset.y > 0
        await pilot.press("k", "k", "k")
        await pilot.pause()
        index = app.service.index
        cursor_hash = index.hashes[specs.highlighted_row][:7]
        bold = _bold_lines(app, specs)
        assert len(bold) == 1 and cursor_hash in bold[0]


async def test_double_slash_still_looks_up() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        search = app.screen.query_one("#search")
        search.focus()
        await pilot.press("slash", *"/2feova4", "enter")  # `/` typed while already in the box
        await settle(app, pilot)
        assert search.value == "//2feova4"
        assert app.service.index.hashes[app.screen.query_one(SpecList).highlighted_row].startswith(
            "2feova4"
        )


def _bar_column(app, widget) -> str:
    """The painted last column of `widget`'s content: its scroll bar."""
    region = widget.content_region
    strips = screen_strips(app)[region.y : region.bottom]
    return "".join(strip.crop(region.right - 1, region.right).text for strip in strips)


async def test_scroll_bar_follows_the_list_and_a_click_on_it_scrolls() -> None:
    app = CacheTUI()
    async with loaded_at(app, (100, 24)) as pilot:
        specs = app.screen.query_one(SpecList)
        height = specs.content_region.height
        assert specs.count > height  # the sample's largest package overflows this terminal
        bar = _bar_column(app, specs)
        assert bar.startswith("▐") and bar.endswith(" ")  # the thumb starts at the top
        specs.focus()
        await pilot.press("G")
        await pilot.pause()
        bar = _bar_column(app, specs)
        assert bar.endswith("▐") and bar.startswith(" ")
        # A click at the top of the bar scrolls back to the start, without moving the cursor.
        cursor = specs.cursor
        await pilot.click(SpecList, offset=(specs.content_region.width, 1))  # +1: the border
        await pilot.pause()
        assert specs.scroll_offset.y == 0 and specs.cursor == cursor
        assert _bar_column(app, specs).startswith("▐")
        # A list that fits has no bar: its rows use the full width.
        packages = app.screen.query_one(PackageList)
        assert packages.count <= packages.content_region.height
        assert "▐" not in _bar_column(app, packages)


async def test_partial_repaints_leave_no_stale_line(synthetic: Path) -> None:
    """Lists repaint only the lines that changed; the screen must equal a full repaint."""
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        for query in ("zl", "z", "", "py", "zlib-ng", ""):
            app.screen.query_one("#search").value = query
            await settle(app, pilot)
            await focus_facet(app, pilot, "os", "ubuntu22.04")
            await pilot.press("space")  # on, then off at the next query
            await settle(app, pilot)
            partial = screen_text(app)
            for widget in app.screen.query(LineList):
                widget.refresh()  # forget every painted line
            await pilot.pause()
            assert screen_text(app) == partial, query


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_framed_rows_paint_as_textual_would(synthetic: Path, size: tuple[int, int]) -> None:
    """Rows framed by LineList's cut template equal rows Textual frames itself, style for style."""
    from textual._styles_cache import StylesCache

    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, size) as pilot:
        lists = list(app.screen.query(LineList))
        for focused in lists:  # each list focused in turn: border colours and cursor styles differ
            focused.focus()
            await pilot.pause()
            for widget in lists:
                widget.refresh()
            await pilot.pause()
            framed = screen_strips(app)
            for widget in lists:
                widget._styles_cache = StylesCache()
                widget.refresh()
            await pilot.pause()
            assert screen_strips(app) == framed, focused.id
            for widget in lists:
                widget._styles_cache = type(widget)()._styles_cache
                widget.refresh()


async def _mouse(app, pilot, kind, widget, x: int, y: int) -> None:
    """A mouse event as the terminal driver delivers it (so Textual derives clicks itself)."""
    at_x, at_y = widget.region.x + x, widget.region.y + y
    app.post_message(
        kind(
            widget=widget,
            x=at_x,
            y=at_y,
            delta_x=0,
            delta_y=0,
            button=1,
            shift=False,
            meta=False,
            ctrl=False,
            screen_x=at_x,
            screen_y=at_y,
        )
    )
    await pilot.pause()


async def test_dragging_the_scroll_bar_never_chooses_a_row() -> None:
    from textual import events

    app = CacheTUI()
    async with loaded_at(app, (120, 24)) as pilot:  # wide: the filters show
        sidebar = app.screen.query_one(FacetSidebar)
        assert sidebar.count > sidebar.content_region.height  # it has a bar
        bar_x = sidebar.content_region.right - 1 - sidebar.region.x
        top = sidebar.content_region.y - sidebar.region.y
        before = (status(app), sidebar.cursor, sidebar.count)
        await _mouse(app, pilot, events.MouseDown, sidebar, bar_x, top + 1)
        await _mouse(
            app, pilot, events.MouseMove, sidebar, bar_x - 3, top + 8
        )  # drifting off the bar
        await _mouse(app, pilot, events.MouseUp, sidebar, bar_x - 3, top + 8)
        await settle(app, pilot)
        assert sidebar.scroll_offset.y > 0  # it scrolled
        # ... and chose nothing: no toggle, no fold, the cursor where it was.
        assert (
            status(app),
            sidebar.cursor,
            sidebar.count,
        ) == before and not app.screen.filter.selections
        # A plain click on a value still toggles it.
        value_line = sidebar.cursor = sidebar.scroll_offset.y + 3
        facet, value = sidebar.lines[value_line]
        if value is not None:
            await _mouse(app, pilot, events.MouseDown, sidebar, 4, top + 3)
            await _mouse(app, pilot, events.MouseUp, sidebar, 4, top + 3)
            await settle(app, pilot)
            assert app.screen.filter.selected == {facet: frozenset({value})}


async def test_spec_syntax_in_the_search_box_and_an_error_keeps_the_last_result() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        on_ubuntu = [r for r in SAMPLE.records if r["os"] == "ubuntu24.04"]
        with_gcc = [r for r in on_ubuntu if r["compiler"].replace("@=", "@").startswith("gcc@")]
        await pilot.press("slash", *"os=ubuntu24.04 %gcc")
        await settle(app, pilot)
        shown = f"of {len(SAMPLE.packages)} packages · {len(with_gcc)} of {SAMPLE.specs} specs"
        assert status(app).endswith(shown) and 0 < len(with_gcc) < SAMPLE.specs
        search = app.screen.query_one("#search")
        await pilot.press("space", "circumflex_accent")
        await settle(app, pilot)
        assert search.has_class("-invalid") and "column 21: a dependency is missing after ^" in str(
            search.border_subtitle
        )
        # Parsed, but what summaries cannot answer: said once evaluated, the result kept.
        await pilot.press(*"zlib")
        await settle(app, pilot)
        assert search.has_class("-invalid") and "column 21: dependencies (^)" in str(
            search.border_subtitle
        )
        # The last valid result stays, and the status line carries the reason in full.
        assert status(app).endswith(
            f"{shown} · query: column 21: dependencies (^) are not in cache.spack.io summaries: "
            "load a build cache's index for them"
        )
        await pilot.press(*["backspace"] * 6)
        await settle(app, pilot)
        assert (
            not search.has_class("-invalid")
            and not search.border_subtitle
            and status(app).endswith(shown)
        )


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_query_read_the_spack_0x_way_offers_the_one_that_matches(size) -> None:
    app = CacheTUI()
    async with loaded_at(app, size) as pilot:
        await pilot.press(
            "slash", *"py-mpi4py %gcc@11 os=ubuntu22.04"
        )  # os= binds to gcc in Spack 1.x
        await settle(app, pilot)
        search = app.screen.query_one("#search")
        assert status(app).startswith("0 of ") and not search.has_class("-invalid")
        assert str(search.border_subtitle) == "did you mean: py-mpi4py os=ubuntu22.04 %gcc@11"
        assert status(app).endswith(" specs · try: py-mpi4py os=ubuntu22.04 %gcc@11")
        assert " specs · try: py-mpi4py os=ubuntu22.04 %gcc@11" in screen_text(
            app
        )  # in full, at 80x24 too


def underlined(line_list: LineList, y: int) -> list[str]:
    """The runs of row `y` drawn as matching text (the match style underlines, for no-colour
    terminals too)."""
    runs, run = [], ""
    for segment in line_list.render_line(y):
        if segment.style and segment.style.underline:
            run += segment.text
        elif run:
            runs, run = runs + [run], ""
    return runs + [run] if run else runs


def two_tags(tmp_path: Path) -> Path:
    """One spec in two tags, and a third hash that shares its first characters."""
    root = tmp_path / "cache"
    shared = record(fake_hash(1, "kkkk"), "1.3.1", os="ubuntu22.04")
    write_summary(
        root / "develop" / "zlib" / "specs.md",
        "zlib",
        [shared, record(fake_hash(2, "kkkm"), "1.3.1")],
    )
    write_summary(root / "v1.0" / "zlib" / "specs.md", "zlib", [shared], tag="v1.0")
    write_summary(
        root / "develop" / "zstd" / "specs.md", "zstd", [record(fake_hash(3, "zzzz"), "1.5.6")]
    )
    return root


async def test_go_to_hash_key_works_from_the_search_box_and_lists_candidates_across_tags(
    tmp_path: Path,
) -> None:
    app = CacheTUI([str(two_tags(tmp_path))])
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"zst", "ctrl+g")  # the key works while typing a search
        assert isinstance(app.screen, HashLookupScreen)
        await pilot.press(*"KKK")
        await pilot.pause()
        candidates = app.screen.query_one("#candidates")
        lines = [
            strip.text.strip()
            for strip in (candidates.render_line(y) for y in range(candidates.count))
        ]
        assert sorted(lines) == sorted(
            [
                f"zlib@1.3.1 arch=linux-ubuntu22.04-x86_64_v3 %gcc@13.2.0 /{fake_hash(1, 'kkkk')}  "
                "develop",
                f"zlib@1.3.1 arch=linux-ubuntu22.04-x86_64_v3 %gcc@13.2.0 /{fake_hash(1, 'kkkk')}  "
                "v1.0",
                f"zlib@1.3.1 arch=linux-ubuntu24.04-x86_64_v3 %gcc@13.2.0 /{fake_hash(2, 'kkkm')}  "
                "develop",
            ]
        )
        assert all(
            underlined(candidates, y) == ["kkk"] for y in range(3)
        )  # the typed prefix, marked
        assert "3 specs in 2 tags have a hash starting with /kkk" in screen_text(app)
        await pilot.press("enter")  # several: enter moves to the list to choose
        assert app.focused is candidates
        index = app.service.index
        target = next(row for row in candidates.rows if index.field("tag", row) == "v1.0")
        for _ in range(candidates.rows.index(target)):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, HashLookupScreen)
        assert app.screen.query_one(SpecList).highlighted_row == target
        assert index.field("tag", target) == "v1.0" and f"/{fake_hash(1, 'kkkk')}" in detail(app)
        # The search `zst` hid it: the search is cleared, and the box says so by being empty.
        assert (
            app.screen.query_one("#search").value == ""
            and status(app) == "2 of 2 packages · 4 of 4 specs"
        )


async def test_go_to_hash_takes_a_pasted_log_line_and_escape_goes_nowhere(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("ctrl+g")
        await pilot.press(*"zzzz")
        await pilot.pause()
        assert "No spec has a hash starting with /zzzz" in screen_text(app)
        await pilot.press("escape")
        assert (
            not isinstance(app.screen, HashLookupScreen)
            and status(app) == "3 of 3 packages · 7 of 7 specs"
        )
        await pilot.press(
            "question_mark", "ctrl+g"
        )  # from the help too: it closes, the lookup opens
        assert isinstance(app.screen, HashLookupScreen) and len(app.screen_stack) == 3
        await pilot.press("escape")
        await pilot.press("ctrl+g")
        log_line = f"==> Installing zlib-ng-2.2.1-{fake_hash(4, 'cccc').upper()} [4/9]"
        app.screen.query_one("#lookup-prefix").post_message(
            events.Paste(log_line)
        )  # as a terminal sends a paste
        await pilot.pause()
        assert f"1 spec has a hash starting with /{fake_hash(4, 'cccc')}" in screen_text(app)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.service.index.hashes[
            app.screen.query_one(SpecList).highlighted_row
        ] == fake_hash(4, "cccc")


async def test_a_hash_prefix_in_the_search_box_filters_as_typed(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        search = app.screen.query_one("#search")
        await pilot.press("slash", "slash")
        await settle(app, pilot)
        # A `/` alone is a hash prefix not yet typed: no error, a hint, the list as it was.
        assert not search.has_class("-invalid") and "type the first characters" in str(
            search.border_subtitle
        )
        assert status(app) == "3 of 3 packages · 7 of 7 specs"
        await pilot.press(*"aaa")
        await settle(app, pilot)
        assert status(app) == "1 of 3 packages · 2 of 7 specs" and "2 matches · enter to go" in str(
            search.border_subtitle
        )
        specs = app.screen.query_one(SpecList)
        assert [underlined(specs, y)[0] for y in range(specs.count)] == ["aaa", "aaa"]
        await pilot.press(*" os=ubuntu24.04")
        await settle(app, pilot)
        assert status(app) == "1 of 3 packages · 1 of 7 specs"
        await pilot.press("enter")  # the one spec: go straight to it
        await settle(app, pilot)
        assert (
            app.service.index.hashes[specs.highlighted_row] == fake_hash(2, "aaab")
            and app.focused is specs
        )


def detail_marks(app) -> list[str]:
    """The parts of the detail pane drawn as matching text."""
    text = app.screen.query_one("#detail-body").render()
    return [
        text.plain[span.start : span.end].strip()
        for span in text.spans
        if getattr(span.style, "underline", False)
    ]


async def test_matching_text_is_highlighted_in_every_pane() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"mpi4 os=ubuntu22.04 stack=hep build_system=python_pip %gcc@11")
        await settle(app, pilot)
        assert listed(app) == ["py-mpi4py"]
        assert underlined(app.screen.query_one(PackageList), 0) == ["mpi4"]
        specs = app.screen.query_one(SpecList)
        assert specs.count == 3  # the three hep specs
        for y in range(specs.count):
            compiler, os = underlined(specs, y)[
                :2
            ]  # the stacks column is past the pane's edge here
            assert compiler.startswith("gcc@11.") and os == "ubuntu22.04"
        marks = detail_marks(app)
        assert marks[0].startswith("gcc@11.") and marks[1:] == [
            "ubuntu22.04",
            "build_system=python_pip",
            "hep",
        ], marks
        await pilot.press("ctrl+u", *"safetensors")  # names only: no column is marked
        await settle(app, pilot)
        assert underlined(app.screen.query_one(PackageList), 0) == ["safetensors"]
        assert (
            all(underlined(specs, y) == [] for y in range(min(specs.count, 10)))
            and detail_marks(app) == []
        )
        await pilot.press(
            "ctrl+u", *"sfetensor"
        )  # a typo: the fuzzy tier marks the characters it kept
        await settle(app, pilot)
        assert listed(app) == ["py-safetensors"]
        assert underlined(app.screen.query_one(PackageList), 0) == ["s", "fetensor"]


async def test_a_wide_named_candidate_keeps_its_hash_and_tag(tmp_path: Path) -> None:
    # Fewer characters than the row has room for, but more cells: each takes two.
    write_summary(tmp_path / "a.md", "日本語パッケージ名前テ", [record(fake_hash(1, "kkkk"))])
    write_summary(tmp_path / "b.md", "zlib", [record(fake_hash(2, "kkkm"))], tag="v1.0")
    app = CacheTUI([str(tmp_path)])
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("ctrl+g", *"kkk")
        await pilot.pause()
        candidates = app.screen.query_one("#candidates")
        lines = [candidates.render_line(y).text.rstrip() for y in range(2)]
        assert any(
            line.endswith(f"/{fake_hash(1, 'kkkk')}  develop") and "…" in line for line in lines
        ), lines
        assert any(line.endswith(f"/{fake_hash(2, 'kkkm')}  v1.0") for line in lines), lines


async def test_enter_on_a_hash_prefix_goes_where_the_hint_counts(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        await focus_facet(app, pilot, "os", "ubuntu24.04")
        await pilot.press("space", "slash", *"/aaa")
        await settle(app, pilot)
        assert "1 match · enter to go" in str(app.screen.query_one("#search").border_subtitle)
        await pilot.press("enter")  # the one match the list shows: no choice offered
        await settle(app, pilot)
        assert not isinstance(app.screen, HashLookupScreen)
        assert app.service.index.hashes[
            app.screen.query_one(SpecList).highlighted_row
        ] == fake_hash(2, "aaab")


async def test_going_to_a_hash_clears_only_what_hides_it(synthetic: Path) -> None:
    app = CacheTUI([str(synthetic)])
    async with loaded_at(app, SIZE) as pilot:
        await focus_facet(app, pilot, "os", "ubuntu22.04")
        await pilot.press("space", "slash", *"zlib-ng", "ctrl+g", *"aaaa", "enter")
        await settle(app, pilot)
        # zlib /aaaa… is on ubuntu22.04: the facet stays, the search `zlib-ng` goes.
        assert app.screen.filter == Filter.of("", {"os": {"ubuntu22.04"}})
        assert app.screen.query_one("#search").value == "" and listed(app) == ["zlib", "zlib-ng"]
        assert app.service.index.hashes[
            app.screen.query_one(SpecList).highlighted_row
        ] == fake_hash(1, "aaaa")
        assert any(n.message.startswith("Search cleared") for n in app._notifications)


async def test_a_slash_inside_a_value_is_not_a_hash_hint() -> None:
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("slash", *"tag=develop/")
        await settle(app, pilot)
        search = app.screen.query_one("#search")
        assert not search.border_subtitle and not search.has_class("-invalid")


async def test_a_burst_of_enters_on_a_filter_header_folds_it_and_toggles_nothing_else() -> None:
    """Two enters arrive before the first is handled: the first folds the section, so the
    position the second chose is another line by then; it is ignored, not a crash or a toggle."""
    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        sidebar = app.screen.query_one(FacetSidebar)
        sidebar.focus()
        last = len(sidebar.lines) - 1
        sidebar.cursor = sidebar.lines.index(("os", None))
        sidebar.post_message(FacetSidebar.Selected(sidebar, sidebar.cursor))  # fold OS
        sidebar.post_message(FacetSidebar.Selected(sidebar, last))  # chosen before the fold landed
        await settle(app, pilot)
        assert ("os", "ubuntu22.04") not in sidebar.lines and app.is_running
        assert app.screen.filter.selections == () and status(app) == SAMPLE.status()


@pytest.mark.parametrize("keys", [["question_mark"], ["e"], ["p"], ["ctrl+g"]])
async def test_two_closing_keys_at_once_close_only_the_screen_on_top(keys: list[str]) -> None:
    """Textual's dismiss pops whatever is on top: two escapes in one burst closed the screen,
    then the main screen under it (the monkey test found a blank app)."""
    from cachetui.tui.screens.main import MainScreen

    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press(*keys)
        await pilot.pause()
        screen = app.screen
        assert not isinstance(screen, MainScreen)
        screen.action_cancel() if hasattr(screen, "action_cancel") else screen.action_close()
        screen.action_cancel() if hasattr(
            screen, "action_cancel"
        ) else screen.action_close()  # the second of the burst
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.is_running


async def test_the_palette_survives_keys_in_a_burst() -> None:
    """Page down before the palette's list has laid out its lines raised KeyError inside
    Textual (the monkey test found it); a second escape closed the main screen too."""
    from cachetui.tui.screens.main import MainScreen

    app = CacheTUI()
    async with loaded_at(app, SIZE) as pilot:
        for key in [
            "ctrl+p",
            "a",
            "down",
            "pagedown",
            "pagedown",
            "b",
            "pagedown",
            "pagedown",
            "backspace",
            "pagedown",
            "pageup",
            "pagedown",
        ]:
            await type_key(app, key)  # as fast as keys arrive in one read
        await pilot.pause(0.3)
        assert app._exception is None and not isinstance(app.screen, MainScreen)
        palette = app.screen
        palette.dismiss()
        palette.dismiss()  # the second escape of a burst
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.is_running
