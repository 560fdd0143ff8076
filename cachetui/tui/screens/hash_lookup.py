"""Go to a spec by its hash: type or paste a prefix, or a log line holding a full hash.

Every loaded spec whose hash starts with it is listed as it is typed, across every tag;
enter goes to the only one, or moves to the list to choose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from cachetui.index.hashes import HashPrefixError, hash_prefix_in
from cachetui.textsafe import visible
from cachetui.tui.screens.once import DismissOnce
from cachetui.tui.widgets.candidate_list import CandidateList
from cachetui.tui.widgets.line_list import LineList
from cachetui.tui.widgets.safe_input import SafeInput

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class HashLookupScreen(DismissOnce, ModalScreen[int | None]):
    HELP_GROUP = "hash lookup"
    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="cancel-lookup",
            tooltip="Close the hash lookup, going nowhere",
        ),
        Binding(
            "down",
            "to_candidates",
            "Candidates",
            show=False,
            id="to-candidates",
            tooltip="From the prefix, move to the specs to choose from",
        ),
    ]

    def __init__(self, index: Index, text: str = "", rows: list[int] | None = None) -> None:
        """`rows`: the candidates for `text` when the caller already narrowed them (the search
        box's other tokens); typing here looks up the whole index again."""
        super().__init__()
        self._index, self._text, self._rows = index, text, rows

    def compose(self) -> ComposeResult:
        with Vertical(id="lookup-box"):
            # SafeInput: a pasted log line's colour codes are echoed visibly, never raw.
            yield SafeInput(
                self._text,
                placeholder="a hash prefix (2feova4, /2feova4) or a pasted log line",
                id="lookup-prefix",
            )
            yield Label(id="lookup-count", markup=False)
            yield CandidateList(self._index, id="candidates")

    def on_mount(self) -> None:
        self.query_one("#lookup-box").border_title = "Go to hash"
        self._show(self._text, self._rows)
        if self._rows is not None and len(self._rows) > 1:
            self.query_one(CandidateList).focus()  # sent here to choose: the list, at once
        else:
            self.query_one("#lookup-prefix", Input).focus()

    @on(Input.Changed, "#lookup-prefix")
    def _typed(self, event: Input.Changed) -> None:
        if event.value != self._text:
            self._text = event.value
            self._show(event.value)

    def _show(self, text: str, rows: list[int] | None = None) -> None:
        candidates, count = self.query_one(CandidateList), self.query_one("#lookup-count", Label)
        if not text.strip():
            candidates.show([], "")
            count.update("Type the first characters of a hash.")
            return
        try:
            prefix = hash_prefix_in(text)
        except HashPrefixError as error:
            candidates.show([], "")
            count.update(visible(str(error)))
            return
        if rows is None:
            rows = self._index.lookup_hash(prefix)
        candidates.show(rows, prefix)
        tags = self._index.distinct_among("tag", rows)
        where = f" in {tags} tags" if tags > 1 else ""
        count.update(
            visible(
                f"No spec has a hash starting with /{prefix}"
                if not rows
                else f"1 spec has a hash starting with /{prefix}: enter to go to it"
                if len(rows) == 1
                else f"{len(rows):,} specs{where} have a hash starting with /{prefix}: choose one"
            )
        )

    @on(Input.Submitted, "#lookup-prefix")
    def _submitted(self) -> None:
        rows = self.query_one(CandidateList).rows
        if len(rows) == 1:
            self.dismiss_once(rows[0])
        elif rows:
            self.query_one(CandidateList).focus()

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        event.stop()
        if event.stale:  # chosen among candidates the typing since has replaced
            return
        self.dismiss_once(self.query_one(CandidateList).row_at(event.index))

    def action_to_candidates(self) -> None:
        if self.query_one(CandidateList).count:
            self.query_one(CandidateList).focus()

    def action_cancel(self) -> None:
        self.dismiss_once(None)
