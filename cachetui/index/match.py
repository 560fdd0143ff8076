"""The rows that satisfy a parsed Query's constraints, as a bitset (see query.py).

Each constraint is tested once per distinct value of its column (a few thousand versions,
a few dozen compilers), then spread to rows through the column's codes with numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from weakref import WeakKeyDictionary

import numpy as np

from cachetui.index.dependency_match import dependency_rows
from cachetui.index.query import NodeConstraint, Query, Variant, variant_values
from cachetui.index.store import Index
from cachetui.index.targets import target_satisfies

# Each index's distinct variant tokens parsed once (name, values): a variant in a query is
# tested against each token (a few thousand), never against each variant set (tens of
# thousands at 1M, each of dozens of tokens: the first variant token of a session took
# 0.7 s that way).
_TOKENS: WeakKeyDictionary[Index, tuple[np.ndarray, list[frozenset[str]], dict[str, int]]] = (
    WeakKeyDictionary()
)


def constraint_mask(index: Index, query: Query) -> int | None:
    """Rows meeting every constraint of `query`; None when it has none. Raises QueryError
    for what this index cannot answer (`^` with no dependencies loaded)."""
    if not query.has_constraints:
        return None
    mask = node_mask(index, query.root)
    for dependency in query.dependencies:
        mask &= dependency_rows(index, dependency, lambda node: node_mask(index, node))
    return mask


def node_mask(index: Index, node: NodeConstraint) -> int:
    """Rows whose own fields meet `node` (versions, variants, arch, stack and tag, hash)."""
    mask = index.all_rows
    for versions in node.versions:
        mask &= index.rows_where("version", versions.contains, versions)
    for variant in node.variants:
        mask &= index.rows_with_codes("variantset", _variantsets_matching(index, variant), variant)
    for column, value in node.fields:
        if column == "stack":
            mask &= index.rows_where("stackset", _holds_stack(value), ("stack", value))
        elif column == "target":
            mask &= index.rows_where(column, _satisfies_target(value), (column, value))
        else:
            mask &= index.rows_where(column, value.__eq__, (column, value))
    for prefix in node.hash_prefixes:
        mask &= index.rows_with_hash_prefix(prefix)
    return mask


def _holds_stack(stack: str) -> Callable[[tuple[str, ...]], bool]:
    """rows_where's test of a stack set: whether it holds `stack`."""
    return lambda stacks: stack in stacks


def _satisfies_target(wanted: str) -> Callable[[str], bool]:
    """rows_where's test of a target: whether it satisfies `target=wanted`."""
    return lambda target: target_satisfies(target, wanted)


def _variantsets_matching(index: Index, variant: Variant) -> np.ndarray:
    """Per variant set: whether it holds `variant` (Variant.matches, on its tokens)."""
    parsed = _TOKENS.get(index)
    if parsed is None:
        names: dict[str, int] = {}
        codes: list[int] = []
        values: list[frozenset[str]] = []
        for token in index.variant_tokens():
            [(name, token_values)] = variant_values((token,)).items() or [(None, frozenset())]
            codes.append(names.setdefault(name, len(names)) if name is not None else -1)
            values.append(token_values)
        parsed = _TOKENS[index] = (np.array(codes, dtype=np.int32), values, names)
    name_codes, held, names = parsed
    code = names.get(variant.name)
    if code is None:
        return np.zeros(len(index.parts.variantsets), dtype=bool)
    name_matches = name_codes == code
    value_matches = np.fromiter(
        (bool(hit) and variant.held_by(vals) for hit, vals in zip(name_matches.tolist(), held)),
        dtype=bool,
        count=len(held),
    )
    return index.variantsets_where(name_matches, value_matches)
