"""Spack's database JSON as msgspec decodes it: typed structs, decoded in C, and their
decoders. The parts that repeat from spec to spec stay raw JSON (msgspec.Raw), decoded once
per distinct text when the records are normalised (database_normalise.py)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

_NULL = msgspec.Raw(b"null")


class _Edge(msgspec.Struct, gc=False):
    name: str | None = None
    hash: str | None = None
    underscore_hash: str | None = msgspec.field(default=None, name="_hash")
    full_hash: str | None = None
    build_hash: str | None = None
    # Few distinct texts among millions of edges: decoded once each (database_normalise's
    # _edge_kind).
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
    # Decoded later, a batch of nodes at a time (database_normalise._read_edges): millions of
    # edge objects alive at once cost gigabytes and, in one decode, three times the time.
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
_START = re.compile(rb'\A\s*\{\s*"database"\s*:')


def looks_like_database(head: bytes) -> bool:
    """Whether data starting with `head` is a Spack database (`{"database": ...`)."""
    return _START.match(head) is not None


# What a record says of itself, beside its spec: in a build cache (True), not (False), or
# nothing (None: a local install database's records, unless this).
SAYS_NOT_INSTALLED = "not installed"
Said = bool | str | None


def _said(record: _Record | _RecordByName) -> Said:
    if record.in_buildcache is None and record.installed is False:
        return SAYS_NOT_INSTALLED
    return record.in_buildcache
