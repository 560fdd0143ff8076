"""A summary's `meta` checked against its `spec_details`: where they disagree, a warning
says how (spec_details is what is read)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from cachetui.model import NO_COMPILER, normalise_compiler, some_of

if TYPE_CHECKING:
    from cachetui.sources.summary import SummaryFile


@lru_cache(maxsize=4096)  # a few dozen compilers, named in every file
def _normal_compiler(text: str | None) -> str:
    return normalise_compiler(text)


def _meta_disagreements(meta: dict[str, Any], summary: SummaryFile) -> Iterable[str]:
    """Where `meta` disagrees with `spec_details` (which we trust), say how."""
    num = meta.get("num_specs")
    if num is not None and num != len(summary.records):
        yield (
            f"meta says num_specs {num}, spec_details has {len(summary.records)}; "
            "using spec_details"
        )
    for key, column in (
        ("versions", "version"),
        ("compilers", "compiler"),
        ("oss", "os"),
        ("platforms", "platform"),
        ("targets", "target"),
    ):
        claimed = meta.get(key)
        if not isinstance(claimed, list):
            continue
        actual = summary.values(column)
        if key == "compilers":
            claimed = [_normal_compiler(c) if isinstance(c, str) else c for c in claimed]
            # Older generators leave specs without a compiler out of meta; the one Spack 1.x
            # runs lists them as "none".
            actual = set(map(_normal_compiler, actual))
            if NO_COMPILER not in claimed:
                actual.discard(NO_COMPILER)
        yield from _set_difference(key, set(map(str, claimed)), actual)
    by_stack = summary.stack_counts()
    claimed_stacks = meta.get("stacks")
    if isinstance(claimed_stacks, list):
        yield from _set_difference("stacks", set(map(str, claimed_stacks)), set(by_stack))
    claimed_counts = meta.get("num_specs_by_stack")
    if isinstance(claimed_counts, dict) and claimed_counts != by_stack:
        wrong = sorted(
            s
            for s in set(claimed_counts) | set(by_stack)
            if claimed_counts.get(s) != by_stack.get(s, 0)
        )
        if wrong:
            shown = _some(
                [f"{s} {claimed_counts.get(s, 0)} vs {by_stack.get(s, 0)}" for s in wrong]
            )
            yield (
                f"meta num_specs_by_stack disagrees with spec_details ({shown}); using spec_details"
            )


def _set_difference(key: str, claimed: set[str], actual: set[str]) -> Iterable[str]:
    if claimed == actual:  # as almost always: nothing to sort
        return
    missing, extra = sorted(claimed - actual), sorted(actual - claimed)
    if missing or extra:
        parts = []
        if missing:
            parts.append("lists " + _some(missing) + " not in spec_details")
        if extra:
            parts.append("omits " + _some(extra))
        yield f"meta {key} " + " and ".join(parts) + "; using spec_details"


def _some(values: list[str], most: int = 5, width: int = 60) -> str:
    """A short, bounded list for a message: values from data can be huge."""
    return some_of([v if len(v) <= width else v[: width - 1] + "…" for v in values], most)
