"""Specs in columns with chunk-local string tables: what a loader (or a loader process)
hands to the index builder. Cheap to build column by column, cheap to send between
processes (arrays and small tables), and merged by table look-ups rather than per row.
"""

from __future__ import annotations

from array import array
from operator import attrgetter
from collections.abc import Callable
from typing import Any

from cachetui.model import LoadProblem, normalise_compiler
from cachetui.sources.database import DatabaseFile
from cachetui.sources.mirror import Origin, v2_tarball_path
from cachetui.sources.summary import LIST_COLUMNS, UNTAGGED, VALUE_COLUMNS, Record, SummaryFile, size_of, tarball_of

# Interned per row; "stacks" and "variants" hold tuples. A summary's tarball URL is held as
# the mirror root that Spack's v2 rule rebuilds it from ("tarball_root": one or two for a
# whole tag), or as itself where the rule does not give it back ("tarball_text"): a
# million distinct URLs would otherwise be a million strings to keep and to store.
COLUMNS = ("package", "version", "compiler", "platform", "os", "target", "tag", "source", "stacks", "variants",
           "tarball_root", "tarball_text")
_UNKNOWN_SIZE = array("q", [-1])

# One spelling per value: gcc@=11.4.0 and gcc@11.4.0 are one compiler, None is "none";
# a spec's stacks are a set.
CANONICAL = {
    "compiler": normalise_compiler,
    "stacks": lambda stacks: tuple(sorted(set(stacks))),
}


class ColumnChunk:
    def __init__(self) -> None:
        self.values: dict[str, list[Any]] = {c: [] for c in COLUMNS}
        self.codes: dict[str, array] = {c: array("i") for c in COLUMNS}
        self._code_of: dict[str, dict[Any, int]] = {c: {} for c in COLUMNS}
        self._hashes: list[str] = []
        self.hash_blob = b""  # 32 ASCII bytes a row, once sealed
        self.sizes = array("q")  # bytes, a row; -1 where unknown
        self.problems: list[LoadProblem] = []
        self.files = 0
        self.rows = 0
        # Databases, for the dependency graph: each file's nodes and edges (its row columns
        # dropped once they are in the columns above), and where it came from.
        self.graphs: list[DatabaseFile] = []
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
        self._constant("tag", summary.tag, n)
        self._constant("source", source, n)
        for column in VALUE_COLUMNS:
            self._column(column, summary.columns[column], summary.distinct[column], summary.strings if column in LIST_COLUMNS else None)
        hashes = list(map(attrgetter("hash"), records))
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
            roots, texts = _tarball_columns(summary.package, summary.columns, hashes, tarballs)
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
            self._constant("stacks", tuple(sorted(set(origin.stacks))) if origin is not None else (), n)
            for name, values in (("package", db.names), ("version", db.versions), ("compiler", db.compilers),
                                 ("platform", db.platforms), ("os", db.oss), ("target", db.targets), ("variants", db.variants)):
                values = column(values)
                self._column(name, values, set(values), None)
            self._hashes.extend(column(db.hashes))
            self._constant("tarball_root", None, n)
            self._constant("tarball_text", None, n)
            self.sizes.extend(array("q", [db.sizes.get(at, -1) for at in listed]) if db.sizes else _UNKNOWN_SIZE * n)
            self.rows += n
        # Every database goes to the graph, edges or not: a spec with none has an empty
        # tree (not "no dependency information"), and others' edges resolve to it.
        db.platforms = db.oss = db.targets = db.variants = []  # in the columns now; not shipped twice
        self.graphs.append(db)

    def seal(self) -> ColumnChunk:
        """Pack the hashes into one blob (32 bytes a row) before sending."""
        self.hash_blob += "".join(self._hashes).encode("ascii")
        self._hashes = []
        self._code_of = {c: {} for c in COLUMNS}  # not needed past this point; do not ship it
        return self

    def _code(self, column: str, value: Any) -> int:
        table = self._code_of[column]
        code = table.get(value)
        if code is None:
            code = table[value] = len(table)
            self.values[column].append(value)
        return code

    def _constant(self, column: str, value: Any, n: int) -> None:
        self.codes[column].extend(array("i", [self._code(column, value)]) * n)

    def _column(self, column: str, values: list[Any], distinct: set[Any], strings: Callable[[Any], Any] | None) -> None:
        table, canonical = self._code_of[column], CANONICAL.get(column)
        for value in distinct.difference(table):
            table[value] = len(table)
            if strings is not None:  # keyed by its JSON text (see _FastRecord), held as strings
                value = strings(value)
            # Shipped canonical: the builder, which merges every chunk on one core, needs
            # no per-value work of its own. Two spellings of one value share it there.
            self.values[column].append(value if canonical is None else canonical(value))
        if len(distinct) == 1:  # a file's specs often share a platform, compiler or os: no look-ups
            self._constant(column, next(iter(distinct)), len(values))
        else:
            self.codes[column].fromlist(list(map(table.__getitem__, values)))  # (extend from an iterator is slower)


def _tarball_columns(name: str, columns: dict[str, list[Any]], hashes: list[str], tarballs: list[Any]) -> tuple[list[str | None], list[str | None]]:
    """(mirror root, URL) a row: the root where Spack's v2 rule gives the URL back exactly
    from it and the row's fields (what cache.spack.io wrote), else the URL as it is."""
    canonical = {c: normalise_compiler(c) for c in set(columns["compiler"])}
    roots: list[str | None] = []
    texts: list[str | None] = []
    for url, version, compiler, platform, os_, target, digest in zip(
            tarballs, columns["version"], columns["compiler"], columns["platform"], columns["os"], columns["target"], hashes):
        url = tarball_of(url)
        if url is not None:
            path = v2_tarball_path(name, version, digest, platform, os_, target, canonical[compiler])
            root = url[: -len(path) - 1]
            if url.endswith(path) and url[-len(path) - 1 : -len(path)] == "/" and root and root[-1] != "/":
                roots.append(root)
                texts.append(None)
                continue
        roots.append(None)
        texts.append(url)
    return roots, texts
