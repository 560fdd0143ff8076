"""Exporting the specs a result matches to a file: the format, and a write that replaces the
file only once it is whole."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cachetui.index.filter import Result
    from cachetui.index.store import Index


def export(index: Index, result: Result, form: str, path: Path) -> int:
    """Write the specs of `result` to `path` as `form` (output.EXPORT_FORMATS); how many were
    written. The file is written beside its target and renamed into place, so a failed write
    never leaves half a file where the user looks for it; a symlink is written through, and
    the file keeps its mode, or gets the one the umask gives. Raises OSError."""
    from cachetui.output import replacing, write_export

    rows = index.rows_in(result.mask)
    selections = {facet: sorted(values) for facet, values in result.filter.selections}
    with replacing(path) as out:
        write_export(
            index, rows, form, out, {"query": result.filter.query, "selections": selections}
        )
    return len(rows)
