"""The search language: Spack's spec syntax (spack-formats.md §3.3) as a filter.

`parse_query("zlib@1.2: %gcc@13 +shared os=ubuntu24.04")` gives a Query: the words that
rank package names, and constraints that every matching spec satisfies (all of them:
tokens are AND-ed). Unspecified fields match anything, as Spack's `intersects` reads them.

No numpy and no index here: the app parses what is typed as it is typed, and a QueryError
says which characters are wrong and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cachetui.index.hashes import HashPrefixError, normalise_hash_prefix
from cachetui.index.versions import version_key


class QueryError(ValueError):
    """What is wrong with a query, and where: `start`:`end` index the typed text."""

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(message)
        self.message, self.start, self.end = message, start, max(end, start + 1)

    def pointer(self, text: str) -> str:
        """The query with a caret line under the offending characters (for the CLI)."""
        return f"{text}\n{' ' * self.start}{'^' * (min(self.end, max(len(text), self.start + 1)) - self.start)}"


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
        if low and high and version_key(low) > version_key(high) and _parts(low)[: len(_parts(high))] != _parts(high):
            raise QueryError(f"the range {item} is empty: {low} comes after {high}", start, start + len(item))
        return VersionRange(low or None, high or None)
    if not _VERSION.fullmatch(item):
        raise QueryError(f"{item} is not a version", start, start + len(item))
    return VersionRange(item, item)


# -- the query --------------------------------------------------------------------------


@dataclass(frozen=True)
class Compiler:
    name: str
    versions: VersionList | None = None

    def matches(self, compiler: str) -> bool:
        """`compiler` as the index holds it: `gcc@13.2.0`, `none`."""
        name, _, version = compiler.partition("@")
        if name != self.name:
            return False
        return self.versions is None or (bool(version) and self.versions.contains(version))


@dataclass(frozen=True)
class Variant:
    """`+name` / `~name` (value "true" / "false"), or `name=a,b` (each of a, b among its values)."""

    name: str
    values: frozenset[str]

    def matches(self, variants: dict[str, frozenset[str]]) -> bool:
        """`variants` as variant_values gives them."""
        held = variants.get(self.name)
        return held is not None and self.values <= held


def variant_values(variants: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """A spec's variants as name -> values: `+mpi` is mpi=true, `cuda_arch=70,80` two values."""
    out: dict[str, frozenset[str]] = {}
    for variant in variants:
        if variant[:1] in ("+", "~"):
            out[variant[1:]] = frozenset({"true" if variant[0] == "+" else "false"})
        elif "=" in variant:
            name, _, value = variant.partition("=")
            out[name.rstrip(":")] = frozenset(value.split(","))
    return out


@dataclass(frozen=True)
class Query:
    text: str = ""
    words: tuple[str, ...] = ()  # rank package names (fuzzy), as the search box always has
    versions: tuple[VersionList, ...] = ()
    compilers: tuple[Compiler, ...] = ()
    variants: tuple[Variant, ...] = ()
    # platform, os, target, stack, tag -> values a spec must have (each of them)
    fields: tuple[tuple[str, str], ...] = ()
    hash_prefixes: tuple[str, ...] = ()
    constraint_tokens: tuple[str, ...] = field(default=(), compare=False)

    @property
    def name_text(self) -> str:
        """What ranks package names: the text as typed when it is only names (as the search
        box always had it), else the name words; globs (`py-*`, `*`) are not in it."""
        if not self.has_constraints and not self.globs:
            return self.text
        return " ".join(w for w in self.words if "*" not in w)

    @property
    def globs(self) -> tuple[str, ...]:
        """Name words with `*`: shell-style patterns over whole names (a bare `*` is any)."""
        return tuple(w for w in self.words if "*" in w)

    @property
    def has_constraints(self) -> bool:
        return bool(self.versions or self.compilers or self.variants or self.fields or self.hash_prefixes)


FIELD_KEYS = {"platform": "platform", "os": "os", "operating_system": "os", "target": "target", "stack": "stack", "tag": "tag"}
_ARCH_KEYS = ("arch", "architecture")
_NAME = r"[A-Za-z0-9_*][A-Za-z0-9_\-.*]*"
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<hash>/+[A-Za-z0-9_]*)
  | (?P<version>@[^\s%^/@~+]*)
  | (?P<compiler>%%?(?:\[[^\]]*\]\s*)?(?:[a-z,]+=)?""" + _NAME + r"""(?:@[^\s%^/@~+]*)?)
  | (?P<dep>\^\S*)
  | (?P<on>\+\+?[A-Za-z0-9_][A-Za-z0-9_\-.]*)
  | (?P<off>(?:~~?|--?)[A-Za-z0-9_][A-Za-z0-9_\-.]*)
  | (?P<keyvalue>[A-Za-z0-9_][A-Za-z0-9_\-]*(?:==|:=|=)(?:"[^"]*"|'[^']*'|[^\s%^@]*))
  | (?P<name>""" + _NAME + r""")
    """,
    re.VERBOSE,
)


def parse_query(text: str) -> Query:
    """Parse what the user typed. Raises QueryError (message, start, end)."""
    words: list[str] = []
    versions: list[VersionList] = []
    compilers: list[Compiler] = []
    variants: list[Variant] = []
    fields: list[tuple[str, str]] = []
    hashes: list[str] = []
    tokens: list[str] = []
    position = 0
    after_space = True
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise QueryError(f"unexpected {text[position]!r}", position, position + 1)
        kind, token, start, end = match.lastgroup, match.group(), match.start(), match.end()
        if kind == "off" and token[0] == "-" and not after_space:
            # Spack reads `-` as "off" only after whitespace: `py-numpy` is a name.
            raise QueryError("a '-' variant needs a space before it (or write ~)", start, end)
        if kind != "space":
            tokens.append(token)
        if kind == "name":
            words.append(token)
        elif kind == "hash":
            try:
                hashes.append(normalise_hash_prefix(token))
            except HashPrefixError as why:
                raise QueryError(str(why), start, end) from None
        elif kind == "version":
            versions.append(parse_versions(token[1:], start + 1))
        elif kind == "compiler":
            compilers.append(_compiler(token, start))
        elif kind == "dep":
            raise QueryError("dependencies (^) are not in cache.spack.io summaries", start, end)
        elif kind == "on":
            variants.append(Variant(token.lstrip("+"), frozenset({"true"})))
        elif kind == "off":
            variants.append(Variant(token.lstrip("~-"), frozenset({"false"})))
        elif kind == "keyvalue":
            _key_value(token, start, variants, fields)
        after_space = kind == "space"
        position = end
    return Query(text, tuple(words), tuple(versions), tuple(compilers), tuple(variants), tuple(fields), tuple(hashes), tuple(tokens))


def _field(name: str, value: str, at: int, fields: list[tuple[str, str]]) -> None:
    if name == "target" and ":" in value:
        raise QueryError("target ranges are not supported; name one target", at, at + len(value))
    fields.append((name, value))


def _compiler(token: str, start: int) -> Compiler:
    body = token.lstrip("%")
    if body.startswith("["):  # %[virtuals=c] gcc: the edge's properties say nothing we hold
        body = body[body.index("]") + 1 :].lstrip()
    if "=" in body.split("@")[0]:  # %c,cxx=gcc: the compiler of those languages
        body = body.split("=", 1)[1]
    name, at, version = body.partition("@")
    offset = start + len(token) - len(version)
    return Compiler(name.lower(), parse_versions(version, offset) if at else None)


def _key_value(token: str, start: int, variants: list[Variant], fields: list[tuple[str, str]]) -> None:
    key, value = re.split(r"==|:=|=", token, maxsplit=1)
    at = start + len(token) - len(value)  # where the value starts in the query
    if value[:1] in ("'", '"'):
        if len(value) < 2 or value[-1] != value[0]:
            raise QueryError(f"the quote {value[0]} is not closed", at, at + len(value))
        value, at = value[1:-1], at + 1
    lowered = key.lower()
    if lowered in _ARCH_KEYS:
        parts = value.split("-")
        if len(parts) == 1:  # as Spack reads it: arch=x86_64_v3 names a target
            parts = ["", "", value]
        if len(parts) != 3:
            raise QueryError("arch is platform-os-target (parts may be empty) or a target", at, at + len(value))
        offset = at
        for name, part in zip(("platform", "os", "target"), parts):
            if part:
                _field(name, part, offset, fields)
            offset += len(part) + 1
        return
    if lowered in FIELD_KEYS:
        if not value:
            raise QueryError(f"{key}= needs a value", start, start + len(token))
        _field(FIELD_KEYS[lowered], value, at, fields)
        return
    if not value:
        raise QueryError(f"{key}= needs a value", start, start + len(token))
    values = value.split(",")
    if "" in values:
        raise QueryError("an empty value in the list", at, at + len(value))
    lowered_values = {v.lower() for v in values}
    if lowered_values <= {"true", "false"} and len(values) == 1:
        values = [values[0].lower()]  # mpi=True is +mpi
    variants.append(Variant(key, frozenset(values)))
