"""The search language: Spack's spec syntax (spack-formats.md §3.3) as a filter.

`parse_query("zlib@1.2: %gcc@13 +shared os=ubuntu24.04")` gives a Query: the words that
rank package names, and constraints that every matching spec satisfies (all of them:
tokens are AND-ed). Unspecified fields match anything, as Spack's `intersects` reads them.

No numpy and no index here: the app parses what is typed as it is typed, and a QueryError
says which characters are wrong and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cachetui.index.hashes import HashPrefixError, normalise_hash_prefix
from cachetui.index.query_terms import (
    QueryError,
    Variant,
    VersionList,
    VersionRange,
    parse_versions,
    variant_values,
)
from cachetui.index.query_tokens import FIELD_KEYS, TOKEN, add_key_value, sigil_virtuals

# The terms and the tokens have modules of their own (query_terms.py, query_tokens.py); the
# rest of the app and the tests import them from here, with the Query they make up.
__all__ = [
    "FIELD_KEYS",
    "LEGACY_COMPILER_NAMES",
    "Dependency",
    "NodeConstraint",
    "Query",
    "QueryError",
    "Variant",
    "VersionList",
    "VersionRange",
    "parse_query",
    "parse_versions",
    "variant_values",
]


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

    def take(self, kind: str | None, start: int, end: int) -> None:
        """A token at start:end after this dependency's sigil: it names the dependency (its
        name, or a version right after it), or binds to it."""
        naming = kind == "name" or (kind == "version" and not self.bound and start == self.end)
        if not naming and self.name is not None:  # `gcc@9` names it; `+shared` after it binds to it
            self.bound.append((start, end))
        self.end = end


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
        match = TOKEN.match(text, position)
        if match is None:
            raise QueryError(f"unexpected {text[position]!r}", position, position + 1)
        kind, token, start, end = match.lastgroup, match.group(), match.start(), match.end()
        if kind == "off" and token[0] == "-" and not after_space:
            # Spack reads `-` as "off" only after whitespace: `py-numpy` is a name.
            raise QueryError("a '-' variant needs a space before it (or write ~)", start, end)
        if kind != "space":
            tokens.append(token.strip())
        if kind == "sigil":
            current = _open_dependency(token, start, end, dependencies, last_transitive)
            if not current.direct:
                last_transitive = current
            awaiting_name = True
            position = end
            after_space = token[-1:].isspace()
            continue
        if kind == "name":
            if awaiting_name and current is not root:
                current.name = token
            else:
                words.append(token)
        elif kind != "space":
            _constrain(current, root, kind, token, start, end)
        if kind != "space":
            awaiting_name = False
            if current is not root:
                current.take(kind, start, end)
        after_space = kind == "space"
        position = end
    _check_named(text, dependencies)
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


def _open_dependency(
    sigil: str, start: int, end: int, dependencies: list[_Node], last_transitive: _Node | None
) -> _Node:
    """The dependency a `%` or `^` sigil starts, put where it belongs: a `%` under the last
    `^` dependency (the root's when there is none), a `^` among the root's."""
    direct = sigil[0] == "%"
    node = _Node(direct, sigil_virtuals(sigil), start)
    if direct:
        (last_transitive.children if last_transitive is not None else dependencies).append(node)
    else:
        dependencies.append(node)
    node.end = end
    return node


def _constrain(
    current: _Node, root: _Node, kind: str | None, token: str, start: int, end: int
) -> None:
    """A hash, version, variant or key=value token: a constraint on the node it binds to."""
    if kind == "hash":
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
        target = add_key_value(token, start, current.variants, current.fields)
        if target == "listing" and current is not root:  # stack= and tag=: the binary's
            root.fields.append(current.fields.pop())


def _check_named(text: str, dependencies: list[_Node]) -> None:
    """Every dependency has a name or asks something of its node (`^ +shared` does)."""
    for node in dependencies + [child for parent in dependencies for child in parent.children]:
        if node.name is None and not (node.versions or node.variants or node.fields or node.hashes):
            raise QueryError(
                f"a dependency is missing after {text[node.start]}", node.start, node.end
            )
