"""Files read into chunks of columns, as a loader process (or the service, in-process)
reads them: a batch of files, or a large database in parts (split.py), whose parts are
read by any process and put together here.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cachetui.model import LoadProblem
from cachetui.sources.columns import ColumnChunk
from cachetui.sources.database import DatabaseFile, looks_like_database
from cachetui.sources.mirror import Origin, index_blob_of, origin_of
from cachetui.sources.nodes import NodeColumns
from cachetui.sources.read import read_file
from cachetui.sources.sniff import SNIFF_BYTES
from cachetui.sources.split import Plan


@dataclass(frozen=True)
class SourceFile:
    """A local file to read, what its location says, and how to name it to the user."""

    path: str
    origin: Origin | None = None
    shown_as: str | None = None  # the URL it was fetched from; None: the path

    @property
    def name(self) -> str:
        return self.shown_as or self.path


def large_database(file: str | SourceFile) -> Plan | None:
    """How to read a file in parts (sources/split.py), when it is a large plain database, or
    a v3 index manifest whose blob is one; None for anything else (read whole)."""
    from cachetui.sources.split import SPLIT_BYTES, plan

    path, origin, shown = (
        (file, None, None) if isinstance(file, str) else (file.path, file.origin, file.shown_as)
    )
    try:
        size = os.stat(path).st_size
        if size < SNIFF_BYTES and path.endswith("index.manifest.json"):  # a v3 index: its blob
            root = (
                origin.root
                if origin is not None and origin.root is not None
                else origin_of(os.path.abspath(path)).root
            )
            if root is None:
                return None
            with open(path, "rb") as handle:
                path = os.path.join(root, *index_blob_of(handle.read(), shown or path).split("/"))
            size = os.stat(path).st_size
        if size <= SPLIT_BYTES:
            return None
        with open(path, "rb") as handle:
            if not looks_like_database(handle.read(SNIFF_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")):
                return None
    except (
        Exception
    ):  # an unreadable file, a manifest naming no blob: the whole-file reader says why
        return None
    return plan(path, file if isinstance(file, str) else file.name, size)


def read_large(
    plan_: Plan,
    source: str,
    origin: Origin | None,
    parts: list[NodeColumns],
    problems: list[LoadProblem],
) -> ColumnChunk:
    """One chunk from a large database's parts, read (in parts, by any process) as planned."""
    from cachetui.sources.database import version_problems
    from cachetui.sources.nodes import merge
    from cachetui.sources.split import version_text

    chunk = ColumnChunk()
    nodes = merge(parts)
    chunk.problems.extend(version_problems(version_text(plan_), plan_.name))
    chunk.problems.extend(problems)
    chunk.add_columns(nodes, source, origin)
    if not chunk.rows and not any(p.severity == "error" for p in chunk.problems):
        chunk.problems.append(LoadProblem(plan_.name, "lists no binaries", "warning"))
    return chunk


def read_batch(files: list[str | SourceFile]) -> ColumnChunk:
    """Read `files` into one chunk of columns (runs in a loader process, or in-process)."""
    chunk = ColumnChunk()
    with gc_paused():
        for file in files:
            path, origin, shown = (
                (file, None, None)
                if isinstance(file, str)
                else (file.path, file.origin, file.shown_as)
            )
            loaded, problems = read_file(path, origin, shown)
            if loaded is None:
                chunk.problems.extend(problems)
                chunk.files += 1
            elif isinstance(loaded, DatabaseFile):
                chunk.add_database(loaded, shown or path, origin)
            else:
                chunk.add(loaded, path)
    return chunk.seal()


@contextmanager
def gc_paused() -> Iterator[None]:
    """A load allocates millions of small containers and no cycles; the cyclic collector
    would walk them again and again (measured: it triples the parse time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
