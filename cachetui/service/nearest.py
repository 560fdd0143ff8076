"""The cached specs nearest to one that misses: of the same package, fewest differences first.

The index keeps a package's rows together, so a miss looks at one slice of the index's
columns, never the whole cache: its own fields are compared as arrays of codes (each distinct
variant set once), then ties are broken by how many direct dependencies differ, and only the
few kept are followed down their dependency graphs (service/dependency_walk.py)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cachetui.model import BINARY_KIND, EnvironmentSpec
from cachetui.service.dependency_walk import DependencyWalk
from cachetui.service.differences import (
    OWN_FIELDS,
    Difference,
    Fields,
    variant_distance,
    variant_map,
)

if TYPE_CHECKING:
    from cachetui.index.store import Index

NEAREST = 3  # nearest cached specs listed a miss
# Rows that tie on their own fields with the NEAREST-th are all ranked by their direct
# dependencies' hashes, up to this many (a cache may hold hundreds of rebuilds of one
# package).
TIED = 64

# Why a nearest spec shows no difference, though its hash is another.
SAME_AS_FAR_AS_SEEN = (
    "the same fields and dependencies: the package's recipe (its package hash), a patch or "
    "something else cachetui does not compare differs"
)
NO_GRAPH = "the same fields; this cache holds no dependencies to compare, which may differ"


@dataclass(frozen=True)
class Nearest:
    """A cached spec of the same package as a miss, and what differs."""

    row: int
    hash: str
    name: str
    version: str
    differences: tuple[Difference, ...]
    note: str | None = None  # why nothing is listed, when nothing is


class NearestFinder:
    """Finds the nearest cached specs for the misses of one environment in one index; what
    several misses share (a row's fields, a variant set, a walk) is worked out once."""

    def __init__(self, index: Index, specs: dict[str, EnvironmentSpec]) -> None:
        self.index = index
        self.specs = specs
        kinds = list(index.distinct_values("kind"))  # the code of `binary`; -1: no binary
        self.binary_code = kinds.index(BINARY_KIND) if BINARY_KIND in kinds else -1
        self._codes: dict[str, dict[str | None, int]] = {}  # column -> value -> code
        self._variant_maps: dict[int, dict[str, str]] = {}  # variant set code -> by name
        self._row_fields: dict[int, Fields] = {}
        self._walk: DependencyWalk | None = None
        self._walk_asked = False

    @property
    def walk(self) -> DependencyWalk | None:
        """The walk over the cache's dependency graph, read when a miss first needs it
        (None: the cache holds no dependencies, as a cache.spack.io summary)."""
        if not self._walk_asked:
            self._walk_asked = True
            graph = self.index.graph
            if graph:
                self._walk = DependencyWalk(self.index, graph, self.specs, self.row_fields)
        return self._walk

    def nearest(self, spec: EnvironmentSpec) -> list[Nearest]:
        """Fewest own differences first, then fewest direct dependencies that differ; one
        row a hash."""
        index, walk = self.index, self.walk
        candidates: list[tuple[int, int]] = []  # (own differences, row)
        seen: set[bytes] = set()
        blob = index.hashes.blob
        for own, row in self._by_own_differences(spec):
            if len(candidates) >= NEAREST and own > candidates[NEAREST - 1][0]:
                break  # more own differences than the first few: it cannot rank before them
            hash_ = bytes(blob[row * 32 : row * 32 + 32])  # (one row a hash: rows of tags)
            if hash_ not in seen:
                seen.add(hash_)
                candidates.append((own, row))
                if len(candidates) == TIED:
                    break
        if walk is not None:
            candidates.sort(key=lambda c: (c[0], walk.direct(spec, c[1]), c[1]))
        mine = Fields.of(spec)
        found = []
        for _, row in candidates[:NEAREST]:
            differences = mine.differences(self.row_fields(row))
            if walk is not None:
                differences += walk.differences(spec, row)
            note = None if differences else NO_GRAPH if walk is None else SAME_AS_FAR_AS_SEEN
            version = index.field("version", row)
            found.append(
                Nearest(row, index.hashes[row], spec.name, version, tuple(differences), note)
            )
        return found

    def _by_own_differences(self, spec: EnvironmentSpec) -> Iterator[tuple[int, int]]:
        """(own differences, row) for each binary row of `spec`'s package, fewest first (then
        in row order). The package's rows are one slice of each of the index's code columns,
        compared with `spec`'s codes as arrays; each distinct variant set is compared once."""
        rows = self.package_rows(spec.name)
        if not rows:
            return
        codes = self.index.parts.codes
        window = slice(rows.start, rows.stop)
        binary = codes["kind"][window] == self.binary_code
        whole = bool(binary.all())  # (the usual case: no installed spec among them)
        offsets = np.arange(len(binary)) if whole else np.flatnonzero(binary)
        if not len(offsets):
            return
        counts = np.zeros(len(offsets), dtype=np.int64)
        for column in OWN_FIELDS:
            column_codes = codes[column][window] if whole else codes[column][window][offsets]
            counts += column_codes != self._code_of(column, getattr(spec, column))
        # Each distinct variant set compared once (a package has few; a dict beats np.unique
        # at that size).
        my_variants = variant_map(spec.variants)
        sets = codes["variantset"][window] if whole else codes["variantset"][window][offsets]
        sets_list = sets.tolist()
        distance: dict[int, int] = {}
        for offset, code in zip(offsets.tolist(), sets_list):
            if code not in distance:
                distance[code] = self._variant_distance(my_variants, rows.start + offset)
        counts += np.fromiter(map(distance.__getitem__, sets_list), np.int64, len(sets_list))
        # Fewest first; no more are read than ties and one row a hash allow (a package may
        # have thousands of rows).
        order = np.argsort(counts, kind="stable")[: 4 * TIED]
        yield from zip(counts[order].tolist(), (rows.start + offsets[order]).tolist())

    def package_rows(self, name: str) -> range:
        """The rows of package `name` (empty when the cache has none)."""
        packages = self.index.packages
        at = bisect.bisect_left(packages, name)
        if at < len(packages) and packages[at] == name:
            return self.index.package_range(at)
        return range(0)

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
        return variant_distance(mine, theirs)

    def row_fields(self, row: int) -> Fields:
        fields = self._row_fields.get(row)
        if fields is None:
            f = self.index.field
            fields = self._row_fields[row] = Fields(
                f("version", row),
                f("compiler", row),
                f("platform", row),
                f("os", row),
                f("target", row),
                self.index.variants(row),
            )
        return fields
