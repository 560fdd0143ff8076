"""The stats screen's figures (index/stats.py) and its charts (widgets/stats_view.py).

Expected figures are counted here from the sample files read with plain json (conftest's
SAMPLE), never from the index's own bitsets."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from conftest import SAMPLE, contrast, in_256_colours
from rich.cells import cell_len
from textual.app import App

from cachetui.index.stats import CHART_FACETS, Summary, summarize
from cachetui.service import IndexService
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

FIELD = {"stack": "stacks", "os": "os", "target": "target", "compiler": "compiler"}


@pytest.fixture(scope="module")
def index():
    return IndexService(use_cache=False).load().index


def _values(record: dict, facet: str) -> list[str]:
    if facet == "stack":
        return list(record["stacks"])
    if facet == "compiler":
        return [record["compiler"].replace("@=", "@")]  # Spack 1.x writes gcc@=11.4.0
    return [record[FIELD[facet]]]


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(((value, n) for value, n in counts.items() if n), key=lambda item: (-item[1], item[0]))


def expected(records: list[dict], top: int = 10, matrix_limit: int = 60) -> Summary:
    """A Summary counted from the records alone."""
    facets = {facet: _ranked(Counter(v for rec in records for v in _values(rec, facet))) for facet in CHART_FACETS}
    stacks = [s for s, _ in facets["stack"][:matrix_limit]]
    targets = [t for t, _ in facets["target"][:matrix_limit]]
    matrix = [[sum(1 for rec in records if s in rec["stacks"] and rec["target"] == t) for t in targets] for s in stacks]
    packages = _ranked(Counter(SAMPLE.package_of[rec["hash"]] for rec in records))
    return Summary(specs=len(records), packages=len(packages), facets=facets, matrix_stacks=stacks,
                   matrix_targets=targets, matrix=matrix, top_packages=packages[:top])


def bits_of(index, facet: str, value: str) -> int:
    return index.facet_bits[facet][index.facet_values[facet].index(value)]


# -- the figures -----------------------------------------------------------------------------


def test_summary_of_every_spec_matches_the_sample_files(index) -> None:
    assert summarize(index, index.all_rows) == expected(SAMPLE.records)


def test_summary_of_a_filter_matches_the_sample_files(index) -> None:
    mask = bits_of(index, "os", "ubuntu22.04")
    assert summarize(index, mask) == expected([rec for rec in SAMPLE.records if rec["os"] == "ubuntu22.04"])
    both = mask & bits_of(index, "stack", "e4s")
    assert summarize(index, both) == expected([rec for rec in SAMPLE.records if rec["os"] == "ubuntu22.04" and "e4s" in rec["stacks"]])


def test_summary_figures_written_by_hand(index) -> None:
    summary = summarize(index, index.all_rows)
    assert (summary.specs, summary.packages) == (336, 3)
    assert summary.top_packages == [("py-ml-dtypes", 129), ("py-safetensors", 116), ("py-mpi4py", 91)]
    assert summary.facets["os"] == [("ubuntu24.04", 197), ("ubuntu22.04", 80), ("sequoia", 54), ("ubuntu20.04", 5)]
    assert summary.facets["target"] == [("x86_64_v3", 181), ("aarch64", 137), ("neoverse_v2", 12), ("neoverse_v1", 6)]
    assert summary.facets["compiler"][:2] == [("gcc@13.2.0", 197), ("gcc@11.4.0", 70)]
    assert summary.facets["stack"][:3] == [("root", 336), ("ml-linux-x86_64-cpu", 82), ("ml-linux-x86_64-cuda", 76)]
    assert len(summary.facets["stack"]) == 14
    assert sum(n for _, n in summary.facets["stack"]) > summary.specs  # a spec is in several stacks
    assert summary.matrix_stacks[0] == "root" and summary.matrix_targets == ["x86_64_v3", "aarch64", "neoverse_v2", "neoverse_v1"]
    assert summary.matrix[0] == [181, 137, 12, 6]  # every spec is in root
    assert summary.matrix[1] == [82, 0, 0, 0]  # ml-linux-x86_64-cpu
    assert summary.matrix_max == 181

    ubuntu22 = summarize(index, bits_of(index, "os", "ubuntu22.04"))
    assert ubuntu22.specs == 80
    assert ubuntu22.facets["os"] == [("ubuntu22.04", 80)]


def test_random_masks_match_a_row_by_row_count(index) -> None:
    """Against the index's own row fields, row by row: the bitset arithmetic is exact."""
    draw = random.Random(8)
    for _ in range(20):
        rows = [r for r in range(index.n_specs) if draw.random() < draw.choice((0.02, 0.3, 0.9))]
        summary = summarize(index, index.rows_of(rows), top=2, matrix_limit=3)
        by = {
            "stack": Counter(s for r in rows for s in index.stacks(r)),
            **{facet: Counter(index.field(facet, r) for r in rows) for facet in ("os", "target", "compiler")},
        }
        assert summary.specs == len(rows)
        assert summary.facets == {facet: _ranked(by[facet]) for facet in CHART_FACETS}
        packages = _ranked(Counter(index.package_name(r) for r in rows))
        assert (summary.packages, summary.top_packages) == (len(packages), packages[:2])
        assert summary.matrix_stacks == [s for s, _ in _ranked(by["stack"])[:3]]
        assert summary.matrix_targets == [t for t, _ in _ranked(by["target"])[:3]]
        assert summary.matrix == [[sum(1 for r in rows if s in index.stacks(r) and index.field("target", r) == t)
                                   for t in summary.matrix_targets] for s in summary.matrix_stacks]


def test_limits_and_an_empty_mask(index) -> None:
    summary = summarize(index, index.all_rows, top=2, matrix_limit=3)
    assert summary.top_packages == [("py-ml-dtypes", 129), ("py-safetensors", 116)]
    assert summary.packages == 3
    assert summary.matrix_stacks == ["root", "ml-linux-x86_64-cpu", "ml-linux-x86_64-cuda"]
    assert summary.matrix == [[181, 137, 12], [82, 0, 0], [76, 0, 0]]
    assert summarize(index, index.all_rows, top=0).top_packages == []

    empty = summarize(index, 0)
    assert (empty.specs, empty.packages, empty.top_packages, empty.matrix, empty.matrix_max) == (0, 0, [], [], 0)
    assert empty.facets == {facet: [] for facet in CHART_FACETS}


def test_ties_go_by_name(synthetic) -> None:
    index = IndexService([str(synthetic)], use_cache=False).load().index
    summary = summarize(index, index.all_rows)
    assert summary.facets["os"] == [("ubuntu22.04", 3), ("ubuntu24.04", 2), ("rhel8", 1), ("sequoia", 1)]
    assert summary.top_packages == [("zlib", 4), ("py-numpy", 2), ("zlib-ng", 1)]
    rhel_or_sequoia = bits_of(index, "os", "rhel8") | bits_of(index, "os", "sequoia")
    assert summarize(index, rhel_or_sequoia).top_packages == [("py-numpy", 1), ("zlib", 1)]
    assert summarize(index, rhel_or_sequoia, top=1).top_packages == [("py-numpy", 1)]
    assert summarize(index, rhel_or_sequoia).facets["compiler"] == [("gcc@11.4.0", 1), ("none", 1)]


# -- the charts, as text ------------------------------------------------------------------------


def test_bars_and_shades() -> None:
    assert bar(10, 10, 5) == "█████"
    assert bar(5, 10, 5) == "██▌  "
    assert bar(1, 1000, 5) == "▏    "  # any count shows
    assert bar(0, 10, 3) == "   "
    assert [shade(n, 100) for n in (0, 1, 25, 26, 50, 75, 76, 100)] == [" ", "░", "░", "▒", "▒", "▓", "█", "█"]
    assert SHADES == " ░▒▓█"
    assert fit_middle("ml-linux-x86_64-cuda", 16) == "ml-linux…64-cuda"
    assert fit_middle("short", 8) == "short   "
    assert [compact(n) for n in (9_999, 25_557, 99_950, 303_820, 999_500, 12_345_678)] == ["9,999", "25.6k", "100k", "304k", "1.0M", "12.3M"]


def test_charts_never_outgrow_their_width(index) -> None:
    summary = summarize(index, index.all_rows)
    hostile = [("[bold]x[/]\x1b[31m", 7), ("宽字符的包名字很长很长", 3), ("e" * 200, 1)]
    for width in range(12, 121):  # the view is never narrower than its pane (about 20)
        charts = [bar_chart("Stacks", summary.facets["stack"], width, total=summary.specs),
                  bar_chart("Hostile", hostile, width, total=11, note="A note that wraps at spaces " * 3),
                  matrix_chart("Stack × target", summary.matrix_stacks, summary.matrix_targets, summary.matrix, width,
                               more_stacks=2),
                  matrix_chart("Big", ["root", "[b]e4s[/b]\x1b[2J"], [f"target-{j}" for j in range(12)],
                               [[1_000_000 - j for j in range(12)], [25_557 * j for j in range(12)]], width)]
        for chart in charts:
            for line in chart.plain.split("\n"):
                assert cell_len(line) <= width, (width, line)
            assert "\x1b" not in chart.plain


def test_matrix_numbers_its_columns_when_names_do_not_fit(index) -> None:
    summary = summarize(index, index.all_rows)
    narrow = matrix_chart("M", summary.matrix_stacks, summary.matrix_targets, summary.matrix, 40).plain.split("\n")
    assert narrow[1].split("│")[1].split() == ["1", "2", "3", "4"]
    assert narrow[-4:-2] == ["1 x86_64_v3  2 aarch64  3 neoverse_v2", "4 neoverse_v1"]
    assert narrow[3].startswith("ml-li…-cpu │ ▒▒  82")  # cut in the middle: the ends differ
    narrower = matrix_chart("M", summary.matrix_stacks, summary.matrix_targets, summary.matrix, 30).plain.split("\n")
    assert narrower[1].split("│")[1].split() == ["1", "2", "3"]  # the 4th column does not fit
    assert "Not shown: 1 target." in narrower
    wide = matrix_chart("M", summary.matrix_stacks, summary.matrix_targets, summary.matrix, 80).plain.split("\n")
    assert wide[1].split("│")[1].split() == ["x86_64_v3", "aarch64", "neoverse_v2", "neoverse_v1"]
    root = wide[2]
    assert root.startswith("root ") and root.split("│")[1].split() == ["███████", "181", "███████", "137", "░░░░░░░", "12", "░░░░░░░", "6"]
    assert wide[3].split("│")[1].split() == ["▒▒▒▒▒▒▒", "82", "·", "·", "·"]


# -- the widget ---------------------------------------------------------------------------------


class StatsApp(App):
    def compose(self):
        yield StatsView()


def screen_text(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def section_lines(view: StatsView) -> list[str]:
    return [line for static in view.query("Static") if static.display for line in str(static.content).split("\n")]


async def test_the_view_at_80_by_24(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats · all specs")
        await pilot.pause()
        lines = section_lines(view)
        for title in ("Stats · all specs", "336 specs in 3 packages", "Stacks (14)", "OS (4)", "Targets (4)", "Compilers (5)",
                      "Stack × target", "Top packages (3 of 3)", "hep"):
            assert title in lines or any(line.startswith(title + " ") for line in lines)
        assert not any(line.startswith("… and") for line in lines)  # all 14 stacks: the small ones are the gaps
        assert any(line.startswith("ubuntu24.04 ") and line.endswith(" 197  59%") for line in lines)
        assert any(line.startswith("py-ml-dtypes ") and line.endswith(" 129  38%") for line in lines)
        assert any(line.startswith("py-mpi4py ") and " 91 " in line for line in lines)
        header = next(line for line in lines if "│" in line)
        assert header.split("│")[1].split() == ["x86_64_v3", "aarch64", "neoverse_v2", "neoverse_v1"]
        assert any(line.startswith("ml-linux-x86_64-cpu ") and "│" in line for line in lines)
        assert max(cell_len(line) for line in lines) <= view.chart_width == 77  # 80, less padding and the bar
        for static in view.query("Static"):  # nothing wrapped: a line of text is a line on screen
            assert static.size.height == len(str(static.content).split("\n"))

        shown = screen_text(app)
        assert len(shown) == 24 and all(cell_len(line) == 80 for line in shown)
        assert shown[0].strip() == "Stats · all specs" and shown[3].strip() == "Stacks (14)"
        view.scroll_end(animate=False)
        await pilot.pause()
        bottom = "\n".join(screen_text(app))
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
        assert "No specs match the current filters." in "\n".join(screen_text(app))


async def test_data_is_never_markup_nor_escapes() -> None:
    name = "[bold]x[/]\x1b[31m"
    summary = Summary(specs=7, packages=1, facets={"stack": [("[red]s[/]", 7)], "os": [("os\x1b]52;c;aGk=\x07", 7)],
                                                        "target": [("t\u202egnp", 7)], "compiler": [("gcc@1", 7)]},
                      matrix_stacks=["[red]s[/]"], matrix_targets=["t\u202egnp"], matrix=[[7]], top_packages=[(name, 7)])
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summary, "Stats · [b]not markup[/b]\x1b[2J")
        await pilot.pause()
        lines = section_lines(view)
        text = "\n".join(lines)
        assert "[bold]x[/]\\x1b[31m" in text and "[red]s[/]" in text and "os\\x1b]52;c;aGk=\\x07" in text
        assert "t\\u202egnp" in text and "Stats · [b]not markup[/b]\\x1b[2J" in text
        assert not any(ch in text for ch in "\x1b\x07\u202e")
        view.scroll_end(animate=False)
        await pilot.pause()
        painted = "\n".join(screen_text(app))
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
            fg, bg = (in_256_colours(Color.from_rich_color(c)) for c in (style.color, style.bgcolor))
            assert contrast(fg, bg) >= 4.5, (component, fg.hex, bg.hex)


async def test_a_new_theme_recolours_the_charts(index) -> None:
    app = StatsApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(StatsView)
        view.show(summarize(index, index.all_rows), "Stats")
        await pilot.pause()

        def bar_colour():
            strip = app.screen._compositor.render_strips()[4]  # root's bar in the stacks chart
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
        assert "Stats · sequoia" in screen_text(app)[0]


def test_the_title_says_what_the_stats_are_of() -> None:
    from cachetui.index.filter import Filter
    from cachetui.index.stats import title_for

    assert title_for(Filter()) == "Stats · all specs"
    assert title_for(Filter.of(" zlib ", {"os": {"ubuntu24.04", "ubuntu22.04"}, "stack": {"e4s"}})) == \
        'Stats · "zlib" · os: ubuntu22.04, ubuntu24.04 · stack: e4s'


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
    from conftest import settle

    from cachetui.tui.app import CacheTUI
    from cachetui.tui.widgets.facet_sidebar import FacetSidebar

    def shown(app) -> str:
        return "\n".join(strip.text for strip in app.screen._compositor.render_strips())

    app = CacheTUI()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        assert app.focused is app.screen.query_one(StatsView) and app.screen.query_one("#packages").region.width == 0
        text = shown(app)
        assert f"{SAMPLE.specs} specs in 3 packages" in text and "Packages" not in text.splitlines()[0]
        await pilot.press("f")
        sidebar = app.screen.query_one(FacetSidebar)
        sidebar.cursor = sidebar.lines.index(("os", "ubuntu22.04"))
        await pilot.press("space")
        await settle(app, pilot)
        on_os = SAMPLE.count(os="ubuntu22.04")
        having = len({SAMPLE.package_of[r["hash"]] for r in SAMPLE.records if r["os"] == "ubuntu22.04"})
        assert f"{on_os} specs in {having} packages" in shown(app)
        await pilot.press("s")
        await settle(app, pilot)
        assert "specs in" not in shown(app) and app.screen.query_one("#packages").region.width > 0


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
        assert any("of the largest cell outside stacks that hold every spec (82)" in line for line in lines)


async def test_slash_with_the_stats_shown_brings_the_search_box_back() -> None:
    from conftest import settle

    from cachetui.tui.app import CacheTUI

    app = CacheTUI()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("s", "slash", *"mpi4py")
        await settle(app, pilot)
        search = app.screen.query_one("#search")
        assert app.focused is search and search.region.width > 0 and not app.screen.stats_shown
