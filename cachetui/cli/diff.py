"""`cachetui diff OLD NEW`: what changed between two cache tags, or two sources."""

from __future__ import annotations

import argparse

from cachetui.cli.common import (
    EXIT_NO_MATCH,
    EXIT_OK,
    UsageError,
    load,
    print_json,
)
from cachetui.output import (
    spec_line,
)
from cachetui.service import LoadReport
from cachetui.textsafe import visible
from cachetui.urls import is_url


def diff_command(options: argparse.Namespace) -> int:
    from dataclasses import replace

    from cachetui.index.diff import diff

    loaded: dict[str, LoadReport] = {}

    def report_of(sources: list[str] | None) -> LoadReport:
        key = "\0".join(sources or [])
        if key not in loaded:
            scoped = argparse.Namespace(
                **{**vars(options), "sources": sources if sources is not None else options.sources}
            )
            loaded[key] = load(scoped)
        return loaded[key]

    old, new = _side(options.old, report_of), _side(options.new, report_of)
    if (
        old.label == new.label and options.old != options.new
    ):  # two snapshots of one tag: say which is which
        old, new = replace(old, label=options.old), replace(new, label=options.new)
    changes = diff(old, new)
    if options.json:
        print_json(changes.to_json())
        return EXIT_OK if changes.packages else EXIT_NO_MATCH
    print(visible(f"{old.label} -> {new.label}: {changes.summary()}"))
    line_of = {
        **{old.index.hashes[r]: (old.index, r) for r in old.rows},
        **{new.index.hashes[r]: (new.index, r) for r in new.rows},
    }
    for name, change in changes.packages.items():
        print(f"\n{visible(name)}")
        for mark, hashes in (("+", change.added), ("-", change.removed)):
            for digest in hashes:
                print(f"  {mark} {visible(spec_line(*line_of[digest]))}")
        for old_hash, new_hash in change.rebuilt:
            print(f"  ~ {visible(spec_line(*line_of[old_hash]))} -> /{new_hash}")
    return EXIT_OK if changes.packages else EXIT_NO_MATCH


def _side(name: str, report_of):
    """A tag among the sources, else a source (file, directory, URL) of its own."""
    from pathlib import Path

    from cachetui.service.compare import NotATag, tag_side, whole_side

    if is_url(name) or Path(name).expanduser().exists():
        return whole_side(name, report_of([name]).index)
    index = report_of(None).index
    try:
        return tag_side(index, name)
    except NotATag:
        tags = ", ".join(visible(t) for t in index.facet_values.get("tag", []))
        raise UsageError(
            f"{visible(name)!r} is neither a cache tag among the sources ({tags}) "
            "nor a file, directory or URL"
        ) from None
