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
from collections import deque
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
    from cachetui.index.graph import Graph
    from cachetui.index.store import Index

Status = Literal["hit", "miss", "external"]

# The own fields of a spec compared, in the order differences are listed.
OWN_FIELDS = ("version", "compiler", "platform", "os", "target")
NEAREST = 3  # nearest cached specs listed a miss
# Of a package's rows, the best this many by their own fields have their dependencies
# compared too (which needs the graph): enough to rank the top few by both.
_DEPENDENCY_CANDIDATES = 12
_LINK_RUN = int(DepType.LINK | DepType.RUN)
_COMPARED_COLUMNS = (*OWN_FIELDS, "variantset")


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
        out = [
            Difference(name, mine, theirs)
            for name, mine, theirs in (
                (name, getattr(self, name), getattr(other, name)) for name in OWN_FIELDS
            )
            if mine is not None and theirs is not None and mine != theirs
        ]
        if self.variants is not None and other.variants is not None:
            out += variant_differences(self.variants, other.variants)
        return out


def _fields_of_spec(spec: EnvironmentSpec) -> _Fields:
    return _Fields(spec.version, spec.compiler, spec.platform, spec.os, spec.target, spec.variants)


class _Checker:
    def __init__(self, index: Index, environment: Environment) -> None:
        self.index = index
        self.specs = {s.hash: s for s in environment.specs}
        self._graph: Graph | None = None
        self._graph_asked = False
        kinds = list(index.distinct_values("kind"))  # the code of `binary`; -1: no binary
        self._binary_code = kinds.index(BINARY_KIND) if BINARY_KIND in kinds else -1

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
        candidates: list[tuple[int, int, list[Difference]]] = []
        seen: set[str] = set()
        for row, differences in self._by_own_differences(spec):
            hash_ = index.hashes[row]
            if hash_ not in seen:
                seen.add(hash_)
                candidates.append((len(differences), row, differences))
                if len(candidates) == _DEPENDENCY_CANDIDATES:
                    break
        ranked = []
        for own, row, differences in candidates:
            dependencies = self.dependency_differences(spec, row)
            ranked.append((own, len(dependencies), row, differences + dependencies))
        ranked.sort(key=lambda item: item[:3])
        return [
            Nearest(
                row, index.hashes[row], spec.name, index.field("version", row), tuple(differences)
            )
            for _, _, row, differences in ranked[:NEAREST]
        ]

    def _by_own_differences(self, spec: EnvironmentSpec) -> Iterator[tuple[int, list[Difference]]]:
        """The binary rows of `spec`'s package, fewest own differences first (then in row
        order), each with them. The package's rows are one slice of the index's columns:
        each distinct combination of codes is compared once, however many rows share it."""
        import numpy as np

        index = self.index
        rows = self.package_rows(spec.name)
        if not rows:
            return
        codes = index.parts.codes
        window = slice(rows.start, rows.stop)
        binary = codes["kind"][window] == self._binary_code
        offsets = np.flatnonzero(binary)
        if not len(offsets):
            return
        table = np.stack([codes[c][window][binary] for c in _COMPARED_COLUMNS], axis=1)
        combos, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
        mine = _fields_of_spec(spec)
        found = [mine.differences(self.row_fields(rows.start + int(offsets[f]))) for f in first]
        order = sorted(range(len(combos)), key=lambda c: len(found[c]))
        inverse = inverse.reshape(-1)
        for combo in order:
            for offset in offsets[inverse == combo].tolist():
                yield rows.start + offset, found[combo]

    def row_fields(self, row: int) -> _Fields:
        f = self.index.field
        return _Fields(
            f("version", row),
            f("compiler", row),
            f("platform", row),
            f("os", row),
            f("target", row),
            self.index.variants(row),
        )

    def node_fields(self, node: int) -> _Fields:
        """A cache graph node's own fields: a binary's from its row, else what the graph
        knows (an external's or a spec not in the cache: name, version, compiler)."""
        graph = self.graph
        assert graph is not None
        rows = self.index.lookup_hash(graph.hash(node))
        if rows:
            return self.row_fields(rows[0])
        return _Fields(graph.version(node), graph.compiler(node), None, None, None, None)

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
        theirs = {d.name: (d.hash, d.node) for d in graph.dependencies(node)}
        mine = {name: hash_ for name, hash_, _ in spec.dependencies}
        for name in sorted(mine.keys() | theirs.keys()):
            if mine.get(name) == theirs.get(name, (None,))[0]:
                continue
            if name == compiler and self.index.field("compiler", row) != spec.compiler:
                continue  # already the compiler's difference
            for difference in self._first_differing(name, mine.get(name), theirs.get(name)):
                if difference.field not in named:
                    named.add(difference.field)
                    out.append(difference)
        return out

    def _first_differing(
        self, name: str, yours: str | None, cache: tuple[str, int] | None
    ) -> list[Difference]:
        """The first specs, going down from the dependency `name` (your hash; the cache's
        hash and node), that differ in their own fields. Breadth first, each pair once."""
        graph = self.graph
        assert graph is not None
        found: list[Difference] = []
        todo: deque[tuple[tuple[str, ...], str | None, tuple[str, int] | None]] = deque(
            [((name,), yours, cache)]
        )
        seen: set[tuple[str | None, int | None]] = set()
        while todo:
            path, mine_hash, theirs_at = todo.popleft()
            their_hash, their_node = theirs_at if theirs_at is not None else (None, None)
            if (mine_hash, their_node) in seen:
                continue
            seen.add((mine_hash, their_node))
            dependency = path[-1]
            my_spec = self.specs.get(mine_hash) if mine_hash else None
            if my_spec is None or their_node is None:
                found.append(
                    Difference(
                        f"dependency:{dependency}",
                        _spec_text(my_spec, mine_hash),
                        _node_text(graph, their_node, their_hash),
                        path,
                    )
                )
                continue
            own = _fields_of_spec(my_spec).differences(self.node_fields(their_node))
            if own:
                found.append(
                    Difference(
                        f"dependency:{dependency}",
                        " ".join(_side_text(d.field, d.yours) for d in own),
                        " ".join(_side_text(d.field, d.cache) for d in own),
                        path,
                    )
                )
                continue
            theirs = {d.name: (d.hash, d.node) for d in graph.dependencies(their_node)}
            mine = {n: h for n, h, _ in my_spec.dependencies}
            below = [
                (path + (n,), mine.get(n), theirs.get(n))
                for n in sorted(mine.keys() | theirs.keys())
                if mine.get(n) != theirs.get(n, (None,))[0]
            ]
            if not below:  # the same fields, the same dependencies: only the hash tells
                found.append(
                    Difference(
                        f"dependency:{dependency}",
                        f"/{my_spec.hash[:7]}",
                        f"/{graph.hash(their_node)[:7]}",
                        path,
                    )
                )
            todo.extend(below)
        return found


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


def _node_text(graph: Graph, node: int | None, hash_: str | None) -> str | None:
    if hash_ is None:
        return None
    return f"{graph.name(node)}@{graph.version(node)}" if node is not None else f"/{hash_[:7]}"


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
