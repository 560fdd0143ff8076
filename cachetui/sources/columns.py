"""Specs in columns with chunk-local string tables: what a loader (or a loader process)
hands to the index builder. Cheap to build column by column, cheap to send between
processes (arrays and small tables), and merged by table look-ups rather than per row.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable
from itertools import chain
from operator import attrgetter
from typing import Any, cast

from cachetui.model import BINARY_KIND, LoadProblem, normalise_compiler
from cachetui.sources.database import LISTED_KINDS, NODE_KINDS, DatabaseFile
from cachetui.sources.mirror import Origin, v2_compiler, v2_tarball_around_hash
from cachetui.sources.nodes import NodeColumns
from cachetui.sources.summary import (
    BUILD_COLUMNS,
    LIST_COLUMNS,
    UNTAGGED,
    Record,
    SummaryFile,
    size_of,
    tarball_of,
)

# Interned per row. "build" codes a row's (version, compiler, platform, os, target): each
# build the chunk has seen is five codes in `build_parts`, into the tables of those five
# columns (few builds, so the split costs nothing per row here, and the index builder turns
# the codes into columns with array look-ups); "stacks" and "variants" hold tuples. A
# summary's tarball URL is held as the mirror root that Spack's v2 rule rebuilds it from
# ("tarball_root": one or two for a whole tag), or as itself where the rule does not give
# it back ("tarball_text"): a million distinct URLs would otherwise be a million strings
# to keep and to store.
COLUMNS = (
    "package",
    "build",
    "tag",
    "source",
    "stacks",
    "variants",
    "tarball_root",
    "tarball_text",
    "kind",
)
_UNKNOWN_SIZE = array("q", [-1])


def _same(value: Any) -> Any:
    return value


# One spelling per value: gcc@=11.4.0 and gcc@11.4.0 are one compiler, None is "none"; the
# fast path reads versions as a tuple (the first is the spec's); a spec's stacks are a set.
_CANONICAL_PART = {
    "version": lambda versions: versions[0] if isinstance(versions, tuple) else versions,
    "compiler": normalise_compiler,
}
CANONICAL = {
    "stacks": lambda stacks: tuple(sorted(set(stacks))),
}


class ColumnChunk:
    def __init__(self) -> None:
        self.values: dict[str, list[Any]] = {
            c: [] for c in (*COLUMNS, *BUILD_COLUMNS)
        }  # (none for "build")
        self.codes: dict[str, array] = {c: array("i") for c in COLUMNS}
        self.build_parts = array(
            "i"
        )  # build code b: build_parts[5 * b : 5 * b + 5], codes into the BUILD_COLUMNS
        self._code_of: dict[str, dict[Any, int]] = {c: {} for c in (*COLUMNS, *BUILD_COLUMNS)}
        self._written: list[dict[Any, int]] = [
            {} for _ in BUILD_COLUMNS
        ]  # a build part as written -> its code
        self._hashes: list[str] = []
        self.hash_blob = b""  # 32 ASCII bytes a row, once sealed
        self.sizes = array("q")  # bytes, a row; -1 where unknown
        self.problems: list[LoadProblem] = []
        self.files = 0
        self.rows = 0
        # Databases, for the dependency graph: each file's nodes and edges in arrays, and
        # where it came from.
        self.graphs: list[NodeColumns] = []
        self.origins: dict[str, Origin] = {}
        self.claimed: list[str] = []  # absolute paths of spec files that older pages read

    def add(self, summary: SummaryFile, source: str) -> None:
        records: list[Record] = summary.records
        n = len(records)
        self.files += 1
        self.problems.extend(summary.problems)
        if not n:
            return
        self._constant("package", summary.package, n)
        self._constant("kind", BINARY_KIND, n)
        self._constant("tag", summary.tag, n)
        self._constant("source", source, n)
        for column in ("build", *LIST_COLUMNS):
            self._column(
                column,
                summary.columns[column],
                summary.distinct[column],
                summary.strings if column in LIST_COLUMNS else None,
            )
        hashes = summary.hashes
        self._hashes.extend(hashes)
        sizes = list(map(attrgetter("size"), records))
        if sizes.count("-") + sizes.count(None) == n:
            self.sizes.extend(_UNKNOWN_SIZE * n)
        else:
            self.sizes.extend(-1 if (b := size_of(v)) is None else b for v in sizes)
        tarballs = list(map(attrgetter("tarball"), records))
        if tarballs.count(None) == n:
            self._constant("tarball_root", None, n)
            self._constant("tarball_text", None, n)
        else:
            root = _common_root(
                summary.package,
                summary.columns["build"],
                summary.distinct["build"],
                hashes,
                tarballs,
            )
            if root is not None:  # the common case: every URL by the rule, from one root
                self._constant("tarball_root", root, n)
                self._constant("tarball_text", None, n)
            else:
                roots, texts = _tarball_columns(
                    summary.package, summary.columns["build"], hashes, tarballs
                )
                self._column("tarball_root", roots, set(roots), None)
                self._column("tarball_text", texts, set(texts), None)
        self.rows += n

    def add_database(self, db: DatabaseFile, source: str, origin: Origin | None) -> None:
        """The binaries of a database (or spec file) as rows; all its nodes for the graph."""
        self.files += 1
        self.problems.extend(db.problems)
        self.claimed.extend(db.claimed)
        listed = db.listed
        n = len(listed)
        if origin is not None and (origin.root is not None or origin.tag or origin.stacks):
            self.origins[source] = origin
        if n:
            pick = listed.__getitem__ if n != len(db.hashes) else None

            def column(values: list[Any]) -> list[Any]:
                return values if pick is None else [values[i] for i in listed]

            tag = (origin.tag if origin is not None else None) or db.tag or UNTAGGED
            self._constant("tag", tag, n)
            self._constant("source", source, n)
            self._constant(
                "stacks", tuple(sorted(set(origin.stacks))) if origin is not None else (), n
            )
            kinds = [NODE_KINDS[db.kinds[at]] for at in listed]
            self._column("kind", kinds, set(kinds), None)
            for name, values in (
                ("package", column(db.names)),
                ("variants", column(db.variants)),
                (
                    "build",
                    list(
                        zip(
                            *map(
                                column,
                                (db.versions, db.compilers, db.platforms, db.oss, db.targets),
                            )
                        )
                    ),
                ),
            ):
                self._column(name, values, set(values), None)
            self._hashes.extend(column(db.hashes))
            self._constant("tarball_root", None, n)
            self._constant("tarball_text", None, n)
            self.sizes.extend(
                array("q", [db.sizes.get(at, -1) for at in listed])
                if db.sizes
                else _UNKNOWN_SIZE * n
            )
            self.rows += n
        # Every database goes to the graph, edges or not: a spec with none has an empty
        # tree (not "no dependency information"), and others' edges resolve to it.
        self.graphs.append(db.to_columns())

    def add_columns(self, nodes: NodeColumns, source: str, origin: Origin | None) -> None:
        """The binaries of a database already in arrays (a large file's merged parts) as rows;
        all its nodes for the graph. Only into a new chunk: its tables are the nodes' own."""
        import numpy as np

        assert not self.rows, "add_columns takes a new chunk"
        self.files += 1
        if origin is not None and (origin.root is not None or origin.tag or origin.stacks):
            self.origins[source] = origin
        node_kinds = np.frombuffer(nodes.kinds, dtype=np.uint8)
        listed = np.flatnonzero(np.isin(node_kinds, LISTED_KINDS))
        n = len(listed)
        if n:
            self.values["kind"] = list(NODE_KINDS)
            self.codes["kind"] = array("i", node_kinds[listed].astype(np.int32).tobytes())
            tag = (origin.tag if origin is not None else None) or UNTAGGED
            self._constant("tag", tag, n)
            self._constant("source", source, n)
            self._constant(
                "stacks", tuple(sorted(set(origin.stacks))) if origin is not None else (), n
            )
            self._constant("tarball_root", None, n)
            self._constant("tarball_text", None, n)

            def codes(column: str) -> np.ndarray:
                return np.frombuffer(nodes.codes[column], dtype=np.int32)[listed]

            self.values["package"], self.codes["package"] = (
                list(nodes.tables["name"]),
                array("i", codes("name").tobytes()),
            )
            self.values["variants"], self.codes["variants"] = (
                list(nodes.tables["variants"]),
                array("i", codes("variants").tobytes()),
            )
            # A build: its five codes packed into one integer (each under its table's size),
            # so that finding the distinct ones is one sort of integers (a table of tuples
            # would be a Python object a row).
            sizes = [max(1, len(nodes.tables[column])) for column in BUILD_COLUMNS]
            for column in BUILD_COLUMNS:
                self.values[column] = list(nodes.tables[column])
            if math.prod(sizes) < 1 << 63:
                key = np.zeros(n, dtype=np.uint64)
                for column, size in zip(BUILD_COLUMNS, sizes):
                    key = key * np.uint64(size) + codes(column).astype(np.uint64)
                distinct, rows = np.unique(key, return_inverse=True)
                builds = np.empty((len(distinct), len(BUILD_COLUMNS)), dtype=np.int32)
                for at in range(len(BUILD_COLUMNS) - 1, -1, -1):
                    builds[:, at] = (distinct % np.uint64(sizes[at])).astype(np.int32)
                    distinct //= np.uint64(sizes[at])
            else:  # tables too large to pack (a crafted file): compare the codes themselves
                builds, rows = np.unique(
                    np.stack([codes(c) for c in BUILD_COLUMNS], axis=1), axis=0, return_inverse=True
                )
                builds = builds.astype(np.int32)
            self.build_parts = array("i", builds.tobytes())
            self.codes["build"] = array("i", rows.reshape(-1).astype(np.int32).tobytes())
            self.hash_blob = np.frombuffer(nodes.hashes, dtype="S32")[listed].tobytes()
            self.sizes = (
                array("q", [nodes.sizes.get(int(at), -1) for at in listed])
                if nodes.sizes
                else _UNKNOWN_SIZE * n
            )
            self.rows = n
        self.graphs.append(nodes)

    def seal(self) -> ColumnChunk:
        """Pack the hashes into one blob (32 bytes a row) before sending."""
        self.hash_blob += "".join(self._hashes).encode("ascii")
        self._hashes = []
        self._code_of, self._written = {}, []  # not needed past this point; do not ship them
        return self

    def _code(self, column: str, value: Any) -> int:
        table = self._code_of[column]
        code = table.get(value)
        if code is None:
            code = table[value] = len(table)
            self.values[column].append(value)
        return code

    def _build_part(self, column: str, written: Any) -> int:
        """The code of one part of a build as a record writes it (a versions tuple, a compiler
        spelled `gcc@=11.4.0`): each spelling made canonical once."""
        code = self._written[BUILD_COLUMNS.index(column)].get(written)
        if code is None:
            code = self._written[BUILD_COLUMNS.index(column)][written] = self._code(
                column, _CANONICAL_PART.get(column, _same)(written)
            )
        return code

    def _constant(self, column: str, value: Any, n: int) -> None:
        self.codes[column].extend(array("i", [self._code(column, value)]) * n)

    def _column(
        self,
        column: str,
        values: list[Any],
        distinct: set[Any],
        strings: Callable[[Any], Any] | None,
    ) -> None:
        table, canonical = self._code_of[column], CANONICAL.get(column)
        for value in distinct.difference(table):
            table[value] = len(table)
            if strings is not None:  # keyed by its JSON text (see _FastRecord), held as strings
                value = strings(value)
            # Shipped canonical: the builder, which merges every chunk on one core, needs
            # no per-value work of its own. Two spellings of one value share it there.
            if column == "build":
                codes = list(
                    map(dict.get, self._written, value)
                )  # each part as written: seen before, mostly
                if None in codes:
                    codes = list(map(self._build_part, BUILD_COLUMNS, value))
                self.build_parts.extend(cast("list[int]", codes))  # no None left in it
            else:
                self.values[column].append(value if canonical is None else canonical(value))
        if len(distinct) == 1:  # a file's specs often share a platform, compiler or os: no look-ups
            self._constant(column, next(iter(distinct)), len(values))
        else:
            self.codes[column].fromlist(
                list(map(table.__getitem__, values))
            )  # (extend from an iterator is slower)


def _rules(name: str, keys: Iterable[tuple]) -> dict[tuple, tuple[str, str]]:
    """Per build key: (what comes before the hash, what after it) in the path Spack's v2 rule
    gives a binary of that build below its mirror root (`/build_cache/...-<version>-`, `.spack`)."""
    compilers = {c: v2_compiler(normalise_compiler(c)) for c in {key[1] for key in keys}}
    rules = {}
    for key in keys:
        versions, compiler, platform, os_, target = key
        version = versions[0] if isinstance(versions, tuple) else versions
        head, tail = v2_tarball_around_hash(
            name, version, platform, os_, target, compilers[compiler]
        )
        rules[key] = ("/" + head, tail)
    return rules


def _common_root(
    name: str, builds: list[tuple], distinct: set[tuple], hashes: list[str], tarballs: list[Any]
) -> str | None:
    """The mirror root from which the rule gives back every URL of a file exactly, if there is
    one: checked with two joins, not a comparison per row."""
    if tarballs.count(None) or not isinstance(tarballs[0], str):
        return None
    rule = _rules(name, distinct)
    head, tail = rule[builds[0]]
    path = head + hashes[0] + tail
    first = tarballs[0]
    root = first[: -len(path)]
    if not root or root[-1] == "/" or first[-len(path) :] != path:
        return None
    heads = {key: root + h for key, (h, t) in rule.items()}
    tails = {key: t for key, (h, t) in rule.items()}
    try:
        written = "".join(tarballs)
    except TypeError:  # not all text
        return None
    rebuilt = "".join(
        chain.from_iterable(
            zip(map(heads.__getitem__, builds), hashes, map(tails.__getitem__, builds))
        )
    )
    return root if written == rebuilt else None


def _tarball_columns(
    name: str, builds: list[tuple], hashes: list[str], tarballs: list[Any]
) -> tuple[list[str | None], list[str | None]]:
    """(mirror root, URL) a row: the root where Spack's v2 rule gives the URL back exactly
    from it and the row's build and hash (what cache.spack.io wrote), else the URL as it is."""
    rule = _rules(name, set(builds))
    roots: list[str | None] = []
    texts: list[str | None] = []
    for url, key, digest in zip(tarballs, builds, hashes):
        url = tarball_of(url)
        if url is not None:
            head, tail = rule[key]
            path = head + digest + tail
            root = url[: -len(path)]
            if url.endswith(path) and root and root[-1] != "/":
                roots.append(root)
                texts.append(None)
                continue
        roots.append(None)
        texts.append(url)
    return roots, texts
