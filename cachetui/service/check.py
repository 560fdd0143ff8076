"""Will an environment install from the cache, and where not, why not.

A spec hits when its DAG hash is a binary of the cache (Spack reuses a binary only then).
For a miss, the nearest cached specs of the same package are found among that package's
rows (the index keeps a package's rows together: no scan of the whole cache per miss),
ranked by how little differs: first their own fields (version, compiler, platform, os,
target, each variant), then their dependencies. A dependency whose hash differs is followed
down the environment's graph and the cache's to the first spec that differs in its own
fields, and named: "zlib-ng: +shared vs ~shared".
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from cachetui.model import (
    BINARY_KIND,
    DepType,
    Environment,
    EnvironmentSpec,
)

if TYPE_CHECKING:
    import numpy as np

    from cachetui.index.graph import Graph
    from cachetui.index.store import Index

Status = Literal["hit", "miss", "external"]

# The own fields of a spec compared, in the order differences are listed.
OWN_FIELDS = ("version", "compiler", "platform", "os", "target")
NEAREST = 3  # nearest cached specs listed a miss
# Of a package's rows, the best this many by their own fields (and no more than tie with the
# NEAREST-th) have their direct dependencies compared too: enough to rank the top few by both.
_DEPENDENCY_CANDIDATES = 12
_LINK_RUN = int(DepType.LINK | DepType.RUN)


@dataclass(frozen=True)
class Difference:
    """One way a cached spec differs from the environment's: `field` is version, compiler,
    platform, os, target, `variant:<name>` or `dependency:<name>` (a public contract of
    `check --json`). None: the side has no such variant or dependency."""

    field: str
    yours: str | None
    cache: str | None
    path: tuple[str, ...] = ()  # a dependency's: the names from the direct dependency down

    @property
    def is_dependency(self) -> bool:
        return self.field.startswith("dependency:")


@dataclass(frozen=True)
class Nearest:
    """A cached spec of the same package as a miss, and what differs."""

    row: int
    hash: str
    name: str
    version: str
    differences: tuple[Difference, ...]


@dataclass(frozen=True)
class SpecCheck:
    spec: EnvironmentSpec
    status: Status
    rows: tuple[int, ...] = ()  # a hit's rows: the binary in each tag that holds it
    nearest: tuple[Nearest, ...] = ()


@dataclass
class CheckReport:
    environment: Environment
    checks: list[SpecCheck]
    roots_covered: int
    download_bytes: int  # of the hits whose size is known
    sizes_known: int  # how many hits have a known size
    by_hash: dict[str, SpecCheck] = field(default_factory=dict)

    def count(self, status: Status) -> int:
        return sum(1 for c in self.checks if c.status == status)

    @property
    def roots(self) -> int:
        return sum(1 for c in self.checks if c.spec.root)

    @property
    def all_hit(self) -> bool:
        return not any(c.status == "miss" for c in self.checks)

    def hit_rows(self) -> list[int]:
        return [row for c in self.checks for row in c.rows]

    def worst_first(self) -> list[int]:
        """Positions of the checks, misses first, then hits, then externals (each in the
        environment's order): what people read first."""
        order = {"miss": 0, "hit": 1, "external": 2}
        return sorted(range(len(self.checks)), key=lambda at: order[self.checks[at].status])


def check_environment(index: Index, environment: Environment) -> CheckReport:
    """Every spec of `environment` against the cache in `index`."""
    checker = _Checker(index, environment)
    checks = [checker.check(spec) for spec in environment.specs]
    by_hash = {c.spec.hash: c for c in checks}
    sizes = [index.size(c.rows[0]) for c in checks if c.rows]
    known = [s for s in sizes if s is not None]
    covered = sum(1 for c in checks if c.spec.root and _wholly_cached(c.spec, by_hash))
    return CheckReport(environment, checks, covered, sum(known), len(known), by_hash)


def _wholly_cached(root: EnvironmentSpec, by_hash: dict[str, SpecCheck]) -> bool:
    """Whether `root` and everything it links or runs with comes from the cache (an
    external is the system's; build-only dependencies are not installed with a binary)."""
    seen: set[str] = set()
    todo = [root.hash]
    while todo:
        hash_ = todo.pop()
        if hash_ in seen:
            continue
        seen.add(hash_)
        check = by_hash.get(hash_)
        if check is None or check.status == "miss":
            return False
        if check.status == "hit":
            todo.extend(h for _, h, bits in check.spec.dependencies if bits & _LINK_RUN)
    return True


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


def variant_differences(yours: Sequence[str], cache: Sequence[str]) -> list[Difference]:
    mine, theirs = variant_map(yours), variant_map(cache)
    return [
        Difference(f"variant:{name}", mine.get(name), theirs.get(name))
        for name in sorted(mine.keys() | theirs.keys())
        if mine.get(name) != theirs.get(name)
    ]


@dataclass(frozen=True)
class _Fields:
    """A spec's own fields, on either side (None: the cache does not say)."""

    version: str | None
    compiler: str | None
    platform: str | None
    os: str | None
    target: str | None
    variants: tuple[str, ...] | None

    def differences(self, other: _Fields) -> list[Difference]:
        if self == other:  # (most dependencies compared: the walk only passes through them)
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


def _fields_of_spec(spec: EnvironmentSpec) -> _Fields:
    return _Fields(spec.version, spec.compiler, spec.platform, spec.os, spec.target, spec.variants)


class _Checker:
    """Checks the specs of one environment against one index. What several misses share
    (a spec's fields, a variant set read, a pair of dependencies compared) is worked out
    once: the misses of an environment mostly differ by the same few dependencies."""

    def __init__(self, index: Index, environment: Environment) -> None:
        self.index = index
        self.specs = {s.hash: s for s in environment.specs}
        self._graph: Graph | None = None
        self._graph_asked = False
        kinds = list(index.distinct_values("kind"))  # the code of `binary`; -1: no binary
        self._binary_code = kinds.index(BINARY_KIND) if BINARY_KIND in kinds else -1
        self._codes: dict[str, dict[str | None, int]] = {}  # column -> value -> code
        self._variant_maps: dict[int, dict[str, str]] = {}  # variant set code -> by name
        self._row_fields: dict[int, _Fields] = {}
        self._node_fields: dict[int, _Fields] = {}
        self._node_rows: np.ndarray | None = None  # graph node -> its first row, -1: none
        self._below: dict[tuple[str, int], tuple[Difference, ...]] = {}
        self._my_edges: dict[str, dict[str, tuple[str, bytes]]] = {}
        self._my_fields: dict[str, _Fields] = {}
        self._edges_compared: dict[tuple[str, int], list[tuple[str, str | None, int | None]]] = {}
        self._hash_array: np.ndarray | None = None  # the graph's node hashes, S32
        self._table: np.ndarray | None = None  # see _own_table

    @property
    def graph(self) -> Graph | None:
        """The cache's dependency graph, read when a miss first needs it (None: the cache
        holds no dependencies, as a cache.spack.io summary)."""
        if not self._graph_asked:
            self._graph_asked = True
            graph = self.index.graph
            self._graph = graph if graph else None
        return self._graph

    def check(self, spec: EnvironmentSpec) -> SpecCheck:
        if spec.external:
            return SpecCheck(spec, "external")
        rows = self._binary_rows(spec.hash)
        if rows:
            return SpecCheck(spec, "hit", tuple(rows))
        return SpecCheck(spec, "miss", nearest=tuple(self.nearest(spec)))

    def _binary_rows(self, hash_: str) -> list[int]:
        index = self.index
        return [
            row
            for row in index.lookup_hash(hash_)
            if index.hashes[row] == hash_ and index.field("kind", row) == BINARY_KIND
        ]

    def package_rows(self, name: str) -> range:
        """The rows of package `name` (empty when the cache has none)."""
        packages = self.index.packages
        at = bisect.bisect_left(packages, name)
        if at < len(packages) and packages[at] == name:
            return self.index.package_range(at)
        return range(0)

    def nearest(self, spec: EnvironmentSpec) -> list[Nearest]:
        """The cached binaries of the same package nearest to `spec`: fewest own differences
        first, then fewest dependency differences; one row a hash."""
        index = self.index
        candidates: list[tuple[int, int]] = []  # (own differences, row)
        seen: set[str] = set()
        for own, row in self._by_own_differences(spec):
            hash_ = index.hashes[row]
            if hash_ in seen:
                continue
            if len(candidates) >= NEAREST and own > candidates[NEAREST - 1][0]:
                break  # more own differences than the first few: it cannot rank before them
            seen.add(hash_)
            candidates.append((own, row))
            if len(candidates) == _DEPENDENCY_CANDIDATES:
                break
        # Ties on their own fields are broken by how many direct dependencies differ; only
        # the ones kept are followed down (a walk costs far more than a count).
        ranked = sorted(candidates, key=lambda c: (c[0], self._differing_direct(spec, c[1]), c[1]))
        mine = _fields_of_spec(spec)
        return [
            Nearest(
                row,
                index.hashes[row],
                spec.name,
                index.field("version", row),
                tuple(
                    mine.differences(self.row_fields(row)) + self.dependency_differences(spec, row)
                ),
            )
            for _, row in ranked[:NEAREST]
        ]

    def _differing_direct(self, spec: EnvironmentSpec, row: int) -> int:
        """How many direct dependencies of `spec` and of `row` differ (0 without a graph)."""
        graph = self.graph
        node = graph.node_of_row(row) if graph is not None else None
        return 0 if graph is None or node is None else len(self._differing_edges(graph, spec, node))

    def _by_own_differences(self, spec: EnvironmentSpec) -> Iterator[tuple[int, int]]:
        """(own differences, row) for each binary row of `spec`'s package, fewest first (then
        in row order). The package's rows are one slice of a table of the compared codes,
        compared with `spec`'s as arrays; each distinct variant set is compared once."""
        import numpy as np

        rows = self.package_rows(spec.name)
        if not rows:
            return
        block = self._own_table()[rows.start : rows.stop]
        binary = block[:, -1] == self._binary_code
        offsets = np.arange(len(block)) if binary.all() else np.flatnonzero(binary)
        if not len(offsets):
            return
        block = block[offsets] if len(offsets) < len(binary) else block
        mine = np.array([self._code_of(c, getattr(spec, c)) for c in OWN_FIELDS])
        counts = np.count_nonzero(block[:, : len(OWN_FIELDS)] != mine, axis=1)
        sets, first, inverse = np.unique(block[:, -2], return_index=True, return_inverse=True)
        my_variants = variant_map(spec.variants)
        distances = np.array(
            [self._variant_distance(my_variants, rows.start + int(offsets[f])) for f in first]
        )
        counts += distances[inverse.reshape(-1)]
        order = np.argsort(counts, kind="stable")
        yield from zip(counts[order].tolist(), (rows.start + offsets[order]).tolist())

    def _own_table(self) -> np.ndarray:
        """A row's codes of OWN_FIELDS, its variant set and its kind, one row a row: built
        when the first miss asks (a few ms at a million specs), then sliced per package."""
        if self._table is None:
            import numpy as np

            codes = self.index.parts.codes
            self._table = np.stack(
                [codes[c] for c in (*OWN_FIELDS, "variantset", "kind")], axis=1
            ).astype(np.int32)
        return self._table

    def _code_of(self, column: str, value: str) -> int:
        """The code of `value` in `column`; -1 where no row has it."""
        table = self._codes.get(column)
        if table is None:
            values = self.index.distinct_values(column)
            table = self._codes[column] = {v: code for code, v in enumerate(values)}
        return table.get(value, -1)

    def _variant_distance(self, mine: dict[str, str], row: int) -> int:
        """How many variants differ between `mine` and the row's (its set read once)."""
        code = int(self.index.parts.codes["variantset"][row])
        theirs = self._variant_maps.get(code)
        if theirs is None:
            theirs = self._variant_maps[code] = variant_map(self.index.variants(row))
        return sum(1 for name in mine.keys() | theirs.keys() if mine.get(name) != theirs.get(name))

    def row_fields(self, row: int) -> _Fields:
        fields = self._row_fields.get(row)
        if fields is None:
            f = self.index.field
            fields = self._row_fields[row] = _Fields(
                f("version", row),
                f("compiler", row),
                f("platform", row),
                f("os", row),
                f("target", row),
                self.index.variants(row),
            )
        return fields

    def node_fields(self, graph: Graph, node: int) -> _Fields:
        """A cache graph node's own fields: a binary's from its row, else what the graph
        knows (an external's or a spec not in the cache: version, compiler)."""
        fields = self._node_fields.get(node)
        if fields is None:
            row = self._row_of_node(graph, node)
            fields = self._node_fields[node] = (
                self.row_fields(row)
                if row >= 0
                else _Fields(graph.version(node), graph.compiler(node), None, None, None, None)
            )
        return fields

    def _row_of_node(self, graph: Graph, node: int) -> int:
        if self._node_rows is None:
            import numpy as np

            row_nodes = graph.parts.row_nodes
            rows = np.flatnonzero(row_nodes >= 0)[::-1]  # the first row of a node wins
            self._node_rows = np.full(graph.parts.n_nodes, -1, dtype=np.int64)
            self._node_rows[row_nodes[rows]] = rows
        return int(self._node_rows[node])

    # -- dependencies ---------------------------------------------------------------------

    def dependency_differences(self, spec: EnvironmentSpec, row: int) -> list[Difference]:
        """The dependencies of `spec` and of the cached `row` that differ, each followed down
        to the first spec that differs in its own fields. None where the cache holds no
        dependencies."""
        graph = self.graph
        node = graph.node_of_row(row) if graph is not None else None
        if graph is None or node is None:
            return []
        out: list[Difference] = []
        named: set[str] = set()
        compiler = spec.compiler.split("@", 1)[0]
        compiler_differs = self.index.field("compiler", row) != spec.compiler
        for name, mine, theirs in self._differing_edges(graph, spec, node):
            if name == compiler and compiler_differs:
                continue  # already the compiler's difference
            for difference in self._differing(graph, name, mine, theirs):
                if difference.field not in named:
                    named.add(difference.field)
                    out.append(difference)
        return out

    def _differing_edges(
        self, graph: Graph, spec: EnvironmentSpec, node: int
    ) -> list[tuple[str, str | None, int | None]]:
        """(name, your hash, the cache's node) of each dependency whose hashes differ."""
        found = self._edges_compared.get((spec.hash, node))
        if found is None:
            found = self._edges_compared[(spec.hash, node)] = self._compare_edges(graph, spec, node)
        return found

    def _compare_edges(
        self, graph: Graph, spec: EnvironmentSpec, node: int
    ) -> list[tuple[str, str | None, int | None]]:
        parts = graph.parts
        start, end = int(parts.edge_starts[node]), int(parts.edge_starts[node + 1])
        theirs = {
            parts.names[parts.name_codes[target]]: target
            for target in parts.edge_to[start:end].tolist()
        }
        mine = {name: hash_ for name, hash_, _ in spec.dependencies}
        return [
            (name, mine.get(name), theirs.get(name))
            for name in sorted(mine.keys() | theirs.keys())
            if name not in mine or name not in theirs or graph.hash(theirs[name]) != mine[name]
        ]

    def _differing(
        self, graph: Graph, name: str, mine: str | None, theirs: int | None
    ) -> tuple[Difference, ...]:
        """The first specs, going down from the dependency `name` (your hash, the cache's
        node), that differ in their own fields; each pair compared once an environment."""
        my_spec = self.specs.get(mine) if mine is not None else None
        if my_spec is None or theirs is None:
            return (
                Difference(
                    f"dependency:{name}",
                    _spec_text(my_spec, mine),
                    _node_text(graph, theirs),
                    (name,),
                ),
            )
        key = (my_spec.hash, theirs)
        found = self._below.get(key)
        if found is None:
            self._below[key] = ()  # a cycle back to this pair adds nothing
            found = self._below[key] = tuple(self._compare(graph, name, my_spec, theirs))
        return found

    def _compare(
        self, graph: Graph, name: str, my_spec: EnvironmentSpec, theirs: int
    ) -> list[Difference]:
        fields = self._my_fields.get(my_spec.hash)
        if fields is None:
            fields = self._my_fields[my_spec.hash] = _fields_of_spec(my_spec)
        own = fields.differences(self.node_fields(graph, theirs))
        field_name = f"dependency:{name}"
        if own:
            return [
                Difference(
                    field_name,
                    " ".join(_side_text(d.field, d.yours) for d in own),
                    " ".join(_side_text(d.field, d.cache) for d in own),
                    (name,),
                )
            ]
        # Each spec that differs is named once, by the first way down to it: several ways
        # often lead to one (a rebuilt library below several others), and the report names
        # a dependency once anyway.
        found: dict[str, Difference] = {}
        for below, my_hash, their_node in self._differing_edges(graph, my_spec, theirs):
            for d in self._differing(graph, below, my_hash, their_node):
                found.setdefault(d.field, d)
        out = [Difference(d.field, d.yours, d.cache, (name, *d.path)) for d in found.values()]
        # The same fields and nothing below that differs: only the hashes tell them apart.
        return out or [
            Difference(field_name, f"/{my_spec.hash[:7]}", f"/{graph.hash(theirs)[:7]}", (name,))
        ]


def _side_text(field_name: str, value: str | None) -> str:
    """One side of a difference in a dependency's own fields, as a spec token."""
    if value is None:
        return f"no {field_name.removeprefix('variant:')}"
    if field_name == "version":
        return f"@{value}"
    if field_name == "compiler":
        return f"%{value}"
    if field_name in ("platform", "os", "target"):
        return f"{field_name}={value}"
    return value


def _spec_text(spec: EnvironmentSpec | None, hash_: str | None) -> str | None:
    if hash_ is None:
        return None
    return f"{spec.name}@{spec.version}" if spec is not None else f"/{hash_[:7]}"


def _node_text(graph: Graph, node: int | None) -> str | None:
    return None if node is None else f"{graph.name(node)}@{graph.version(node)}"


# The environment facet (`cachetui --env`): its values, in the sidebar's order. A public
# contract, as every facet value is (the palette's `Filter: environment=hits`).
ENVIRONMENT_FACET = "environment"
IN_ENVIRONMENT, HITS, MISSES = "in environment", "hits", "misses"


def with_environment_facet(index: Index, report: CheckReport) -> Index:
    """`index` with the environment facet: `in environment`, every cached spec of a package
    the environment holds; `hits`, the environment's own specs; `misses`, the cached specs
    of the packages whose spec in the environment missed (the nearest ones among them)."""
    import numpy as np

    by_name = {name: at for at, name in enumerate(index.packages)}
    packages = np.zeros(index.n_packages, dtype=bool)
    missed = np.zeros(index.n_packages, dtype=bool)
    for check in report.checks:
        package = by_name.get(check.spec.name)
        if package is not None and check.status != "external":
            packages[package] = True
            missed[package] |= check.status == "miss"
    hits = np.zeros(index.n_specs, dtype=bool)
    hits[report.hit_rows()] = True
    in_environment = np.repeat(packages, index.sizes_array)
    misses = np.repeat(missed, index.sizes_array) & ~hits
    return index.with_facet(
        ENVIRONMENT_FACET, [IN_ENVIRONMENT, HITS, MISSES], [in_environment, hits, misses]
    )
