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


# -- the query --------------------------------------------------------------------------


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


@dataclass(frozen=True)
class NodeConstraint:
    """What one node of a spec must be: the root (the binary listed) or a dependency."""

    versions: tuple[VersionList, ...] = ()
    variants: tuple[Variant, ...] = ()
    # platform, os, target (and, for the root only, stack and tag) -> values it must have
    fields: tuple[tuple[str, str], ...] = ()
    hash_prefixes: tuple[str, ...] = ()

    @property
    def has_attributes(self) -> bool:
        """Whether it asks for more than a name and versions: what only a binary's own row
        holds (a compiler in a summary is a name and a version, nothing else)."""
        return bool(self.variants or self.fields or self.hash_prefixes)


@dataclass(frozen=True)
class Dependency:
    """`%name ...` (a direct dependency: Spack 1.x writes compilers so) or `^name ...` (any
    dependency in the link/run graph, or a direct build dependency of the root).

    Every token after the name, up to the next `%` or `^`, constrains this dependency, as
    Spack 1.x reads it: `zlib %gcc@9 +shared` asks for a gcc@9 that is +shared.
    """

    direct: bool
    name: str  # "" for `^ +shared`: any dependency
    virtuals: tuple[str, ...] = ()  # `%c,cxx=gcc`: the edge provides c or cxx
    node: NodeConstraint = NodeConstraint()
    dependencies: tuple[Dependency, ...] = ()  # `^openmpi %gcc`: openmpi's direct dependencies
    start: int = field(default=0, compare=False)  # where it is in the typed text
    end: int = field(default=0, compare=False)
    bound: tuple[tuple[int, int], ...] = field(
        default=(), compare=False
    )  # its tokens after the name

    @property
    def versions(self) -> VersionList | None:
        """The first version list asked of it (a compiler's, in a summary)."""
        return self.node.versions[0] if self.node.versions else None

    def matches_compiler(self, compiler: str) -> bool:
        """`compiler` as a summary holds it (`gcc@13.2.0`, `none`): the compiler is the only
        direct dependency a summary names, with a name and a version and nothing else."""
        if self.dependencies or self.node.has_attributes or not self.name:
            return False
        name, _, version = compiler.partition("@")
        if name != self.name and LEGACY_COMPILER_NAMES.get(name) != self.name:
            return False
        return all(bool(version) and v.contains(version) for v in self.node.versions)


# Spack 1.x reads an old compiler name as the package that provides it now.
LEGACY_COMPILER_NAMES = {
    "clang": "llvm",
    "oneapi": "intel-oneapi-compilers",
    "rocmcc": "llvm-amdgpu",
    "intel": "intel-oneapi-compilers-classic",
    "arm": "acfl",
}


@dataclass(frozen=True)
class Query:
    text: str = ""
    words: tuple[str, ...] = ()  # rank package names (fuzzy), as the search box always has
    versions: tuple[VersionList, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
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
    def compilers(self) -> tuple[Dependency, ...]:
        """The direct dependencies asked for (`%gcc@13`): in a summary, its compiler."""
        return tuple(d for d in self.dependencies if d.direct)

    @property
    def root(self) -> NodeConstraint:
        return NodeConstraint(self.versions, self.variants, self.fields, self.hash_prefixes)

    @property
    def has_constraints(self) -> bool:
        return bool(
            self.versions or self.dependencies or self.variants or self.fields or self.hash_prefixes
        )

    def spack_0x_reading(self) -> str | None:
        """The query as Spack 0.x read it: every token bound to a `%` dependency moved before
        that `%`, to the node it belonged to then (`zlib %gcc@9 +shared` is `zlib +shared
        %gcc@9`). None when no token is bound so (the query reads the same either way)."""
        moves = [(dep.start, dep.bound) for dep in _walk(self.dependencies) if dep.bound]
        if not moves:
            return None
        text = self.text
        removed = {span for _, bound in moves for span in bound}
        inserted = {at: " ".join(text[a:b] for a, b in bound) for at, bound in moves}
        pieces, at = [], 0
        for cut in sorted(removed | {(position, position) for position in inserted}):
            pieces.append(text[at : cut[0]])
            if cut[0] == cut[1]:
                pieces.append(f" {inserted[cut[0]]} ")
            at = cut[1]
        pieces.append(text[at:])
        return " ".join("".join(pieces).split())


def _walk(dependencies: tuple[Dependency, ...]):
    for dependency in dependencies:
        if dependency.direct:
            yield dependency
        yield from _walk(dependency.dependencies)


FIELD_KEYS = {
    "platform": "platform",
    "os": "os",
    "operating_system": "os",
    "target": "target",
    "stack": "stack",
    "tag": "tag",
    "kind": "kind",
}
# Properties of a binary's listing, not of a node: they bind to the root wherever they stand.
_LISTING_FIELDS = frozenset({"stack", "tag", "kind"})
_ARCH_KEYS = ("arch", "architecture")
_NAME = r"[A-Za-z0-9_*][A-Za-z0-9_\-.*]*"
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<hash>/+[A-Za-z0-9_]*)
  | (?P<version>@[^\s%^/@~+]*)
  | (?P<sigil>(?:\^|%%?)\s*(?:\[[^\]]*\]\s*)?
        (?:[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*\s*=(?!=)\s*)?)
  | (?P<on>\+\+?[A-Za-z0-9_][A-Za-z0-9_\-.]*)
  | (?P<off>(?:~~?|--?)[A-Za-z0-9_][A-Za-z0-9_\-.]*)
  | (?P<keyvalue>[A-Za-z0-9_][A-Za-z0-9_\-]*(?:==|:=|=)(?:"[^"]*"|'[^']*'|[^\s%^@]*))
  | (?P<name>"""
    + _NAME
    + r""")
    """,
    re.VERBOSE,
)


class _Node:
    """A node being parsed: the root, or a dependency and where its tokens are."""

    def __init__(
        self, direct: bool = False, virtuals: tuple[str, ...] = (), start: int = 0
    ) -> None:
        self.direct, self.virtuals, self.start, self.end = direct, virtuals, start, start
        self.name: str | None = None
        self.versions: list[VersionList] = []
        self.variants: list[Variant] = []
        self.fields: list[tuple[str, str]] = []
        self.hashes: list[str] = []
        self.children: list[_Node] = []
        self.bound: list[tuple[int, int]] = []

    def dependency(self) -> Dependency:
        node = NodeConstraint(
            tuple(self.versions), tuple(self.variants), tuple(self.fields), tuple(self.hashes)
        )
        name = (self.name or "").lower()
        if self.direct:  # Spack 1.x reads `%clang` as the llvm package
            name = LEGACY_COMPILER_NAMES.get(name, name)
        return Dependency(
            self.direct,
            name,
            self.virtuals,
            node,
            tuple(child.dependency() for child in self.children),
            self.start,
            self.end,
            tuple(self.bound),
        )


def parse_query(text: str) -> Query:
    """Parse what the user typed, with Spack 1.x's grammar: `%` starts a direct dependency
    of the root (or of the last `^` dependency), `^` a dependency anywhere, and the tokens
    after either bind to it. Raises QueryError (message, start, end)."""
    words: list[str] = []
    tokens: list[str] = []
    root = _Node()
    dependencies: list[_Node] = []
    current: _Node = root  # where attribute tokens go
    last_transitive: _Node | None = None  # what a `%` attaches to, when not the root
    position = 0
    after_space = True
    awaiting_name = False  # just after a sigil: the next name is the dependency's
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise QueryError(f"unexpected {text[position]!r}", position, position + 1)
        kind, token, start, end = match.lastgroup, match.group(), match.start(), match.end()
        if kind == "off" and token[0] == "-" and not after_space:
            # Spack reads `-` as "off" only after whitespace: `py-numpy` is a name.
            raise QueryError("a '-' variant needs a space before it (or write ~)", start, end)
        if kind != "space":
            tokens.append(token.strip())
        if kind == "sigil":
            direct = token[0] == "%"
            node = _Node(direct, _virtuals(token), start)
            if direct:
                (last_transitive.children if last_transitive is not None else dependencies).append(
                    node
                )
            else:
                dependencies.append(node)
                last_transitive = node
            current, awaiting_name = node, True
            position = node.end = end
            after_space = token[-1:].isspace()
            continue
        if kind == "name":
            if awaiting_name and current is not root:
                current.name = token
            else:
                words.append(token)
        elif kind == "hash":
            try:
                current.hashes.append(normalise_hash_prefix(token))
            except HashPrefixError as why:
                raise QueryError(str(why), start, end) from None
        elif kind == "version":
            current.versions.append(parse_versions(token[1:], start + 1))
        elif kind == "on":
            current.variants.append(Variant(token.lstrip("+"), frozenset({"true"})))
        elif kind == "off":
            current.variants.append(Variant(token.lstrip("~-"), frozenset({"false"})))
        elif kind == "keyvalue":
            target = _key_value(token, start, current.variants, current.fields)
            if target == "listing" and current is not root:  # stack= and tag=: the binary's
                root.fields.append(current.fields.pop())
        if kind != "space":
            awaiting_name = False
            if current is not root:
                naming = kind == "name" or (
                    kind == "version" and not current.bound and start == current.end
                )
                if (
                    not naming and current.name is not None
                ):  # `gcc@9` names it; `+shared` after it binds to it
                    current.bound.append((start, end))
                current.end = end
        after_space = kind == "space"
        position = end
    for node in dependencies + [child for parent in dependencies for child in parent.children]:
        if node.name is None and not (node.versions or node.variants or node.fields or node.hashes):
            raise QueryError(
                f"a dependency is missing after {text[node.start]}", node.start, node.end
            )
    return Query(
        text,
        tuple(words),
        tuple(root.versions),
        tuple(node.dependency() for node in dependencies),
        tuple(root.variants),
        tuple(root.fields),
        tuple(root.hashes),
        tuple(tokens),
    )


def _virtuals(sigil: str) -> tuple[str, ...]:
    """`%c,cxx=`: the virtuals an edge must provide; `%[virtuals=c]` the same."""
    body = sigil.lstrip("^%").strip()
    virtuals: list[str] = []
    if body.startswith("["):
        inside, _, body = body[1:].partition("]")
        for item in inside.split():
            key, _, value = item.partition("=")
            if key == "virtuals":
                virtuals.extend(v for v in value.split(",") if v)
        body = body.strip()
    if body.endswith("="):
        virtuals.extend(v.strip() for v in body[:-1].split(",") if v.strip())
    return tuple(virtuals)


def _field(name: str, value: str, at: int, fields: list[tuple[str, str]]) -> None:
    if name == "target" and (":" in value or "," in value):
        from cachetui.index.targets import TargetRangeError, check_target_range

        try:
            check_target_range(value)
        except TargetRangeError as error:
            raise QueryError(str(error), at, at + len(value)) from None
    fields.append((name, value))


def _key_value(
    token: str, start: int, variants: list[Variant], fields: list[tuple[str, str]]
) -> str:
    """Adds the token's constraint; says which kind it was ("arch", "field", "listing" for
    stack= and tag=, "variant")."""
    key, operator, value = re.split(r"(==|:=|=)", token, maxsplit=1)
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
            raise QueryError(
                "arch is platform-os-target (parts may be empty) or a target", at, at + len(value)
            )
        offset = at
        for name, part in zip(("platform", "os", "target"), parts):
            if part:
                _field(name, part, offset, fields)
            offset += len(part) + 1
        return "arch"
    if lowered in FIELD_KEYS:
        if not value:
            raise QueryError(f"{key}= needs a value", start, start + len(token))
        _field(FIELD_KEYS[lowered], value, at, fields)
        return "listing" if FIELD_KEYS[lowered] in _LISTING_FIELDS else "field"
    if not value:
        raise QueryError(f"{key}= needs a value", start, start + len(token))
    values = value.split(",")
    if "" in values:
        raise QueryError("an empty value in the list", at, at + len(value))
    lowered_values = {v.lower() for v in values}
    if lowered_values <= {"true", "false"} and len(values) == 1:
        values = [values[0].lower()]  # mpi=True is +mpi
    variants.append(Variant(key, frozenset(values), exact=operator == ":="))
    return "variant"
