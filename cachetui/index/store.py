"""The Index: every spec in int-coded columns, grouped by package.

Built once, then immutable. Rows are grouped by package (sorted by name), so a package
is a contiguous range of rows. Each field is a numpy array of codes into an interned
table; each facet value has a bitset of the rows that carry it (a Python int: AND and
popcount run in C, ~20 µs at a million rows); hashes live in one blob of 32 bytes a row,
with a sorted 64-bit key of their first 8 characters for prefix search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, cast

import numpy as np

from cachetui.index.fuzzy import NameRanker
from cachetui.index.graph import Graph, GraphParts, build_graph
from cachetui.index.hashes import normalise_hash_prefix
from cachetui.index.strings import Ragged, StringTable
from cachetui.index.versions import version_key
from cachetui.model import FACETS, LoadProblem, Spec
from cachetui.sources.columns import COLUMNS, ColumnChunk
from cachetui.sources.mirror import BinaryFiles, Origin, binary_files
from cachetui.sources.nodes import NodeColumns
from cachetui.sources.summary import BUILD_COLUMNS

# Interned columns: a code a row, into a table of distinct values. The tarball columns hold
# a summary's `tarball` URL: the mirror root Spack's v2 rule rebuilds it from (one or two a
# tag), else the URL itself where the rule does not give it back; None where none is known.
TEXT_COLUMNS = (
    "version",
    "compiler",
    "platform",
    "os",
    "target",
    "tag",
    "source",
    "tarball_root",
    "tarball_text",
    "kind",
)


# Base32 characters in text order ('2'-'7' sort before 'a'-'z') -> 5-bit values.
_BASE32_BITS = np.zeros(256, dtype=np.uint64)
_BASE32_BITS[np.frombuffer(b"234567abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)] = np.arange(
    32, dtype=np.uint64
)


def hash_bits(blob: bytes | memoryview) -> np.ndarray:
    """The first 8 characters of each hash as a 40-bit integer that sorts like the text."""
    heads = np.frombuffer(blob, dtype=np.uint8).reshape(-1, 32)
    bits = np.zeros(len(heads), dtype=np.uint64)
    for i in range(8):
        bits <<= np.uint64(5)
        bits |= _BASE32_BITS[heads[:, i]]
    return bits


def hash_keys(blob: bytes | memoryview) -> np.ndarray:
    """The first 8 characters of each 32-byte hash as a big-endian integer: sorts like the text."""
    return np.frombuffer(blob, dtype=">u8").reshape(-1, 4)[:, 0].astype(np.uint64)


class HashColumn(Sequence[str]):
    """`index.hashes[row]` without a million str objects in memory. The blob may be a view of
    the on-disk index; a byte that is not ASCII (a tampered file) shows, it never raises."""

    def __init__(self, blob: bytes | memoryview) -> None:
        self.blob = blob

    def __len__(self) -> int:
        return len(self.blob) // 32

    def __getitem__(self, row):
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(len(self)))]
        row = int(row)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return str(self.blob[row * 32 : row * 32 + 32], "ascii", "replace")

    def __iter__(self) -> Iterator[str]:
        return (
            str(self.blob[i : i + 32], "ascii", "replace") for i in range(0, len(self.blob), 32)
        )


@dataclass
class IndexParts:
    """Everything an Index is made of: what the builder produces and the snapshot stores.

    Nothing here holds a Python object per row, nor per distinct string but the package
    names and facet values: the rest is arrays, read from the on-disk index as they are."""

    packages: list[str]
    starts: np.ndarray  # int64, len(packages) + 1
    values: dict[str, StringTable]  # column -> code -> text, for TEXT_COLUMNS
    codes: dict[
        str, np.ndarray
    ]  # column -> code per row, for TEXT_COLUMNS + package, stackset, variantset
    stack_names: list[str]
    stacksets: Ragged  # stackset code -> its stacks (codes into stack_names)
    variant_tokens: StringTable  # every distinct variant string
    variantsets: Ragged  # variantset code -> its variants (codes into variant_tokens), in order
    hash_blob: bytes | memoryview
    hash_order: np.ndarray  # int32: rows sorted by hash
    sizes: np.ndarray | None = None  # int64 bytes per row, -1 where unknown; None: none known
    facet_values: dict[str, list[str]] = field(default_factory=dict)
    facet_bits: dict[str, list[bytes]] = field(default_factory=dict)
    # facet -> int32 [package, value]: how many rows of each package carry each value.
    facet_histograms: dict[str, np.ndarray] = field(default_factory=dict)
    # source -> [mirror root, layout]: where a database's binaries' files are.
    origins: dict[str, list] = field(
        default_factory=dict
    )  # source -> [mirror root, layout, v2 spec-file ending or None]
    graph: GraphParts = field(default_factory=GraphParts)


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
            f = self.field
            return binary_files(
                root,
                2,
                self.package_name(row),
                f("version", row),
                self.hashes[row],
                f("platform", row),
                f("os", row),
                f("target", row),
                f("compiler", row),
            ).tarball
        return self.binary_files(row).tarball

    def binary_files(self, row: int, spec_suffix: str | None = None) -> BinaryFiles:
        """The URLs of a binary's spec file, tarball or manifest, where its mirror is known
        (`spec_suffix`: a v2 spec file's ending, when not the one found for its mirror)."""
        origin = self.parts.origins.get(self.field("source", row))
        if origin is None:
            return BinaryFiles()
        f = self.field
        return binary_files(
            origin[0],
            origin[1],
            self.package_name(row),
            f("version", row),
            self.hashes[row],
            f("platform", row),
            f("os", row),
            f("target", row),
            f("compiler", row),
            spec_suffix or (origin[2] if len(origin) > 2 else None),
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


def _narrow(codes: np.ndarray, distinct: int) -> np.ndarray:
    """Codes in the smallest unsigned type that holds them: a third of the memory at 1M rows."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if distinct <= np.iinfo(dtype).max + 1:
            return codes.astype(dtype)
    return codes


def _pack(flags: np.ndarray) -> int:
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


# -- building ---------------------------------------------------------------------------


def build_index(chunks: Iterable[ColumnChunk]) -> tuple[Index, list[LoadProblem]]:
    """Merge loader chunks into one Index; duplicate (hash, tag) rows keep the first.

    Each chunk is merged as it arrives: while loader processes still read, this process
    is otherwise idle, and a merged chunk's memory can go. Memory is kept lean on purpose:
    on a virtual machine, the first touch of a fresh page costs more than the work done on
    it (about 2 ms a megabyte here), so columns are held in their narrowest type as they
    are merged, and reordered one at a time rather than all copied at once."""
    merged = [c for c in COLUMNS if c != "build"] + list(BUILD_COLUMNS)
    tables: dict[str, dict] = {c: {} for c in merged}
    parts: dict[str, list[np.ndarray]] = {c: [] for c in merged}
    sizes: list[np.ndarray | int] = []  # an array, or how many rows of unknown size
    blobs: list[bytes] = []
    bits_parts: list[np.ndarray] = []
    graphs: list[NodeColumns] = []
    origins: dict[str, Origin] = {}
    claimed: set[str] = set()
    for chunk in chunks:
        graphs.extend(chunk.graphs)
        origins.update(chunk.origins)
        claimed.update(chunk.claimed)
        for column in COLUMNS:
            if column != "build":
                lut = _narrow(_codes_in(tables[column], chunk.values[column]), len(tables[column]))
                parts[column].append(lut[np.frombuffer(chunk.codes[column], dtype=np.int32)])
        # A row's build (version, compiler, platform, os, target) becomes five columns: the
        # chunk's builds as codes into its five tables, mapped to the index's, then gathered.
        builds = np.frombuffer(chunk.build_parts, dtype=np.int32).reshape(-1, len(BUILD_COLUMNS))
        build_rows = np.frombuffer(chunk.codes["build"], dtype=np.int32)
        for at, column in enumerate(BUILD_COLUMNS):
            lut = _narrow(_codes_in(tables[column], chunk.values[column]), len(tables[column]))
            parts[column].append(lut[builds[:, at]][build_rows])
        chunk_sizes = np.frombuffer(chunk.sizes, dtype=np.int64)
        sizes.append(chunk_sizes if (chunk_sizes >= 0).any() else len(chunk_sizes))
        blobs.append(chunk.hash_blob)
        bits_parts.append(hash_bits(chunk.hash_blob))
    # Per-row arrays travel together through every filter and reorder below: the interned
    # codes, and the sizes (bytes, -1 where unknown) under "size", if any is known.
    rows = {c: _concatenated(parts.pop(c)) for c in merged}
    if any(isinstance(part, np.ndarray) for part in sizes):
        rows["size"] = np.concatenate(
            [p if isinstance(p, np.ndarray) else np.full(p, -1, np.int64) for p in sizes]
        )
    values = {c: list(tables[c]) for c in merged}
    blob = np.frombuffer(b"".join(blobs), dtype="S32")
    del blobs
    bits = np.concatenate(bits_parts) if bits_parts else np.zeros(0, np.uint64)
    del bits_parts
    if claimed:  # a spec file an older page lists is read with the page (and its tag)
        keep = _unclaimed(claimed, rows, values)
        if keep is not None:
            rows, blob, bits = {c: a[keep] for c, a in rows.items()}, blob[keep], bits[keep]

    # One sort by (hash, tag) finds the duplicates and is the hash order the index keeps.
    # Not stable (a third of the time): rows whose hashes share their first 8 characters are
    # put back in file order where it matters, among duplicates.
    by_hash = _sort_rows(
        _packed(
            [
                (bits, 1 << 40),
                (rows["tag"], len(values["tag"])),
                (rows["kind"], len(values["kind"])),
            ]
        ),
        stable=False,
    )
    keep, problems = _first_of_duplicates(by_hash, bits[by_hash], rows, values, blob)
    del bits
    if keep is not None:
        for column in list(rows):
            rows[column] = rows[column][keep]
        blob = blob[keep]
        new_row = np.cumsum(keep) - 1  # old row -> new row, where kept
        by_hash = new_row[by_hash[keep[by_hash]]]

    # Display order: package name; then tag, newest version, os, target, compiler; then the
    # hash's first 8 characters (a stable sort of rows already in that order), then file
    # order. The six ranks pack into one 64-bit key.
    rank = {
        c: _ranks(values[c], _sort_key(c))
        for c in ("package", "tag", "version", "os", "target", "compiler")
    }
    display = _packed(
        [
            (rank[c][rows[c]], len(values[c]))
            for c in ("package", "tag", "version", "os", "target", "compiler")
        ]
    )
    order = by_hash[_sort_rows([key[by_hash] for key in display])].astype(np.int32)
    del display
    for column in list(rows):  # one column at a time: the old one goes as the new one comes
        rows[column] = rows[column][order]
    blob = blob[order]
    new_position = np.empty_like(order)
    new_position[order] = np.arange(len(order), dtype=np.int32)
    hash_order = new_position[by_hash]
    del order, new_position, by_hash

    # Package ids become positions in the sorted name list.
    package_ids = rank["package"][rows.pop("package")].astype(np.int32)
    packages = sorted(
        values["package"], key=_sort_key("package")
    )  # the order rank["package"] gave the ids
    present = np.bincount(package_ids, minlength=len(packages))
    starts = np.concatenate(([0], np.cumsum(present))).astype(np.int64)
    if (present == 0).any():  # a package all of whose rows were duplicates elsewhere
        packages = [p for p, n in zip(packages, present) if n]
        remap = np.cumsum(present > 0) - 1
        package_ids = remap[package_ids].astype(np.int32)
        starts = np.concatenate(([0], np.cumsum(present[present > 0]))).astype(np.int64)

    row_sizes = rows.pop("size", None)
    codes = {c: _narrow(a, len(values[c])) for c, a in rows.items()}
    package_ids = _narrow(package_ids, len(packages))
    stack_names = sorted({s for stackset in values["stacks"] for s in stackset})
    stack_code = {s: i for i, s in enumerate(stack_names)}
    tokens: dict[str, int] = {}
    index_codes = {c: codes[c] for c in TEXT_COLUMNS}
    index_codes["package"] = package_ids
    index_codes["stackset"] = codes["stacks"]
    index_codes["variantset"] = codes["variants"]
    stacksets = [[stack_code[s] for s in stackset] for stackset in values["stacks"]]
    hash_blob = memoryview(blob).cast("B")
    built = IndexParts(
        packages=packages,
        starts=starts,
        values={c: StringTable.of(values[c]) for c in TEXT_COLUMNS},
        codes=index_codes,
        stack_names=stack_names,
        stacksets=Ragged.of(stacksets, np.uint16 if len(stack_names) <= 1 << 16 else np.int32),
        variantsets=_token_lists(values["variants"], tokens),
        variant_tokens=StringTable.of(list(tokens)),
        hash_blob=hash_blob,
        hash_order=hash_order,
        sizes=row_sizes,
        origins={
            source: [o.root, o.layout, None] for source, o in origins.items() if o.root is not None
        },
        graph=build_graph(graphs, hash_blob),
    )
    built.facet_values, built.facet_bits, built.facet_histograms = _facets(
        built, {f: values[f] for f in FACETS if f != "stack"}, stacksets
    )
    return Index(built), problems


def _concatenated(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, np.uint8)


def _codes_in(table: dict, values: Sequence) -> np.ndarray:
    """The code of each value in `table` (value -> code), adding the values it lacks in the
    order they come: look-ups in C, a Python step per distinct value only."""
    for value in dict.fromkeys(values):
        if value not in table:
            table[value] = len(table)
    return np.fromiter(map(table.__getitem__, values), dtype=np.int32, count=len(values))


def _token_lists(lists: list[tuple[str, ...]], tokens: dict[str, int]) -> Ragged:
    """Each list of strings as codes into `tokens` (filled as it goes), in two arrays."""
    flat = list(chain.from_iterable(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    if lists:
        np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=offsets[1:])
    return Ragged(offsets, _codes_in(tokens, flat))


def _unclaimed(claimed: set[str], rows: dict[str, np.ndarray], values) -> np.ndarray | None:
    """The rows not read from a spec file that an older page claims (None: all of them)."""
    import os

    dropped = np.array(
        [os.path.abspath(source) in claimed for source in values["source"]], dtype=bool
    )
    if not dropped.any():
        return None
    return ~dropped[rows["source"]]


def _sort_key(column: str):
    if column == "version":
        return _newest_first
    if column == "compiler":
        return _compiler_order
    return lambda v: (v.lower(), v)


def _newest_first(version: str):
    return _Descending(version_key(version))


class _Descending:
    __slots__ = ("key",)

    def __init__(self, key) -> None:
        self.key = key

    def __lt__(self, other: _Descending) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and other.key == self.key


def _compiler_order(value: str):
    name, _, version = value.partition("@")
    return (name, version_key(version))


def _ranks(values: list[str], key) -> np.ndarray:
    """rank[code] = position of values[code] in sorted order."""
    ranks = np.empty(len(values), dtype=np.int32)
    ranks[sorted(range(len(values)), key=lambda c: key(values[c]))] = np.arange(
        len(values), dtype=np.int32
    )
    return ranks


def _first_of_duplicates(by_hash, keys, rows, values, blob):
    """Rows to keep when one hash appears twice in one tag, as one kind (None: no duplicates).

    `by_hash` has the rows sorted by (first 8 hash characters, tag, kind), `keys` those characters
    as bits in that order: a duplicate is in a run of equal keys and tags, where full hashes
    are compared and the first row (file order) is kept.
    """
    if len(by_hash) < 2:
        return None, []
    tags, kinds = rows["tag"], rows["kind"]
    # (A spec both installed here and a binary in a cache is listed as each.)
    same = (
        (keys[1:] == keys[:-1])
        & (tags[by_hash][1:] == tags[by_hash][:-1])
        & (kinds[by_hash][1:] == kinds[by_hash][:-1])
    )
    if not same.any():
        return None, []
    keep = np.ones(len(by_hash), dtype=bool)
    content = [c for c in rows if c != "source"]  # every column and the size
    stack_code = {stacks: code for code, stacks in enumerate(values["stacks"])}
    problems: list[LoadProblem] = []
    # Runs of equal keys: a run starts where `same` turns on, and takes the row before it.
    starts = np.flatnonzero(same & ~np.concatenate(([False], same[:-1])))
    ends = np.flatnonzero(same & ~np.concatenate((same[1:], [False]))) + 2
    for start, end in zip(starts.tolist(), ends.tolist()):
        first_of: dict[bytes, int] = {}
        for row in sorted(by_hash[start:end].tolist()):  # file order: the first seen is kept
            digest = bytes(blob[row])
            first = first_of.setdefault(digest, row)
            if first == row:
                continue
            keep[row] = False
            differ = [c for c in content if rows[c][row] != rows[c][first]]
            if differ == ["stacks"]:  # one binary in several stacks' indexes: in all of them
                merged = tuple(
                    sorted(
                        set(values["stacks"][rows["stacks"][first]])
                        | set(values["stacks"][rows["stacks"][row]])
                    )
                )
                rows["stacks"][first] = stack_code.setdefault(merged, len(values["stacks"]))
                if rows["stacks"][first] == len(values["stacks"]):
                    values["stacks"].append(merged)
                continue
            if differ:
                problems.append(
                    LoadProblem(
                        values["source"][rows["source"][row]],
                        f"hash {digest.decode()} is already in tag {values['tag'][tags[row]]!r} "
                        "with different content "
                        f"(first seen in {values['source'][rows['source'][first]]}); "
                        "kept the first",
                        "warning",
                    )
                )
    return (None if keep.all() else keep), problems


def _packed(columns: list[tuple[np.ndarray, int]]) -> list[np.ndarray]:
    """Columns of codes (each with how many values it can take), most significant first,
    packed into as few uint64 keys as hold them: one sort key where there were several."""
    keys: list[np.ndarray] = []
    key, used = None, 0
    for column, count in columns:
        width = max(1, (count - 1).bit_length())
        if key is not None and used + width > 64:
            keys.append(key)
            key, used = None, 0
        part = column.astype(np.uint64)
        key = part if key is None else (key << np.uint64(width)) | part
        used += width
    if key is not None:
        keys.append(key)
    return keys


def _sort_rows(keys: list[np.ndarray], stable: bool = True) -> np.ndarray:
    """Rows ordered by `keys` (most significant first); ties keep their order when `stable`."""
    if len(keys) == 1:
        return np.argsort(keys[0], kind="stable" if stable else "quicksort")
    return np.lexsort(keys[::-1])  # stable; its last key is the primary one


def _facets(
    parts: IndexParts, names_of: dict[str, list[str]], stacksets: list[list[int]]
) -> tuple[dict[str, list[str]], dict[str, list[bytes]], dict[str, np.ndarray]]:
    """Each facet's values (sorted), the bitset of the rows holding each, and per package how
    many of its rows hold each; from the builder's tables (`names_of`: facet -> code -> text).
    Counts come from one bincount a facet (of package and code together), not a pass a value."""
    values: dict[str, list[str]] = {}
    bits: dict[str, list[bytes]] = {}
    histograms: dict[str, np.ndarray] = {}
    n_packages = len(parts.packages)
    package_of_row = np.repeat(np.arange(n_packages, dtype=np.int64), np.diff(parts.starts))
    for facet in FACETS:
        if facet == "stack":
            names = parts.stack_names
            member = np.zeros((len(names), len(stacksets)), dtype=np.int64)
            for code, stackset in enumerate(stacksets):
                member[stackset, code] = 1
            column = parts.codes["stackset"].astype(np.int64)
            per_set = np.bincount(
                package_of_row * len(stacksets) + column, minlength=n_packages * len(stacksets)
            )
            histogram = per_set.reshape(n_packages, len(stacksets)) @ member.T  # (package, stack)
        else:
            names = names_of[facet]
            column = parts.codes[facet].astype(np.int64)
            histogram = np.bincount(
                package_of_row * len(names) + column, minlength=n_packages * len(names)
            ).reshape(n_packages, len(names))
        totals = histogram.sum(axis=0)
        present = [c for c in range(len(names)) if totals[c]]  # not only in dropped duplicates
        order = _sort_key(facet)
        present.sort(key=lambda c: order(names[c]))
        values[facet] = [names[c] for c in present]
        if facet == "stack":
            bits[facet] = [
                np.packbits(member[c].astype(bool)[column], bitorder="little").tobytes()
                for c in present
            ]
        else:
            bits[facet] = [np.packbits(column == c, bitorder="little").tobytes() for c in present]
        histograms[facet] = np.ascontiguousarray(histogram[:, present], dtype=np.int32)
    return values, bits, histograms
