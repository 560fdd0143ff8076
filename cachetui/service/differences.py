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
    """How many variants differ (variant_map's of each side)."""
    return sum(1 for name in mine.keys() | theirs.keys() if mine.get(name) != theirs.get(name))


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


def spec_tokens(differences: Iterable[Difference], side: str) -> str:
    """One side of a dependency's own differences as spec tokens: `@1.3 +shared %gcc@13`."""
    return " ".join(_token(d.field, getattr(d, side)) for d in differences)


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
