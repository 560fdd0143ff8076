"""The rows that satisfy a parsed Query's constraints, as a bitset (see query.py).

Each constraint is tested once per distinct value of its column (a few thousand versions,
a few dozen compilers), then spread to rows through the column's codes with numpy.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from cachetui.index.query import Query, variant_values
from cachetui.index.store import Index

# Each index's variant sets as name -> values, worked out once: a new variant token
# otherwise parses every distinct set again (8k of them at 1M, ~30 ms).
_VARIANT_MAPS: WeakKeyDictionary[Index, list] = WeakKeyDictionary()


def constraint_mask(index: Index, query: Query) -> int | None:
    """Rows meeting every constraint of `query`; None when it has none."""
    if not query.has_constraints:
        return None
    mask = index.all_rows
    for versions in query.versions:
        mask &= index.rows_where("version", versions.contains, versions)
    for compiler in query.compilers:
        mask &= index.rows_where("compiler", compiler.matches, compiler)
    if query.variants and index not in _VARIANT_MAPS:
        _VARIANT_MAPS[index] = [variant_values(v) for v in index.distinct_values("variantset")]
    for variant in query.variants:
        mask &= index.rows_where("variantset", variant.matches, variant, _VARIANT_MAPS.get(index))
    for column, value in query.fields:
        if column == "stack":
            mask &= index.rows_where("stackset", lambda stacks, v=value: v in stacks, ("stack", value))
        else:
            mask &= index.rows_where(column, value.__eq__, (column, value))
    for prefix in query.hash_prefixes:
        mask &= index.rows_with_hash_prefix(prefix)
    return mask
