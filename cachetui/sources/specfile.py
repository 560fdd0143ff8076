"""Readers for full spec files (`*.spec.json`, clear-signed `*.spec.json.sig`, cache.spack.io's
`spec-N.json`; spec formats 1 to 5) and for the older cache.spack.io package pages
(`index.md` whose front matter lists `spec_files`).

A spec file holds one binary (the root, `nodes[0]`) and the nodes of its dependencies. The
root is listed; the dependencies are kept for the tree, but the file does not say that they
are binaries in a cache.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any

import msgspec

from cachetui.model import LoadProblem
from cachetui.sources.clearsign import strip_clearsign
from cachetui.sources.database import (
    BINARY,
    DEPENDENCY_ONLY,
    NOT_IN_CACHE,
    DatabaseFile,
    NotADatabase,
    normalise_records,
    unreadable_as,
)
from cachetui.sources.database_format import _DECODE_NODES
from cachetui.sources.summary import load_yaml_safely, size_of

MAX_SPEC_FILE_BYTES = 64 * 1024 * 1024


def looks_like_spec_file(head: bytes) -> bool:
    """A spec file's first bytes: an object whose keys include "spec" (with "nodes", or a
    list in format 1) near the start, or the keys only spec files have."""
    text = strip_clearsign(head).lstrip()
    return bool(_SPEC_START.match(text)) or (
        text.startswith(b"{")
        and b'"spec"' in text[:400]
        and (b'"nodes"' in text or b'"_meta"' in text)
    )


_SPEC_START = re.compile(
    rb'\{\s*"(spec|buildcache_layout_version|binary_cache_checksum)"\s*:\s*[\[{]'
)


def read_spec_file(data: bytes, source: str) -> DatabaseFile:
    """One spec file. Raises NotADatabase with a user-facing reason."""
    with unreadable_as(NotADatabase):
        return _read_spec_file(data, source)


def looks_like_spec_yaml(head: bytes) -> bool:
    """A `*.spec.yaml` (Spack 0.16 and older): YAML whose first key is `spec`, a list of
    `{name: node}`."""
    return _SPEC_YAML_START.match(head) is not None


_SPEC_YAML_START = re.compile(rb"(#[^\n]*\n\s*)*spec:[ \t]*\r?\n\s*- ")


def read_spec_yaml(data: bytes, source: str) -> DatabaseFile:
    """One `*.spec.yaml`. Raises NotADatabase with a user-facing reason."""
    if len(data) > MAX_SPEC_FILE_BYTES:
        raise NotADatabase(
            f"{len(data):,} bytes, over the {MAX_SPEC_FILE_BYTES:,}-byte limit for a spec file"
        )
    try:
        document = load_yaml_safely(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise NotADatabase(f"not UTF-8 text (bad byte at offset {error.start})") from None
    except RecursionError:
        raise NotADatabase("data is nested too deeply to read") from None
    except Exception as error:  # yaml.YAMLError, without importing yaml up front
        raise NotADatabase(f"not valid YAML ({' '.join(str(error).split())})") from None
    return _read_spec_document(document, source)


def _read_spec_file(data: bytes, source: str) -> DatabaseFile:
    try:
        document = msgspec.json.decode(strip_clearsign(data))
    except msgspec.DecodeError as error:
        raise NotADatabase(f"not valid JSON ({error})") from None
    return _read_spec_document(document, source)


def _read_spec_document(document: Any, source: str) -> DatabaseFile:
    spec = document.get("spec") if isinstance(document, dict) else None
    if isinstance(spec, dict):
        meta = spec.get("_meta")
        version = meta.get("version") if isinstance(meta, dict) else None
        nodes = spec.get("nodes")
    elif isinstance(spec, list):  # format 1: a list of {name: node}
        version, nodes = (
            1,
            [
                dict(node, name=name)
                for item in spec
                if isinstance(item, dict)
                for name, node in item.items()
                if isinstance(node, dict)
            ],
        )
    else:
        raise NotADatabase("not a Spack spec file: no 'spec' with 'nodes'")
    if not isinstance(nodes, list) or not nodes:
        raise NotADatabase("spec file lists no nodes")
    try:
        typed = _DECODE_NODES.decode(msgspec.json.encode(nodes))
    except msgspec.ValidationError as error:
        raise NotADatabase(f"spec file nodes are not in a known shape ({error})") from None
    records = [
        (_hash_text(raw) if isinstance(raw, dict) else "", node, True if at == 0 else None)
        for at, (raw, node) in enumerate(zip(nodes, typed))
    ]
    db = DatabaseFile(db_version=f"spec file v{version}" if version is not None else "spec file")
    normalise_records(db, records, source, edge_aliases(nodes, by_name=version == 1))
    for at in range(1, len(db.kinds)):
        if db.kinds[at] in (BINARY, NOT_IN_CACHE):
            db.kinds[at] = DEPENDENCY_ONLY
    size = size_of(document.get("archive_size"))
    if size is not None and db.hashes:
        db.sizes[0] = size
    return db


# The keys an edge may name its node by, in the order Spack's readers try them (hash_types.HASHES).
_EDGE_HASH_KEYS = ("hash", "package_hash", "full_hash", "build_hash")


def edge_aliases(nodes: list[Any], by_name: bool) -> dict[str, str]:
    """What each hash an edge names means: the node's own (dag) hash. Spack reads format 1 by
    name (a name is one node there; an edge's hash may be an older kind of hash), and
    formats 2 and later by the kind of hash the edges use: in spec files of Spack 0.17
    that is `build_hash`, which no node is keyed by."""
    own = {id(node): _hash_text(node) for node in nodes if isinstance(node, dict)}
    aliases: dict[str, str] = {}
    if by_name:
        by_node_name = {node.get("name"): own[id(node)] for node in nodes if isinstance(node, dict)}
        for node in nodes:
            dependencies = node.get("dependencies") if isinstance(node, dict) else None
            for name, edge in dependencies.items() if isinstance(dependencies, dict) else ():
                named = by_node_name.get(name)
                if not (isinstance(edge, dict) and named):
                    continue
                for key in _EDGE_HASH_KEYS:
                    if isinstance(edge.get(key), str):
                        aliases[edge[key]] = named
        return aliases
    kind = next(
        (
            key
            for node in nodes
            if isinstance(node, dict) and isinstance(node.get("dependencies"), list)
            for edge in node["dependencies"]
            if isinstance(edge, dict)
            for key in _EDGE_HASH_KEYS
            if key in edge
        ),
        "hash",
    )
    for node in nodes:
        if isinstance(node, dict) and isinstance(node.get(kind), str) and own[id(node)]:
            aliases[node[kind]] = own[id(node)]
    return aliases


def _hash_text(node: dict[str, Any]) -> str:
    for key in ("hash", "_hash", "full_hash", "build_hash"):
        if isinstance(node.get(key), str):
            return node[key].strip().lower()
    return ""


def read_old_page(front: dict[str, Any], page: str, tag: str) -> DatabaseFile:
    """An older cache.spack.io page: its `spec_files` (names, or {spec string: name}) are read
    from beside it. Raises NotADatabase when it lists none."""
    listed = front.get("spec_files")
    names: list[str] = []
    for item in listed if isinstance(listed, list) else ():
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict):
            names.extend(v for v in item.values() if isinstance(v, str))
    if not names:
        raise NotADatabase("older cache.spack.io page lists no spec_files")
    directory = os.path.dirname(os.path.abspath(page))
    merged = DatabaseFile(db_version="spec files")
    for name in names:
        path = os.path.normpath(os.path.join(directory, name))
        if os.path.dirname(path) != directory and not path.startswith(directory + os.sep):
            merged.problems.append(
                LoadProblem(page, f"spec file {name!r} lies outside the page's directory; skipped")
            )
            continue
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                raise NotADatabase("not a regular file")
            size = info.st_size
            if size > MAX_SPEC_FILE_BYTES:
                raise NotADatabase(
                    f"{size:,} bytes, over the {MAX_SPEC_FILE_BYTES:,}-byte limit for a spec file"
                )
            with open(path, "rb") as handle:
                db = read_spec_file(handle.read(), path)
        except (OSError, ValueError) as error:  # (ValueError: a NUL in the name)
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            merged.problems.append(LoadProblem(page, f"spec file {name!r}: {reason.lower()}"))
            continue
        except NotADatabase as why:
            merged.problems.append(LoadProblem(path, str(why)))
            continue
        merged.extend(db)
        merged.claimed.append(path)
    merged.tag = tag
    return merged
