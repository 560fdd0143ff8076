"""What the database reader hands on: one file's nodes and edges in columns (DatabaseFile),
and the codes those columns hold: what a node is, its dependency types, where its compiler
came from."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cachetui.model import NODE_KIND_LABELS, DepType, LoadProblem, NodeKind
from cachetui.sources.nodes import NODE_COLUMNS, RECORD_RANKS, NodeColumns, coded

# Dependency types and node kinds as the readers and the array code use them: model.DepType
# and model.NodeKind as plain ints. (An enum member in a numpy operation is not a "weak"
# Python int: `edge_types & LINK` came out int64, eight times the bytes of the uint8
# column, and a `^` query over a million specs 10 ms slower.)
BUILD, LINK, RUN, TEST = (int(member) for member in DepType)
DEPTYPE_BITS = {name.lower(): int(member) for name, member in DepType.__members__.items()}
BINARY, EXTERNAL, NOT_IN_CACHE, UNRESOLVED, DEPENDENCY_ONLY, INSTALLED, NOT_INSTALLED = (
    int(member) for member in NodeKind
)
NODE_KINDS = NODE_KIND_LABELS
LISTED_KINDS = (BINARY, INSTALLED)

# Where a spec's compiler came from.
COMPILER_SOURCES = ("none", "legacy-field", "dependency", "annotation")


@dataclass
class DatabaseFile:
    """Every record of one database, normalised, in columns (a node a position).

    Nodes are the records, then the hashes that edges name but no record holds. Columns
    hold one value per node; edges point from a node position to a node position.
    """

    db_version: str
    hashes: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    compilers: list[str] = field(default_factory=list)
    compiler_sources: array = field(default_factory=lambda: array("B"))
    platforms: list[str] = field(default_factory=list)
    oss: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    variants: list[tuple[str, ...]] = field(default_factory=list)
    kinds: array = field(default_factory=lambda: array("B"))
    external_paths: dict[int, str] = field(default_factory=dict)
    edge_from: array = field(default_factory=lambda: array("i"))
    edge_to: array = field(default_factory=lambda: array("i"))
    edge_types: array = field(default_factory=lambda: array("B"))
    edge_virtuals: list[tuple[str, ...]] = field(default_factory=list)
    sizes: dict[int, int] = field(default_factory=dict)  # node -> bytes, where a spec file says
    # The node a c/cxx/fortran build edge leads to (the compiler), -1 where none.
    compiler_targets: array = field(default_factory=lambda: array("i"))
    problems: list[LoadProblem] = field(default_factory=list)
    tag: str | None = None  # where the file itself names one (an older cache.spack.io page)
    claimed: list[str] = field(
        default_factory=list
    )  # spec files an older page read: not sources of their own

    @property
    def listed(self) -> list[int]:
        """The positions of the binaries (what the cache offers) and of installed specs."""
        return [i for i, kind in enumerate(self.kinds) if kind in LISTED_KINDS]

    def to_columns(self) -> NodeColumns:
        """The nodes and edges in arrays, as the graph is built from them."""
        n = len(self.hashes)
        out = NodeColumns(
            hashes="".join(self.hashes).encode("ascii"),
            kinds=array("B", self.kinds),
            compiler_sources=array("B", self.compiler_sources),
            compiler_targets=array("i", self.compiler_targets)
            if len(self.compiler_targets) == n
            else array("i", [-1]) * n,
            external_paths=dict(self.external_paths),
            sizes=dict(self.sizes),
            edge_from=array("i", self.edge_from),
            edge_to=array("i", self.edge_to),
            edge_types=array("B", self.edge_types),
        )
        columns: tuple[Sequence[Any], ...] = (  # in NODE_COLUMNS order
            self.names,
            self.versions,
            self.compilers,
            self.platforms,
            self.oss,
            self.targets,
            self.variants,
        )
        for column, values in zip(NODE_COLUMNS, columns):
            out.tables[column], out.codes[column] = coded(values)
        out.virtual_sets, edge_virtuals = coded([(), *self.edge_virtuals])
        del edge_virtuals[0]  # () first: code 0 is "no virtuals"
        out.edge_virtuals = edge_virtuals
        return out

    def extend(self, other: DatabaseFile) -> None:
        """Add another file's nodes and edges (a hash already here keeps its first record;
        one that was only named by an edge takes the record)."""
        position = dict(zip(self.hashes, range(len(self.hashes))))
        mapped = []
        taken = []  # (my node, its record's position in other): their compiler edges map later
        columns = (
            "hashes",
            "names",
            "versions",
            "compilers",
            "platforms",
            "oss",
            "targets",
            "variants",
        )
        self.compiler_targets.extend(
            array("i", [-1]) * (len(self.hashes) - len(self.compiler_targets))
        )
        for at, hash_ in enumerate(other.hashes):
            mine = position.get(hash_)
            if mine is None:
                mine = position[hash_] = len(self.hashes)
                for column in columns:
                    getattr(self, column).append(getattr(other, column)[at])
                self.compiler_sources.append(other.compiler_sources[at])
                self.kinds.append(other.kinds[at])
                self.compiler_targets.append(-1)
                taken.append((mine, at))
            elif record_rank(other.kinds[at]) > record_rank(self.kinds[mine]):
                # A better record of the same hash: a binary over a spec file's mere
                # dependency, anything over a hash only an edge named.
                for column in columns[1:]:
                    getattr(self, column)[mine] = getattr(other, column)[at]
                self.compiler_sources[mine] = other.compiler_sources[at]
                self.kinds[mine] = other.kinds[at]
                taken.append((mine, at))
            mapped.append(mine)
        if len(other.compiler_targets) == len(other.hashes):
            for mine, at in taken:
                if other.compiler_targets[at] >= 0:
                    self.compiler_targets[mine] = mapped[other.compiler_targets[at]]
        for at, mine in enumerate(mapped):  # every record's, not only the last one's
            if at in other.external_paths:
                self.external_paths.setdefault(mine, other.external_paths[at])
            if at in other.sizes:
                self.sizes.setdefault(mine, other.sizes[at])
        have_edges = set(self.edge_from)
        for i, at in enumerate(other.edge_from):
            if mapped[at] in have_edges:
                continue  # this node's edges came with its first record
            self.edge_from.append(mapped[at])
            self.edge_to.append(mapped[other.edge_to[i]])
            self.edge_types.append(other.edge_types[i])
            self.edge_virtuals.append(other.edge_virtuals[i])
        self.problems.extend(other.problems)


def record_rank(kind: int) -> int:
    """How much a record of this kind tells: a binary most, a hash an edge named least."""
    return RECORD_RANKS[kind] if 0 <= kind < len(RECORD_RANKS) else 0
