"""The spec list of the highlighted package: short hash, version, compiler, os, target, stacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cachetui.index.highlight import NO_MARKS, SpecMarks
from cachetui.model import BINARY_KIND
from cachetui.tui.widgets.line_list import LineList, Piece, fit, marked

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index

_MAX_COLUMN = 24


class SpecList(LineList):
    empty_text = "no spec matches"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._index: Index | None = None
        self._rows: list[int] = []
        self._widths: tuple[int, ...] = ()
        self._marks = NO_MARKS

    @property
    def rows(self) -> list[int]:
        return self._rows

    @property
    def highlighted_row(self) -> int | None:
        return self._rows[self.cursor] if self._rows else None

    def show(self, index: Index, rows: list[int], marks: SpecMarks = NO_MARKS) -> None:
        """Show `rows`, keeping the highlighted spec when it is still among them, with what
        the search matched (`marks`: hash starts, constrained columns, stacks) marked."""
        if index is self._index and rows == self._rows and marks == self._marks:
            return  # nothing changed: no repaint
        self._marks = marks
        keep = self.highlighted_row if index is self._index else None
        if index is not self._index:
            self._widths = tuple(
                min(_MAX_COLUMN, index.widest(c)) for c in ("version", "compiler", "os", "target")
            )
        self._index, self._rows = index, rows
        position = rows.index(keep) if keep in rows else 0
        self.set_count(len(rows), position)

    def select_row(self, row: int) -> bool:
        if row in self._rows:
            self.cursor = self._rows.index(row)
            return True
        return False

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        row = self._rows[index]
        ix = self._index
        assert ix is not None  # a row is listed only by show(), with its index
        field = ix.field
        marks = self._marks
        full_hash = ix.hashes[row]
        pieces: list[Piece] = [
            (" ", None),
            *marked(full_hash[:7], ((0, marks.hash_length(full_hash)),), "line-list--accent"),
        ]
        for column, column_width in zip(("version", "compiler", "os", "target"), self._widths):
            text = fit(field(column, row), column_width)
            if column in marks.columns:
                pieces.append((" ", None))
                pieces.extend(marked(text, ((0, len(text.rstrip())),)))
            else:
                pieces.append((" " + text, None))
        pieces.append((" ", None))
        stacks = ix.stacks(row)
        kind = field("kind", row)
        if kind != BINARY_KIND:  # an installed spec: said where a binary's stacks go
            pieces.append((kind + (" " if stacks else ""), "line-list--accent"))
        if marks.stacks:
            for i, stack in enumerate(stacks):
                pieces.append(("," if i else "", "line-list--dim"))
                pieces.append(
                    (stack, "line-list--match" if stack in marks.stacks else "line-list--dim")
                )
        else:
            pieces.append((",".join(stacks), "line-list--dim"))
        return pieces
