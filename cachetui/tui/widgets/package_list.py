"""The package list: one row per matching package with its matching spec count."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cachetui.index.filter import Result
from cachetui.index.highlight import NO_HIGHLIGHT, Highlight
from cachetui.tui.widgets.line_list import LineList, Piece, fit, marked

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class PackageList(LineList):
    empty_text = "no package matches"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._index: Index | None = None
        self._packages: list[int] = []
        self._counts: list[int] = []
        self._highlight = NO_HIGHLIGHT

    @property
    def packages(self) -> list[int]:
        """Package ids in display order (read-only)."""
        return self._packages

    @property
    def counts(self) -> list[int]:
        """Matching spec count of each listed package (read-only)."""
        return self._counts

    @property
    def highlighted_package(self) -> int | None:
        return self._packages[self.cursor] if self._packages else None

    def show(self, index: Index, result: Result, highlight: Highlight = NO_HIGHLIGHT) -> None:
        """Show `result`, keeping the highlighted package when it is still listed; the
        characters of each name that `highlight` matched are marked."""
        keep = self.highlighted_package if index is self._index else None
        self._index, self._packages, self._counts = index, result.packages, result.counts
        self._highlight = highlight
        self.set_count(len(self._packages), self._position(keep))

    def select_package(self, package: int) -> bool:
        position = self._position(package)
        if self._packages and self._packages[position] == package:
            self.cursor = position
            return True
        return False

    def _position(self, package: int | None) -> int:
        if package is None:
            return 0
        try:
            return self._packages.index(package)
        except ValueError:
            return 0

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        package = self._packages[index]
        assert self._index is not None  # a package is listed only by show(), with its index
        total = self._index.package_size(package)
        count = self._counts[index]
        number = f"{count:,}" if count == total else f"{count:,}/{total:,}"
        name_width = max(1, width - len(number) - 2)
        name = self._index.packages[package]
        fitted = fit(name, name_width)
        spans = (
            self._highlight.name_spans(name) if name.isprintable() else ()
        )  # else fit escaped it: spans moved
        return [(" ", None), *marked(fitted, spans), (" " + number, "line-list--dim")]
