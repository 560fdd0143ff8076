"""Every load problem: file and reason, one per row; the highlighted one in full below."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from cachetui.model import LoadProblem
from cachetui.textsafe import visible
from cachetui.tui.screens.once import DismissOnce
from cachetui.tui.widgets.line_list import LineList, Piece, fit


class ProblemList(LineList):
    def __init__(self, problems: list[LoadProblem], **kwargs) -> None:
        super().__init__(**kwargs)
        self.problems = problems
        self.empty_text = "no load problems"

    def on_mount(self) -> None:
        self.set_count(len(self.problems))

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        problem = self.problems[index]
        return [
            (
                f" {problem.severity:<7} ",
                "line-list--accent" if problem.severity == "error" else "line-list--dim",
            ),
            (fit(f"{problem.source}: {problem.message}", max(1, width - 9)), None),
        ]


class ProblemsScreen(DismissOnce, ModalScreen[None]):
    HELP_GROUP = "load problems"
    BINDINGS = [
        Binding(
            "escape,q,p",
            "close",
            "Close",
            id="close-problems",
            tooltip="Close the list of load problems",
        )
    ]

    def __init__(self, problems: list[LoadProblem]) -> None:
        super().__init__()
        self._problems = problems

    def compose(self) -> ComposeResult:
        with Vertical(id="problems-box"):
            yield Label(f"{len(self._problems)} load problems (the rest loaded)", markup=False)
            yield ProblemList(self._problems, id="problem-list")
            yield Static(id="problem-detail")

    def on_line_list_highlighted(self, event: LineList.Highlighted) -> None:
        event.stop()
        if self._problems:
            problem = self._problems[event.index]
            text = Text(visible(problem.source) + "\n", style="bold")
            text.append(f"{problem.severity}: " + visible(problem.message))
            self.query_one("#problem-detail", Static).update(text)

    def action_close(self) -> None:
        self.dismiss_once(None)
