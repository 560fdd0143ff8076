"""Specs to choose from (an ambiguous hash prefix): `name@version %compiler arch /hash`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cachetui.widgets.line_list import LineList, Piece, fit

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


def candidate_label(index: Index, row: int) -> str:
    f = index.field
    return f"{index.package_name(row)}@{f('version', row)} %{f('compiler', row)} arch={f('platform', row)}-{f('os', row)}-{f('target', row)} /{index.hashes[row]}"


class CandidateList(LineList):
    def __init__(self, index: Index, rows: list[int], **kwargs) -> None:
        super().__init__(**kwargs)
        self._index = index
        self._rows = rows

    def on_mount(self) -> None:
        self.set_count(len(self._rows))

    def row_at(self, position: int) -> int:
        return self._rows[position]

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        row = self._rows[index]
        ix = self._index
        return [(" " + ix.hashes[row] + "  ", "line-list--accent"), (fit(candidate_label(ix, row) + "  " + ix.field("tag", row), max(1, width - 35)), None)]
