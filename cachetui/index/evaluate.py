"""Evaluate a Filter on an Index: the matching packages, their counts, every facet count."""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import reduce

import numpy as np

from cachetui.index.filter import Filter, Result
from cachetui.index.match import constraint_mask
from cachetui.index.query import parse_query
from cachetui.index.store import Index
from cachetui.model import FACETS


def evaluate(index: Index, flt: Filter) -> Result:
    """Raises QueryError when the search text is not a valid query."""
    query = parse_query(flt.query)
    ranked = index.package_ranker.rank(query.name_text) if query.name_text.strip() else None
    patterns = [g.lower() for g in query.globs if g.strip("*")]  # a bare * is any package
    if patterns:
        globbed = [p for p, name in enumerate(index.packages_lower) if all(fnmatchcase(name, g) for g in patterns)]
        if ranked is None:
            ranked = globbed
        else:
            keep = set(globbed)
            ranked = [p for p in ranked if p in keep]
    query_mask = index.all_rows if ranked is None else index.rows_mask(ranked)
    ranked_array = None if ranked is None else np.asarray(ranked, dtype=np.int64)  # converted once, used per facet
    constrained = constraint_mask(index, query)  # None: whole packages stay whole
    if constrained is not None:
        query_mask &= constrained

    selected = flt.selected
    facet_masks = {
        facet: reduce(lambda acc, v: acc | _bits(index, facet, v), values, 0) for facet, values in selected.items()
    }
    combined = reduce(lambda acc, m: acc & m, facet_masks.values(), query_mask)

    facet_counts: dict[str, dict[str, int]] = {}
    for facet in FACETS:
        other_masks = [m for f, m in facet_masks.items() if f != facet]
        if other_masks or constrained is not None:
            others = reduce(lambda acc, m: acc & m, other_masks, query_mask)
            counts = [(others & bits).bit_count() for bits in index.facet_bits[facet]]
        else:  # only the search text narrows this facet: whole packages, so sum their histograms
            counts = index.facet_counts_in(facet, ranked_array)
        facet_counts[facet] = dict(zip(index.facet_values[facet], counts))

    if combined == index.all_rows and ranked is None:
        packages = list(range(index.n_packages))
        counts = index.sizes_array.tolist()
    elif not facet_masks and constrained is None:  # only names: whole packages, best first
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
