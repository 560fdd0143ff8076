"""A user's Spack environment read as its concrete specs (issue 20: will it install from
the cache?). What the user names may be:

  - a `spack.lock` (every lockfile version, 1 to 6: lockfile.py), or an environment
    directory holding one;
  - a spec file (`spack spec --json`, a build cache's `*.spec.json`, clear-signed
    `*.spec.json.sig`, an old `*.spec.yaml`): the root is its first node;
  - a Spack install database (`.spack-db/index.json`, the `.spack-db` directory, or the
    install prefix holding it): installed records only, the explicit ones the roots.

Files are told apart by their content (a directory by the files it holds). Every node is
normalised by the readers that read a build cache's index (database_normalise), so that a
spec's version, compiler, architecture and variants compare with a cache's byte for byte.
Nothing here raises but EnvironmentUnreadable, whose message names the file and the problem.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from typing import Any

import msgspec

from cachetui.model import Environment, EnvironmentSpec, EnvironmentUnreadable, LoadProblem, some_of
from cachetui.sources.clearsign import strip_clearsign
from cachetui.sources.database import (
    BINARY,
    EXTERNAL,
    NOT_IN_CACHE,
    NOT_INSTALLED,
    UNRESOLVED,
    DatabaseFile,
    NotADatabase,
    looks_like_database,
    read_database,
    unreadable_as,
)
from cachetui.sources.discover import os_reason
from cachetui.sources.lockfile import DECODE_TOP, LockfileUnreadable, read_lockfile
from cachetui.sources.specfile import looks_like_spec_yaml, read_spec_file, read_spec_yaml

# A lockfile of ten thousand specs is tens of MB; anything far larger is not an environment,
# and reading it whole could exhaust memory on a small build host.
MAX_ENVIRONMENT_BYTES = 256 * 1024 * 1024

LOCKFILE_NAME = "spack.lock"
# Where a directory holds what can be read, in the order they are looked for: an
# environment's lockfile, an install prefix's database, a `.spack-db` directory's.
_DIRECTORY_FILES = (LOCKFILE_NAME, os.path.join(".spack-db", "index.json"), "index.json")
_MANIFESTS = ("spack.yaml", "spack.yml")
_KINDS = "a Spack lockfile, spec file or install database"
_MANIFEST_START = re.compile(rb"(\s*#[^\n]*\n)*\s*spack\s*:")


class _Unreadable(Exception):
    """Why the data gives no specs (without the file's name)."""


def read_environment(path: str) -> Environment:
    """Every concrete spec of the environment at `path` (a file or a directory), roots
    marked. Raises EnvironmentUnreadable, naming the file and the problem."""
    source = _file_in(path)
    data = _read_bytes(source)
    try:
        with unreadable_as(_Unreadable):
            label, db, roots, problems = _read_data(data, source)
    except (_Unreadable, NotADatabase, LockfileUnreadable) as why:
        raise EnvironmentUnreadable(f"{source}: {why}") from None
    except RecursionError:  # (unreadable_as catches it inside; a guard for the rest)
        raise EnvironmentUnreadable(f"{source}: data is nested too deeply to read") from None
    specs, unresolved = _environment_specs(db, roots, source)
    if not specs:  # say why, where the readers said (a hash that is none, ...)
        reasons = list(dict.fromkeys(p.message for p in [*problems, *db.problems]))
        detail = f" ({some_of(reasons, 3, '; ')})" if reasons else ""
        raise EnvironmentUnreadable(f"{source}: {label} holds no concrete specs{detail}")
    problems.extend(unresolved)
    return Environment(path=path, source=source, format=label, specs=specs, problems=problems)


def _file_in(path: str) -> str:
    """The file to read: `path`, or the lockfile (or database) inside a directory."""
    try:
        info = os.stat(path)
    except (OSError, ValueError) as error:  # (ValueError: a NUL in the path)
        reason = os_reason(error) if isinstance(error, OSError) else str(error)
        raise EnvironmentUnreadable(f"{path}: {reason}") from None
    if not stat.S_ISDIR(info.st_mode):
        return path
    for name in _DIRECTORY_FILES:
        candidate = os.path.join(path, name)
        if os.path.isfile(candidate):
            return candidate
    if any(os.path.isfile(os.path.join(path, name)) for name in _MANIFESTS):
        raise EnvironmentUnreadable(
            f"{path}: an environment that is not concretized (a spack.yaml, no spack.lock): "
            "run `spack concretize` in it first"
        )
    raise EnvironmentUnreadable(
        f"{path}: a directory without a spack.lock (nor an install database, "
        ".spack-db/index.json): name a Spack environment, lockfile, spec file or database"
    )


def _read_bytes(source: str) -> bytes:
    """The file's bytes (inflated if gzipped), within the size limit."""
    try:
        info = os.stat(source)
        if not stat.S_ISREG(info.st_mode):
            raise EnvironmentUnreadable(f"{source}: not a regular file (a pipe, socket or device?)")
        if info.st_size > MAX_ENVIRONMENT_BYTES:
            raise EnvironmentUnreadable(
                f"{source}: file is {info.st_size:,} bytes, larger than the "
                f"{MAX_ENVIRONMENT_BYTES:,}-byte limit"
            )
        with open(source, "rb") as handle:
            data = handle.read(MAX_ENVIRONMENT_BYTES + 1)
    except OSError as error:
        raise EnvironmentUnreadable(f"{source}: {os_reason(error)}") from None
    if data[:2] == b"\x1f\x8b":
        data = _inflated(data, source)
    if len(data) > MAX_ENVIRONMENT_BYTES:
        raise EnvironmentUnreadable(
            f"{source}: data is larger than the {MAX_ENVIRONMENT_BYTES:,}-byte limit"
        )
    return data


def _inflated(data: bytes, source: str) -> bytes:
    inflate = zlib.decompressobj(31)
    try:
        out = inflate.decompress(data, MAX_ENVIRONMENT_BYTES + 1)
    except zlib.error as error:
        raise EnvironmentUnreadable(f"{source}: broken gzip data ({error})") from None
    if not inflate.eof and len(out) <= MAX_ENVIRONMENT_BYTES:
        raise EnvironmentUnreadable(f"{source}: gzip data is truncated")
    return out


def _read_data(data: bytes, source: str) -> tuple[str, DatabaseFile, set[str], list[LoadProblem]]:
    """(format label, the specs normalised, root hashes, warnings) of the file's data."""
    if not data or data.isspace():
        raise _Unreadable("empty file")
    data = strip_clearsign(data)
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]  # a byte-order mark
    if b"\0" in data[:8192]:
        raise _Unreadable(f"binary file, not {_KINDS}")
    head = data[:4096].lstrip()
    if looks_like_database(head):
        return _database(data, source)
    if not head.startswith((b"{", b"[")):
        if looks_like_spec_yaml(head):
            db = read_spec_yaml(data, source)
            return db.db_version, db, {db.hashes[0]}, _warnings(db)
        if _MANIFEST_START.match(head):
            raise _Unreadable(
                "an environment's spack.yaml, not concretized: run `spack concretize` "
                "and name its spack.lock"
            )
    try:
        top = DECODE_TOP.decode(data)
    except msgspec.ValidationError:
        raise _Unreadable(f"JSON, but not {_KINDS} (not a JSON object)") from None
    except msgspec.DecodeError as error:
        raise _Unreadable(f"not valid JSON ({error})") from None
    if top.is_lockfile():
        lock = read_lockfile(top, source)
        return lock.label, lock.db, lock.roots, lock.problems
    if top.spec != msgspec.Raw(b"null"):
        db = read_spec_file(data, source)
        return db.db_version, db, {db.hashes[0]}, _warnings(db)
    if top.database != msgspec.Raw(b"null"):
        return _database(data, source)
    raise _Unreadable(
        f"JSON, but not {_KINDS} (no concrete_specs, spec or database at its top level)"
    )


def _database(data: bytes, source: str) -> tuple[str, DatabaseFile, set[str], list[LoadProblem]]:
    """An install database: its installed records, the explicit ones the roots."""
    db = read_database(data, source)
    if any(kind in (BINARY, NOT_IN_CACHE) for kind in db.kinds):
        raise _Unreadable(
            "a build cache's index (its records say whether they are in the cache), not an "
            "install database: name it as a cache source"
        )
    return f"install database v{db.db_version}", db, _explicit(data), _warnings(db)


class _ExplicitRecord(msgspec.Struct, gc=False):
    explicit: Any = None


class _ExplicitDatabase(msgspec.Struct, gc=False):
    installs: dict[str, _ExplicitRecord] | None = None


class _ExplicitTop(msgspec.Struct, gc=False):
    database: _ExplicitDatabase


_DECODE_EXPLICIT = msgspec.json.Decoder(_ExplicitTop)


def _explicit(data: bytes) -> set[str]:
    """The hashes of a database's explicitly installed records (what the user asked for)."""
    try:
        installs = _DECODE_EXPLICIT.decode(data).database.installs or {}
    except (msgspec.ValidationError, msgspec.DecodeError):
        return set()  # (a record that is not an object: the database reader said so)
    return {key.strip().lower() for key, record in installs.items() if record.explicit is True}


def _environment_specs(
    db: DatabaseFile, roots: set[str], source: str
) -> tuple[list[EnvironmentSpec], list[LoadProblem]]:
    """The specs of `db` (not the hashes only edges name, nor records not installed), each
    with its edges; and a warning naming the hashes edges name that no spec holds."""
    edges: dict[int, list[tuple[str, str, int]]] = {}
    for start, end, bits in zip(db.edge_from, db.edge_to, db.edge_types):
        edges.setdefault(start, []).append((db.names[end], db.hashes[end], bits))
    specs = [
        EnvironmentSpec(
            hash=db.hashes[at],
            name=db.names[at],
            version=db.versions[at],
            compiler=db.compilers[at],
            platform=db.platforms[at],
            os=db.oss[at],
            target=db.targets[at],
            variants=db.variants[at],
            dependencies=tuple(edges.get(at, ())),
            root=db.hashes[at] in roots,
            external=kind == EXTERNAL,
        )
        for at, kind in enumerate(db.kinds)
        if kind not in (UNRESOLVED, NOT_INSTALLED)
    ]
    named = [
        f"{db.names[at]} /{db.hashes[at][:7]}"
        for at, kind in enumerate(db.kinds)
        if kind == UNRESOLVED
    ]
    problems = []
    if named:
        problems.append(
            LoadProblem(
                source,
                f"{len(named)} dependency hash(es) that no spec in the file holds: "
                f"{some_of(named)}",
                "warning",
            )
        )
    return specs, problems


def _warnings(db: DatabaseFile) -> list[LoadProblem]:
    """A reader's problems, as warnings: the file still gave specs."""
    return [LoadProblem(p.source, p.message, "warning") for p in db.problems]
