"""Filters (what the user asked for) and Results (what matches), evaluated on an Index.

Facet semantics: values selected within one facet are OR-ed, facets are AND-ed. The
counts shown for a facet apply every *other* facet's selection (and the search text)
but not its own, so the alternatives the user could add stay visible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import reduce

import numpy as np

from cachetui.index.store import Index
from cachetui.model import FACETS


@dataclass(frozen=True)
class Filter:
    """A small immutable value: the search text and the selected facet values."""

    query: str = ""
    selections: tuple[tuple[str, frozenset[str]], ...] = ()

    @classmethod
    def of(cls, query: str = "", selections: Mapping[str, set[str] | frozenset[str]] | None = None) -> Filter:
        pairs = tuple(sorted((facet, frozenset(values)) for facet, values in (selections or {}).items() if values))
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "matching_specs", sum(self.counts))

    @property
    def matching_packages(self) -> int:
        return len(self.packages)

    def status_text(self) -> str:
        """The status line users read (and scripts scrape): a public contract."""
        # Plain integers: scripts scrape this line (`(\d+) of (\d+) packages`).
        return f"{self.matching_packages} of {self.total_packages} packages · {self.matching_specs} of {self.total_specs} specs"


def evaluate(index: Index, flt: Filter) -> Result:
    ranked = index.package_ranker.rank(flt.query) if flt.query.strip() else None
    query_mask = index.all_rows if ranked is None else index.rows_mask(ranked)
    ranked_array = None if ranked is None else np.asarray(ranked, dtype=np.int64)  # converted once, used per facet

    selected = flt.selected
    facet_masks = {
        facet: reduce(lambda acc, v: acc | _bits(index, facet, v), values, 0) for facet, values in selected.items()
    }
    combined = reduce(lambda acc, m: acc & m, facet_masks.values(), query_mask)

    facet_counts: dict[str, dict[str, int]] = {}
    for facet in FACETS:
        other_masks = [m for f, m in facet_masks.items() if f != facet]
        if other_masks:
            others = reduce(lambda acc, m: acc & m, other_masks, query_mask)
            counts = [(others & bits).bit_count() for bits in index.facet_bits[facet]]
        else:  # only the search text narrows this facet: whole packages, so sum their histograms
            counts = index.facet_counts_in(facet, ranked_array)
        facet_counts[facet] = dict(zip(index.facet_values[facet], counts))

    if combined == index.all_rows:
        packages = list(range(index.n_packages))
        counts = index.sizes_array.tolist()
    elif not facet_masks:  # only the search text: whole packages, best first
        packages = ranked
        counts = index.sizes_array[ranked_array].tolist()
    else:
        per_package = index.package_counts(combined)
        candidates = np.flatnonzero(per_package) if ranked is None else ranked_array
        if ranked is not None and len(candidates):
            candidates = candidates[per_package[candidates] > 0]
        packages = candidates.tolist()
        counts = per_package[candidates].tolist() if len(candidates) else []
    return Result(flt, packages, counts, facet_counts, combined, index.n_packages, index.n_specs)


def _bits(index: Index, facet: str, value: str) -> int:
    try:
        return index.facet_bits[facet][index.facet_values[facet].index(value)]
    except (KeyError, ValueError):
        return 0  # a value this index does not have matches nothing
