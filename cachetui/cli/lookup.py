"""`cachetui lookup PREFIX`: every spec whose hash starts with PREFIX."""

from __future__ import annotations

import argparse
import sys

from cachetui.cli.common import (
    EXIT_NO_MATCH,
    EXIT_OK,
    hash_prefix_of,
    load,
    print_json,
)
from cachetui.output import (
    SPEC_COLUMNS,
    size_text,
    spec_cells,
    spec_json,
    table,
)
from cachetui.textsafe import visible


def lookup(options: argparse.Namespace) -> int:
    prefix, shown = hash_prefix_of(options)
    index = load(options).index
    rows = index.lookup_hash(prefix)
    if options.json:
        print_json({"prefix": prefix, "specs": [spec_json(index, r) for r in rows]})
    elif not rows:
        print(f"no spec has a hash starting with {visible(shown)!r}", file=sys.stderr)
    elif len(rows) == 1:
        print(_detail_text(index, rows[0]))
    else:
        print(f"{len(rows)} specs have a hash starting with {visible(shown)!r}:")
        print(table(SPEC_COLUMNS, (spec_cells(index, r) for r in rows)))
        print(f"ambiguous: give more characters of the hash to name one of these {len(rows)}")
    return EXIT_OK if rows else EXIT_NO_MATCH


def _detail_text(index, row: int) -> str:
    spec = index.spec(row)
    fields = [
        ("hash", spec.hash),
        ("spec", f"{spec.package}@{spec.version}"),
        ("compiler", spec.compiler),
        ("arch", spec.arch),
        ("variants", " ".join(spec.variants) or "-"),
        ("stacks", ", ".join(spec.stacks) or "-"),
        ("size", size_text(spec.size)),
        ("tag", spec.tag),
        ("kind", spec.kind),
        ("tarball", spec.tarball or "unknown"),
    ]
    files = index.binary_files(row)
    fields += [
        (label, url)
        for label, url in (("spec file", files.spec_file), ("manifest", files.manifest))
        if url
    ]
    fields += [("source", spec.source), ("install", spec.install_command)]
    return table(("field", "value"), fields).split("\n", 1)[1]
