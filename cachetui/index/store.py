"""The Index: every spec in int-coded columns, grouped by package.

Built once from Spec records, then immutable. Rows are grouped by package (sorted by
name), so a package is a contiguous range of rows. Each field is an array of codes
into an interned table of strings; each facet value has a bitset (a Python int) of the
rows that carry it; hashes are sorted once for prefix lookup by bisection.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from cachetui.index.versions import version_key
from cachetui.model import FACETS, LoadProblem, Spec

# Columns that are a single interned string per row.
_STRING_COLUMNS = ("version", "compiler", "platform", "os", "target", "tag", "source")
_HEX_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class HashPrefixError(ValueError):
    """A hash prefix that cannot match anything by its form (empty, too long, bad characters)."""


def normalise_hash_prefix(text: str) -> str:
    prefix = text.strip().lstrip("/").lower()
    if not prefix:
        raise HashPrefixError("a hash prefix needs 1 to 32 characters")
    if len(prefix) > 32:
        raise HashPrefixError(f"a hash has 32 characters; {len(prefix)} given")
    if not set(prefix) <= _HEX_OK:
        raise HashPrefixError("a hash prefix has only letters and digits")
    return prefix


class _Interner:
    def __init__(self) -> None:
        self.values: list = []
        self._codes: dict = {}

    def code(self, value) -> int:
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self.values)
            self.values.append(value)
        return code


@dataclass(frozen=True, slots=True)
class _Row:
    hash: str
    codes: tuple[int, ...]  # one per _STRING_COLUMNS
    stacks: int
    variants: int
    size: int | None
    tarball: str | None


class IndexBuilder:
    """Collects Spec records (deduplicated per tag), then builds the Index."""

    def __init__(self) -> None:
        self._interners = {column: _Interner() for column in _STRING_COLUMNS}
        self._stacksets = _Interner()
        self._stack_names = _Interner()
        self._variantsets = _Interner()
        self._rows: dict[str, list[_Row]] = {}
        self._first_seen: dict[tuple[str, int], tuple[str, _Row]] = {}
        self.problems: list[LoadProblem] = []

    def add(self, spec: Spec) -> None:
        codes = tuple(self._interners[column].code(getattr(spec, column)) for column in _STRING_COLUMNS)
        stacks = self._stacksets.code(tuple(self._stack_names.code(s) for s in spec.stacks))
        row = _Row(spec.hash, codes, stacks, self._variantsets.code(spec.variants), spec.size, spec.tarball)
        tag_code = codes[_STRING_COLUMNS.index("tag")]
        first = self._first_seen.get((spec.hash, tag_code))
        if first is not None:
            first_package, first_row = first
            same = first_package == spec.package and _same_content(first_row, row)
            if not same:
                where = self._interners["source"].values[first_row.codes[-1]]
                self.problems.append(LoadProblem(spec.source, f"hash {spec.hash} is already in tag {spec.tag!r} with different content (first seen in {where}); kept the first", "warning"))
            return
        self._first_seen[(spec.hash, tag_code)] = (spec.package, row)
        self._rows.setdefault(spec.package, []).append(row)

    def add_all(self, specs: Iterable[Spec]) -> None:
        for spec in specs:
            self.add(spec)

    def build(self) -> Index:
        versions = self._interners["version"].values
        version_rank = {code: rank for rank, code in enumerate(sorted(range(len(versions)), key=lambda c: version_key(versions[c]), reverse=True))}
        tag, os_, target, compiler = (_STRING_COLUMNS.index(c) for c in ("tag", "os", "target", "compiler"))
        values = {column: interner.values for column, interner in self._interners.items()}

        def order(row: _Row):
            c = row.codes
            return (values["tag"][c[tag]], version_rank[c[0]], values["os"][c[os_]], values["target"][c[target]], values["compiler"][c[compiler]], row.hash)

        packages = sorted(self._rows)
        starts = array("q", [0])
        rows: list[_Row] = []
        for name in packages:
            rows.extend(sorted(self._rows[name], key=order))
            starts.append(len(rows))
        return Index(
            packages=packages,
            starts=starts,
            rows=rows,
            values=values,
            stack_names=self._stack_names.values,
            stacksets=self._stacksets.values,
            variantsets=self._variantsets.values,
        )


def _same_content(a: _Row, b: _Row) -> bool:
    # Everything but the source file.
    return a.codes[:-1] == b.codes[:-1] and (a.stacks, a.variants, a.size, a.tarball) == (b.stacks, b.variants, b.size, b.tarball)


class Index:
    """Immutable, columnar. Rows are ints; ask the index for anything about a row."""

    def __init__(self, packages, starts, rows, values, stack_names, stacksets, variantsets) -> None:
        n = len(rows)
        self.packages: list[str] = packages
        self.packages_lower: list[str] = [p.lower() for p in packages]
        self.starts: array = starts
        self.hashes: list[str] = [row.hash for row in rows]
        self._values: dict[str, list[str]] = values
        self._columns = {column: array("i", [row.codes[i] for row in rows]) for i, column in enumerate(_STRING_COLUMNS)}
        self._stack_names: list[str] = stack_names
        self._stacksets: list[tuple[int, ...]] = stacksets
        self._stackset_col = array("i", [row.stacks for row in rows])
        self._variantsets: list[tuple[str, ...]] = variantsets
        self._variant_col = array("i", [row.variants for row in rows])
        self._sizes = {r: row.size for r, row in enumerate(rows) if row.size is not None}
        self._tarballs = {r: row.tarball for r, row in enumerate(rows) if row.tarball}
        self._package_col = array("i", [p for p in range(len(packages)) for _ in range(starts[p + 1] - starts[p])])
        order = sorted(range(n), key=self.hashes.__getitem__)
        self._sorted_hashes = [self.hashes[r] for r in order]
        self._sorted_rows = array("i", order)
        self.facet_values, self.facet_bits = self._build_facets(n)
        self.all_rows: int = (1 << n) - 1

    # -- sizes --------------------------------------------------------------------------

    @property
    def n_specs(self) -> int:
        return len(self.hashes)

    @property
    def n_packages(self) -> int:
        return len(self.packages)

    def package_range(self, package: int) -> range:
        return range(self.starts[package], self.starts[package + 1])

    def package_size(self, package: int) -> int:
        return self.starts[package + 1] - self.starts[package]

    # -- one row ------------------------------------------------------------------------

    def package_of(self, row: int) -> int:
        return self._package_col[row]

    def package_name(self, row: int) -> str:
        return self.packages[self._package_col[row]]

    def field(self, column: str, row: int) -> str:
        """version, compiler, platform, os, target, tag or source of a row."""
        return self._values[column][self._columns[column][row]]

    def stacks(self, row: int) -> tuple[str, ...]:
        return tuple(self._stack_names[s] for s in self._stacksets[self._stackset_col[row]])

    def variants(self, row: int) -> tuple[str, ...]:
        return self._variantsets[self._variant_col[row]]

    def size(self, row: int) -> int | None:
        return self._sizes.get(row)

    def tarball(self, row: int) -> str | None:
        return self._tarballs.get(row)

    def spec(self, row: int) -> Spec:
        f = self.field
        return Spec(
            package=self.package_name(row),
            version=f("version", row),
            compiler=f("compiler", row),
            platform=f("platform", row),
            os=f("os", row),
            target=f("target", row),
            hash=self.hashes[row],
            variants=self.variants(row),
            stacks=self.stacks(row),
            tag=f("tag", row),
            size=self.size(row),
            tarball=self.tarball(row),
            source=f("source", row),
        )

    # -- hashes -------------------------------------------------------------------------

    def lookup_hash(self, prefix: str) -> list[int]:
        """Rows whose hash starts with `prefix` (1-32 chars, any case, optional leading '/')."""
        prefix = normalise_hash_prefix(prefix)
        found = []
        i = bisect.bisect_left(self._sorted_hashes, prefix)
        while i < len(self._sorted_hashes) and self._sorted_hashes[i].startswith(prefix):
            found.append(self._sorted_rows[i])
            i += 1
        return sorted(found)

    # -- facets -------------------------------------------------------------------------

    def _build_facets(self, n: int) -> tuple[dict[str, list[str]], dict[str, list[int]]]:
        values: dict[str, list[str]] = {}
        bits: dict[str, list[int]] = {}
        for facet in FACETS:
            if facet == "stack":
                names = self._stack_names
                buffers = [bytearray((n + 7) // 8) for _ in names]
                members = self._stacksets
                for r, code in enumerate(self._stackset_col):
                    byte, bit = r >> 3, 1 << (r & 7)
                    for s in members[code]:
                        buffers[s][byte] |= bit
            else:
                names = self._values[facet]
                buffers = [bytearray((n + 7) // 8) for _ in names]
                for r, code in enumerate(self._columns[facet]):
                    buffers[code][r >> 3] |= 1 << (r & 7)
            # Present values sorted for the sidebar; codes are re-mapped to that order.
            present = [c for c in range(len(names)) if any(buffers[c])]  # not only in dropped duplicates
            order = sorted(present, key=lambda c: _facet_sort_key(facet, names[c]))
            values[facet] = [names[c] for c in order]
            bits[facet] = [int.from_bytes(buffers[c], "little") for c in order]
        return values, bits

    def count_in_package(self, package: int, mask_bytes: bytes) -> int:
        """How many rows of `package` are set in a mask given as little-endian bytes."""
        start, end = self.starts[package], self.starts[package + 1]
        chunk = int.from_bytes(mask_bytes[start >> 3 : (end + 7) >> 3], "little") >> (start & 7)
        return (chunk & ((1 << (end - start)) - 1)).bit_count()

    def rows_in_package(self, package: int, mask: int) -> list[int]:
        """The rows of `package` that are set in `mask`, in display order."""
        start, end = self.starts[package], self.starts[package + 1]
        window = (mask >> start) & ((1 << (end - start)) - 1)
        if window == (1 << (end - start)) - 1:
            return list(range(start, end))
        return [start + i for i in range(end - start) if window >> i & 1]


def _facet_sort_key(facet: str, value: str) -> tuple:
    if facet == "compiler":
        name, _, version = value.partition("@")
        return (name, version_key(version))
    return (value.lower(), value)
