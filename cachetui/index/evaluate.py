"""Evaluate a Filter on an Index: the matching packages, their counts, every facet count."""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatchcase
from functools import reduce

import numpy as np

from cachetui.index.filter import Filter, Result
from cachetui.index.match import constraint_mask
from cachetui.index.query import parse_query
from cachetui.index.store import Index


def evaluate(index: Index, flt: Filter, exact: bool = False) -> Result:
    """Raises QueryError when the search text is not a valid query, or asks what this index
    cannot answer. `exact`: package names as Spack reads them (the exact name, or a glob;
    several names, any of them), for scripts; else ranked, typos allowed, as the app has it."""
    query = parse_query(flt.query)
    if exact:
        ranked = _exactly_named(index, query.words)
        patterns = []
    else:
        ranked = index.package_ranker.rank(query.name_text) if query.name_text.strip() else None
        patterns = [g.lower() for g in query.globs if g.strip("*")]  # a bare * is any package
    if patterns:
        globbed = [
            p
            for p, name in enumerate(index.packages_lower)
            if all(fnmatchcase(name, g) for g in patterns)
        ]
        if ranked is None:
            ranked = globbed
        else:
            keep = set(globbed)
            ranked = [p for p in ranked if p in keep]
    query_mask = index.all_rows if ranked is None else index.rows_mask(ranked)
    ranked_array = (
        None if ranked is None else np.asarray(ranked, dtype=np.int64)
    )  # converted once, used per facet
    constrained = constraint_mask(index, query)  # None: whole packages stay whole
    if constrained is not None:
        query_mask &= constrained

    selected = flt.selected
    facet_masks = {
        facet: reduce(lambda acc, v: acc | _bits(index, facet, v), values, 0)
        for facet, values in selected.items()
    }
    combined = reduce(lambda acc, m: acc & m, facet_masks.values(), query_mask)

    facet_counts: dict[str, dict[str, int]] = {}
    for facet in index.facets:
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
        # Names narrowed it: with no names (ranked None) `combined` is all rows, the branch above.
        assert ranked is not None and ranked_array is not None
        packages = ranked
        counts = index.sizes_array[ranked_array].tolist()
    else:
        per_package = index.package_counts(combined)
        candidates = np.flatnonzero(per_package) if ranked_array is None else ranked_array
        if ranked is not None and len(candidates):
            candidates = candidates[per_package[candidates] > 0]
        packages = candidates.tolist()
        counts = per_package[candidates].tolist() if len(candidates) else []
    result = Result(flt, packages, counts, facet_counts, combined, index.n_packages, index.n_specs)
    if not result.matching_specs and constrained is not None:
        reading = query.spack_0x_reading()
        if reading is not None and evaluate(index, flt.with_query(reading), exact).matching_specs:
            return replace(result, spack_0x_reading=reading)
    return result


def _exactly_named(index: Index, words: tuple[str, ...]) -> list[int] | None:
    """The packages any of `words` names exactly or as a glob, in name order; None: no words."""
    if not words:
        return None
    wanted = [w.lower() for w in words]
    return [
        p
        for p, name in enumerate(index.packages_lower)
        if any(fnmatchcase(name, w) if "*" in w else name == w for w in wanted)
    ]


def _bits(index: Index, facet: str, value: str) -> int:
    try:
        return index.facet_bits[facet][index.facet_values[facet].index(value)]
    except (KeyError, ValueError):
        return 0  # a value this index does not have matches nothing
