"""What the lists mark as matching, and where a hash is found in pasted text."""

from __future__ import annotations

import pytest
from helpers import fake_hash

from cachetui.index.hashes import HashPrefixError, hash_prefix_in
from cachetui.index.highlight import highlight_for

FULL = fake_hash(9, "2feova4")


@pytest.mark.parametrize(
    "query, name, marked",
    [
        ("zlib", "zlib-ng", ["zlib"]),  # prefix tier
        ("ZLIB", "zlib-ng", ["zlib"]),  # names are matched without case
        ("numpy", "py-numpy", ["numpy"]),  # substring tier
        ("zlbi", "zlib", ["zl", "b"]),  # fuzzy tier: what the edit distance kept
        ("py-*", "py-numpy", ["py-"]),  # a glob: its literal part
        ("p*n*y", "py-numpy", ["p", "n", "y"]),
        ("*num*", "py-numpy", ["num"]),
        ("zl %gcc", "zlib", ["zl"]),  # constraints do not mark names
        ("%gcc", "zlib", []),
        ("*", "zlib", []),
        ("zz", "zlib", []),  # too short for the fuzzy tier, and not in the name
        ("zlib", "İzlib", []),  # `İ` lowers to two characters: no marks rather than marks one off
        ("a*" * 24, "a" * 40, ["a" * 24]),  # many stars: answered at once, not by backtracking
        ("py-*py", "py-numpy", ["py-", "py"]),
        ("*py*py", "py", []),  # runs may not overlap
    ],
)
def test_marked_characters_of_a_name(query: str, name: str, marked: list[str]) -> None:
    spans = highlight_for(query).name_spans(name)
    assert [name[start:end] for start, end in spans] == marked


@pytest.mark.parametrize(
    "query, columns, stacks",
    [
        ("zlib", set(), set()),
        ("@1.3: %gcc", {"version", "compiler"}, set()),
        ("arch=linux--aarch64 tag=develop", {"platform", "target", "tag"}, set()),
        ("stack=e4s stack=ml", {"stack"}, {"e4s", "ml"}),
        ("os=rhel8", {"os"}, set()),
    ],
)
def test_constrained_columns_are_marked(query: str, columns: set[str], stacks: set[str]) -> None:
    marks = highlight_for(query).spec
    assert marks.columns == columns and marks.stacks == stacks


@pytest.mark.parametrize(
    "variant, marked",
    [
        ("+mpi", True),
        ("~mpi", False),
        ("libs=shared,static", True),
        ("libs=static", False),
        ("build_system=cmake", False),
    ],
)
def test_variants_the_query_asked_for_are_marked(variant: str, marked: bool) -> None:
    assert highlight_for("+mpi libs=shared").spec.variant_matches(variant) is marked


def test_the_matched_start_of_a_hash() -> None:
    marks = highlight_for("/2feo /2feova4").spec
    assert marks.hash_length(FULL) == 7 and marks.hash_length(fake_hash(9, "zz")) == 0
    assert highlight_for("zlib").spec.hash_length(FULL) == 0


def test_an_invalid_query_marks_nothing() -> None:
    assert not highlight_for("zlib ^")


def test_queries_that_mark_specs_alike_have_equal_marks() -> None:
    # The spec list and the detail pane repaint only when these differ.
    assert (
        highlight_for("zli +mpi %gcc").spec
        == highlight_for("zlib +mpi %clang").spec
        != highlight_for("zlib +cuda %gcc").spec
    )


@pytest.mark.parametrize(
    "text, prefix",
    [
        ("2feova4", "2feova4"),
        ("/2FEOVA4", "2feova4"),
        (f"==> Installing zlib-1.3.1-{FULL} [4/9]", FULL),
        (f"/opt/spack/linux-x86_64/gcc-13.2.0/zlib-1.3.1-{FULL.upper()}/lib/libz.so", FULL),
        (
            f"first {fake_hash(1)} then {FULL}",
            FULL,
        ),  # the last one: where a log line names what it built
    ],
)
def test_a_hash_prefix_is_found_in_what_was_typed_or_pasted(text: str, prefix: str) -> None:
    assert hash_prefix_in(text) == prefix


@pytest.mark.parametrize("text", ["", "/", "zlib-1.3.1", f"x{FULL}", f"{FULL}1 more"])
def test_text_without_a_hash_is_refused(text: str) -> None:
    with pytest.raises(HashPrefixError):
        hash_prefix_in(text)
