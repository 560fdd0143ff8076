"""Filters (what the user asked for) and Results (what matches); see evaluate.py.

Facet semantics: values selected within one facet are OR-ed, facets are AND-ed. The
counts shown for a facet apply every *other* facet's selection (and the search text)
but not its own, so the alternatives the user could add stay visible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Filter:
    """A small immutable value: the search text and the selected facet values."""

    query: str = ""
    selections: tuple[tuple[str, frozenset[str]], ...] = ()

    @classmethod
    def of(
        cls, query: str = "", selections: Mapping[str, set[str] | frozenset[str]] | None = None
    ) -> Filter:
        pairs = tuple(
            sorted(
                (facet, frozenset(values)) for facet, values in (selections or {}).items() if values
            )
        )
        return cls(query, pairs)

    @property
    def selected(self) -> dict[str, frozenset[str]]:
        return dict(self.selections)

    def toggled(self, facet: str, value: str) -> Filter:
        selected = {f: set(v) for f, v in self.selections}
        values = selected.setdefault(facet, set())
        values.symmetric_difference_update({value})
        return Filter.of(self.query, selected)

    def with_query(self, query: str) -> Filter:
        return Filter(query, self.selections)

    def with_selection(self, facet: str, values: set[str] | frozenset[str]) -> Filter:
        """`facet` set to exactly `values` (none: that facet cleared); the others kept."""
        selected = {f: set(v) for f, v in self.selections}
        selected[facet] = set(values)
        return Filter.of(self.query, selected)

    def without_selections(self) -> Filter:
        return Filter(self.query)


@dataclass(frozen=True)
class Result:
    """What a Filter matches on one Index."""

    filter: Filter
    packages: list[int]  # package ids, best first
    counts: list[int]  # matching specs of each listed package
    facet_counts: dict[str, dict[str, int]]
    mask: int  # rows that match
    total_packages: int
    total_specs: int
    matching_specs: int = field(init=False)
    # When nothing matches, but would with the tokens after each `%name` moved before it (how
    # Spack 0.x read `zlib %gcc@9 +shared`): that query, to offer.
    spack_0x_reading: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "matching_specs", sum(self.counts))

    @property
    def matching_packages(self) -> int:
        return len(self.packages)

    def status_text(self) -> str:
        """The status line users read (and scripts scrape): a public contract."""
        # Plain integers: scripts scrape this line (`(\d+) of (\d+) packages`).
        return (
            f"{self.matching_packages} of {self.total_packages} packages · "
            f"{self.matching_specs} of {self.total_specs} specs"
        )
