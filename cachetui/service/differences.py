"""How a cached spec differs from one of your environment: its own fields (version, compiler,
platform, os, target) and each variant. Both sides come from the same reader code, so a field
that is equal is equal as text."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from cachetui.model import EnvironmentSpec

# The own fields of a spec compared, in the order differences are listed.
OWN_FIELDS = ("version", "compiler", "platform", "os", "target")


class Difference(NamedTuple):
    """One way a cached spec differs from the environment's: `field` is version, compiler,
    platform, os, target, `variant:<name>` or `dependency:<name>` (a public contract of
    `check --json`). None: the side has no such variant or dependency. (A NamedTuple: a
    check makes thousands, and a frozen dataclass is five times as slow to make.)"""

    field: str
    yours: str | None
    cache: str | None
    path: tuple[str, ...] = ()  # a dependency's: the names from the direct dependency down


def variant_map(variants: Iterable[str]) -> dict[str, str]:
    """A spec's variants by name: `+mpi` and `~mpi` are both `mpi`; `cuda_arch=80` and
    `libs:=a,b` are `cuda_arch` and `libs`. The last mention of a name wins, as in Spack."""
    out: dict[str, str] = {}
    for variant in variants:
        if variant[:1] in "+~" and variant[1:]:
            out[variant[1:]] = variant
        else:
            out[variant.split("=", 1)[0].rstrip(":")] = variant
    return out


def variant_distance(mine: dict[str, str], theirs: dict[str, str]) -> int:
    """How many variants differ (variant_map's of each side): the names among the (name,
    variant) pairs one side has and the other not, a set operation in C."""
    return len({name for name, _ in mine.items() ^ theirs.items()})


@lru_cache(maxsize=1 << 16)
def _variants_by_name(variants: tuple[str, ...]) -> dict[str, str]:
    """variant_map of a spec's variants, each distinct tuple once (a walk compares the same
    few specs' variants many times). Read only: the dict is shared."""
    return variant_map(variants)


def variant_differences(yours: tuple[str, ...], cache: tuple[str, ...]) -> list[Difference]:
    mine, theirs = _variants_by_name(yours), _variants_by_name(cache)
    return [
        Difference(f"variant:{name}", mine.get(name), theirs.get(name))
        for name in sorted(mine.keys() | theirs.keys())
        if mine.get(name) != theirs.get(name)
    ]


class Fields(NamedTuple):
    """A spec's own fields, on either side (None: the cache does not say)."""

    version: str | None
    compiler: str | None
    platform: str | None
    os: str | None
    target: str | None
    variants: tuple[str, ...] | None

    @classmethod
    def of(cls, spec: EnvironmentSpec) -> Fields:
        return cls(spec.version, spec.compiler, spec.platform, spec.os, spec.target, spec.variants)

    def differences(self, other: Fields) -> list[Difference]:
        if self == other:  # (most specs a walk passes through)
            return []
        out = [
            Difference(name, mine, theirs)
            for name, mine, theirs in (
                (name, getattr(self, name), getattr(other, name)) for name in OWN_FIELDS
            )
            if mine is not None and theirs is not None and mine != theirs
        ]
        if self.variants is not None and other.variants is not None:
            if self.variants != other.variants:  # both in the readers' order
                out += variant_differences(self.variants, other.variants)
        return out


def differing_tokens(mine: Fields, theirs: Fields) -> tuple[str, str] | None:
    """How a dependency differs in its own fields, each side as spec tokens (`@1.3 +shared
    %gcc@13`); None where it does not. Made straight from the fields (a walk compares
    thousands of pairs); the variants' part of a pair of variant sets is made once."""
    if mine == theirs:
        return None
    yours, cache = [], []
    for name in OWN_FIELDS:
        a, b = getattr(mine, name), getattr(theirs, name)
        if a is not None and b is not None and a != b:
            yours.append(_token(name, a))
            cache.append(_token(name, b))
    if (
        mine.variants is not None
        and theirs.variants is not None
        and mine.variants != theirs.variants
    ):
        variant_yours, variant_cache = _variant_tokens(mine.variants, theirs.variants)
        yours += variant_yours
        cache += variant_cache
    return (" ".join(yours), " ".join(cache)) if yours else None


@lru_cache(maxsize=1 << 16)
def _variant_tokens(
    yours: tuple[str, ...], cache: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    differences = variant_differences(yours, cache)
    return (
        tuple(_token(d.field, d.yours) for d in differences),
        tuple(_token(d.field, d.cache) for d in differences),
    )


def _token(field_name: str, value: str | None) -> str:
    if value is None:
        return f"no {field_name.removeprefix('variant:')}"
    if field_name == "version":
        return f"@{value}"
    if field_name == "compiler":
        return f"%{value}"
    if field_name in ("platform", "os", "target"):
        return f"{field_name}={value}"
    return value
