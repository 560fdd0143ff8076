"""The terms of the search language: version lists (`@1.2:1.4,=2.0`) and variants (`+mpi`,
`cuda_arch=70,80`), what a single token asks of a node; and the QueryError that says which
characters of a query are wrong and why. query.py puts them together into a Query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cachetui.index.versions import version_key
from cachetui.spack_format import unquoted


class QueryError(ValueError):
    """What is wrong with a query, and where: `start`:`end` index the typed text."""

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(message)
        self.message, self.start, self.end = message, start, max(end, start + 1)

    def pointer(self, text: str) -> str:
        """The query with a caret line under the offending characters (for the CLI)."""
        return (
            f"{text}\n{' ' * self.start}"
            f"{'^' * (min(self.end, max(len(text), self.start + 1)) - self.start)}"
        )


# -- versions ---------------------------------------------------------------------------


def _parts(version: str) -> tuple:
    return version_key(version)[1]


@dataclass(frozen=True)
class VersionRange:
    """`v` (v and every v.x), `=v` (exactly v), `lo:hi`, `lo:`, `:hi`, `:` (anything)."""

    low: str | None = None
    high: str | None = None
    exact: bool = False

    def contains(self, version: str) -> bool:
        if self.exact:
            return version == self.low
        key = version_key(version)
        if self.low is not None and key < version_key(self.low):
            return False
        if self.high is not None:
            high = version_key(self.high)
            # Spack's upper bounds are inclusive of the whole series: `:2.4` holds 2.4.1.
            if key > high and not _parts(version)[: len(high[1])] == high[1]:
                return False
        return True


@dataclass(frozen=True)
class VersionList:
    """Any of the listed ranges: `@1.2,2.0:2.4`."""

    ranges: tuple[VersionRange, ...]

    def contains(self, version: str) -> bool:
        return any(r.contains(version) for r in self.ranges)


_VERSION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-+]*")


def parse_versions(text: str, start: int) -> VersionList:
    """`text` is what follows an `@`; `start` is where it begins in the query (for errors)."""
    if not text:
        raise QueryError("a version is missing after @", start - 1, start)
    ranges = []
    offset = start
    for item in text.split(","):
        ranges.append(_version_range(item, offset))
        offset += len(item) + 1
    return VersionList(tuple(ranges))


def _version_range(item: str, start: int) -> VersionRange:
    if not item:
        raise QueryError("an empty version in the list", start, start + 1)
    if item.startswith("="):
        if not _VERSION.fullmatch(item[1:]):
            raise QueryError(f"{item[1:] or 'nothing'} is not a version", start, start + len(item))
        return VersionRange(item[1:], item[1:], exact=True)
    if ":" in item:
        low, _, high = item.partition(":")
        if ":" in high:
            raise QueryError("a range has one ':'", start, start + len(item))
        for part, at in ((low, start), (high, start + len(low) + 1)):
            if part and not _VERSION.fullmatch(part):
                raise QueryError(f"{part} is not a version", at, at + len(part))
        if (
            low
            and high
            and version_key(low) > version_key(high)
            and _parts(low)[: len(_parts(high))] != _parts(high)
        ):
            raise QueryError(
                f"the range {item} is empty: {low} comes after {high}", start, start + len(item)
            )
        return VersionRange(low or None, high or None)
    if not _VERSION.fullmatch(item):
        raise QueryError(f"{item} is not a version", start, start + len(item))
    return VersionRange(item, item)


@dataclass(frozen=True)
class Variant:
    """`+name` / `~name` (value "true" / "false"), `name=a,b` (each of a, b among its values),
    or `name:=a,b` (exactly those values: Spack's exact match of a multi-valued variant)."""

    name: str
    values: frozenset[str]
    exact: bool = False

    def matches(self, variants: dict[str, frozenset[str]]) -> bool:
        """`variants` as variant_values gives them."""
        held = variants.get(self.name)
        return held is not None and self.held_by(held)

    def held_by(self, values: frozenset[str]) -> bool:
        """Whether a spec whose variant has `values` satisfies this one."""
        return values == self.values if self.exact else self.values <= values


def variant_values(variants: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """A spec's variants as name -> values: `+mpi` is mpi=true, `cuda_arch=70,80` two values."""
    out: dict[str, frozenset[str]] = {}
    for variant in variants:
        if variant[:1] in ("+", "~"):
            out[variant[1:]] = frozenset({"true" if variant[0] == "+" else "false"})
        elif "=" in variant:
            name, _, value = variant.partition("=")
            out[name.rstrip(":")] = frozenset(unquoted(value).split(","))
    return out
