"""`cachetui deps PREFIX`: the dependency tree of a spec (`--reverse`: what uses it)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cachetui.cli.common import (
    EXIT_NO_MATCH,
    EXIT_OK,
    UsageError,
    hash_prefix_of,
    load,
    print_json,
)
from cachetui.model import NodeKind
from cachetui.output import (
    dependency_label,
    edge_json,
    spec_json,
    spec_line,
)
from cachetui.textsafe import visible


def deps(options: argparse.Namespace) -> int:
    from cachetui.index.deps import dependencies_of, reverse_tree

    prefix, shown = hash_prefix_of(options)
    index = load(options).index
    rows = index.lookup_hash(prefix)
    if not rows:
        if not options.json:
            print(f"no spec has a hash starting with {visible(shown)!r}", file=sys.stderr)
        else:
            print_json({"prefix": prefix, "spec": None})
        return EXIT_NO_MATCH
    hashes = sorted({index.hashes[r] for r in rows})
    if len(hashes) > 1:
        listed = "\n".join(f"  {spec_line(index, index.lookup_hash(h)[0])}" for h in hashes[:20])
        raise UsageError(
            f"{len(hashes)} specs have a hash starting with {visible(shown)!r}; give more "
            f"characters:\n{visible(listed)}"
        )
    row = rows[0]
    found = dependencies_of(index, row)
    if index.graph_problem:
        print(f"cachetui: warning: {visible(index.graph_problem)}", file=sys.stderr)
    node = index.graph.node_of_row(row)
    if options.reverse and found is not None and node is not None:
        tree, cut = reverse_tree(index.graph, node)
    else:
        tree, cut = (found.tree, found.cut) if found is not None else ([], False)
    if options.json:
        record: dict = {
            "prefix": prefix,
            "spec": spec_json(index, row),
            "reverse": options.reverse,
            "cut": cut,
        }
        if found is None:
            record["dependencies" if not options.reverse else "dependents"] = None
        elif options.reverse:
            record["dependents"] = [
                edge_json(line.dependency, line.depth, line.repeated) for line in tree
            ]
        else:
            record["dependencies"] = [
                edge_json(line.dependency, line.depth, line.repeated) for line in tree
            ]
            record["build"] = [edge_json(d, 1, False) for d in found.build]
        print_json(record)
        return EXIT_OK
    print(visible(spec_line(index, row)))
    if found is None and index.graph_problem:
        print(
            "no dependency information: the on-disk index could not give it this time (see above)"
        )
        return EXIT_OK
    if found is None:
        print(
            f"no dependency information: {visible(index.field('source', row))} is a cache.spack.io "
            "summary, which lists none"
        )
        return EXIT_OK
    sections: list[tuple[str, list[Any]]] = (
        [("used by (transitively)", tree)]
        if options.reverse
        else [
            ("depends on (link/run)", tree),
            ("build dependencies", [_Line(1, d) for d in found.build]),
        ]
    )
    for title, lines in sections:
        print(f"{title}:")
        for line in lines or [None]:
            print(
                "  (none)"
                if line is None
                else "  " + "  " * (line.depth - 1) + _edge_text(line.dependency, line.repeated)
            )
    if cut:
        print(f"(cut at {len(tree):,} lines)")
    return EXIT_OK


class _Line:
    def __init__(self, depth: int, dependency) -> None:
        self.depth, self.dependency, self.repeated = depth, dependency, False


def _edge_text(dependency, repeated: bool) -> str:
    parts = [dependency_label(dependency), f"[{','.join(dependency.deptype_names)}]"]
    if dependency.virtuals:
        parts.append(f"%{','.join(dependency.virtuals)}")
    if dependency.kind != NodeKind.BINARY:
        parts.append(f"({dependency.kind_name})")
    if repeated:
        parts.append("(see above)")
    return visible(" ".join(parts))
