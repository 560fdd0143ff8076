"""Target ranges and lists, as Spack reads `target=x86_64:`, `target=:haswell`,
`target=zen2:zen4` and `target=x86_64_v3,aarch64:`.

A binary's target satisfies a range when it is at least the low end and at most the high
end in the microarchitecture graph of archspec (Spack's own library for this): haswell is
at least x86_64 because x86_64 is among its ancestors. A name archspec does not know is
only equal to itself, as in Spack. A single name without `:` or `,` is an exact match.
"""

from __future__ import annotations

from functools import lru_cache

import archspec.cpu


class TargetRangeError(ValueError):
    pass


@lru_cache(maxsize=256)
def _microarchitecture(name: str) -> archspec.cpu.Microarchitecture:
    known = archspec.cpu.TARGETS.get(name)
    return known if known is not None else archspec.cpu.generic_microarchitecture(name)


def check_target_range(text: str) -> None:
    """Raises TargetRangeError when `text` is not a target, a range or a list of them."""
    for item in text.split(","):
        low, colon, high = item.partition(":")
        if not item or ":" in high:
            raise TargetRangeError(
                f"{item or 'nothing'} is not a target or a range of targets (low:high)"
            )
        if colon and low and high:
            lo, hi = _microarchitecture(low), _microarchitecture(high)
            if lo.family != hi.family or not lo <= hi:
                raise TargetRangeError(f"the range {item} is empty: {high} is not at least {low}")


def target_satisfies(target: str, wanted: str) -> bool:
    """Whether a binary built for `target` satisfies `target=wanted` (a name, a range or a
    list of them, any of which may hold)."""
    if "," not in wanted and ":" not in wanted:
        return target == wanted or wanted == "*"
    concrete = _microarchitecture(target)
    for item in wanted.split(","):
        low, colon, high = item.partition(":")
        if not colon:
            if target == low:
                return True
            continue
        if (not low or concrete >= _microarchitecture(low)) and (
            not high or concrete <= _microarchitecture(high)
        ):
            return True
    return False
