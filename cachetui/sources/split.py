"""A large build-cache index read in parts: by several processes, and never whole in memory.

A database is `{"database": {"version": ..., "installs": {hash: record, ...}}}`. Its
`installs` is cut at record boundaries (a `,` then `"<32 base32 characters>": {`) into
runs of whole records, each read by a loader process as a database of its own; the parts'
nodes are then merged (sources/nodes.py), which resolves the edges between parts. A cut
in a wrong place (a key of that shape inside a record) makes its parts invalid JSON: then
the file is read whole, as a small one is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from cachetui.model import LoadProblem
from cachetui.sources.nodes import NodeColumns

# Files larger than this are read in parts of about PART_BYTES: a part's records and their
# decoded form stay well under a hundred megabytes in a loader process.
SPLIT_BYTES = 96 * 1024 * 1024
PART_BYTES = 32 * 1024 * 1024

_EDGE_BYTES = 64 * 1024  # how much of each end is looked at for the document's frame
_HEAD = re.compile(
    rb'\A\s*\{\s*"database"\s*:\s*\{\s*(?:"version"\s*:\s*("[^"\\]*"|[0-9.]+)\s*,\s*)?"installs"\s*:\s*\{'
)
_TAIL = re.compile(rb'\}\s*(?:,\s*"version"\s*:\s*("[^"\\]*"|[0-9.]+)\s*)?\}\s*\}\s*\Z')
_RECORD = re.compile(rb',\s*"[a-z2-7]{32}"\s*:\s*\{')
_WINDOW = 1024 * 1024  # searched for a record boundary after each cut point


@dataclass
class Plan:
    """How to read one large database file in parts."""

    path: str  # the file holding the database (a v3 index blob, for a manifest)
    name: str  # how problems name it (the file or URL given)
    version: str | None  # the database version, as its JSON text (None: not in the file)
    ranges: list[tuple[int, int]] = field(
        default_factory=list
    )  # [start, end) of each part's records


def plan(path: str, name: str, size: int, part_bytes: int | None = None) -> Plan | None:
    """Where to cut a database file into parts of whole records, or None when it does not
    have the usual frame (then it is read whole)."""
    part_bytes = part_bytes or PART_BYTES
    try:
        with open(path, "rb") as handle:
            head = handle.read(_EDGE_BYTES)
            handle.seek(max(0, size - _EDGE_BYTES))
            tail = handle.read()
            opened, closed = _HEAD.match(head), _TAIL.search(tail)
            if opened is None or closed is None:
                return None
            start, end = opened.end(), size - len(tail) + closed.start()
            if end - start < 2 * part_bytes or (opened.group(1) and closed.group(1)):
                return None
            version = (opened.group(1) or closed.group(1) or b"").decode("utf-8", "replace") or None
            cuts = [start]
            for k in range(1, -(-(end - start) // part_bytes)):
                at = start + k * part_bytes
                if at <= cuts[-1]:
                    continue
                handle.seek(at)
                found = _RECORD.search(handle.read(_WINDOW))
                if found is None:
                    continue  # a huge record: this part grows
                cut = at + found.start()
                if cut < end:
                    cuts.append(cut)
    except OSError:
        return None
    ranges = [(a + (1 if i else 0), b) for i, (a, b) in enumerate(zip(cuts, cuts[1:] + [end]))]
    return Plan(path, name, version, ranges)


class PartUnreadable(Exception):
    """A part is not a run of whole records (a cut in a wrong place): read the file whole."""


def read_part(
    path: str, start: int, end: int, version: str | None, name: str
) -> tuple[NodeColumns, list[LoadProblem]]:
    """One part's records as a database of their own (run in a loader process): its nodes
    and edges in arrays, an edge to a record of another part leading to an UNRESOLVED node
    that the merge resolves. Raises PartUnreadable."""
    from cachetui.sources.database import NotADatabase, read_database

    with open(path, "rb") as handle:
        handle.seek(start)
        body = handle.read(end - start)
    frame = (
        b'{"database":{'
        + (b'"version":' + version.encode() + b"," if version else b"")
        + b'"installs":{'
    )
    try:
        db = read_database(frame + body + b"}}}", name, check_version=False)
    except NotADatabase as error:
        raise PartUnreadable(str(error)) from None
    return db.to_columns(), db.problems


def read_parts_in_process(plan_: Plan) -> tuple[list[NodeColumns], list[LoadProblem]]:
    """Every part, read here one after the other (no loader processes)."""
    parts, problems = [], []
    for start, end in plan_.ranges:
        nodes, said = read_part(plan_.path, start, end, plan_.version, plan_.name)
        parts.append(nodes)
        problems.extend(said)
    return parts, problems


def version_text(plan_: Plan) -> str:
    """The database version as read_database reports it."""
    if plan_.version is None:
        return "?"
    try:
        value = json.loads(plan_.version)
    except ValueError:
        return plan_.version
    return str(value)


def binaries(nodes: NodeColumns) -> int:
    """How many of a part's nodes are listed (binaries, installed specs: for progress)."""
    from cachetui.sources.database import LISTED_KINDS

    kinds = bytes(nodes.kinds)
    return sum(kinds.count(kind) for kind in LISTED_KINDS)
