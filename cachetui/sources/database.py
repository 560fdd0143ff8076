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

The reading is in three modules: database_format.py (the JSON as msgspec decodes it),
database_normalise.py (the records into columns) and database_file.py (the columns and the
codes they hold). Their names that other modules use are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from cachetui.model import LoadProblem, deptype_names, some_of
from cachetui.sources.database_file import (
    BINARY,
    BUILD,
    COMPILER_SOURCES,
    DEPENDENCY_ONLY,
    DEPTYPE_BITS,
    EXTERNAL,
    INSTALLED,
    LINK,
    LISTED_KINDS,
    NODE_KINDS,
    NOT_IN_CACHE,
    NOT_INSTALLED,
    RUN,
    TEST,
    UNRESOLVED,
    DatabaseFile,
    record_rank,
)
from cachetui.sources.database_format import (
    _DECODE,
    _DECODE_LOOSE,
    _DECODE_RAW_RECORDS,
    _DECODE_RECORD,
    _DECODE_RECORD_BY_NAME,
    _DECODE_SPEC_KEYS,
    _NULL,
    SAYS_NOT_INSTALLED,
    Said,
    _Node,
    _said,
    looks_like_database,
)
from cachetui.sources.database_normalise import (
    HASH_RE,
    UNKNOWN,
    _shown,
    normalise_records,
)

__all__ = [
    "BINARY",
    "BUILD",
    "COMPILER_SOURCES",
    "DEPENDENCY_ONLY",
    "DEPTYPE_BITS",
    "EXTERNAL",
    "HASH_RE",
    "INSTALLED",
    "LINK",
    "LISTED_KINDS",
    "NODE_KINDS",
    "NOT_INSTALLED",
    "NOT_IN_CACHE",
    "RUN",
    "SAYS_NOT_INSTALLED",
    "TEST",
    "UNKNOWN",
    "UNRESOLVED",
    "DatabaseFile",
    "NotADatabase",
    "Said",
    "deptype_names",
    "looks_like_database",
    "normalise_records",
    "read_database",
    "record_rank",
    "unreadable_as",
    "version_problems",
]

_KNOWN_VERSIONS = frozenset({"5", "6", "7", "8"})


class NotADatabase(Exception):
    """The data is not a Spack database (or is broken beyond reading); str() says why."""


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
        problems.append(
            LoadProblem(source, f"{len(bad)} install record(s) skipped: {some_of(bad, 3, '; ')}")
        )
    return version, records


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
