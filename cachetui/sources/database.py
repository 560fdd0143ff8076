"""Reader for Spack's database JSON: a build cache's `index.json`, or the v3 index blob
(spack-formats.md §1.3, §1.4 and "Loader requirements").

Every database version from 5 to 8 and every spec node format: the compiler comes from the
legacy `compiler` field, from the `c`/`cxx`/`fortran` build edges (v8), or from the
`annotations`; variants and flags from `parameters`; dependencies with their types.
Records that are not binaries in the cache (externals, `in_buildcache: false`) are kept, so
that the edges that point at them resolve, but they are not listed.

msgspec decodes the whole file into typed structs in C. The parts that repeat from spec to
spec (the architecture, with its target's feature list; the parameters; a legacy compiler)
are kept as raw JSON and decoded once per distinct text.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from cachetui.model import (
    BINARY_KIND,
    FLAG_KEYS,
    INSTALLED_KIND,
    LANGUAGES,
    NO_COMPILER,
    LoadProblem,
    normalise_compiler,
)
from cachetui.sources.nodes import NODE_COLUMNS, RECORD_RANKS, NodeColumns, coded
from cachetui.spack_format import quote_if_needed

HASH_RE = re.compile(r"^[a-z2-7]{32}$")
_BASE32_RUN = re.compile(r"[a-z2-7]*")
UNKNOWN = "unknown"  # a platform, os or target the record does not give

# Dependency types as bits (an edge has a set of them).
BUILD, LINK, RUN, TEST = 1, 2, 4, 8
DEPTYPE_BITS = {"build": BUILD, "link": LINK, "run": RUN, "test": TEST}

# What a node is, in the dependency graph. A binary (in a build cache) and an installed spec
# (in a local install database) are listed; the rest are there for edges to resolve.
BINARY, EXTERNAL, NOT_IN_CACHE, UNRESOLVED, DEPENDENCY_ONLY, INSTALLED, NOT_INSTALLED = range(7)
NODE_KINDS = (
    BINARY_KIND,
    "external",
    "not in the build cache",
    "not in this index",
    "a dependency in a spec file",
    INSTALLED_KIND,
    "not installed",
)
LISTED_KINDS = (BINARY, INSTALLED)

# Where a spec's compiler came from.
COMPILER_SOURCES = ("none", "legacy-field", "dependency", "annotation")
_NONE, _LEGACY, _DEPENDENCY, _ANNOTATION = range(4)

_LANGUAGES_SET = frozenset(LANGUAGES)  # an edge providing one of these names the compiler
_IGNORED_PARAMETERS = frozenset({"propagate", "abstract", "compiler_flags"})
_KNOWN_VERSIONS = frozenset({"5", "6", "7", "8"})


class NotADatabase(Exception):
    """The data is not a Spack database (or is broken beyond reading); str() says why."""


# -- the file, as msgspec decodes it ----------------------------------------------------

_NULL = msgspec.Raw(b"null")


class _Edge(msgspec.Struct, gc=False):
    name: str | None = None
    hash: str | None = None
    underscore_hash: str | None = msgspec.field(default=None, name="_hash")
    full_hash: str | None = None
    build_hash: str | None = None
    # Few distinct texts among millions of edges: decoded once each (see _edge_kind).
    type: msgspec.Raw = _NULL  # spec formats 1-3: a list of deptypes
    parameters: msgspec.Raw = _NULL  # spec formats 4-5: {deptypes, virtuals, ...}


class _Annotations(msgspec.Struct, gc=False):
    compiler: str | None = None
    original_specfile_version: int | None = None


class _Node(msgspec.Struct, gc=False):
    name: str | None = None
    version: str | int | float | None = None
    versions: list[str | int | float] | str | int | float | None = None
    # Raw cannot be in a union; an absent field reads as `null`.
    arch: msgspec.Raw = _NULL
    compiler: msgspec.Raw = _NULL
    parameters: msgspec.Raw = _NULL
    # Decoded later, a batch of nodes at a time (see _edges): millions of edge objects
    # alive at once cost gigabytes and, in one decode, three times the time.
    dependencies: msgspec.Raw = _NULL
    external: msgspec.Raw = _NULL
    annotations: _Annotations | None = None
    hash: str | None = None
    underscore_hash: str | None = msgspec.field(default=None, name="_hash")
    full_hash: str | None = None
    build_hash: str | None = None


class _Record(msgspec.Struct, gc=False):
    spec: _Node
    in_buildcache: bool | None = None
    installed: bool | None = None  # an install database's records say


class _RecordByName(msgspec.Struct, gc=False):
    """Database 5 and older: the record's spec is `{package name: node}`."""

    spec: dict[str, _Node]
    in_buildcache: bool | None = None
    installed: bool | None = None


class _Database(msgspec.Struct, gc=False):
    version: str | int | float | None = None
    installs: dict[str, _Record] | None = None


class _Top(msgspec.Struct, gc=False):
    database: _Database


class _LooseDatabase(msgspec.Struct, gc=False):
    version: Any = None
    installs: msgspec.Raw = _NULL


class _SpecKeys(msgspec.Struct, gc=False):
    spec: dict[str, msgspec.Raw] = {}


class _LooseTop(msgspec.Struct, gc=False):
    database: _LooseDatabase


_DECODE = msgspec.json.Decoder(_Top)
_DECODE_LOOSE = msgspec.json.Decoder(_LooseTop)
_DECODE_RECORD = msgspec.json.Decoder(_Record)
_DECODE_RAW_RECORDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_DECODE_SPEC_KEYS = msgspec.json.Decoder(_SpecKeys)
_DECODE_RECORD_BY_NAME = msgspec.json.Decoder(_RecordByName)
_DECODE_ANY = msgspec.json.Decoder()
_DECODE_NODES = msgspec.json.Decoder(list[_Node])
_DECODE_EDGES = msgspec.json.Decoder(list[_Edge] | dict[str, _Edge] | None)
_DECODE_EDGE_LISTS = msgspec.json.Decoder(list[list[_Edge] | dict[str, _Edge] | None])
_EDGE_BATCH = 20_000  # nodes whose edges are decoded together
_START = re.compile(rb'\A\s*\{\s*"database"\s*:')


def looks_like_database(head: bytes) -> bool:
    """Whether data starting with `head` is a Spack database (`{"database": ...`)."""
    return _START.match(head) is not None


# -- what the reader hands on ---------------------------------------------------------


@dataclass
class DatabaseFile:
    """Every record of one database, normalised, in columns (a node a position).

    Nodes are the records, then the hashes that edges name but no record holds. Columns
    hold one value per node; edges point from a node position to a node position.
    """

    db_version: str
    hashes: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    compilers: list[str] = field(default_factory=list)
    compiler_sources: array = field(default_factory=lambda: array("B"))
    platforms: list[str] = field(default_factory=list)
    oss: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    variants: list[tuple[str, ...]] = field(default_factory=list)
    kinds: array = field(default_factory=lambda: array("B"))
    external_paths: dict[int, str] = field(default_factory=dict)
    edge_from: array = field(default_factory=lambda: array("i"))
    edge_to: array = field(default_factory=lambda: array("i"))
    edge_types: array = field(default_factory=lambda: array("B"))
    edge_virtuals: list[tuple[str, ...]] = field(default_factory=list)
    sizes: dict[int, int] = field(default_factory=dict)  # node -> bytes, where a spec file says
    # The node a c/cxx/fortran build edge leads to (the compiler), -1 where none.
    compiler_targets: array = field(default_factory=lambda: array("i"))
    problems: list[LoadProblem] = field(default_factory=list)
    tag: str | None = None  # where the file itself names one (an older cache.spack.io page)
    claimed: list[str] = field(
        default_factory=list
    )  # spec files an older page read: not sources of their own

    @property
    def listed(self) -> list[int]:
        """The positions of the binaries (what the cache offers) and of installed specs."""
        return [i for i, kind in enumerate(self.kinds) if kind in LISTED_KINDS]

    def to_columns(self) -> NodeColumns:
        """The nodes and edges in arrays, as the graph is built from them."""
        n = len(self.hashes)
        out = NodeColumns(
            hashes="".join(self.hashes).encode("ascii"),
            kinds=array("B", self.kinds),
            compiler_sources=array("B", self.compiler_sources),
            compiler_targets=array("i", self.compiler_targets)
            if len(self.compiler_targets) == n
            else array("i", [-1]) * n,
            external_paths=dict(self.external_paths),
            sizes=dict(self.sizes),
            edge_from=array("i", self.edge_from),
            edge_to=array("i", self.edge_to),
            edge_types=array("B", self.edge_types),
        )
        columns: tuple[Sequence[Any], ...] = (  # in NODE_COLUMNS order
            self.names,
            self.versions,
            self.compilers,
            self.platforms,
            self.oss,
            self.targets,
            self.variants,
        )
        for column, values in zip(NODE_COLUMNS, columns):
            out.tables[column], out.codes[column] = coded(values)
        out.virtual_sets, edge_virtuals = coded([(), *self.edge_virtuals])
        del edge_virtuals[0]  # () first: code 0 is "no virtuals"
        out.edge_virtuals = edge_virtuals
        return out

    def extend(self, other: DatabaseFile) -> None:
        """Add another file's nodes and edges (a hash already here keeps its first record;
        one that was only named by an edge takes the record)."""
        position = dict(zip(self.hashes, range(len(self.hashes))))
        mapped = []
        taken = []  # (my node, its record's position in other): their compiler edges map later
        columns = (
            "hashes",
            "names",
            "versions",
            "compilers",
            "platforms",
            "oss",
            "targets",
            "variants",
        )
        self.compiler_targets.extend(
            array("i", [-1]) * (len(self.hashes) - len(self.compiler_targets))
        )
        for at, hash_ in enumerate(other.hashes):
            mine = position.get(hash_)
            if mine is None:
                mine = position[hash_] = len(self.hashes)
                for column in columns:
                    getattr(self, column).append(getattr(other, column)[at])
                self.compiler_sources.append(other.compiler_sources[at])
                self.kinds.append(other.kinds[at])
                self.compiler_targets.append(-1)
                taken.append((mine, at))
            elif record_rank(other.kinds[at]) > record_rank(self.kinds[mine]):
                # A better record of the same hash: a binary over a spec file's mere
                # dependency, anything over a hash only an edge named.
                for column in columns[1:]:
                    getattr(self, column)[mine] = getattr(other, column)[at]
                self.compiler_sources[mine] = other.compiler_sources[at]
                self.kinds[mine] = other.kinds[at]
                taken.append((mine, at))
            mapped.append(mine)
        if len(other.compiler_targets) == len(other.hashes):
            for mine, at in taken:
                if other.compiler_targets[at] >= 0:
                    self.compiler_targets[mine] = mapped[other.compiler_targets[at]]
        for at, mine in enumerate(mapped):  # every record's, not only the last one's
            if at in other.external_paths:
                self.external_paths.setdefault(mine, other.external_paths[at])
            if at in other.sizes:
                self.sizes.setdefault(mine, other.sizes[at])
        have_edges = set(self.edge_from)
        for i, at in enumerate(other.edge_from):
            if mapped[at] in have_edges:
                continue  # this node's edges came with its first record
            self.edge_from.append(mapped[at])
            self.edge_to.append(mapped[other.edge_to[i]])
            self.edge_types.append(other.edge_types[i])
            self.edge_virtuals.append(other.edge_virtuals[i])
        self.problems.extend(other.problems)


def record_rank(kind: int) -> int:
    """How much a record of this kind tells: a binary most, a hash an edge named least."""
    return RECORD_RANKS[kind] if 0 <= kind < len(RECORD_RANKS) else 0


def read_database(data: bytes, source: str, check_version: bool = True) -> DatabaseFile:
    """Parse one database. Raises NotADatabase with a user-facing reason. (`check_version`:
    say so when the version is not one cachetui knows; the parts of a large file do not,
    their file says it once.)"""
    with unreadable_as(NotADatabase):
        version, records, problems = _decode(data, source)
        db = DatabaseFile(db_version=version, problems=problems)
        if check_version:
            problems.extend(version_problems(version, source))
        normalise_records(db, records, source)
    return db


def version_problems(version: str, source: str) -> list[LoadProblem]:
    if _known_version(version):
        return []
    return [
        LoadProblem(
            source,
            f"database version {version!r} is not one cachetui knows (5 to 8); read as version 8",
            "warning",
        )
    ]


@contextmanager
def unreadable_as(error: Callable[[str], Exception]) -> Iterator[None]:
    """Data the decoder cannot take even as JSON: invalid UTF-8 inside a string (msgspec
    raises UnicodeDecodeError, not a DecodeError), or nesting deeper than Python recurses."""
    try:
        yield
    except UnicodeDecodeError as bad:
        raise error(f"not valid UTF-8 (a bad byte in a string, {bad.reason})") from None
    except RecursionError:
        raise error("data is nested too deeply to read") from None


def _known_version(version: str) -> bool:
    """5 to 8, or an older one (before 5, versions were not integers: "0.9.3")."""
    if version in _KNOWN_VERSIONS:
        return True
    return bool(re.fullmatch(r"0(\.\d+)+|[1-4]", version))


def _decode(
    data: bytes, source: str
) -> tuple[str, list[tuple[str, _Node, Said]], list[LoadProblem]]:
    """(database version, [(installs key, node, in_buildcache)], problems)."""
    problems: list[LoadProblem] = []
    try:
        top = _DECODE.decode(data)
        db = top.database
        installs = db.installs or {}
        version = _version_text(db.version)
        records = [(key, record.spec, _said(record)) for key, record in installs.items()]
    except msgspec.ValidationError:
        # Some record does not have the expected shape: read the records one at a time.
        version, records = _decode_loose(data, source, problems)
    except msgspec.DecodeError as error:
        raise NotADatabase(f"not valid JSON ({error})") from None
    # Database 5 and older key a record's spec by package name: the node decoded above is
    # then empty (no name, no version), and the record is read again in that form.
    if records and all(
        node.name is None and node.version is None and node.versions is None
        for _, node, _ in records[:50]
    ):
        version, records = _decode_loose(data, source, problems, by_name=True)
    return version, records, problems


def _decode_loose(
    data: bytes, source: str, problems: list[LoadProblem], by_name: bool = False
) -> tuple[str, list[tuple[str, _Node, Said]]]:
    """Each record on its own, when some record does not have the expected shape: records
    stay raw JSON until each is decoded (typed), so one bad record among a million costs
    little more than none."""
    try:
        db = _DECODE_LOOSE.decode(data).database
        installs = _DECODE_RAW_RECORDS.decode(db.installs) if db.installs != _NULL else {}
    except msgspec.ValidationError as error:
        raise NotADatabase(f"not a Spack database: {error}") from None
    except msgspec.DecodeError as error:
        raise NotADatabase(f"not valid JSON ({error})") from None
    version = _version_text(db.version)
    records: list[tuple[str, _Node, Said]] = []
    bad: list[str] = []
    for key, raw in installs.items():
        try:
            if by_name or _keyed_by_name(raw):
                named = _DECODE_RECORD_BY_NAME.decode(raw)
                if len(named.spec) != 1:
                    raise ValueError(f"spec should hold one package, holds {len(named.spec)}")
                ((name, node),) = named.spec.items()
                if node.name is None:
                    node.name = name
                records.append((key, node, _said(named)))
            else:
                record = _DECODE_RECORD.decode(raw)
                records.append((key, record.spec, _said(record)))
        except (msgspec.ValidationError, msgspec.DecodeError, ValueError) as error:
            bad.append(f"{_shown(key)} ({error})")
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        problems.append(
            LoadProblem(source, f"{len(bad)} install record(s) skipped: {'; '.join(bad[:3])}{more}")
        )
    return version, records


# What a record says of itself, beside its spec: in a build cache (True), not (False), or
# nothing (None: a local install database's records, unless this).
SAYS_NOT_INSTALLED = "not installed"
Said = bool | str | None


def _said(record: _Record | _RecordByName) -> Said:
    if record.in_buildcache is None and record.installed is False:
        return SAYS_NOT_INSTALLED
    return record.in_buildcache


def _keyed_by_name(raw: msgspec.Raw) -> bool:
    """Whether a record's spec is `{package name: node}` (database 5 and older)."""
    try:
        spec = _DECODE_SPEC_KEYS.decode(raw).spec
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return "name" not in spec and len(spec) == 1


def _version_text(version: Any) -> str:
    if version is None:
        return "?"
    return str(version)


# -- normalising ----------------------------------------------------------------------


def normalise_records(
    db: DatabaseFile,
    records: Sequence[tuple[str, _Node, Said]],
    source: str,
    edge_aliases: dict[str, str] | None = None,
) -> None:
    """Fill `db`'s columns from the records. Column by column, with each repeated text
    (architecture, parameters, compiler, edge type) decoded once: a loop over a million
    records that did everything per record took four times as long. (`edge_aliases`: what a
    hash an edge names stands for, where edges do not name nodes by their keys.)"""
    records = _valid_records(records, db, source)
    nodes = [node for _, node, _ in records]
    hashes = db.hashes = [key for key, _, _ in records]
    position = dict(zip(hashes, range(len(hashes))))
    db.names = [node.name or UNKNOWN for node in nodes]
    db.versions = list(map(_version_of, nodes))

    arches = _decoded([bytes(node.arch) for node in nodes], _arch_of, (UNKNOWN, UNKNOWN, UNKNOWN))
    db.platforms = [arch[0] for arch in arches]
    db.oss = [arch[1] for arch in arches]
    db.targets = [arch[2] for arch in arches]
    db.variants = _decoded([bytes(node.parameters) for node in nodes], _variants_of, ())

    # The compiler: the legacy field; else the c/cxx/fortran edge (below, once every node
    # has its position); else the annotation; else none.
    compilers = _decoded([bytes(node.compiler) for node in nodes], _legacy_compiler, None)
    sources = [_NONE if c is None else _LEGACY for c in compilers]
    for at, notes in [
        (at, node.annotations) for at, node in enumerate(nodes) if node.annotations is not None
    ]:
        annotated = notes.compiler
        if compilers[at] is None and annotated:
            compilers[at], sources[at] = normalise_compiler(annotated), _ANNOTATION
    db.compilers = [NO_COMPILER if c is None else c for c in compilers]

    # A build cache's index says of every record whether it is in the cache, and Spack reads
    # a missing field as false. A database that never says is a local install database:
    # its records are what that user has installed (Spack's `buildcache list` shows none of
    # them), listed as installed specs, apart from binaries.
    says = [said for _, _, said in records]
    if all(said is None or said == SAYS_NOT_INSTALLED for said in says):
        db.kinds = array("B", [INSTALLED]) * len(nodes)
        for at in [at for at, said in enumerate(says) if said == SAYS_NOT_INSTALLED]:
            db.kinds[at] = NOT_INSTALLED
    else:
        db.kinds = array("B", [BINARY]) * len(nodes)
        for at in [at for at, said in enumerate(says) if said is not True]:
            db.kinds[at] = NOT_IN_CACHE
    externals = [bytes(node.external) for node in nodes]
    for at in [at for at, raw in enumerate(externals) if raw != b"null"]:
        if externals[at].strip() not in (b"null", b"false"):
            db.kinds[at] = EXTERNAL
            path = _external_path(externals[at])
            if path:
                db.external_paths[at] = path

    # Edges, a batch of nodes at a time; compilers from edges: prefer c, then cxx, then fortran.
    found: dict[int, tuple[int, int]] = {}  # node -> (rank of the virtual, compiler node)
    with_edges = [at for at, node in enumerate(nodes) if node.dependencies != _NULL]
    bad: list[str] = []
    edge_kinds: dict[bytes, tuple[int, tuple[str, ...]]] = {b"null": (0, ()), b"tnull": (0, ())}
    for start in range(0, len(with_edges), _EDGE_BATCH):
        batch = with_edges[start : start + _EDGE_BATCH]
        lists = _edge_lists([nodes[at] for at in batch], [hashes[at] for at in batch], bad)
        _add_edges(
            db,
            position,
            [at for at, edges in zip(batch, lists) if edges for _ in edges],
            [edge for edges in lists if edges for edge in edges],
            edge_kinds,
            found,
            edge_aliases,
        )
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        db.problems.append(
            LoadProblem(
                source,
                f"dependencies of {len(bad)} record(s) unreadable, "
                f"left out: {'; '.join(bad[:3])}{more}",
                "warning",
            )
        )
    db.compiler_targets = array("i", [-1]) * len(db.hashes)
    for at, (_, target) in found.items():
        db.compiler_targets[at] = target
        if sources[at] != _LEGACY:
            # A compiler no record holds (not in this index) is known by the edge's name only.
            name, version = db.names[target], db.versions[target]
            if version or (name != UNKNOWN and sources[at] == _NONE):
                db.compilers[at] = f"{name}@{version}" if version else name
                sources[at] = _DEPENDENCY
    db.compiler_sources = array("B", sources) + array("B", [_NONE]) * (
        len(db.hashes) - len(sources)
    )


def _edge_lists(nodes: list[_Node], hashes: list[str], bad: list[str]) -> list[list[_Edge] | None]:
    """Each node's edges, decoded in one go (one at a time if some node's are malformed)."""
    try:
        return [
            _edge_list(e) if e else None
            for e in _DECODE_EDGE_LISTS.decode(
                b"[" + b",".join(bytes(n.dependencies) for n in nodes) + b"]"
            )
        ]
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    lists: list[list[_Edge] | None] = []
    for node, hash_ in zip(nodes, hashes):
        try:
            edges = _DECODE_EDGES.decode(node.dependencies)
        except (msgspec.ValidationError, msgspec.DecodeError) as error:
            bad.append(f"{hash_[:7]} ({error})")
            edges = None
        lists.append(_edge_list(edges) if edges else None)
    return lists


def _add_edges(
    db: DatabaseFile,
    position: dict[str, int],
    sources: list[int],
    edges: list[_Edge],
    kinds: dict[bytes, tuple[int, tuple[str, ...]]],
    found: dict[int, tuple[int, int]],
    aliases: dict[str, str] | None = None,
) -> None:
    """Add edges (edges[i] leaves node sources[i]), column by column."""
    targets = [
        edge.hash or edge.underscore_hash or edge.full_hash or edge.build_hash or ""
        for edge in edges
    ]
    if aliases:
        targets = [aliases.get(target, target) for target in targets]
    to = list(map(position.get, targets))
    if None in to:  # a hash no record holds becomes a node of its own, named by the edge
        for i in [i for i, target in enumerate(to) if target is None]:
            hash_ = targets[i].strip().lower()
            target = position.get(hash_)
            if target is None and HASH_RE.match(hash_):
                target = position[hash_] = _add_unresolved(db, hash_, edges[i].name or UNKNOWN)
            to[i] = target
        keep = [i for i, target in enumerate(to) if target is not None]
        sources, edges, to = (
            [sources[i] for i in keep],
            [edges[i] for i in keep],
            [to[i] for i in keep],
        )
    nodes_to = cast("list[int]", to)  # every edge left leads to a node (the rest dropped)
    raws = [bytes(edge.parameters) for edge in edges]
    for i in [i for i, raw in enumerate(raws) if raw == b"null"]:
        raws[i] = b"t" + bytes(edges[i].type)  # spec formats 1-3
    for raw in set(raws).difference(kinds):
        kinds[raw] = _edge_kind(raw)
    edge_kinds = list(map(kinds.__getitem__, raws))
    db.edge_from.extend(sources)
    db.edge_to.extend(nodes_to)
    db.edge_types.extend([bits for bits, _ in edge_kinds])
    db.edge_virtuals.extend([virtuals for _, virtuals in edge_kinds])
    for i in [
        i
        for i, (_, virtuals) in enumerate(edge_kinds)
        if virtuals and not _LANGUAGES_SET.isdisjoint(virtuals)
    ]:
        virtuals, at = edge_kinds[i][1], sources[i]
        rank = min(LANGUAGES.index(v) for v in virtuals if v in _LANGUAGES_SET)
        if at not in found or rank < found[at][0]:
            found[at] = (rank, nodes_to[i])


def _valid_records(
    records: Sequence[tuple[str, _Node, Said]], db: DatabaseFile, source: str
) -> Sequence[tuple[str, _Node, Said]]:
    """The records whose key (or, failing that, node) holds a 32-character hash, keys
    lower-cased."""
    keys = [key for key, _, _ in records]
    if (
        len(set(keys)) == len(keys)
        and not (set(map(len, keys)) - {32})
        and _BASE32_RUN.fullmatch("".join(keys))
    ):
        return records  # the common case, checked in bulk
    valid, bad = [], []
    seen: set[str] = set()
    for key, node, in_buildcache in records:
        hash_ = key.strip().lower()
        if not HASH_RE.match(hash_):
            hash_ = (
                (node.hash or node.underscore_hash or node.full_hash or node.build_hash or "")
                .strip()
                .lower()
            )
            if not HASH_RE.match(hash_):
                bad.append(_shown(key))
                continue
        if hash_ not in seen:
            seen.add(hash_)
            valid.append((hash_, node, in_buildcache))
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        db.problems.append(
            LoadProblem(
                source,
                f"{len(bad)} install record(s) without a valid 32-character hash skipped: "
                f"{', '.join(bad[:3])}{more}",
            )
        )
    return valid


def _decoded(raws: list[bytes], decode, default):
    """decode(raw) for each raw text, decoding each distinct text once; `null` -> default."""
    table = {raw: decode(raw) for raw in set(raws)}
    table[b"null"] = default
    return list(map(table.__getitem__, raws))


def _edge_list(dependencies: list[_Edge] | dict[str, _Edge]) -> list[_Edge]:
    if isinstance(dependencies, dict):  # spec format 1: keyed by name
        for name, edge in dependencies.items():
            if edge.name is None:
                edge.name = name
        return list(dependencies.values())
    return dependencies


def _add_unresolved(db: DatabaseFile, hash_: str, name: str) -> int:
    """A node for a hash that edges name but no record holds."""
    db.hashes.append(hash_)
    db.names.append(name or UNKNOWN)
    db.versions.append("")
    db.compilers.append(NO_COMPILER)
    db.compiler_sources.append(_NONE)
    db.platforms.append(UNKNOWN)
    db.oss.append(UNKNOWN)
    db.targets.append(UNKNOWN)
    db.variants.append(())
    db.kinds.append(UNRESOLVED)
    return len(db.hashes) - 1


def _version_of(node: _Node) -> str:
    value = node.version if node.version is not None else node.versions
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None:
        return UNKNOWN
    text = str(value).strip()
    return text.removeprefix("=") or UNKNOWN


def _arch_of(raw: bytes) -> tuple[str, str, str]:
    try:
        arch = _DECODE_ANY.decode(raw)
    except msgspec.DecodeError:
        return (UNKNOWN, UNKNOWN, UNKNOWN)
    if not isinstance(arch, dict):
        return (UNKNOWN, UNKNOWN, UNKNOWN)
    target = arch.get("target")
    if isinstance(target, dict):
        target = target.get("name")
    return (_text(arch.get("platform")), _text(arch.get("platform_os")), _text(target))


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) and value.strip() else UNKNOWN


def _legacy_compiler(raw: bytes) -> str | None:
    try:
        compiler = _DECODE_ANY.decode(raw)
    except msgspec.DecodeError:
        return None
    if not isinstance(compiler, dict) or not isinstance(compiler.get("name"), str):
        return None
    version = compiler.get("version", compiler.get("versions"))
    if isinstance(version, list):
        version = version[0] if version else None
    if not isinstance(version, (str, int, float)) or isinstance(version, bool):
        return compiler["name"]
    return normalise_compiler(f"{compiler['name']}@{str(version).removeprefix('=')}")


def _variants_of(raw: bytes) -> tuple[str, ...]:
    """Variants as Spack prints them (`+x`, `~x`, `key=value`, `key:=a,b` with the values
    sorted, values quoted where Spack quotes them), then the compiler flags that are set
    (`cflags='-O2 -g'`), each group sorted."""
    try:
        parameters = _DECODE_ANY.decode(raw)
    except msgspec.DecodeError:
        return ()
    if not isinstance(parameters, dict):
        return ()
    variants: list[str] = []
    flags: list[str] = []
    for name, value in parameters.items():
        if not isinstance(name, str) or name in _IGNORED_PARAMETERS or value is None:
            continue
        if name in FLAG_KEYS:
            values = value if isinstance(value, list) else [value]
            text = " ".join(str(v) for v in values if v is not None)
            if text:
                flags.append(f"{name}={quote_if_needed(text)}")
        elif isinstance(value, bool):
            variants.append(f"+{name}" if value else f"~{name}")
        elif isinstance(value, list):
            # A multi-valued variant: Spack keeps its values as a sorted set, and prints
            # patches by their first 7 characters.
            texts = sorted({str(v) for v in value})
            if name == "patches":
                texts = [text[:7] for text in texts]
            if texts:
                variants.append(f"{name}:={quote_if_needed(','.join(texts))}")
        elif isinstance(value, (str, int, float)):
            variants.append(f"{name}={quote_if_needed(str(value))}")
    return tuple(sorted(variants) + sorted(flags))


def _edge_kind(raw: bytes) -> tuple[int, tuple[str, ...]]:
    """(deptype bits, virtuals) from an edge's `parameters`, or (prefixed with b"t") its `type`."""
    try:
        value = _DECODE_ANY.decode(raw[1:] if raw[:1] == b"t" else raw)
    except msgspec.DecodeError:
        return 0, ()
    virtuals: Any = ()
    if raw[:1] == b"t":
        deptypes = value  # (b"tnull": no type given)
    elif isinstance(value, dict):
        deptypes, virtuals = value.get("deptypes"), value.get("virtuals") or ()
    else:
        deptypes = None
    if isinstance(deptypes, str):
        deptypes = [deptypes]
    bits = 0
    for deptype in deptypes if isinstance(deptypes, list) else ():
        bits |= DEPTYPE_BITS.get(deptype, 0) if isinstance(deptype, str) else 0
    if not isinstance(virtuals, list) or not all(isinstance(v, str) for v in virtuals):
        virtuals = ()
    return bits, tuple(virtuals)


def _external_path(raw: bytes) -> str | None:
    try:
        external = _DECODE_ANY.decode(raw)
    except msgspec.DecodeError:
        return None
    if isinstance(external, dict):
        path = external.get("path") or external.get("module")
        if isinstance(path, str) and path:
            return path
        if isinstance(path, list) and path:
            return ", ".join(map(str, path))
    return None


def deptype_names(bits: int) -> list[str]:
    return [name for name, bit in DEPTYPE_BITS.items() if bits & bit]


def _shown(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."
