"""Database records normalised into a DatabaseFile's columns: names, versions, the
architecture, variants and flags, the compiler (the legacy field, a c/cxx/fortran build
edge, or the annotation), what each node is, and the edges with their types.

Column by column, with each repeated text decoded once (see normalise_records)."""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from cachetui.model import (
    FLAG_KEYS,
    LANGUAGES,
    NO_COMPILER,
    LoadProblem,
    normalise_compiler,
    some_of,
)
from cachetui.sources.database_file import (
    BINARY,
    DEPTYPE_BITS,
    EXTERNAL,
    INSTALLED,
    NOT_IN_CACHE,
    NOT_INSTALLED,
    UNRESOLVED,
    DatabaseFile,
)
from cachetui.sources.database_format import (
    _DECODE_ANY,
    _DECODE_EDGE_LISTS,
    _DECODE_EDGES,
    _NULL,
    SAYS_NOT_INSTALLED,
    Said,
    _Edge,
    _Node,
)
from cachetui.spack_format import quote_if_needed

HASH_RE = re.compile(r"^[a-z2-7]{32}$")
_BASE32_RUN = re.compile(r"[a-z2-7]*")
UNKNOWN = "unknown"  # a platform, os or target the record does not give

# Where a spec's compiler came from: positions in COMPILER_SOURCES (database_file.py).
_NONE, _LEGACY, _DEPENDENCY, _ANNOTATION = range(4)

_LANGUAGES_SET = frozenset(LANGUAGES)  # an edge providing one of these names the compiler
_IGNORED_PARAMETERS = frozenset({"propagate", "abstract", "compiler_flags"})
_EDGE_BATCH = 20_000  # nodes whose edges are decoded together


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

    sources = _compilers_said(db, nodes)
    _node_kinds(db, nodes, [said for _, _, said in records])
    found = _read_edges(db, nodes, hashes, position, source, edge_aliases)
    _compilers_from_edges(db, found, sources)


def _compilers_said(db: DatabaseFile, nodes: list[_Node]) -> list[int]:
    """Each node's compiler as its record gives it (db.compilers), and where that came from
    (a position in COMPILER_SOURCES, a node)."""
    # The compiler: the legacy field; else the c/cxx/fortran edge (_compilers_from_edges, once
    # every node has its position); else the annotation; else none.
    compilers = _decoded([bytes(node.compiler) for node in nodes], _legacy_compiler, None)
    sources = [_NONE if c is None else _LEGACY for c in compilers]
    for at, notes in [
        (at, node.annotations) for at, node in enumerate(nodes) if node.annotations is not None
    ]:
        annotated = notes.compiler
        if compilers[at] is None and annotated:
            compilers[at], sources[at] = normalise_compiler(annotated), _ANNOTATION
    db.compilers = [NO_COMPILER if c is None else c for c in compilers]
    return sources


def _node_kinds(db: DatabaseFile, nodes: list[_Node], says: list[Said]) -> None:
    """What each node is (db.kinds), and where an external is (db.external_paths)."""
    # A build cache's index says of every record whether it is in the cache, and Spack reads
    # a missing field as false. A database that never says is a local install database:
    # its records are what that user has installed (Spack's `buildcache list` shows none of
    # them), listed as installed specs, apart from binaries.
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


def _read_edges(
    db: DatabaseFile,
    nodes: list[_Node],
    hashes: list[str],
    position: dict[str, int],
    source: str,
    edge_aliases: dict[str, str] | None,
) -> dict[int, tuple[int, int]]:
    """Every node's edges (db.edge_*), and the compiler a c/cxx/fortran edge leads to:
    node -> (rank of the virtual, compiler node)."""
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
        db.problems.append(
            LoadProblem(
                source,
                f"dependencies of {len(bad)} record(s) unreadable, "
                f"left out: {some_of(bad, 3, '; ')}",
                "warning",
            )
        )
    return found


def _compilers_from_edges(
    db: DatabaseFile, found: dict[int, tuple[int, int]], sources: list[int]
) -> None:
    """Each node's compiler node (db.compiler_targets), and its compiler where only an edge
    names it; where every node's compiler came from (db.compiler_sources)."""
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
        db.problems.append(
            LoadProblem(
                source,
                f"{len(bad)} install record(s) without a valid 32-character hash skipped: "
                f"{some_of(bad)}",
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


def _shown(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."
