"""Turn SOURCE arguments into Spec records and LoadProblems.

A SOURCE is a file or a directory walked recursively. Files are recognised by their
content, never by their name. Every file that cannot be loaded becomes a LoadProblem
naming the file and the reason; the rest still loads.

This package's own names are re-exported from the modules that do each job: discover.py
(the walk and the stamps), sniff.py (which reader fits a file), read.py (one file read),
chunks.py (files read into chunks of columns) and parallel.py (the loader processes).
"""

from __future__ import annotations

from cachetui.sources.chunks import SourceFile, gc_paused, large_database, read_batch, read_large
from cachetui.sources.discover import (
    DIRECTORY,
    MISSING,
    Stamp,
    discover,
    discover_stamped,
    stamp_of,
)
from cachetui.sources.parallel import (
    PARALLEL_MIN_FILES,
    LoaderPool,
    Progress,
    expect_many_files,
    read_chunks,
)
from cachetui.sources.read import MAX_DATABASE_BYTES, MAX_FILE_BYTES, Loaded, read_file

__all__ = [
    "DIRECTORY",
    "MAX_DATABASE_BYTES",
    "MAX_FILE_BYTES",
    "MISSING",
    "PARALLEL_MIN_FILES",
    "Loaded",
    "LoaderPool",
    "Progress",
    "SourceFile",
    "Stamp",
    "discover",
    "discover_stamped",
    "expect_many_files",
    "gc_paused",
    "large_database",
    "read_batch",
    "read_chunks",
    "read_file",
    "read_large",
    "stamp_of",
]
