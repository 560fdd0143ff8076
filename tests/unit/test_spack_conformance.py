"""cachetui against Spack 1.x's own answers (../shared/real/spack: files Spack wrote, and what
Spack 1.2.0.dev0 said of them): the query grammar, spec lines that paste back, and variants
and compilers written as Spack writes them."""

from __future__ import annotations

import io
import json
import re
from functools import cache

import pytest
from helpers import SPACK_REAL

from cachetui import cli
from cachetui.index.evaluate import evaluate
from cachetui.index.filter import Filter
from cachetui.index.query import parse_query
from cachetui.output import write_spec_lines
from cachetui.service import IndexService
from cachetui.spack_format import compiler_texts, variants_text

REAL = SPACK_REAL
pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason="../shared/real/spack is not beside the repository"
)

QUERIES = (
    json.loads((REAL / "queries.json").read_text())
    if REAL.is_dir()
    else {"queries": {}, "mirror": ""}
)
MIRRORS = [
    "v3-rich",
    "v2-unsigned",
    "v2-signed",
    "v2-unsigned-2025-05",
    "v2-db7",
    "legacy-yaml-db6",
    "v3-migrated",
]

# In the mock package repository Spack was run with, `mpi` is a package, not a virtual: it
# found no package named mpi and answered nothing. With Spack's real repository `^mpi` is
# the virtual, which the index's edges name (hdf5 -> openmpi provides mpi); cachetui reads
# the edges, so it answers what Spack answers there.
MOCK_REPOSITORY = {"^mpi"}


@cache
def index_of(mirror: str):
    return IndexService([str(REAL / "sources" / mirror)], use_cache=False).load().index


def expected_nodes(mirror: str) -> dict:
    return json.loads((REAL / "expected" / f"{mirror}.json").read_text())["mirror"]["nodes"]


def hashes_matching(index, query: str, exact: bool = True) -> set[str]:
    result = evaluate(index, Filter(query), exact=exact)
    return {index.hashes[row] for row in index.rows_in(result.mask)}


def test_the_queries_are_asked_of_the_mirror_spack_listed() -> None:
    assert QUERIES["mirror"] == "sources/v3-rich" and len(QUERIES["queries"]) >= 40


@pytest.mark.parametrize("query", sorted(QUERIES["queries"]))
def test_exact_search_gives_spacks_hashes(query: str) -> None:
    index = index_of("v3-rich")
    externals = {
        h for h, node in expected_nodes("v3-rich").items() if node["external"]
    }  # listed apart
    want = set(QUERIES["queries"][query]) - externals
    got = hashes_matching(index, query)
    if query in MOCK_REPOSITORY:
        graph = index.graph
        providers = {
            index.hashes[row]
            for row in range(index.n_specs)
            if any("mpi" in d.virtuals for d in graph.dependencies(graph.node_of_row(row)))
        }
        assert want == set() and got == providers and got
        return
    assert got == want


def test_a_query_with_tokens_bound_the_spack_0x_way_says_what_would_match(capsys) -> None:
    index = index_of("v3-rich")
    result = evaluate(index, Filter("zlib %gcc@9 +shared"), exact=True)
    assert result.matching_specs == 0 and result.spack_0x_reading == "zlib +shared %gcc@9"
    assert hashes_matching(index, result.spack_0x_reading) == set(
        QUERIES["queries"]["zlib+shared %gcc@9"]
    )
    # The command line: nothing on stdout, and the query that would match on stderr.
    code = cli.main(
        ["search", "hdf5 %gcc@9 +mpi", str(REAL / "sources" / "v3-rich"), "--exact", "--no-cache"]
    )
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "'hdf5 +mpi %gcc@9'" in err


def test_target_ranges_follow_archspec_as_spack_does() -> None:
    index = index_of("v3-rich")
    targets = {index.field("target", row) for row in range(index.n_specs)}
    assert {"icelake", "haswell", "skylake_avx512", "core2", "m1"} <= targets
    assert hashes_matching(index, "target=zen2:zen4") == set()
    assert hashes_matching(index, "target=core2:haswell") == hashes_matching(
        index, "target=core2"
    ) | hashes_matching(index, "target=haswell")
    assert hashes_matching(index, "target=x86_64:,aarch64:") == hashes_matching(index, "*")


def test_dependency_queries_on_a_spec_file_without_edges_to_them_match_nothing() -> None:
    index = index_of("v3-rich")
    assert hashes_matching(index, "hdf5 ^nosuch") == set()
    assert hashes_matching(index, "^zlib@1.2.13 %gcc") <= hashes_matching(index, "^zlib")


@pytest.mark.parametrize("mirror", MIRRORS)
def test_variants_are_written_as_spack_lists_them(mirror: str) -> None:
    """`spack buildcache list -L -v`: `hash name@version<variants>`, for every binary."""
    listing = dict(
        re.findall(
            r"^([a-z2-7]{32}) (.*)$",
            (REAL / "expected" / f"{mirror}.buildcache-list.txt").read_text(),
            re.M,
        )
    )
    index = index_of(mirror)
    compared = 0
    for row in range(index.n_specs):
        digest = index.hashes[row]
        if digest in listing:
            assert (
                f"{index.package_name(row)}@{index.field('version', row)}"
                f"{variants_text(index.variants(row))}" == listing[digest]
            )
            compared += 1
    assert compared == index.n_specs > 0


@pytest.mark.parametrize("mirror", MIRRORS)
def test_compilers_are_the_providers_spack_names(mirror: str) -> None:
    """Spack's compilers of a binary: the providers of c, cxx and fortran (Spack 1.x edges), or
    the compiler an older spec file annotates; each written with its languages where known."""
    nodes = expected_nodes(mirror)
    index = index_of(mirror)
    for row in range(index.n_specs):
        node = nodes[index.hashes[row]]
        written = compiler_texts(index, row)
        assert sorted(text.rpartition("=")[2].lstrip("%") for text in written) == sorted(
            node["compiler"]
        ), node["name"]
        if node["fmt_compiler"].count("/"):  # a Spack 1.x compiler edge: its languages are known
            assert all(
                re.fullmatch(r"%(c|cxx|fortran)(,(cxx|fortran))*=\S+", text) for text in written
            ), written


@pytest.mark.parametrize("source", [*MIRRORS, "sample data"])
def test_every_spec_line_reads_back_as_exactly_its_spec(source: str) -> None:
    """Each exported line, parsed with the project's Spack 1.x parser, selects its own hash and
    no other: the root's tokens and /hash come before the compiler, which binds what follows."""
    index = IndexService([]).load().index if source == "sample data" else index_of(source)
    out = io.StringIO()
    write_spec_lines(index, range(index.n_specs), out)
    lines = out.getvalue().splitlines()
    assert len(lines) == index.n_specs > 0
    for row, line in zip(range(index.n_specs), lines):
        query = parse_query(line)
        assert query.dependencies == query.compilers  # only `%` after the root's own tokens
        assert hashes_matching(index, line) == {index.hashes[row]}, line


def test_options_anywhere_and_a_double_dash_ends_them(capsys) -> None:
    mirror = str(REAL / "sources" / "v3-rich")
    assert (
        cli.main(["search", "hdf5", "--json", mirror, "--exact", "--no-cache", "--limit", "0"]) == 0
    )
    found = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in found["packages"]] == ["hdf5"] and len(found["specs"]) == 6
    # `-shared` would be an option without `--`; after it, a query (~shared) and a source.
    assert cli.main(["search", "--json", "--exact", "--no-cache", "--", "-shared", mirror]) == 0
    off = json.loads(capsys.readouterr().out)
    assert off["specs"] and all("~shared" in s["variants"] for s in off["specs"])
    assert (
        cli.main(["search", "--no-cache", "--", "--json", mirror]) == 1
    )  # `--json` is the query (--~json)
    out, err = capsys.readouterr()
    assert out == "" and "no package matches '--json'" in err


@pytest.mark.parametrize("command", ["", "stats", "lookup", "search", "deps", "diff", "config"])
def test_help_on_every_command(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"] if command else ["--help"])
    assert done.value.code == 0 and "usage: cachetui" in capsys.readouterr().out
