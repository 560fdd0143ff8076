"""Will an environment install from the cache, and where not, why not.

A spec hits when its DAG hash is a binary of the cache (Spack reuses a binary only then).
For a miss, the nearest cached specs of the same package are found and what differs listed
(service/nearest.py: own fields, then dependencies, followed down to the first spec that
differs in its own fields, service/dependency_walk.py). The app adds the answer to the index
as a facet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from cachetui.model import DepType, Environment, EnvironmentSpec
from cachetui.service.differences import Difference
from cachetui.service.nearest import Nearest, NearestFinder

if TYPE_CHECKING:
    from cachetui.index.store import Index

__all__ = ["CheckReport", "Difference", "Nearest", "SpecCheck", "check_environment"]

Status = Literal["hit", "miss", "external"]

_LINK_RUN = int(DepType.LINK | DepType.RUN)


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
    finder = NearestFinder(index, {s.hash: s for s in environment.specs})
    checks = [_check(index, finder, spec) for spec in environment.specs]
    by_hash = {c.spec.hash: c for c in checks}
    sizes = [index.size(c.rows[0]) for c in checks if c.rows]
    known = [s for s in sizes if s is not None]
    covered = sum(1 for c in checks if c.spec.root and _wholly_cached(c.spec, by_hash))
    return CheckReport(environment, checks, covered, sum(known), len(known))


def _check(index: Index, finder: NearestFinder, spec: EnvironmentSpec) -> SpecCheck:
    if spec.external:
        return SpecCheck(spec, "external")
    kinds = index.parts.codes["kind"]
    rows = [
        row
        for row in index.lookup_hash(spec.hash)
        if index.hashes[row] == spec.hash and kinds[row] == finder.binary_code
    ]
    if rows:
        return SpecCheck(spec, "hit", tuple(rows))
    return SpecCheck(spec, "miss", nearest=tuple(finder.nearest(spec)))


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
