"""The Index: every spec in int-coded columns, grouped by package.

Built once, then immutable. Rows are grouped by package (sorted by name), so a package
is a contiguous range of rows. Each field is a numpy array of codes into an interned
table; each facet value has a bitset of the rows that carry it (a Python int: AND and
popcount run in C, ~20 µs at a million rows); hashes live in one blob of 32 bytes a row,
with a sorted 64-bit key of their first 8 characters for prefix search.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, cast

import numpy as np

from cachetui.index.build import build_parts
from cachetui.index.fuzzy import NameRanker
from cachetui.index.graph import Graph, GraphParts
from cachetui.index.hash_column import HashColumn, hash_bits, hash_keys
from cachetui.index.hashes import normalise_hash_prefix
from cachetui.index.parts import TEXT_COLUMNS, IndexParts
from cachetui.model import FACETS, LoadProblem, Spec
from cachetui.sources.columns import ColumnChunk
from cachetui.sources.mirror import BinaryFiles, binary_files

# What an index is made of and how it is built live in their own modules (parts.py,
# hash_column.py, build.py); they are named here too, where the service, the snapshot and
# the tests have always imported them from.
__all__ = [
    "TEXT_COLUMNS",
    "HashColumn",
    "Index",
    "IndexParts",
    "build_index",
    "hash_bits",
    "hash_keys",
]


class Index:
    """Immutable, columnar. Rows are ints; ask the index for anything about a row."""

    def __init__(
        self, parts: IndexParts, graph_loader: Callable[[], GraphParts] | None = None
    ) -> None:
        self.parts = parts
        # The dependency graph: built with the index, or read from the snapshot's graph file
        # when first asked for (`stats` and `search` never ask).
        self._graph_loader = graph_loader
        self._graph: Graph | None = None if graph_loader is not None else Graph(parts.graph)
        self._graph_lock = threading.Lock()
        self.graph_problem: str | None = None
        self.packages: list[str] = parts.packages
        self.packages_lower: list[str] = [p.lower() for p in parts.packages]
        self.package_ranker = NameRanker(self.packages_lower)
        self.starts_array: np.ndarray = parts.starts
        self.starts: list[int] = parts.starts.tolist()
        self.sizes_array: np.ndarray = np.diff(parts.starts)
        self.hashes = HashColumn(parts.hash_blob)
        self._values = parts.values
        self._codes = parts.codes
        self._stack_names = parts.stack_names
        self._variantset_values: list[tuple[str, ...]] | None = None  # decoded when asked
        self._variantsets_decoded: dict[int, tuple[str, ...]] = {}  # ... or one at a time
        self._tokens: list[str] | None = None
        self._token_sets: np.ndarray | None = None
        self._hash_order = parts.hash_order
        self._hash_keys = hash_keys(parts.hash_blob)[parts.hash_order]
        self.facet_values: dict[str, list[str]] = parts.facet_values
        self.facet_bits: dict[str, list[int]] = {
            f: [int.from_bytes(b, "little") for b in bits] for f, bits in parts.facet_bits.items()
        }
        self._facet_totals = {
            f: h.sum(axis=0, dtype=np.int64).tolist() for f, h in parts.facet_histograms.items()
        }
        self.all_rows: int = (1 << self.n_specs) - 1
        self._where: dict[tuple[str, Hashable], int] = {}  # rows_where's answers, by test

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            with self._graph_lock:  # the app's load worker and its UI thread may both ask
                if self._graph is None:
                    # _graph starts as None only when a graph_loader is given (__init__)
                    assert self._graph_loader is not None
                    try:
                        parts = self._graph_loader()
                    except Exception as error:  # GraphError, or anything a damaged file causes
                        self.graph_problem = str(error)
                        parts = GraphParts(row_nodes=np.full(self.n_specs, -1, dtype=np.int32))
                    self.parts.graph = parts
                    self._graph = Graph(parts)
        return self._graph

    @property
    def facets(self) -> tuple[str, ...]:
        """Every facet of this index: FACETS, then any added by with_facet."""
        return FACETS + tuple(f for f in self.facet_values if f not in FACETS)

    def with_facet(self, facet: str, values: Sequence[str], flags: Sequence[np.ndarray]) -> Index:
        """A copy of this index with one more facet (a user's environment: its hits, ...):
        `values`, each with a bool a row. The columns, the graph and the rest are shared;
        only the facet's bits and per-package counts are made, once."""
        out = copy.copy(self)
        rows = [np.asarray(f, dtype=bool) for f in flags]
        if self.n_specs:
            histogram = np.stack(
                [np.add.reduceat(r.astype(np.int32), self.starts_array[:-1]) for r in rows]
                or [np.zeros(self.n_packages, dtype=np.int32)],
                axis=1,
            ).astype(np.int32)
        else:
            histogram = np.zeros((0, len(rows)), dtype=np.int32)
        out.parts = copy.copy(self.parts)
        out.parts.facet_histograms = {**self.parts.facet_histograms, facet: histogram}
        out.facet_values = {**self.facet_values, facet: list(values)}
        out.facet_bits = {**self.facet_bits, facet: [_pack(r) for r in rows]}
        out._facet_totals = {**self._facet_totals, facet: [int(r.sum()) for r in rows]}
        out._where = {}
        return out

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
        return int(self._codes["package"][row])

    def package_name(self, row: int) -> str:
        return self.packages[self._codes["package"][row]]

    def field(self, column: str, row: int) -> str:
        """version, compiler, platform, os, target, tag or source of a row (TEXT_COLUMNS)."""
        return self._values[column][self._codes[column][row]]

    def distinct_among(self, column: str, rows: list[int]) -> int:
        """How many distinct values of `column` the given rows hold."""
        return len(np.unique(self._codes[column][rows])) if rows else 0

    def widest(self, column: str) -> int:
        """The longest value of a text column (for laying out columns without decoding them)."""
        return max(1, self._values[column].longest())

    def stacks(self, row: int) -> tuple[str, ...]:
        names = self._stack_names
        return tuple(names[s] for s in self.parts.stacksets[self._codes["stackset"][row]].tolist())

    def variants(self, row: int) -> tuple[str, ...]:
        return self._variantset(int(self._codes["variantset"][row]))

    def _variantset(self, code: int) -> tuple[str, ...]:
        if self._variantset_values is not None:
            return self._variantset_values[code]
        # Decoded once a set: an export of a million rows meets a few thousand sets.
        found = self._variantsets_decoded.get(code)
        if found is None:
            if len(self._variantsets_decoded) >= 65536:
                self._variantsets_decoded.clear()
            tokens = self.parts.variant_tokens.take(self.parts.variantsets[code].tolist())
            # A variant token is never None (only a StringTable's missing values are).
            found = self._variantsets_decoded[code] = tuple(cast("list[str]", tokens))
        return found

    def size(self, row: int) -> int | None:
        sizes = self.parts.sizes
        if sizes is None:
            return None
        size = int(sizes[row])
        return size if size >= 0 else None

    def tarball(self, row: int) -> str | None:
        text = self.field("tarball_text", row)
        if text is not None:
            return text
        root = self.field("tarball_root", row)
        if root is not None:  # a summary's URL, by the rule it was written with
            return self._files_below(row, root, 2).tarball
        return self.binary_files(row).tarball

    def binary_files(self, row: int, spec_suffix: str | None = None) -> BinaryFiles:
        """The URLs of a binary's spec file, tarball or manifest, where its mirror is known
        (`spec_suffix`: a v2 spec file's ending, when not the one found for its mirror)."""
        origin = self.parts.origins.get(self.field("source", row))
        if origin is None:
            return BinaryFiles()
        found = origin[2] if len(origin) > 2 else None
        return self._files_below(row, origin[0], origin[1], spec_suffix or found)

    def _files_below(
        self, row: int, root: str | None, layout: int | None, spec_suffix: str | None = None
    ) -> BinaryFiles:
        """A row's files below a mirror root, by Spack's naming rules."""
        f = self.field
        return binary_files(
            root,
            layout,
            self.package_name(row),
            f("version", row),
            self.hashes[row],
            f("platform", row),
            f("os", row),
            f("target", row),
            f("compiler", row),
            spec_suffix,
        )

    def row_from(self, source: str) -> int | None:
        """A row read from `source` (the first), or None."""
        codes = self.parts.codes["source"]
        try:
            code = list(self.parts.values["source"]).index(source)
        except ValueError:
            return None
        rows = np.flatnonzero(codes == code)
        return int(rows[0]) if len(rows) else None

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
            kind=f("kind", row),
        )

    # -- hashes -------------------------------------------------------------------------

    def lookup_hash(self, prefix: str) -> list[int]:
        """Rows whose hash starts with `prefix` (1-32 chars, any case, optional leading '/')."""
        prefix = normalise_hash_prefix(prefix)
        rows = self._hash_order[self._hash_range(prefix)].tolist()
        if len(prefix) > 8:
            rows = [r for r in rows if self.hashes[r].startswith(prefix)]
        return sorted(rows)

    def rows_with_hash_prefix(self, prefix: str) -> int:
        """The bitset of the rows whose hash starts with `prefix` (as lookup_hash takes it)."""
        prefix = normalise_hash_prefix(prefix)
        if len(prefix) > 8:  # a handful of rows at most
            return self.rows_of(self.lookup_hash(prefix))
        flags = np.zeros(self.n_specs, dtype=bool)
        flags[self._hash_order[self._hash_range(prefix)]] = (
            True  # a 1-character prefix is 1/32 of all rows
        )
        return _pack(flags)

    def _hash_range(self, prefix: str) -> slice:
        """Where the rows whose hash starts with the first 8 characters of `prefix` lie in hash
        order."""
        head = prefix[:8].encode("ascii")
        low = int.from_bytes(head.ljust(8, b"\0"), "big")
        high = int.from_bytes(head.ljust(8, b"\xff"), "big")
        first = int(np.searchsorted(self._hash_keys, np.uint64(low), "left"))
        last = int(np.searchsorted(self._hash_keys, np.uint64(high), "right"))
        return slice(first, last)

    # -- masks --------------------------------------------------------------------------

    def package_counts(self, mask: int) -> np.ndarray:
        """How many rows of each package are set in `mask` (one pass over the bits)."""
        if self.n_specs == 0:
            return np.zeros(0, dtype=np.int64)
        return np.add.reduceat(self._bits_of(mask), self.starts_array[:-1], dtype=np.int64)

    def rows_in(self, mask: int) -> list[int]:
        """The rows set in `mask`, in order."""
        return np.flatnonzero(self._bits_of(mask)).tolist()

    def _bits_of(self, mask: int) -> np.ndarray:
        n = self.n_specs
        return np.unpackbits(
            np.frombuffer(mask.to_bytes((n + 7) // 8, "little"), dtype=np.uint8),
            count=n,
            bitorder="little",
        )

    def facet_counts_in(self, facet: str, packages: np.ndarray | None) -> list[int]:
        """Rows carrying each value of `facet` (facet_values order) among `packages` (None: all).

        From the per-package histogram: a sum over the listed packages, well under a
        millisecond where ANDing each value's bitset with a mask costs ~50 µs a value.
        """
        if packages is None:
            return self._facet_totals[facet]
        return self.parts.facet_histograms[facet][packages].sum(axis=0, dtype=np.int64).tolist()

    def rows_mask(self, packages: list[int]) -> int:
        """The bitset of every row of `packages`."""
        chosen = np.zeros(self.n_packages, dtype=bool)
        chosen[packages] = True
        return _pack(np.repeat(chosen, self.sizes_array))

    def rows_where(
        self,
        column: str,
        keep: Callable[[Any], bool],
        key: Hashable,
        values: Sequence[Any] | None = None,
    ) -> int:
        """The bitset of rows whose `column` value passes `keep`, tested once per distinct
        value (`values`, when given, stand for them, in code order). `key` names the test:
        a query retyped keystroke by keystroke asks again."""
        cached = self._where.get((column, key))
        if cached is not None:
            return cached
        values = self.distinct_values(column) if values is None else values
        return self.rows_with_codes(
            column, np.fromiter(map(keep, values), dtype=bool, count=len(values)), key
        )

    def rows_with_codes(self, column: str, passed: np.ndarray, key: Hashable) -> int:
        """The bitset of rows whose `column` code c has passed[c] (kept under `key`, as
        rows_where)."""
        cached = self._where.get((column, key))
        if cached is not None:
            return cached
        if passed.all():
            mask = self.all_rows
        elif not passed.any():
            mask = 0
        else:
            mask = _pack(passed[self._codes[column]])
        if len(self._where) >= 64:
            self._where.clear()
        self._where[(column, key)] = mask
        return mask

    def distinct_values(self, column: str) -> Sequence[Any]:
        """What a column's codes stand for: text, or for stackset / variantset a tuple of it.
        Decoded when asked (every variant set at once: for scripts and tests; a query asks
        about variant tokens, see variantsets_where)."""
        if column == "stackset":
            names = self._stack_names
            return [
                tuple(names[s] for s in stackset) for stackset in self.parts.stacksets.tolists()
            ]
        if column == "variantset":
            if self._variantset_values is None:
                table = self.parts.variant_tokens
                tokens = cast("list[str]", table.take(range(len(table))))  # never None
                self._variantset_values = [
                    tuple(tokens[t] for t in ids) for ids in self.parts.variantsets.tolists()
                ]
            return self._variantset_values
        return self._values[column]

    def variant_tokens(self) -> list[str]:
        """Every distinct variant string (`+mpi`, `libs=shared,static`), by token code."""
        if self._tokens is None:
            tokens = self.parts.variant_tokens.take(range(len(self.parts.variant_tokens)))
            self._tokens = cast("list[str]", tokens)  # a variant token is never None
        return self._tokens

    def variantsets_where(self, name_matches: np.ndarray, value_matches: np.ndarray) -> np.ndarray:
        """Per variant set: whether its last token that `name_matches` (a bool per token code)
        also `value_matches`. A variant named twice in a set is read as its last mention, as
        a spec's variants are. Array work over the sets' tokens: no set is decoded."""
        sets = self.parts.variantsets
        if self._token_sets is None:  # which set each token occurrence belongs to
            self._token_sets = np.repeat(
                np.arange(len(sets), dtype=np.int32), np.diff(sets.offsets)
            )
        named = np.flatnonzero(name_matches[sets.values])
        owners = self._token_sets[named]
        last = np.ones(len(named), dtype=bool)
        last[:-1] = owners[1:] != owners[:-1]
        out = np.zeros(len(sets), dtype=bool)
        out[owners[last]] = value_matches[sets.values[named[last]]]
        return out

    def row_flags(self, mask: int) -> np.ndarray:
        """A bool a row: whether it is set in `mask`."""
        return self._bits_of(mask).view(bool)

    def mask_of_flags(self, flags: np.ndarray) -> int:
        """The bitset of the rows whose flag is set (row_flags, the other way)."""
        return _pack(flags)

    def rows_of(self, rows: list[int]) -> int:
        """The bitset of `rows`."""
        flags = np.zeros(self.n_specs, dtype=bool)
        flags[rows] = True
        return _pack(flags)

    def rows_in_package(self, package: int, mask: int) -> list[int]:
        """The rows of `package` that are set in `mask`, in display order."""
        start, end = self.starts[package], self.starts[package + 1]
        window = (mask >> start) & ((1 << (end - start)) - 1)
        if window == (1 << (end - start)) - 1:
            return list(range(start, end))
        return [start + i for i in range(end - start) if window >> i & 1]


def _pack(flags: np.ndarray) -> int:
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


def build_index(chunks: Iterable[ColumnChunk]) -> tuple[Index, list[LoadProblem]]:
    """Merge loader chunks into one Index; duplicate (hash, tag) rows keep the first (see
    build.build_parts)."""
    parts, problems = build_parts(chunks)
    return Index(parts), problems
