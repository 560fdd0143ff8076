"""Specs written as Spack 1.x writes them, for people to read and to paste back into Spack.

- variants as `VariantMap.__str__` orders them: the boolean ones first, sorted by name and
  joined (`~cxx~debug+mpi+pic`), then each `key=value` sorted by name after a space, a
  multi-valued one as `key:=a,b`; compiler flags before the variants;
- a compiler with the languages it provides (`%c,cxx=gcc@10.2.1`) where an index's edges
  say so, else `%gcc@10.2.1`;
- a spec line with the root's own tokens (variants, `arch=`, `/hash`) before any `%`,
  because Spack 1.x binds every token after `%name` to that dependency.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from cachetui.model import FLAG_KEYS, NO_COMPILER

if TYPE_CHECKING:
    from cachetui.index.store import Index


# What Spack leaves unquoted in a variant's or a flag's value (spec_parser.NO_QUOTES_NEEDED).
_NO_QUOTES_NEEDED = re.compile(r"^[a-zA-Z0-9,/_.\-\[\]]+$")


def quote_if_needed(value: str) -> str:
    """A value as Spack writes it: bare, in single quotes, or (holding a single quote) as a
    JSON string: `languages:='c,c++,fortran'`, `cflags='-O2 -g'`."""
    if _NO_QUOTES_NEEDED.match(value):
        return value
    return json.dumps(value) if "'" in value else f"'{value}'"


def unquoted(value: str) -> str:
    """A value as quote_if_needed wrote it, read back."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            text = json.loads(value)
        except ValueError:
            return value[1:-1]
        return text if isinstance(text, str) else value[1:-1]
    return value


def ordered_variants(variants: Iterable[str]) -> list[str]:
    """A spec's variant strings in the order Spack prints them: flags, booleans, the rest,
    each group by name."""
    flags, booleans, valued = [], [], []
    for variant in variants:
        name = variant.lstrip("+~").split("=", 1)[0].rstrip(":")
        if name in FLAG_KEYS:
            flags.append((name, variant))
        elif variant[:1] in ("+", "~"):
            booleans.append((name, variant))
        else:
            valued.append((name, variant))
    return [v for group in (flags, booleans, valued) for _, v in sorted(group)]


@lru_cache(maxsize=65536)
def variants_text(variants: tuple[str, ...]) -> str:
    """Variants as they follow `name@version` in a Spack spec: `~cxx+mpi api=none`. Kept per
    variant set: an export of a million lines meets a few thousand sets (4x faster)."""
    out: list[str] = []
    for variant in ordered_variants(variants):
        bare = variant[:1] in ("+", "~") and (not out or out[-1][:1] in ("+", "~"))
        out.append(variant if bare else f" {variant}")
    return "".join(out).rstrip()


def compiler_texts(index: Index, row: int) -> list[str]:
    """The row's compilers as Spack 1.x writes them: `%c,cxx=gcc@10.2.1`, one per compiler
    node its edges name (from an index), else its compiler column (`%gcc@13.2.0`), else none."""
    graph = index.graph
    node = graph.node_of_row(row) if graph else None
    if node is not None:
        found = graph.compilers_of(node)
        if found:
            return [
                f"%{','.join(languages)}={name}@{version}"
                if version
                else f"%{','.join(languages)}={name}"
                for languages, name, version in found
            ]
    compiler = index.field("compiler", row)
    return [] if compiler == NO_COMPILER else [f"%{compiler}"]


def spec_line(index: Index, row: int) -> str:
    """`name@version<variants> arch=platform-os-target /hash %c,cxx=gcc@10.2.1`: what
    Spack 1.x reads back as exactly this binary."""
    head = (
        f"{index.package_name(row)}@{index.field('version', row)}"
        f"{variants_text(index.variants(row))}"
    )
    return " ".join([head, _arch(index, row), f"/{index.hashes[row]}", *compiler_texts(index, row)])


def short_spec(index: Index, row: int) -> str:
    """`name@version arch=platform-os-target %gcc@10.2.1`: a list's line, that draws the hash
    apart and leaves the variants to the detail (in Spack 1.x's order all the same)."""
    compiler = index.field("compiler", row)
    head = f"{index.package_name(row)}@{index.field('version', row)} {_arch(index, row)}"
    return head + ("" if compiler == NO_COMPILER else f" %{compiler}")


def _arch(index: Index, row: int) -> str:
    f = index.field
    return f"arch={f('platform', row)}-{f('os', row)}-{f('target', row)}"
