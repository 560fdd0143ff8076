"""Figures for the stats view: what the current filter holds, per facet and package.

Plain Python and numpy (no Textual): the app computes a Summary in a worker. Every count
is an AND of the filter's row bitset with a facet value's bitset, then a popcount: both run
in C over Python ints (tens of µs a value at a million rows). The stack x target matrix
ANDs each chosen stack's rows within the filter once, then each target with that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from cachetui.index.filter import Filter
    from cachetui.index.store import Index

# The facets the stats view charts, in the order it shows them.
CHART_FACETS: tuple[str, ...] = ("stack", "os", "target", "compiler")


@dataclass(frozen=True)
class Summary:
    specs: int  # rows in the mask
    packages: int  # packages with at least one row in the mask
    # facet -> (value, specs) with specs > 0, most first, ties by value; for CHART_FACETS.
    facets: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    matrix_stacks: list[str] = field(default_factory=list)  # matrix rows: stacks, most specs first
    matrix_targets: list[str] = field(default_factory=list)  # matrix columns: targets, likewise
    matrix: list[list[int]] = field(default_factory=list)  # [i][j]: specs with stack i and target j
    top_packages: list[tuple[str, int]] = field(
        default_factory=list
    )  # most specs first, ties by name

    @property
    def matrix_max(self) -> int:
        """The largest cell of the matrix (0 when it is empty)."""
        return max((max(row, default=0) for row in self.matrix), default=0)


def facet_counts(index: Index, facet: str, mask: int) -> list[tuple[str, int]]:
    """(value, rows in `mask` with it) for each value of `facet` in `mask`: most first, ties by
    value."""
    counts = [
        (value, (bits & mask).bit_count())
        for value, bits in zip(index.facet_values.get(facet, ()), index.facet_bits.get(facet, ()))
    ]
    counts = [(value, n) for value, n in counts if n > 0]
    counts.sort(key=lambda item: (-item[1], item[0]))
    return counts


def top_packages(index: Index, mask: int, top: int) -> tuple[int, list[tuple[str, int]]]:
    """(packages with a row in `mask`, the `top` of them by rows in `mask`: most first, ties by
    name)."""
    if index.n_specs == 0 or mask == 0:
        return 0, []
    counts = index.package_counts(mask)
    present = int(np.count_nonzero(counts))
    if top <= 0 or present == 0:
        return present, []
    if present > top:
        # Every package that can be in the top: at least as many rows as the top-th one.
        threshold = np.partition(counts, len(counts) - top)[len(counts) - top]
        candidates = np.flatnonzero(counts >= max(int(threshold), 1))
    else:
        candidates = np.flatnonzero(counts)
    names = index.packages
    chosen = sorted(
        ((names[p], int(counts[p])) for p in candidates.tolist()),
        key=lambda item: (-item[1], item[0]),
    )
    return present, chosen[:top]


def summarize(index: Index, mask: int, top: int = 10, matrix_limit: int = 60) -> Summary:
    """The stats of the rows set in `mask` (a bitset over the index's rows)."""
    mask &= index.all_rows
    facets = {facet: facet_counts(index, facet, mask) for facet in CHART_FACETS}
    packages, tops = top_packages(index, mask, top)

    stacks = [value for value, _ in facets["stack"][: max(matrix_limit, 0)]]
    targets = [value for value, _ in facets["target"][: max(matrix_limit, 0)]]
    stack_bits = dict(zip(index.facet_values.get("stack", ()), index.facet_bits.get("stack", ())))
    target_bits = dict(
        zip(index.facet_values.get("target", ()), index.facet_bits.get("target", ()))
    )
    chosen_targets = [target_bits[t] for t in targets]
    matrix = []
    for stack in stacks:
        rows = stack_bits[stack] & mask
        matrix.append([(rows & bits).bit_count() for bits in chosen_targets])

    return Summary(
        specs=mask.bit_count(),
        packages=packages,
        facets=facets,
        matrix_stacks=stacks,
        matrix_targets=targets,
        matrix=matrix,
        top_packages=tops,
    )


def title_for(flt: Filter) -> str:
    """What the stats are of, in words: `Stats · all specs`, or the search and the selections
    (`Stats · "zlib" · os: ubuntu22.04, ubuntu24.04`). Data: the view makes it visible."""
    parts = [f'"{flt.query.strip()}"'] if flt.query.strip() else []
    parts += [f"{facet}: {', '.join(sorted(values))}" for facet, values in flt.selections if values]
    return "Stats · " + (" · ".join(parts) if parts else "all specs")
