"""The coverage screen (`E`, with `cachetui --env ENV`): the environment's specs, each a hit or
a miss, and the share the cache covers as a bar. Enter on a hit (or on a nearest spec) goes
to that spec on the main screen; enter on a miss unfolds its nearest cached specs, each with
what differs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from cachetui.output import check_summary_text
from cachetui.textsafe import visible
from cachetui.tui.screens.once import DismissOnce
from cachetui.tui.widgets.coverage_list import CoverageList
from cachetui.tui.widgets.line_list import LineList

if TYPE_CHECKING:
    from cachetui.index.store import Index
    from cachetui.service.check import CheckReport

BAR_CELLS = 24


def coverage_bar(covered: int, total: int, cells: int = BAR_CELLS) -> str:
    """`██████████████████░░░░░░  75%`: the share of specs that come from the cache."""
    share = covered / total if total else 1.0
    full = round(share * cells)
    return "█" * full + "░" * (cells - full) + f" {share:4.0%}"


class CoverageScreen(DismissOnce, Screen["int | None"]):
    """Dismissed with the index row to go to, or None."""

    HELP_GROUP = "environment"
    BINDINGS = [
        Binding(
            "escape,q,E",
            "close",
            "Close",
            id="close-coverage",
            tooltip="Back to the main screen",
        ),
    ]

    def __init__(self, index: Index, report: CheckReport) -> None:
        super().__init__()
        self.index = index
        self.report = report

    def compose(self) -> ComposeResult:
        environment = self.report.environment
        hits, misses = self.report.count("hit"), self.report.count("miss")
        title = Text(visible(f"{environment.source} ({environment.format})"), style="bold")
        yield Static(title, id="coverage-title", markup=False)
        bar = Text(coverage_bar(hits, hits + misses), style="bold")
        bar.append("  " + check_summary_text(self.report))
        yield Static(bar, id="coverage-summary", markup=False)
        yield CoverageList(self.index, self.report, id="coverage-list")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        listing = self.query_one(CoverageList)
        listing.border_title = "Specs (enter: go to a hit, unfold a miss)"
        listing.focus()

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        listing = self.query_one(CoverageList)
        if event.line_list is not listing or event.stale:
            return
        event.stop()
        line = listing.lines[event.index]
        if line.nearest is None and listing.check_of(line).status == "miss":
            listing.toggle(event.index)
            return
        row = listing.row_of(line)
        if row is not None:
            self.dismiss_once(row)

    def action_close(self) -> None:
        self.dismiss_once(None)
