"""The stats screen's charts and view (widgets/stats_view.py), and `s` in the app. The
figures themselves: unit/test_stats.py."""

from __future__ import annotations

import pytest
from helpers import (
    SAMPLE,
    bits_of,
    contrast,
    in_256_colours,
    loaded_at,
    screen_lines,
    screen_strips,
    screen_text,
    settle,
)
from rich.cells import cell_len
from textual.app import App

from cachetui.index.stats import Summary, summarize
from cachetui.service import IndexService
from cachetui.tui.app import CacheTUI
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.stats_view import (
    SHADES,
    StatsView,
    bar,
    bar_chart,
    compact,
    fit_middle,
    matrix_chart,
    shade,
)


@pytest.fixture(scope="module")
def index():
    return IndexService(use_cache=False).load().index


# -- the charts, as text ------------------------------------------------------------------------


def test_bars_and_shades() -> None:
    assert bar(10, 10, 5) == "█████"
    assert bar(5, 10, 5) == "██▌  "
    assert bar(1, 1000, 5) == "▏    "  # any count shows
    assert bar(0, 10, 3) == "   "
    assert [shade(n, 100) for n in (0, 1, 25, 26, 50, 75, 76, 100)] == [
        " ",
        "░",
        "░",
        "▒",
        "▒",
        "▓",
        "█",
        "█",
    ]
    assert SHADES == " ░▒▓█"
    assert fit_middle("ml-linux-x86_64-cuda", 16) == "ml-linux…64-cuda"
    assert fit_middle("short", 8) == "short   "
    assert [compact(n) for n in (9_999, 25_557, 99_950, 303_820, 999_500, 12_345_678)] == [
        "9,999",
        "25.6k",
        "100k",
        "304k",
        "1.0M",
        "12.3M",
    ]


def test_charts_never_outgrow_their_width(index) -> None:
    summary = summarize(index, index.all_rows)
    hostile = [("[bold]x[/]\x1b[31m", 7), ("宽字符的包名字很长很长", 3), ("e" * 200, 1)]
    for width in range(12, 121):  # the view is never narrower than its pane (about 20)
        charts = [
            bar_chart("Stacks", summary.facets["stack"], width, total=summary.specs),
            bar_chart("Hostile", hostile, width, total=11, note="A note that wraps at spaces " * 3),
            matrix_chart(
                "Stack × target",
                summary.matrix_stacks,
                summary.matrix_targets,
                summary.matrix,
                width,
                more_stacks=2,
            ),
            matrix_chart(
                "Big",
                ["root", "[b]e4s[/b]\x1b[2J"],
                [f"target-{j}" for j in range(12)],
                [[1_000_000 - j for j in range(12)], [25_557 * j for j in range(12)]],
                width,
            ),
        ]
        for chart in charts:
            for line in chart.plain.split("\n"):
                assert cell_len(line) <= width, (width, line)
            assert "\x1b" not in chart.plain


def test_matrix_numbers_its_columns_when_names_do_not_fit(index) -> None:
    summary = summarize(index, index.all_rows)
    narrow = matrix_chart(
        "M", summary.matrix_stacks, summary.matrix_targets, summary.matrix, 40
    ).plain.split("\n")
    assert narrow[1].split("│")[1].split() == ["1", "2", "3", "4"]
    assert narrow[-4:-2] == ["1 x86_64_v3  2 aarch64  3 neoverse_v2", "4 neoverse_v1"]
    assert narrow[3].startswith("ml-li…-cpu │ ▒▒  82")  # cut in the middle: the ends differ
    narrower = matrix_chart(
        "M", summary.matrix_stacks, summary.matrix_targets, summary.matrix, 30
    ).plain.split("\n")
    assert narrower[1].split("│")[1].split() == ["1", "2", "3"]  # the 4th column does not fit
    assert "Not shown: 1 target." in narrower
    wide = matrix_chart(
        "M", summary.matrix_stacks, summary.matrix_targets, summary.matrix, 80
    ).plain.split("\n")
    assert wide[1].split("│")[1].split() == ["x86_64_v3", "aarch64", "neoverse_v2", "neoverse_v1"]
    root = wide[2]
    assert root.startswith("root ") and root.split("│")[1].split() == [
        "███████",
        "181",
        "███████",
        "137",
        "░░░░░░░",
        "12",
        "░░░░░░░",
        "6",
    ]
    assert wide[3].split("│")[1].split() == ["▒▒▒▒▒▒▒", "82", "·", "·", "·"]


# -- the widget ---------------------------------------------------------------------------------


class StatsApp(App):
    def compose(self):
        yield StatsView()


def section_lines(view: StatsView) -> list[str]:
    return [
        line
        for static in view.query("Static")
        if static.display
        for line in str(static.content).split("\n")
    ]


async def test_the_view_at_80_by_24(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats · all specs")
        await pilot.pause()
        lines = section_lines(view)
        for title in (
            "Stats · all specs",
            "336 specs in 3 packages",
            "Stacks (14)",
            "OS (4)",
            "Targets (4)",
            "Compilers (5)",
            "Stack × target",
            "Top packages (3 of 3)",
            "hep",
        ):
            assert title in lines or any(line.startswith(title + " ") for line in lines)
        assert not any(
            line.startswith("… and") for line in lines
        )  # all 14 stacks: the small ones are the gaps
        assert any(line.startswith("ubuntu24.04 ") and line.endswith(" 197  59%") for line in lines)
        assert any(
            line.startswith("py-ml-dtypes ") and line.endswith(" 129  38%") for line in lines
        )
        assert any(line.startswith("py-mpi4py ") and " 91 " in line for line in lines)
        header = next(line for line in lines if "│" in line)
        assert header.split("│")[1].split() == [
            "x86_64_v3",
            "aarch64",
            "neoverse_v2",
            "neoverse_v1",
        ]
        assert any(line.startswith("ml-linux-x86_64-cpu ") and "│" in line for line in lines)
        assert (
            max(cell_len(line) for line in lines) <= view.chart_width == 77
        )  # 80, less padding and the bar
        for static in view.query("Static"):  # nothing wrapped: a line of text is a line on screen
            assert static.size.height == len(str(static.content).split("\n"))

        shown = screen_lines(app)
        assert len(shown) == 24 and all(cell_len(line) == 80 for line in shown)
        assert shown[0].strip() == "Stats · all specs" and shown[3].strip() == "Stacks (14)"
        view.scroll_end(animate=False)
        await pilot.pause()
        bottom = screen_text(app)
        assert "Top packages (3 of 3)" in bottom and "py-safetensors" in bottom


async def test_the_view_follows_its_width(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats")
        await pilot.pause()
        wide_bar = next(line for line in section_lines(view) if line.startswith("ubuntu24.04"))
        await pilot.resize_terminal(44, 24)
        await pilot.pause()
        lines = section_lines(view)
        assert view.chart_width == 41
        assert max(cell_len(line) for line in lines) <= 41
        narrow_bar = next(line for line in lines if line.startswith("ubuntu24.04"))
        assert narrow_bar.endswith(" 197  59%") and len(narrow_bar) < len(wide_bar)
        assert "1 x86_64_v3  2 aarch64  3 neoverse_v2" in lines  # numbered columns, with a legend


async def test_the_view_updates_and_shows_empty_states(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        await pilot.pause()
        assert "the index is loading" in "\n".join(section_lines(view))
        view.show(summarize(index, index.all_rows), "Stats")
        await pilot.pause()
        view.show(summarize(index, bits_of(index, "os", "ubuntu22.04")), "Stats · os:ubuntu22.04")
        await pilot.pause()
        lines = section_lines(view)
        assert "80 specs in 2 packages" in lines and "OS (1)" in lines
        view.show(summarize(index, 0), "Stats · nothing")
        await pilot.pause()
        assert section_lines(view) == ["Stats · nothing", "No specs match the current filters."]
        assert "No specs match the current filters." in screen_text(app)


async def test_data_is_never_markup_nor_escapes() -> None:
    name = "[bold]x[/]\x1b[31m"
    summary = Summary(
        specs=7,
        packages=1,
        facets={
            "stack": [("[red]s[/]", 7)],
            "os": [("os\x1b]52;c;aGk=\x07", 7)],
            "target": [("t\u202egnp", 7)],
            "compiler": [("gcc@1", 7)],
        },
        matrix_stacks=["[red]s[/]"],
        matrix_targets=["t\u202egnp"],
        matrix=[[7]],
        top_packages=[(name, 7)],
    )
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summary, "Stats · [b]not markup[/b]\x1b[2J")
        await pilot.pause()
        lines = section_lines(view)
        text = "\n".join(lines)
        assert (
            "[bold]x[/]\\x1b[31m" in text
            and "[red]s[/]" in text
            and "os\\x1b]52;c;aGk=\\x07" in text
        )
        assert "t\\u202egnp" in text and "Stats · [b]not markup[/b]\\x1b[2J" in text
        assert not any(ch in text for ch in "\x1b\x07\u202e")
        view.scroll_end(animate=False)
        await pilot.pause()
        painted = screen_text(app)
        assert "[bold]x[/]\\x1b[31m" in painted and "\x1b" not in painted


async def test_chart_styles_are_legible_in_256_colours(index) -> None:
    from textual.color import Color

    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats")
        await pilot.pause()
        assert app.theme == "textual-dark"
        for component in sorted(StatsView.COMPONENT_CLASSES):
            style = view.rich_style + view.get_component_rich_style(component)
            fg, bg = (
                in_256_colours(Color.from_rich_color(c)) for c in (style.color, style.bgcolor)
            )
            assert contrast(fg, bg) >= 4.5, (component, fg.hex, bg.hex)


async def test_a_new_theme_recolours_the_charts(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats")
        await pilot.pause()

        def bar_colour():
            strip = screen_strips(app)[4]  # root's bar in the stacks chart
            return next(segment.style.color for segment in strip if "█" in segment.text)

        before = bar_colour()
        assert before == view.get_component_rich_style("stats-view--bar").color
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        assert bar_colour() == view.get_component_rich_style("stats-view--bar").color != before


async def test_a_summary_shown_while_hidden_is_drawn_when_the_view_shows(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats · first")
        await pilot.pause()
        view.display = False
        await pilot.pause()
        view.show(summarize(index, bits_of(index, "os", "sequoia")), "Stats · sequoia")
        await pilot.pause()
        view.display = True
        await pilot.pause()
        lines = section_lines(view)
        assert lines[:2] == ["Stats · sequoia", "54 specs in 3 packages"]
        assert max(cell_len(line) for line in lines) <= 77
        assert "Stats · sequoia" in screen_lines(app)[0]


async def test_the_view_scrolls_with_the_lists_keys(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats")
        view.focus()
        await pilot.pause()
        assert view.max_scroll_y > 0
        await pilot.press("j", "j")
        assert view.scroll_y == 2
        await pilot.press("k")
        assert view.scroll_y == 1
        await pilot.press("G")
        assert view.scroll_y == view.max_scroll_y
        await pilot.press("g")
        assert view.scroll_y == 0


async def test_s_shows_the_stats_of_the_filtered_specs_and_follows_the_filters() -> None:
    """In the app at 80x24: `s` puts the stats in place of the lists; a filter toggled in the
    sidebar (f, space) changes them; `s` again brings the lists back."""
    app = CacheTUI()
    async with loaded_at(app, (80, 24)) as pilot:
        await pilot.press("s")
        await settle(app, pilot)
        assert (
            app.focused is app.screen.query_one(StatsView)
            and app.screen.query_one("#packages").region.width == 0
        )
        text = screen_text(app)
        assert (
            f"{SAMPLE.specs} specs in 3 packages" in text and "Packages" not in text.splitlines()[0]
        )
        await pilot.press("f")
        sidebar = app.screen.query_one(FacetSidebar)
        sidebar.cursor = sidebar.lines.index(("os", "ubuntu22.04"))
        await pilot.press("space")
        await settle(app, pilot)
        on_os = SAMPLE.count(os="ubuntu22.04")
        having = len(
            {SAMPLE.package_of[r["hash"]] for r in SAMPLE.records if r["os"] == "ubuntu22.04"}
        )
        assert f"{on_os} specs in {having} packages" in screen_text(app)
        await pilot.press("s")
        await settle(app, pilot)
        assert (
            "specs in" not in screen_text(app)
            and app.screen.query_one("#packages").region.width > 0
        )


async def test_matrix_shades_scale_to_the_stacks_that_do_not_hold_every_spec(index) -> None:
    """root holds all 336 specs: scaled to it, every other cell would be the palest shade. The
    largest other cell is ml-linux-x86_64-cpu x x86_64_v3, 82: e4s's 45 is 55% of it (▓)."""
    app = StatsApp()
    async with app.run_test(size=(100, 60)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats")
        await pilot.pause()
        lines = section_lines(view)
        row = {line.split("│")[0].strip(): line.split("│")[1] for line in lines if "│" in line}
        assert "▓" in row["e4s"] and " 45" in row["e4s"]
        assert "█" in row["ml-linux-x86_64-cpu"] and "░" in row["hep"]
        assert any(
            "of the largest cell outside stacks that hold every spec (82)" in line for line in lines
        )


async def test_slash_with_the_stats_shown_brings_the_search_box_back() -> None:
    app = CacheTUI()
    async with loaded_at(app, (80, 24)) as pilot:
        await pilot.press("s", "slash", *"mpi4py")
        await settle(app, pilot)
        search = app.screen.query_one("#search")
        assert app.focused is search and search.region.width > 0 and not app.screen.stats_shown
