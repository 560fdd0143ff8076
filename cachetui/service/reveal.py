"""Revealing a row: which of the filters hide it, and the filter that shows it (clearing the
search, the facet selections, or both; never more than hides it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cachetui.index.filter import Filter
from cachetui.index.query import QueryError

if TYPE_CHECKING:
    from cachetui.service import IndexService


@dataclass(frozen=True)
class Reveal:
    filter: Filter  # the filter that shows the row (the one given when nothing hides it)
    search_cleared: bool
    selections_cleared: bool

    @property
    def cleared(self) -> str:
        """What was cleared, for a notice: "Search", "Filters", "Search and filters", or ""."""
        parts = [
            what
            for what, done in (
                ("search", self.search_cleared),
                ("filters", self.selections_cleared),
            )
            if done
        ]
        return " and ".join(parts).capitalize()


def reveal(service: IndexService, flt: Filter, row: int) -> Reveal:
    """The filter closest to `flt` whose result holds `row`. (The search and the selections
    are AND-ed: a row that each shows alone, both show.)"""
    selections_hide = not _holds(service, Filter("", flt.selections), row)
    search_hides = not _holds(service, Filter(flt.query), row)
    shown = Filter("" if search_hides else flt.query, () if selections_hide else flt.selections)
    return Reveal(shown, search_hides, selections_hide)


def _holds(service: IndexService, flt: Filter, row: int) -> bool:
    """Whether `flt` shows `row`; a search the sources cannot answer (`^` on summaries, kept
    in the box while the list shows the last answer) shows nothing."""
    try:
        result = service.evaluate(flt)
    except QueryError:
        return False
    return result is not None and bool((result.mask >> row) & 1)
