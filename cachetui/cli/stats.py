"""`cachetui stats`: counts of packages, specs, kinds, tags and facet values."""

from __future__ import annotations

import argparse

from cachetui.cli.common import (
    EXIT_OK,
    load,
    print_json,
)
from cachetui.model import BINARY_KIND
from cachetui.output import (
    problem_json,
    table,
)


def stats(options: argparse.Namespace) -> int:
    report = load(options)
    index = report.index
    facets = {
        facet: {
            v: c
            for v, c in zip(
                index.facet_values[facet], (b.bit_count() for b in index.facet_bits[facet])
            )
        }
        for facet in ("stack", "os", "target", "compiler", "platform")
    }
    tags = {v: b.bit_count() for v, b in zip(index.facet_values["tag"], index.facet_bits["tag"])}
    kinds = {v: b.bit_count() for v, b in zip(index.facet_values["kind"], index.facet_bits["kind"])}
    if options.json:
        print_json(
            {
                "packages": index.n_packages,
                "specs": index.n_specs,
                "kinds": kinds,
                "tags": tags,
                "facets": facets,
                "problems": [problem_json(p) for p in report.problems],
            }
        )
        return EXIT_OK
    apart = (
        f" ({', '.join(f'{c:,} {_KIND_COUNTED.get(kind, kind)}' for kind, c in kinds.items())})"
        if set(kinds) - {BINARY_KIND}
        else ""
    )
    print(
        f"{index.n_packages:,} packages, {index.n_specs:,} specs{apart} from {report.files:,} files"
    )
    if report.problems:
        print(f"{len(report.problems):,} load problems (listed on stderr)")
    for title, counts in [("tag", tags)] + list(facets.items()):
        print()
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        print(table((title, "specs"), ((v, f"{c:,}") for v, c in ranked), right=(1,)))
    return EXIT_OK


_KIND_COUNTED = {BINARY_KIND: "binaries"}
