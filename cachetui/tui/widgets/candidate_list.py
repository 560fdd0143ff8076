"""Specs to choose from (a hash prefix several match), one a line as Spack writes a spec:
`name@version %compiler arch=platform-os-target /hash`, then the tag it was loaded from.

When the line is too wide, the spec is cut before the hash: the hash is what the user
is choosing by.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len

from cachetui.spack_format import short_spec
from cachetui.textsafe import visible
from cachetui.tui.widgets.line_list import LineList, Piece, fit, marked

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class CandidateList(LineList):
    empty_text = "no spec has a hash starting with that"

    def __init__(self, index: Index, **kwargs) -> None:
        super().__init__(**kwargs)
        self._index = index
        self._rows: list[int] = []
        self._prefix = ""

    @property
    def rows(self) -> list[int]:
        return self._rows

    def show(self, rows: list[int], prefix: str) -> None:
        """List `rows`, marking the first len(`prefix`) characters of each hash."""
        self._rows, self._prefix = rows, prefix
        self.set_count(len(rows))

    def row_at(self, position: int) -> int:
        return self._rows[position]

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        row = self._rows[index]
        ix = self._index
        full_hash = ix.hashes[row]
        tag = "  " + fit(ix.field("tag", row), 24).rstrip()
        spec = short_spec(ix, row)  # " /hash" is drawn apart, marked
        hash_pieces = marked(full_hash, ((0, len(self._prefix)),), "line-list--accent")
        room = width - 1 - len(" /") - len(full_hash) - len(tag)
        if room < 12:  # too narrow for the spec before its hash: the hash first, then what fits
            return [(" /", None), *hash_pieces, (" " + spec, None)]  # the row is cut to the width
        if cell_len(visible(spec)) > room:  # cells, not characters: wide and escaped ones take more
            spec = fit(spec, room)
        return [(" " + spec + " /", None), *hash_pieces, (tag, "line-list--dim")]
