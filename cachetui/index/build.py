"""The builder: loader chunks merged into the parts of one Index (IndexParts).

Rows that repeat a hash in one tag are dropped (the first is kept), the rest put in display
order (package, then tag, newest version, os, target, compiler), and each facet's values,
bitsets and per-package counts computed. Column work is numpy's: no Python step a row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from cachetui.index.graph import build_graph
from cachetui.index.hash_column import hash_bits
from cachetui.index.parts import TEXT_COLUMNS, IndexParts
from cachetui.index.strings import Ragged, StringTable
from cachetui.index.versions import version_key
from cachetui.model import FACETS, LoadProblem
from cachetui.sources.columns import COLUMNS, ColumnChunk
from cachetui.sources.mirror import Origin
from cachetui.sources.nodes import NodeColumns
from cachetui.sources.summary import BUILD_COLUMNS


def build_parts(chunks: Iterable[ColumnChunk]) -> tuple[IndexParts, list[LoadProblem]]:
    """Merge loader chunks into the parts of one Index; duplicate (hash, tag) rows keep the
    first.

    Each chunk is merged as it arrives: while loader processes still read, this process
    is otherwise idle, and a merged chunk's memory can go. Memory is kept lean on purpose:
    on a virtual machine, the first touch of a fresh page costs more than the work done on
    it (about 2 ms a megabyte here), so columns are held in their narrowest type as they
    are merged, and reordered one at a time rather than all copied at once (each step
    below lets go of what it replaces, as soon as it can)."""
    merged, bits = _merge(chunks)
    if merged.claimed:  # a spec file an older page lists is read with the page (and its tag)
        bits = _drop_claimed(merged, bits)
    by_hash = _hash_sorted(merged, bits)
    keep, problems = _first_of_duplicates(
        by_hash, bits[by_hash], merged.rows, merged.values, merged.blob
    )
    del bits
    if keep is not None:
        by_hash = _drop_duplicates(merged, keep, by_hash)
    hash_order, package_rank = _display_order(merged, by_hash)
    del by_hash
    packages, package_ids, starts = _package_ranges(merged, package_rank)
    return _assembled(merged, packages, package_ids, starts, hash_order), problems


@dataclass
class _Merged:
    """The chunks merged: what each step of build_parts filters or reorders, every per-row
    array (`rows` and `blob`) in step with the others."""

    rows: dict[str, np.ndarray]  # column -> code per row (and "size" -> bytes per row)
    values: dict[str, list]  # column -> code -> value
    blob: np.ndarray  # a hash ("S32") a row
    graphs: list[NodeColumns]
    origins: dict[str, Origin]
    claimed: set[str]  # spec files an older page lists (their rows are the page's)


def _merge(chunks: Iterable[ColumnChunk]) -> tuple[_Merged, np.ndarray]:
    """The chunks merged as they arrive (each chunk's codes mapped to the index's tables),
    and the first 8 characters of every hash as bits (hash_bits), for the sort by hash."""
    columns = [c for c in COLUMNS if c != "build"] + list(BUILD_COLUMNS)
    tables: dict[str, dict] = {c: {} for c in columns}
    parts: dict[str, list[np.ndarray]] = {c: [] for c in columns}
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
    rows = {c: _concatenated(parts.pop(c)) for c in columns}
    if any(isinstance(part, np.ndarray) for part in sizes):
        rows["size"] = np.concatenate(
            [p if isinstance(p, np.ndarray) else np.full(p, -1, np.int64) for p in sizes]
        )
    values = {c: list(tables[c]) for c in columns}
    blob = np.frombuffer(b"".join(blobs), dtype="S32")
    del blobs
    bits = np.concatenate(bits_parts) if bits_parts else np.zeros(0, np.uint64)
    del bits_parts
    return _Merged(rows, values, blob, graphs, origins, claimed), bits


def _drop_claimed(merged: _Merged, bits: np.ndarray) -> np.ndarray:
    """The rows of the spec files an older page claims, dropped; the bits of those kept."""
    keep = _unclaimed(merged.claimed, merged.rows, merged.values)
    if keep is not None:
        merged.rows, merged.blob, bits = (
            {c: a[keep] for c, a in merged.rows.items()},
            merged.blob[keep],
            bits[keep],
        )
    return bits


def _hash_sorted(merged: _Merged, bits: np.ndarray) -> np.ndarray:
    """The rows sorted by (hash, tag, kind)."""
    rows, values = merged.rows, merged.values
    # One sort by (hash, tag) finds the duplicates and is the hash order the index keeps.
    # Not stable (a third of the time): rows whose hashes share their first 8 characters are
    # put back in file order where it matters, among duplicates.
    return _sort_rows(
        _packed(
            [
                (bits, 1 << 40),
                (rows["tag"], len(values["tag"])),
                (rows["kind"], len(values["kind"])),
            ]
        ),
        stable=False,
    )


def _drop_duplicates(merged: _Merged, keep: np.ndarray, by_hash: np.ndarray) -> np.ndarray:
    """Only the rows in `keep` kept; `by_hash` (rows in hash order) renumbered to match."""
    rows = merged.rows
    for column in list(rows):
        rows[column] = rows[column][keep]
    merged.blob = merged.blob[keep]
    new_row = np.cumsum(keep) - 1  # old row -> new row, where kept
    return new_row[by_hash[keep[by_hash]]]


def _display_order(merged: _Merged, by_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows reordered for display; gives the hash order (rows sorted by hash, as they are
    numbered now) and each package code's rank among the sorted names."""
    rows, values = merged.rows, merged.values
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
    merged.blob = merged.blob[order]
    new_position = np.empty_like(order)
    new_position[order] = np.arange(len(order), dtype=np.int32)
    hash_order = new_position[by_hash]
    return hash_order, rank["package"]


def _package_ranges(
    merged: _Merged, package_rank: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The package names in order, each row's package id (its position among them) and each
    package's first row (and the end of the last), its rows being contiguous now."""
    values = merged.values
    # Package ids become positions in the sorted name list.
    package_ids = package_rank[merged.rows.pop("package")].astype(np.int32)
    packages = sorted(
        values["package"], key=_sort_key("package")
    )  # the order package_rank gave the ids
    present = np.bincount(package_ids, minlength=len(packages))
    starts = np.concatenate(([0], np.cumsum(present))).astype(np.int64)
    if (present == 0).any():  # a package all of whose rows were duplicates elsewhere
        packages = [p for p, n in zip(packages, present) if n]
        remap = np.cumsum(present > 0) - 1
        package_ids = remap[package_ids].astype(np.int32)
        starts = np.concatenate(([0], np.cumsum(present[present > 0]))).astype(np.int64)
    return packages, package_ids, starts


def _assembled(
    merged: _Merged,
    packages: list[str],
    package_ids: np.ndarray,
    starts: np.ndarray,
    hash_order: np.ndarray,
) -> IndexParts:
    """The parts of the Index: codes in their narrowest types, stack and variant sets as
    codes into their own tables, the dependency graph, and the facets."""
    rows, values, blob, origins = merged.rows, merged.values, merged.blob, merged.origins
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
    hash_blob = blob.data.cast("B")  # .data: memoryview(blob), as numpy types it
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
        graph=build_graph(merged.graphs, hash_blob),
    )
    built.facet_values, built.facet_bits, built.facet_histograms = _facets(
        built, {f: values[f] for f in FACETS if f != "stack"}, stacksets
    )
    return built


def _narrow(codes: np.ndarray, distinct: int) -> np.ndarray:
    """Codes in the smallest unsigned type that holds them: a third of the memory at 1M rows."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if distinct <= np.iinfo(dtype).max + 1:
            return codes.astype(dtype)
    return codes


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
