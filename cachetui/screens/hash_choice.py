"""Choose among the specs an ambiguous hash prefix matches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from cachetui.textsafe import visible
from cachetui.widgets.candidate_list import CandidateList
from cachetui.widgets.line_list import LineList

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class HashChoiceScreen(ModalScreen[int | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="cancel-choice")]

    def __init__(self, index: Index, prefix: str, rows: list[int]) -> None:
        super().__init__()
        self._index, self._prefix, self._rows = index, prefix, rows

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            yield Label(f"{len(self._rows):,} specs have a hash starting with /{visible(self._prefix)}: choose one", markup=False)
            yield CandidateList(self._index, self._rows, id="candidates")

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        event.stop()
        self.dismiss(self.query_one(CandidateList).row_at(event.index))

    def action_cancel(self) -> None:
        self.dismiss(None)
