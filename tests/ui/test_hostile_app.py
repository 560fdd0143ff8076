"""Hostile text: data that tries to style, link, click, drive the terminal or break the layout.

Package names, versions, compilers, os/targets, variants, stacks, tags, dependency names,
virtuals, external paths and file names carry Textual/Rich markup (`[bold red]`, `[link=…]`,
`[@click=app.quit]`), terminal escapes (OSC 52 clipboard writes, ESC[2J, OSC 8 links), other
C0 and C1 controls, bidirectional overrides, and 10,000-character values. Everywhere they are
shown (every widget, the help, notifications, CLI text) they must appear literally or as
visible escapes (`\\x1b`); JSON output keeps them exact. Here: the app; the escaping itself
and the command line: unit/test_hostile_cli.py; the corpus: tests/hostile.py.

Each test fails when cachetui.textsafe.visible is made the identity in every module that
imports it, except the JSON test, which fails when JSON output is escaped like text.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import loaded_at, screen_lines, screen_strips, settle, status
from hostile import (
    BAD_DIR,
    COMPILER,
    COMPILER_VERSION,
    DATABASE_TAGS,
    EXTERNAL,
    EXTERNAL_PATH,
    GONE,
    HOSTILE,
    ROOT,
    SHOWN,
    UNSAFE,
    VIRTUALS,
    database_hash,
    escaped,
    shown,
    summary_hash,
    write_hostile_sources,
)

# -- the app ----------------------------------------------------------------------------------

SIZE = (160, 50)
STATUS = re.compile(r"^\d+ of \d+ packages · \d+ of \d+ specs")


@pytest.fixture
def sources() -> Iterator[list[str]]:
    """The hostile sources, at a path of the same short length in every run: the problems
    screen cuts its rows, the path first, so under pytest's own temporary directory (longer
    with each digit of pytest-N, and by `popen-gwN/` under xdist) the hostile part of a path
    could be cut off the row."""
    with tempfile.TemporaryDirectory(prefix="cachetui-hostile-") as short:
        yield write_hostile_sources(Path(short) / "hostile")


def hostile_app(tmp_path: Path, sources: list[str]):
    from cachetui.service import IndexService
    from cachetui.tui.app import CacheTUI

    return CacheTUI(service=IndexService(sources, cache_dir=tmp_path / "cache"))


def assert_clean(app) -> str:
    """The screen as painted: no raw control or bidi character in any segment, no segment
    styled by markup (a link, a click action), every line as wide as the terminal. Its text."""
    width = app.size.width
    strips = screen_strips(app)
    for y, strip in enumerate(strips):
        assert not UNSAFE.search(strip.text), (y, strip.text)
        assert strip.cell_length == width, (y, strip.text)
        for segment in strip:
            style = segment.style
            if style is not None:
                assert not style.link, (y, segment)
                assert "@click" not in (style.meta or {}), (y, segment)
    return "\n".join(strip.text for strip in strips)


def assert_layout(app) -> None:
    """The status line still shows its counts, on one line, and the app still runs."""
    assert app.is_running
    assert STATUS.match(status(app)), status(app)
    assert app.screen.query_one("#status").region.height == 1


def in_view(app, widget) -> str:
    return "\n".join(screen_lines(app, widget))


async def test_every_list_and_the_detail_pane_show_hostile_values_escaped(
    tmp_path: Path, sources: list[str]
) -> None:
    from cachetui.tui.widgets.facet_sidebar import FacetSidebar
    from cachetui.tui.widgets.package_list import PackageList
    from cachetui.tui.widgets.spec_list import SpecList

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE) as pilot:
        assert_clean(app)
        assert_layout(app)
        index = app.service.index
        packages, specs = app.screen.query_one(PackageList), app.screen.query_one(SpecList)
        # The package list: every hostile name, escaped (as far as the column shows it).
        text = in_view(app, packages)
        for key in HOSTILE:
            for prefix in ("p", "d"):
                assert f" {prefix}-{key}-{SHOWN[key]}"[:30] in text, (prefix, key)
        assert " p-bold-[bold red]x[/] " in text and " d-bold-[bold red]x[/] " in text
        # Each package in turn: its specs, the specs list's title, the detail pane.
        for position, package in enumerate(packages.packages):
            name = index.packages[package]
            if not name.startswith("p-"):
                continue
            key = name.split("-")[1]
            packages.cursor = position
            await settle(app, pilot)
            screen = assert_clean(app)
            assert_layout(app)
            assert f"Specs of p-{key}-{SHOWN[key]}"[:40] in screen, key
            assert f"1.{SHOWN[key]}"[:20] in in_view(app, specs), key
            detail = str(app.screen.query_one("#detail-body").render())
            assert not UNSAFE.search(detail.replace("\n", ""))
            for field in (
                f"p-{key}-{SHOWN[key]}@1.{SHOWN[key]}",
                f"gcc@{SHOWN[key]}",
                f"linux-os{SHOWN[key]}-t{SHOWN[key]}",
                f"tag-{SHOWN[key]}",
                f"+v{SHOWN[key]}",
                f"k={SHOWN[key]}",
                f"s{SHOWN[key]}",
                f"https://binaries.example/{SHOWN[key]}.spack",
            ):
                assert field in detail.replace("\n", ""), (key, field[:60])
            first = screen_lines(app, app.screen.query_one("#detail"))[1]
            assert f"p-{key}-{SHOWN[key]}"[:40] in first, (key, first)
        # The facet sidebar, a page at a time: every hostile value of every facet.
        sidebar = app.screen.query_one(FacetSidebar)
        seen = ""
        for top in range(0, sidebar.count, sidebar.content_region.height - 1):
            sidebar.scroll_to(y=top, animate=False)
            await pilot.pause()
            assert_clean(app)
            seen += in_view(app, sidebar)
        for key in HOSTILE:
            for facet_prefix in (
                "s",
                "os",
                "t",
                "gcc@",
                "tag-",
                "dtag-" if key in DATABASE_TAGS else "s",
            ):
                assert f"] {facet_prefix}{SHOWN[key]}"[:17] in seen, (key, facet_prefix)
        assert "] s[bold red]x[/] " in seen and "] os[bold red]x[/] " in seen


async def test_a_hostile_facet_value_toggles_and_its_markup_does_not_click(
    tmp_path: Path, sources: list[str]
) -> None:
    from cachetui.tui.widgets.facet_sidebar import FacetSidebar

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE) as pilot:
        sidebar = app.screen.query_one(FacetSidebar)
        line = sidebar.lines.index(("stack", f"s{HOSTILE['click']}"))
        sidebar.scroll_to(y=line, animate=False)
        await pilot.pause()
        # Click on the value itself: where the `x` of a parsed [@click=app.quit]x would be.
        x, y = (
            sidebar.content_region.x + len(" [ ] s"),
            sidebar.content_region.y + line - int(sidebar.scroll_offset.y),
        )
        painted = screen_lines(app)[y][x:]
        await pilot.click(offset=(x, y))
        await settle(app, pilot)
        assert app.is_running and app.screen.filter.selected == {
            "stack": frozenset({f"s{HOSTILE['click']}"})
        }
        assert painted.startswith("[@click=app.quit")  # where it was clicked: the markup, as text
        assert_clean(app)
        assert status(app).startswith("1 of 25 packages · 1 of 64 specs")


def flat(text: str) -> str:
    """Text with all white space removed: compare what a widget wraps over several lines."""
    return re.sub(r"\s", "", text)


async def click_on(app, pilot, widget, text: str) -> None:
    """Click on the first place `text` is painted inside `widget`; the app must still run."""
    lines = screen_lines(app, widget)
    y = next(y for y, line in enumerate(lines) if text in line)
    await pilot.click(offset=(widget.region.x + lines[y].index(text) + 2, widget.region.y + y))
    await settle(app, pilot)
    assert app.is_running


def toasts(app) -> str:
    from textual.widgets._toast import Toast

    return "\n".join(
        "\n".join(screen_lines(app, toast, content=True)) for toast in app.screen.query(Toast)
    )


async def highlight_dependency(pilot, dependencies, name: str) -> None:
    """Move the detail pane's cursor to the dependency line of `name` (up first, then down)."""
    for key in ("up", "down"):
        for _ in range(dependencies.line_count + 1):
            if dependencies.highlighted is not None and dependencies.highlighted.name == name:
                return
            await pilot.press(key)
    raise AssertionError(f"no dependency line for {name!r}")


async def go_to(app, pilot, digest: str) -> None:
    """Highlight the spec with this hash (its first tag) and enter the detail pane."""
    from cachetui.tui.widgets.spec_detail import SpecDetail

    app.screen.jump_to(app.service.index.lookup_hash(digest)[0])
    await settle(app, pilot)
    app.screen.query_one(SpecDetail).focus()
    await pilot.pause()


async def test_markup_in_the_lists_and_the_detail_pane_does_not_click(
    tmp_path: Path, sources: list[str]
) -> None:
    from cachetui.tui.widgets.package_list import PackageList
    from cachetui.tui.widgets.spec_list import SpecList

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE) as pilot:
        # Click where the package's name has its markup: the `x` of a parsed [@click=app.quit]x.
        packages = app.screen.query_one(PackageList)
        row = [app.service.index.packages[p] for p in packages.packages].index(
            f"p-click-{HOSTILE['click']}"
        )
        x, y = (
            packages.content_region.x + len(" p-click-"),
            packages.content_region.y + row - int(packages.scroll_offset.y),
        )
        painted = screen_lines(app)[y][x:]
        await pilot.click(offset=(x, y))
        await settle(app, pilot)
        assert (
            app.is_running
            and app.service.index.packages[packages.highlighted_package]
            == f"p-click-{HOSTILE['click']}"
        )
        assert painted.startswith(
            "[@click=app.quit]x[/]"
        )  # where it was clicked: the markup, as text
        await click_on(app, pilot, app.screen.query_one(SpecList), "1.[@click=app.quit]")
        await click_on(app, pilot, app.screen.query_one("#detail"), "[@click=app.quit]")
        await click_on(
            app, pilot, app.screen.query_one(SpecList), "Specs of p-click-[@click=app.quit]"
        )  # the title
        assert_clean(app)
        assert_layout(app)


async def test_dependencies_used_by_and_their_notices_show_hostile_names_escaped(
    tmp_path: Path, sources: list[str]
) -> None:
    from cachetui.tui.widgets.dependency_list import DependencyList
    from cachetui.tui.widgets.spec_detail import SpecDetail

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, (160, 90), notifications=True) as pilot:
        await go_to(app, pilot, database_hash(80))
        pane = app.screen.query_one("#detail")
        screen = assert_clean(app)
        dependencies = app.screen.query_one(DependencyList)
        plain = "\n".join(dependencies.plain_lines())
        assert not UNSAFE.search(plain.replace("\n", ""))
        for n, key in enumerate(HOSTILE):
            virtual = f" %virt-{SHOWN[key]}" if key in VIRTUALS else ""
            line = f"d-{key}-{SHOWN[key]}@2.{SHOWN[key]} /{database_hash(n)[:7]} [link]{virtual}"
            assert line in plain, key
            assert line[:60] in screen, key
        for line in (
            f"{shown(COMPILER)}@{shown(COMPILER_VERSION)} /{database_hash(90)[:7]} [build] %c",
            f"{shown(EXTERNAL)}@1.0 /{database_hash(91)[:7]} [build] (external: "
            f"{shown(EXTERNAL_PATH)})",
            f"{shown(GONE)} /{database_hash(92)[:7]} [run] (not in this index)",
        ):
            assert line in plain
            assert flat(line)[:60] in flat(in_view(app, pane))
        assert f"compiler c={shown(COMPILER)}@{shown(COMPILER_VERSION)}" in str(
            app.screen.query_one("#detail-body").render()
        )  # with the language its edge provides
        # Enter on the external, and on the one no record holds: a notice each, escaped.
        detail = app.screen.query_one(SpecDetail)
        for name, notice in (
            (
                EXTERNAL,
                f"{EXTERNAL}@1.0 /{database_hash(91)[:7]} is an external ({EXTERNAL_PATH}), not a "
                "binary in the loaded caches",
            ),
            (GONE, f"{GONE} /{database_hash(92)[:7]} is not in the loaded caches"),
        ):
            await highlight_dependency(pilot, dependencies, name)
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.is_running and list(app._notifications)[-1].message == shown(notice)
            assert flat(shown(notice)) in flat(toasts(app))
            assert_clean(app)
        # A click on the external's line, right on its markup: highlights it, runs nothing.
        await click_on(app, pilot, dependencies, "ext-[@click=app.quit]")
        assert dependencies.highlighted.name == EXTERNAL and detail.row is not None
        # Go to a hostile dependency: its own pane lists what uses it.
        await highlight_dependency(pilot, dependencies, f"d-bold-{HOSTILE['bold']}")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.service.index.spec(detail.row).package == f"d-bold-{HOSTILE['bold']}"
        app.clear_notifications()  # the toasts cover the pane's lower lines
        await pilot.pause()
        lines = [line.rstrip(" │") for line in screen_lines(app, pane)]
        assert lines[1] == "│ d-bold-[bold red]x[/]@2.[bold red]x[/]"
        assert f"│   {ROOT}@1.0 /{database_hash(80)[:7]} [link] %virt-[bold red]x[/]" in lines, (
            "\n".join(lines)
        )
        assert_clean(app)
        assert_layout(app)


async def test_hash_lookup_candidates_and_a_pasted_hostile_log_line(
    tmp_path: Path, sources: list[str]
) -> None:
    from textual import events

    from cachetui.tui.screens.hash_lookup import HashLookupScreen

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("ctrl+g", "h", "s")
        await pilot.pause()
        assert isinstance(app.screen, HashLookupScreen)
        candidates = app.screen.query_one("#candidates")
        screen = assert_clean(app)
        assert (
            f"{len(HOSTILE) + 1} specs in {len(HOSTILE) + 1} tags have a hash starting with /hs"
            in screen
        )
        text = in_view(app, candidates)
        for n, key in enumerate(HOSTILE):
            assert f" p-{key}-{SHOWN[key]}@1.{SHOWN[key]} arch="[:40] in text, key
            assert f"/{summary_hash(n)}  tag-{SHOWN[key]}"[:58] in text, (
                key
            )  # a long spec is cut before its hash
        await click_on(app, pilot, candidates, "[@click=app.quit]")
        # The database's specs, in hostile tags, a page at a time.
        await pilot.press("escape", "ctrl+g", "h", "d")
        await pilot.pause()
        candidates = app.screen.query_one("#candidates")
        seen = ""
        for top in range(0, candidates.count, candidates.content_region.height - 1):
            candidates.scroll_to(y=top, animate=False)
            await pilot.pause()
            assert_clean(app)
            seen += in_view(app, candidates)
        for key in HOSTILE:
            assert f" d-{key}-{SHOWN[key]}@2.{SHOWN[key]}"[:40] in seen, key
        for key in DATABASE_TAGS:
            assert f"  dtag-{SHOWN[key]}"[:25] in seen, key
        # A log line pasted from a coloured terminal: the box echoes it escaped, and finds the hash.
        prefix = app.screen.query_one("#lookup-prefix")
        prefix.value = ""
        pasted = (
            f"\x1b[1;32m==>\x1b[0m Installing {HOSTILE['bold']} \u202ep-osc52-{summary_hash(3)}\x07"
        )
        prefix.post_message(events.Paste(pasted))
        await pilot.pause()
        screen = assert_clean(app)
        assert r"\x1b[1;32m==>\x1b[0m Installing [bold red]x[/] \u202ep-osc52-" in screen
        assert f"1 spec has a hash starting with /{summary_hash(3)}" in screen
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.service.index.hashes[
            app.screen.query_one("#specs").highlighted_row
        ] == summary_hash(3)
        assert_layout(app)


async def test_the_search_box_echoes_hostile_text_escaped(
    tmp_path: Path, sources: list[str]
) -> None:
    from textual import events

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE) as pilot:
        search = app.screen.query_one("#search")
        await pilot.press("slash", *"[bold red]x[/]")
        await settle(app, pilot)
        assert search.value == "[bold red]x[/]" and "[bold red]x[/]" in in_view(app, search)
        assert_clean(app)
        assert_layout(app)
        for key in ("osc52", "clear", "osc8", "c0", "c1", "bidi", "click", "flood"):
            search.value = ""
            search.post_message(events.Paste(f"p-{HOSTILE[key]}"))
            await settle(app, pilot)
            # Input takes a paste's first line (CR and NEL end one); what is searched is what is
            # shown.
            assert search.value == escaped(f"p-{HOSTILE[key]}".splitlines()[0]), key
            echoed = screen_lines(app, search, content=True)[0].strip()
            assert len(echoed) > 10 and echoed in search.value, key  # (the box shows its end)
            assert_clean(app)  # the box, its subtitle (a query error), the status line
            assert_layout(app)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.is_running


async def test_load_problems_screen_and_notice_show_hostile_text_escaped(
    tmp_path: Path, sources: list[str]
) -> None:
    from cachetui.tui.screens.problems import ProblemsScreen

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE, notifications=True) as pilot:
        bad_dir = escaped(BAD_DIR)
        assert flat(f"{bad_dir}/specs.md: spec_details record 1 skipped") in flat(toasts(app))
        assert_clean(app)
        assert status(app).endswith("· 2 load problems (p)")
        app.clear_notifications()  # the toast would cover the problem's detail
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ProblemsScreen)
        screen = assert_clean(app)
        assert (
            screen.count(f"/summaries/{bad_dir[:30]}") == 3
        )  # two rows (cut, the path first), and the detail
        meta = (
            f"meta versions lists {SHOWN['clear']}{SHOWN['bold']}, {SHOWN['osc52']}{SHOWN['bidi']} "
            "not in spec_details"
        )
        await pilot.press("down")
        await pilot.pause()
        assert flat(meta) in flat(in_view(app, app.screen.query_one("#problem-detail")))
        assert_clean(app)
        await click_on(app, pilot, app.screen.query_one("#problem-detail"), "[bold red]")
        await pilot.press("escape")
        assert not isinstance(app.screen, ProblemsScreen)


async def test_the_help_screen_over_hostile_data(tmp_path: Path, sources: list[str]) -> None:
    from cachetui.tui.screens.help import HelpScreen

    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        screen = assert_clean(app)
        assert "cachetui keys" in screen and "go-to-hash" in screen
        await pilot.press("escape")
        assert_clean(app)
        assert_layout(app)


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_ten_thousand_character_values_keep_the_layout(
    tmp_path: Path, sources: list[str], size: tuple[int, int]
) -> None:
    app = hostile_app(tmp_path, sources)
    async with loaded_at(app, size) as pilot:
        if size[0] < 120:  # narrow: the filters and the detail pane are folded; bring them back
            await pilot.press("f", "d")
        keys = list(HOSTILE)
        for digest in (
            summary_hash(keys.index("long")),
            summary_hash(keys.index("flood")),
            database_hash(keys.index("long")),
            database_hash(keys.index("flood")),
        ):
            await go_to(app, pilot, digest)
            assert_clean(app)  # every painted line exactly as wide as the terminal
            assert_layout(app)
            for pane in ("#facets", "#packages", "#specs", "#detail"):
                box = screen_lines(app, app.screen.query_one(pane))
                assert box[0].startswith("╭") and box[-1].startswith("╰"), pane
            assert app.screen.query_one("#specs").highlighted_row is not None
            app.screen.query_one("#detail").scroll_end(
                animate=False
            )  # (the end key animates: a second)
            await pilot.pause()
            assert_clean(app)
        await pilot.press("ctrl+g")
        app.screen.query_one("#lookup-prefix").value = summary_hash(keys.index("long"))
        await pilot.pause()
        line = screen_lines(app, app.screen.query_one("#candidates"))[0]
        assert (
            f"/{summary_hash(keys.index('long'))}" in line and "LLL" in line
        )  # the hash kept, the spec cut
        assert_clean(app)
