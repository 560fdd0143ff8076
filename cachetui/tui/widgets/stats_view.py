"""The stats view: charts of what the current filter holds (a Summary from index/stats.py).

Sections stack vertically in a scrolling container, one Static each (a header, a bar chart
per facet, the stack x target matrix, the top packages): no widget per data row. Every
section is a `rich.text.Text` built by widgets/stats_charts.py, each line cut to the view's
width, and redrawn when that width or the theme changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Static

from cachetui.tui.widgets.immediate_scroll import ImmediateScroll
from cachetui.tui.widgets.stats_charts import (
    SHADES,
    bar,
    bar_chart,
    compact,
    facet_chart,
    fit_middle,
    matrix_chart,
    shade,
    stack_target_chart,
    summary_header,
    top_packages_chart,
)

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.stats import Summary

# The chart functions were defined here first: their old import path still works.
__all__ = [
    "SECTIONS",
    "SHADES",
    "StatsView",
    "bar",
    "bar_chart",
    "compact",
    "fit_middle",
    "matrix_chart",
    "shade",
]

# The charted facets (index/stats.py's CHART_FACETS) and their section titles.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("stack", "Stacks"),
    ("os", "OS"),
    ("target", "Targets"),
    ("compiler", "Compilers"),
)


class StatsView(ImmediateScroll):
    """Charts of a Summary; `show` it, and it redraws itself whenever its width changes."""

    # Besides VerticalScroll's arrows, page and home/end keys: the lists' own j/k/g/G.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Scroll down", show=False),
        Binding("k", "scroll_up", "Scroll up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "stats-view--title",
        "stats-view--heading",
        "stats-view--label",
        "stats-view--bar",
        "stats-view--count",
        "stats-view--shade",
        "stats-view--muted",
    }
    DEFAULT_CSS = """
    StatsView {
        height: 1fr;
        padding: 0 1;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    StatsView > Static {
        width: 100%;
        height: auto;
        margin-bottom: 1;
    }
    StatsView > .stats-view--title {
        color: $text-primary;
        text-style: bold;
    }
    StatsView > .stats-view--heading {
        color: $text-secondary;
        text-style: bold;
    }
    StatsView > .stats-view--label {
        color: $text;
    }
    StatsView > .stats-view--bar {
        color: $text-accent;
    }
    StatsView > .stats-view--count {
        color: $text;
        text-style: bold;
    }
    StatsView > .stats-view--shade {
        color: $text-accent;
    }
    StatsView > .stats-view--muted {
        color: $text-muted;
    }
    """

    # Rows shown per chart: the rest are counted on a last line.
    max_rows: ClassVar[int] = (
        40  # the small stacks are where the gaps are: list them (the view scrolls)
    )

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._summary: Summary | None = None
        self._title = "Stats"
        self._sections: dict[str, Static] = {}
        self._drawn_width = -1  # the width the sections were drawn for; -1: they need drawing

    @property
    def summary(self) -> Summary | None:
        return self._summary

    def compose(self):
        for name in ("header", *(facet for facet, _ in SECTIONS), "matrix", "top"):
            section = Static(classes=f"stats-section -{name}")
            self._sections[name] = section
            yield section

    def show(self, summary: Summary | None, title: str = "Stats") -> None:
        """Chart `summary` (None: nothing to chart yet) under `title`."""
        self._summary = summary
        self._title = title
        self._drawn_width = -1
        self._draw()

    def on_mount(self) -> None:
        # The charts' colours are baked into their Text: a new theme draws them again.
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self._draw()

    def _theme_changed(self, theme) -> None:
        self.call_after_refresh(self._draw)

    @property
    def chart_width(self) -> int:
        """The cells a line of a chart may take: the content width, less the scroll bar's gutter."""
        return self.scrollable_content_region.width

    def on_resize(self, event: events.Resize) -> None:
        if self.chart_width != self._drawn_width:
            self._draw()

    def _style(self, component: str | None) -> Style | str:
        # The whole style: a partial one loses what $text-muted blends with the background.
        return self.get_component_rich_style(component) if component else ""

    def _draw(self) -> None:
        if not self._sections:  # not composed yet: on_mount draws
            return
        width = self.chart_width
        if width <= 0:  # not laid out, or hidden: drawn when it gets a size
            return
        self._drawn_width = width
        style_of = self._style
        summary = self._summary
        sections = self._sections

        sections["header"].update(summary_header(self._title, summary, width, style_of))

        charted = summary is not None and summary.specs > 0
        for name, section in sections.items():
            if name != "header":
                section.display = charted
        if not charted:
            return
        assert summary is not None  # (charted says so)

        for facet, title in SECTIONS:
            sections[facet].update(
                facet_chart(summary, facet, title, width, self.max_rows, style_of)
            )
        sections["matrix"].update(stack_target_chart(summary, width, style_of))
        sections["top"].update(top_packages_chart(summary, width, self.max_rows, style_of))
