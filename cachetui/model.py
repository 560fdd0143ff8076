"""The normalised records every reader produces."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum, IntFlag

# The facets a user can filter on, in the order the sidebar shows them.
FACETS: tuple[str, ...] = ("stack", "os", "target", "compiler", "platform", "tag", "kind")

# What a listed spec is: a binary in a build cache, or a spec in a local install database.
BINARY_KIND, INSTALLED_KIND = "binary", "installed"


class NodeKind(IntEnum):
    """What a node of the dependency graph is. A binary (in a build cache) and an installed
    spec (in a local install database) are listed; the rest are there for edges to resolve.
    Stored as a byte in the on-disk index: the values are part of its format."""

    BINARY = 0
    EXTERNAL = 1
    NOT_IN_CACHE = 2  # a build cache's record with `in_buildcache: false`
    UNRESOLVED = 3  # a hash an edge names that no record holds
    DEPENDENCY_ONLY = 4  # a spec file's dependency
    INSTALLED = 5
    NOT_INSTALLED = 6  # an install database's record with `installed: false`

    @property
    def label(self) -> str:
        """How it is named to people and in `deps --json` (a public contract)."""
        return NODE_KIND_LABELS[self]


NODE_KIND_LABELS = (
    BINARY_KIND,
    "external",
    "not in the build cache",
    "not in this index",
    "a dependency in a spec file",
    INSTALLED_KIND,
    "not installed",
)


class DepType(IntFlag):
    """The types of a dependency edge, as bits (an edge has a set of them)."""

    BUILD = 1
    LINK = 2
    RUN = 4
    TEST = 8


def deptype_names(bits: int) -> list[str]:
    """`["build", "link"]`: the types of an edge, in Spack's order."""
    return [member.name.lower() for member in DepType if bits & member]  # type: ignore[union-attr]


# The virtuals a compiler provides (Spack 1.x: `%c,cxx=gcc`), in the order Spack lists them.
LANGUAGES: tuple[str, ...] = ("c", "cxx", "fortran")

# How a spec without a compiler (Spack 1.x writes "none") is shown and filtered.
NO_COMPILER = "none"


@dataclass(frozen=True, slots=True)
class Spec:
    """One binary in a build cache, as a reader found it."""

    package: str
    version: str
    compiler: str  # "name@version", or NO_COMPILER
    platform: str
    os: str
    target: str
    hash: str  # 32 lower-case base32 characters
    variants: tuple[str, ...]
    stacks: tuple[str, ...]  # sorted, unique
    tag: str
    size: int | None  # bytes; None when unknown
    tarball: str | None
    source: str  # the file it was read from
    kind: str = BINARY_KIND  # a binary in a build cache, or a spec installed (an install database)

    @property
    def arch(self) -> str:
        return f"{self.platform}-{self.os}-{self.target}"

    @property
    def install_command(self) -> str:
        return f"spack install /{self.hash}"


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """Something in a source that could not be loaded as it is."""

    source: str
    message: str
    severity: str = "error"  # "error": data was skipped; "warning": loaded, but something is off


def some_of(values: Sequence[str], most: int = 3, separator: str = ", ") -> str:
    """`a, b, c and 4 more`: the first few of a list, for a problem's message (data can hold
    thousands of bad records)."""
    more = f" and {len(values) - most} more" if len(values) > most else ""
    return separator.join(values[:most]) + more


def normalise_compiler(text: str | None) -> str:
    """`gcc@=11.4.0` and `gcc@11.4.0` are the same compiler; `none` means no compiler."""
    if text is None:
        return NO_COMPILER
    text = text.strip()
    if not text or text == NO_COMPILER:
        return NO_COMPILER
    return text.replace("@=", "@", 1)


# Compiler flags ride in a spec's variant strings (`cflags="-O2 -g"`), as Spack writes them.
FLAG_KEYS = ("cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs")


def split_flags(variants: Sequence[str]) -> tuple[list[str], list[str]]:
    """(variants, compiler flags) of a spec's variant strings."""
    flags = [v for v in variants if v.split("=", 1)[0] in FLAG_KEYS]
    return [v for v in variants if v.split("=", 1)[0] not in FLAG_KEYS], flags


@dataclass(frozen=True, slots=True)
class EnvironmentSpec:
    """One concrete spec of a user's environment (a spack.lock, a spec file, an install
    database), its fields normalised exactly as the readers normalise a cache's records, so
    that the two compare field by field."""

    hash: str  # the DAG hash: 32 lower-case base32 characters (what a build cache is keyed by)
    name: str
    version: str
    compiler: str  # "name@version", or NO_COMPILER
    platform: str
    os: str
    target: str
    variants: tuple[str, ...]  # as Index.variants gives a row's (the same reader code)
    dependencies: tuple[tuple[str, str, int], ...]  # (name, DAG hash, DepType bits) each edge
    root: bool = False  # a root of the environment (a spec file's first node; explicit)
    external: bool = False  # an external: never from a cache

    @property
    def arch(self) -> str:
        return f"{self.platform}-{self.os}-{self.target}"


@dataclass
class Environment:
    """What a user's environment holds: every concrete spec, roots marked."""

    path: str  # as the user named it (a file or an environment directory)
    source: str  # the file read (the spack.lock inside a directory)
    format: str  # e.g. "spack.lock v6", "spec file v5", "install database v8"
    specs: list[EnvironmentSpec]
    problems: list[LoadProblem]  # warnings (the file still gave specs)


class EnvironmentUnreadable(Exception):
    """An environment that gives no specs: the message names the file and the problem."""
