"""The facet sidebar: a section per facet, each value with its live count.

Space, enter or a click toggles a value; on a section header they fold the section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from cachetui.index.filter import Result
from cachetui.model import BINARY_KIND
from cachetui.tui.widgets.line_list import LineList, Piece, fit

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index

FACET_TITLES = {
    "stack": "Stacks",
    "os": "OS",
    "target": "Targets",
    "compiler": "Compilers",
    "platform": "Platforms",
    "tag": "Tags",
    "kind": "Kinds",
    "environment": "Environment",  # cachetui --env: the environment's specs, hits, misses
}


class FacetSidebar(LineList):
    HELP_GROUP = "filters"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "space,enter",
            "select",
            "Toggle",
            id="toggle-facet",
            tooltip="Toggle the highlighted facet value, or fold its section",
        ),
    ]
    empty_text = "loading…"

    class Toggled(Message):
        def __init__(self, facet: str, value: str) -> None:
            super().__init__()
            self.facet = facet
            self.value = value

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[tuple[str, str | None]] = []  # (facet, None) is a header
        self._counts: dict[str, dict[str, int]] = {}
        self._selected: dict[str, frozenset[str]] = {}
        self._folded: set[str] = set()
        self._index: Index | None = None

    @property
    def lines(self) -> list[tuple[str, str | None]]:
        """(facet, value) per row; value None for a section header (read-only)."""
        return self._lines

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        return self._counts

    @property
    def highlighted(self) -> tuple[str, str | None] | None:
        return self._lines[self.cursor] if self._lines else None

    def show(self, index: Index, result: Result) -> None:
        self._index = index
        self._counts = result.facet_counts
        self._selected = result.filter.selected
        self._relayout()

    def _relayout(self) -> None:
        keep = self.highlighted
        lines: list[tuple[str, str | None]] = []
        for facet in self._index.facets if self._index else ():
            values = self._index.facet_values[facet] if self._index else []
            if not values or (facet == "kind" and values == [BINARY_KIND]):
                continue  # (binaries only, the common case: nothing to tell apart)
            lines.append((facet, None))
            if facet not in self._folded:
                lines.extend((facet, value) for value in values)
        self._lines = lines
        self.set_count(len(lines), lines.index(keep) if keep in lines else self.cursor)

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        facet, value = self._lines[index]
        if value is None:
            chosen = len(self._selected.get(facet, ()))
            fold = "▸" if facet in self._folded else "▾"
            title = f"{fold} {FACET_TITLES.get(facet, facet)}" + (
                f" ({chosen} on)" if chosen else ""
            )
            return [(fit(title, width), "line-list--header")]
        count = self._counts.get(facet, {}).get(value, 0)
        on = value in self._selected.get(facet, ())
        number = f"{count:,}"
        label_width = max(1, width - len(number) - 6)
        mark = "[x]" if on else "[ ]"
        dim = None if (count or on) else "line-list--dim"
        return [
            (f" {mark} ", "line-list--accent" if on else dim),
            (fit(value, label_width), dim),
            (" " + number.rjust(width - label_width - 6), "line-list--dim"),
        ]

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        if event.line_list is not self:
            return
        event.stop()
        if event.stale:  # a fold or a new result since: that position is another line now
            return
        facet, value = self._lines[event.index]
        if value is None:
            self._folded.symmetric_difference_update({facet})
            self._relayout()
        else:
            self.post_message(self.Toggled(facet, value))
