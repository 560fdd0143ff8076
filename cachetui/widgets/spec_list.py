"""The spec list of the highlighted package: short hash, version, compiler, os, target, stacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cachetui.widgets.line_list import LineList, Piece, fit

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

    @property
    def rows(self) -> list[int]:
        return self._rows

    @property
    def highlighted_row(self) -> int | None:
        return self._rows[self.cursor] if self._rows else None

    def show(self, index: Index, rows: list[int]) -> None:
        """Show `rows`, keeping the highlighted spec when it is still among them."""
        if index is self._index and rows == self._rows:
            return  # nothing changed: no repaint
        keep = self.highlighted_row if index is self._index else None
        if index is not self._index:
            self._widths = tuple(min(_MAX_COLUMN, index.widest(c)) for c in ("version", "compiler", "os", "target"))
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
        field = ix.field
        version_w, compiler_w, os_w, target_w = self._widths
        return [
            (" " + ix.hashes[row][:7] + " ", "line-list--accent"),
            (fit(field("version", row), version_w) + " ", None),
            (fit(field("compiler", row), compiler_w) + " ", None),
            (fit(field("os", row), os_w) + " ", None),
            (fit(field("target", row), target_w) + " ", None),
            (",".join(ix.stacks(row)), "line-list--dim"),
        ]
