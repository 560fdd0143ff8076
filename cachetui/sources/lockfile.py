"""Reader for a Spack environment's `spack.lock`, every lockfile version from 1 to 6.

What changes from version to version (Spack's `READER_CLS`: each version is read with the
spec format of its time):

  - v1 (Spack 0.12-0.15): `concrete_specs` keyed by the DAG hash of the time; each node
    wrapped as `{name: node}`, with no hash of its own; dependencies `{name: {hash, type}}`.
  - v2 (Spack 0.16): nodes still wrapped, but keyed by their *build* hash; the node's own
    `hash` is its DAG hash; a dependency's `hash` names the build hash (a key).
  - v3 (Spack 0.17): flat nodes (`name` inside); dependencies a list naming `build_hash`.
  - v4 (Spack 0.18-0.19): keyed by the DAG hash; dependencies `[{name, hash, type}]`.
  - v5 (Spack 0.20-0.22): dependencies `[{name, hash, parameters: {deptypes, virtuals}}]`.
  - v6 (Spack 0.23 and 1.x): `include_concrete` (the concrete specs of included
    environments); in Spack 1.x the compiler is a build dependency providing `c`/`cxx`/
    `fortran`, no longer a node field.

So a node is found by its lockfile key, and its DAG hash (what a build cache is keyed by)
is its own `hash`, or the key where it has none (v1). Edges name keys and are resolved
through that mapping. The nodes are normalised by the database reader's code
(database_normalise.normalise_records), the same code that reads a cache's index, so that
their fields compare with a cache's byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from cachetui.model import LoadProblem, some_of
from cachetui.sources.database import HASH_RE, DatabaseFile, normalise_records
from cachetui.sources.database_format import _DECODE_NODES, _NULL, _Node

KNOWN_LOCKFILE_VERSIONS = range(1, 7)
_MAX_INCLUDED = 10_000  # included environments, nested: a bound on hostile input


class LockfileUnreadable(Exception):
    """The lockfile gives no specs; str() says why (without the file's name)."""


class LockfileTop(msgspec.Struct, gc=False):
    """The top level of a JSON document, enough to tell what it is: a lockfile's parts
    stay raw until read (a spec file's `spec`, a database's `database` likewise)."""

    meta: Any = msgspec.field(default=None, name="_meta")
    roots: Any = None
    concrete_specs: msgspec.Raw = _NULL
    include_concrete: msgspec.Raw = _NULL
    spec: msgspec.Raw = _NULL
    database: msgspec.Raw = _NULL

    def is_lockfile(self) -> bool:
        meta = self.meta if isinstance(self.meta, dict) else {}
        return (
            self.concrete_specs != _NULL
            or meta.get("file-type") == "spack-lockfile"
            or "lockfile-version" in meta
        )


class _Included(msgspec.Struct, gc=False):
    roots: Any = None
    concrete_specs: msgspec.Raw = _NULL
    include_concrete: msgspec.Raw = _NULL


DECODE_TOP = msgspec.json.Decoder(LockfileTop)
_DECODE_SPECS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_DECODE_INCLUDED = msgspec.json.Decoder(dict[str, _Included])
_DECODE_NODE = msgspec.json.Decoder(_Node)
_DECODE_WRAPPED = msgspec.json.Decoder(dict[str, _Node])


@dataclass
class Lockfile:
    """A lockfile's specs normalised (db: one node a spec, keyed by DAG hash), its roots
    (DAG hashes) and its version."""

    db: DatabaseFile
    roots: set[str]
    version: int | None
    problems: list[LoadProblem] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"spack.lock v{self.version}" if self.version is not None else "spack.lock"


def read_lockfile(top: LockfileTop, source: str) -> Lockfile:
    """A lockfile's specs, roots and version. Raises LockfileUnreadable."""
    version, problems = _version(top.meta, source)
    if top.concrete_specs == _NULL:
        raise LockfileUnreadable("a Spack lockfile without concrete_specs: it holds no specs")
    roots, raws = _gather(top, source, problems)
    if not raws:
        raise LockfileUnreadable("a Spack lockfile whose concrete_specs is empty: no specs")
    keys = list(raws)
    nodes = _nodes(keys, list(raws.values()), source, problems)
    own = {key: _own_hash(key, node) for key, node in nodes.items()}
    records = [(own[key], node, None) for key, node in nodes.items()]
    _collisions(records, source, problems)
    db = DatabaseFile(db_version=f"spack.lock v{version}" if version else "spack.lock")
    normalise_records(db, records, source, own)
    problems.extend(_warning(p.source, p.message) for p in db.problems)
    db.problems = []
    return Lockfile(db, _root_hashes(roots, own, source, problems), version, problems)


def _version(meta: Any, source: str) -> tuple[int | None, list[LoadProblem]]:
    version = meta.get("lockfile-version") if isinstance(meta, dict) else None
    if isinstance(version, int) and not isinstance(version, bool):
        if version in KNOWN_LOCKFILE_VERSIONS:
            return version, []
        return version, [
            _warning(
                source,
                f"lockfile version {version} is not one cachetui knows (1 to 6); "
                "read as the nearest",
            )
        ]
    return None, [_warning(source, "the lockfile does not say its version (lockfile-version)")]


def _gather(
    top: LockfileTop, source: str, problems: list[LoadProblem]
) -> tuple[list[Any], dict[str, msgspec.Raw]]:
    """Every root entry and every node (by lockfile key) of the lockfile and of the
    environments it includes (`include_concrete`, nested), the first of a key kept."""
    roots: list[Any] = []
    raws: dict[str, msgspec.Raw] = {}
    pending: list[tuple[str, Any, msgspec.Raw, msgspec.Raw]] = [
        ("", top.roots, top.concrete_specs, top.include_concrete)
    ]
    seen = 0
    while pending and seen <= _MAX_INCLUDED:
        name, env_roots, specs, included = pending.pop()
        seen += 1
        where = f" of included environment {name!r}" if name else ""
        if isinstance(env_roots, list):
            roots.extend(env_roots)
        elif env_roots is not None or not name:
            problems.append(_warning(source, f"the roots{where} are not a list: no roots read"))
        if specs != _NULL:
            try:
                for key, raw in _DECODE_SPECS.decode(specs).items():
                    raws.setdefault(key, raw)
            except msgspec.ValidationError:
                if not name:
                    raise LockfileUnreadable(
                        "concrete_specs is not an object of specs keyed by hash"
                    ) from None
                problems.append(_warning(source, f"the concrete_specs{where} are unreadable"))
        if included != _NULL:
            pending.extend(reversed(_included(included, where, source, problems)))
    return roots, raws


def _included(
    raw: msgspec.Raw, where: str, source: str, problems: list[LoadProblem]
) -> list[tuple[str, Any, msgspec.Raw, msgspec.Raw]]:
    try:
        included = _DECODE_INCLUDED.decode(raw)
    except msgspec.ValidationError as error:
        problems.append(_warning(source, f"include_concrete{where} is unreadable ({error})"))
        return []
    return [(n, e.roots, e.concrete_specs, e.include_concrete) for n, e in included.items()]


def _nodes(
    keys: list[str], raws: list[msgspec.Raw], source: str, problems: list[LoadProblem]
) -> dict[str, _Node]:
    """Each key's node, decoded in one go (one at a time if some are malformed); a node
    wrapped as `{name: node}` (v1, v2) unwrapped."""
    try:
        decoded: list[_Node | None] = list(
            _DECODE_NODES.decode(b"[" + b",".join(bytes(raw) for raw in raws) + b"]")
        )
    except msgspec.ValidationError:
        decoded = list(map(_one_node, raws))
    nodes: dict[str, _Node] = {}
    bad: list[str] = []
    for key, raw, node in zip(keys, raws, decoded):
        if node is not None and node.name is None:
            node = _unwrapped(raw) if node.version is None else None
        if node is None:
            bad.append(_shown(key))
        else:
            nodes[key] = node
    if bad:
        problems.append(
            _warning(
                source,
                f"{len(bad)} concrete spec(s) not in a known shape, skipped: {some_of(bad)}",
            )
        )
    if not nodes:
        raise LockfileUnreadable("no concrete spec in the lockfile is in a known shape")
    return nodes


def _one_node(raw: msgspec.Raw) -> _Node | None:
    try:
        return _DECODE_NODE.decode(raw)
    except msgspec.ValidationError:
        return None


def _unwrapped(raw: msgspec.Raw) -> _Node | None:
    """A v1/v2 node, `{name: node}`: the node, named."""
    try:
        wrapped = _DECODE_WRAPPED.decode(raw)
    except msgspec.ValidationError:
        return None
    if len(wrapped) != 1:
        return None
    ((name, node),) = wrapped.items()
    node.name = node.name or name
    return node


def _own_hash(key: str, node: _Node) -> str:
    """A node's DAG hash: its own `hash` (v2 and later), else its key (v1)."""
    for text in (node.hash, node.underscore_hash, key):
        if isinstance(text, str) and HASH_RE.match(text.strip().lower()):
            return text.strip().lower()
    return key


def _collisions(
    records: list[tuple[str, _Node, None]], source: str, problems: list[LoadProblem]
) -> None:
    """Lockfiles v1-3 may hold two specs of one DAG hash (the older DAG hash left out
    build dependencies): the first is kept, as Spack keeps the first it meets."""
    hashes = [hash_ for hash_, _, _ in records]
    extra = len(hashes) - len(set(hashes))
    if extra:
        problems.append(
            _warning(
                source,
                f"{extra} concrete spec(s) share their DAG hash with an earlier one "
                "(an older lockfile's hash left out build dependencies); the first kept",
            )
        )


def _root_hashes(
    roots: list[Any], own: dict[str, str], source: str, problems: list[LoadProblem]
) -> set[str]:
    """The DAG hashes of the roots (each root names its lockfile key)."""
    found: set[str] = set()
    dag_hashes = set(own.values())
    missing: list[str] = []
    for root in roots:
        key = root.get("hash") if isinstance(root, dict) else None
        if not isinstance(key, str):
            missing.append(_shown(root))
        elif key in own:
            found.add(own[key])
        elif key.strip().lower() in dag_hashes:
            found.add(key.strip().lower())
        else:
            missing.append(f"{_shown(root.get('spec', ''))} ({_shown(key)})")
    if missing:
        problems.append(
            _warning(
                source,
                f"{len(missing)} root(s) name no spec of concrete_specs: {some_of(missing)}",
            )
        )
    return found


def _warning(source: str, message: str) -> LoadProblem:
    return LoadProblem(source, message, "warning")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
