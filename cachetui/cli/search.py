"""`cachetui search QUERY`: the specs a Spack spec query matches, by package."""

from __future__ import annotations

import argparse
import sys

from cachetui.cli.common import (
    EXIT_NO_MATCH,
    EXIT_OK,
    UsageError,
    load,
    print_json,
)
from cachetui.index.filter import Filter
from cachetui.output import (
    SPEC_COLUMNS,
    spec_cells,
    spec_json,
    table,
    write_csv,
    write_spec_lines,
)
from cachetui.textsafe import visible


def search(options: argparse.Namespace) -> int:
    if not options.query.strip():
        raise UsageError("search needs a QUERY")
    from cachetui.index.evaluate import evaluate  # numpy: only the sub-commands that query
    from cachetui.index.query import QueryError, parse_query

    try:
        parse_query(options.query)  # before loading: a typo in the query is reported at once
    except QueryError as error:
        where = (
            f"\n{error.pointer(options.query)}" if options.query.isprintable() else ""
        )  # columns hold
        raise UsageError(f"bad query: {visible(error.message)}{where}") from None
    report = load(options)
    index = report.index
    try:
        result = evaluate(index, Filter(options.query), exact=options.exact)
    except QueryError as error:  # what these sources cannot answer (`^` in summaries)
        raise UsageError(f"bad query: {visible(error.message)}") from None
    cap = options.limit or None
    packages = result.packages[:cap]
    counts = dict(zip(result.packages, result.counts))  # the specs of each that match
    rows: list[int] = []
    for package in packages:
        if cap is not None and len(rows) >= cap:
            break
        rows.extend(index.rows_in_package(package, result.mask))
    rows = rows[:cap]
    if options.json:
        print_json(
            {
                "packages": [{"name": index.packages[p], "specs": counts[p]} for p in packages],
                "specs": [spec_json(index, r) for r in rows],
            }
        )
    elif options.csv:
        write_csv(index, rows, sys.stdout)
    elif options.specs:
        write_spec_lines(index, rows, sys.stdout)
    elif packages:
        print(
            table(
                ("package", "specs"),
                ((index.packages[p], f"{counts[p]:,}") for p in packages),
                right=(1,),
            )
        )
        print()
        print(table(SPEC_COLUMNS, (spec_cells(index, r) for r in rows)))
        shown = len(result.packages) - len(packages), sum(counts[p] for p in packages) - len(rows)
        if any(shown):
            print(
                f"\n(--limit {options.limit}: {shown[0]:,} more packages and {shown[1]:,} more "
                "specs not shown)"
            )
    unwritten = result.matching_specs - len(rows)
    if unwritten and (options.json or options.csv or options.specs):  # a file cut short must say so
        print(
            f"cachetui: --limit {options.limit}: {unwritten:,} more matching specs not written "
            "(--limit 0 writes all)",
            file=sys.stderr,
        )
    if not packages and not (options.json or options.csv or options.specs):
        print(f"no package matches {visible(options.query)!r}", file=sys.stderr)
    if result.spack_0x_reading is not None:
        print(
            f"cachetui: in Spack 1.x the tokens after %name constrain that dependency; "
            f"with them on the package it matches: {visible(result.spack_0x_reading)!r}",
            file=sys.stderr,
        )
    return EXIT_OK if packages else EXIT_NO_MATCH
