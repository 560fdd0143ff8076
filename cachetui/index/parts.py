"""What an Index is made of: the columns it holds, built by build.py and stored by the
snapshot as they are."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cachetui.index.graph import GraphParts
from cachetui.index.strings import Ragged, StringTable

# Interned columns: a code a row, into a table of distinct values. The tarball columns hold
# a summary's `tarball` URL: the mirror root Spack's v2 rule rebuilds it from (one or two a
# tag), else the URL itself where the rule does not give it back; None where none is known.
TEXT_COLUMNS = (
    "version",
    "compiler",
    "platform",
    "os",
    "target",
    "tag",
    "source",
    "tarball_root",
    "tarball_text",
    "kind",
)


@dataclass
class IndexParts:
    """Everything an Index is made of: what the builder produces and the snapshot stores.

    Nothing here holds a Python object per row, nor per distinct string but the package
    names and facet values: the rest is arrays, read from the on-disk index as they are."""

    packages: list[str]
    starts: np.ndarray  # int64, len(packages) + 1
    values: dict[str, StringTable]  # column -> code -> text, for TEXT_COLUMNS
    codes: dict[
        str, np.ndarray
    ]  # column -> code per row, for TEXT_COLUMNS + package, stackset, variantset
    stack_names: list[str]
    stacksets: Ragged  # stackset code -> its stacks (codes into stack_names)
    variant_tokens: StringTable  # every distinct variant string
    variantsets: Ragged  # variantset code -> its variants (codes into variant_tokens), in order
    hash_blob: bytes | memoryview
    hash_order: np.ndarray  # int32: rows sorted by hash
    sizes: np.ndarray | None = None  # int64 bytes per row, -1 where unknown; None: none known
    facet_values: dict[str, list[str]] = field(default_factory=dict)
    facet_bits: dict[str, list[bytes]] = field(default_factory=dict)
    # facet -> int32 [package, value]: how many rows of each package carry each value.
    facet_histograms: dict[str, np.ndarray] = field(default_factory=dict)
    # source -> [mirror root, layout]: where a database's binaries' files are.
    origins: dict[str, list] = field(
        default_factory=dict
    )  # source -> [mirror root, layout, v2 spec-file ending or None]
    graph: GraphParts = field(default_factory=GraphParts)
