"""Spec syntax in the search: the parser (each construct, each error), and for every
construct the matching specs equal a brute-force filter over every spec."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cachetui.index.evaluate import evaluate
from cachetui.index.filter import Filter
from cachetui.index.query import QueryError, Variant, VersionRange, parse_query
from cachetui.model import Spec
from cachetui.service import IndexService

# -- the parser -------------------------------------------------------------------------


def test_a_name_alone_is_a_fuzzy_word_and_no_constraint() -> None:
    query = parse_query("py-numpy")
    assert query.words == ("py-numpy",) and not query.has_constraints


@pytest.mark.parametrize(
    "text, versions",
    [
        ("@2.4", [VersionRange("2.4", "2.4")]),
        ("@=2.4", [VersionRange("2.4", "2.4", exact=True)]),
        ("@2.0:2.4", [VersionRange("2.0", "2.4")]),
        ("@2.4:", [VersionRange("2.4", None)]),
        ("@:2.4.1", [VersionRange(None, "2.4.1")]),
        ("@:", [VersionRange(None, None)]),
        ("@1.2,2.4:", [VersionRange("1.2", "1.2"), VersionRange("2.4", None)]),
    ],
)
def test_versions(text: str, versions: list[VersionRange]) -> None:
    [parsed] = parse_query("zlib" + text).versions
    assert list(parsed.ranges) == versions


@pytest.mark.parametrize(
    "text, name, virtuals, versions",
    [
        ("%gcc", "gcc", (), None),
        ("%gcc@13", "gcc", (), "@13"),
        ("%apple-clang@16.0.0", "apple-clang", (), "@16.0.0"),
        ("%c,cxx=gcc@12:", "gcc", ("c", "cxx"), "@12:"),
        ("%c, cxx = gcc", "gcc", ("c", "cxx"), None),
        ("%[virtuals=c] gcc", "gcc", ("c",), None),
        ("% gcc", "gcc", (), None),
        (
            "%clang@15",
            "llvm",
            (),
            "@15",
        ),  # Spack 1.x reads the old name as the package that provides it now
    ],
)
def test_direct_dependencies(
    text: str, name: str, virtuals: tuple[str, ...], versions: str | None
) -> None:
    [dependency] = parse_query(text).compilers
    assert (dependency.direct, dependency.name, dependency.virtuals) == (True, name, virtuals)
    assert dependency.versions == (parse_query(versions).versions[0] if versions else None)


def test_tokens_after_a_dependency_bind_to_it_as_in_spack_1() -> None:
    query = parse_query("zlib@1.2: %gcc@13 +shared os=rhel8 stack=e4s ^openmpi@4: %gcc ~cuda")
    assert query.words == ("zlib",) and query.versions[0].ranges == (VersionRange("1.2", None),)
    assert query.variants == () and query.fields == (
        ("stack", "e4s"),
    )  # a listing's stack stays the root's
    gcc, openmpi = query.dependencies
    assert (gcc.direct, gcc.name, gcc.node.variants, gcc.node.fields) == (
        True,
        "gcc",
        (Variant("shared", frozenset({"true"})),),
        (("os", "rhel8"),),
    )
    assert (openmpi.direct, openmpi.name, openmpi.node.versions[0].ranges) == (
        False,
        "openmpi",
        (VersionRange("4", None),),
    )
    [nested] = openmpi.dependencies  # `%` after `^openmpi`: openmpi's own direct dependency
    assert (nested.name, nested.node.variants) == ("gcc", (Variant("cuda", frozenset({"false"})),))


@pytest.mark.parametrize(
    "text, reading",
    [
        ("zlib %gcc@9 +shared", "zlib +shared %gcc@9"),
        ("%gcc@9 os=ubuntu20.04", "os=ubuntu20.04 %gcc@9"),
        ("^openmpi %gcc@9 +cuda", "^openmpi +cuda %gcc@9"),
        ("a %gcc +x %cmake ~y", "a +x %gcc ~y %cmake"),
        ("zlib+shared %gcc@9", None),
    ],
)
def test_the_spack_0x_reading_moves_bound_tokens_before_their_sigil(
    text: str, reading: str | None
) -> None:
    assert parse_query(text).spack_0x_reading() == reading


@pytest.mark.parametrize(
    "text, variant",
    [
        ("+mpi", Variant("mpi", frozenset({"true"}))),
        ("++mpi", Variant("mpi", frozenset({"true"}))),
        ("~cuda", Variant("cuda", frozenset({"false"}))),
        ("zlib -cuda", Variant("cuda", frozenset({"false"}))),
        ("libs=shared", Variant("libs", frozenset({"shared"}))),
        ("libs==shared,static", Variant("libs", frozenset({"shared", "static"}))),
        (
            "patches:=abc",
            Variant("patches", frozenset({"abc"}), exact=True),
        ),  # exactly these values
        ("mpi=True", Variant("mpi", frozenset({"true"}))),
        ('build_system="cmake"', Variant("build_system", frozenset({"cmake"}))),
    ],
)
def test_variants(text: str, variant: Variant) -> None:
    assert parse_query(text).variants == (variant,)


@pytest.mark.parametrize(
    "text, fields",
    [
        ("platform=linux", [("platform", "linux")]),
        ("os=ubuntu24.04", [("os", "ubuntu24.04")]),
        ("target=x86_64_v3", [("target", "x86_64_v3")]),
        (
            "arch=linux-ubuntu24.04-x86_64_v3",
            [("platform", "linux"), ("os", "ubuntu24.04"), ("target", "x86_64_v3")],
        ),
        ("arch=-ubuntu24.04-", [("os", "ubuntu24.04")]),
        ("arch=x86_64_v3", [("target", "x86_64_v3")]),  # one part: a target, as Spack reads it
        ("operating_system=rhel8", [("os", "rhel8")]),
        ('os="rhel8"', [("os", "rhel8")]),
        ("architecture=linux--", [("platform", "linux")]),
        ("stack=e4s tag=develop", [("stack", "e4s"), ("tag", "develop")]),
    ],
)
def test_architecture_and_cachetui_keys(text: str, fields: list[tuple[str, str]]) -> None:
    assert list(parse_query(text).fields) == fields


def test_everything_at_once_and_run_together() -> None:
    query = parse_query("zlib@1.2:+shared~pic /ABC12 os=rhel8%gcc@13")
    assert query.words == ("zlib",)
    assert query.versions[0].ranges == (VersionRange("1.2", None),)
    assert [(d.name, d.versions) for d in query.compilers] == [
        ("gcc", parse_query("@13").versions[0])
    ]
    assert query.variants == (
        Variant("shared", frozenset({"true"})),
        Variant("pic", frozenset({"false"})),
    )
    assert query.hash_prefixes == ("abc12",) and query.fields == (("os", "rhel8"),)


@pytest.mark.parametrize(
    "text, message, start, end",
    [
        ("zlib@", "a version is missing after @", 4, 5),
        ("zlib@1.2,", "an empty version in the list", 9, 10),
        ("zlib@2.4:1.0", "the range 2.4:1.0 is empty", 5, 12),
        ("zlib@1:2:3", "a range has one ':'", 5, 10),
        ("zlib@=", "nothing is not a version", 5, 6),
        ("%gcc@", "a version is missing after @", 4, 5),
        ("zlib ^", "a dependency is missing after ^", 5, 6),
        ("zlib %c=", "a dependency is missing after %", 5, 8),
        ("/", "a hash prefix needs 1 to 32 characters", 0, 1),
        ("/" + "a" * 33, "a hash has 32 characters; 33 given", 0, 34),
        ("arch=linux-x86_64", "arch is platform-os-target", 5, 17),
        ("os=", "os= needs a value", 0, 3),
        ("target=zen4:zen2", "the range zen4:zen2 is empty", 7, 16),
        ("target=x86_64:aarch64", "the range x86_64:aarch64 is empty", 7, 21),
        ("target=a:b:c", "a:b:c is not a target or a range", 7, 12),
        ("libs=a,,b", "an empty value in the list", 5, 9),
        ("zlib !", "unexpected '!'", 5, 6),
        ("/abc-shared", "a '-' variant needs a space before it", 4, 11),
        ('os="rhel8', 'the quote " is not closed', 3, 9),
        ('arch="linux-a"', "arch is platform-os-target", 6, 13),
        ('libs="a,,b"', "an empty value in the list", 6, 10),
        ("arch=linux-rhel8-zen3:zen1", "the range zen3:zen1 is empty", 17, 26),
    ],
)
def test_errors_point_at_the_token_and_say_why(
    text: str, message: str, start: int, end: int
) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(text)
    assert message in caught.value.message
    assert (caught.value.start, caught.value.end) == (start, end)


@pytest.mark.parametrize(
    "text, inside, outside",
    [
        ("@2.4:", ["2.4", "2.4.1", "3", "develop", "main"], ["2.3.9", "2.3"]),
        ("@:2.4", ["1", "2.4", "2.4.1"], ["2.5", "develop", "2.40"]),
        ("@2.4", ["2.4", "2.4.0.1"], ["2.40", "2.5", "2"]),
        ("@=2.4", ["2.4"], ["2.4.1"]),
        ("@1:" + "9" * 5000, ["1.2", "9" * 4999], ["0.9"]),  # no int() of a pasted huge number
    ],
)
def test_versions_as_spack_reads_them(text: str, inside: list[str], outside: list[str]) -> None:
    [versions] = parse_query(text).versions
    assert [v for v in inside + outside if versions.contains(v)] == inside


def test_plain_names_reach_the_ranker_as_typed() -> None:
    assert parse_query("wihdf  wi").name_text == "wihdf  wi"  # as the search box always had it
    assert parse_query("zlib  %gcc").name_text == "zlib"


def test_globs_match_whole_names_and_a_bare_star_is_any() -> None:
    index = IndexService([]).load().index
    every = evaluate(index, Filter("%gcc"))
    assert evaluate(index, Filter("* %gcc")).matching_specs == every.matching_specs > 0
    picked = evaluate(index, Filter("py-m* %gcc"))
    names = [index.packages[p] for p in picked.packages]
    assert names and all(n.startswith("py-m") for n in names) and len(names) < len(index.packages)
    assert evaluate(index, Filter(f"{'9' * 5000}@{'9' * 5000}")).matching_specs == 0


def test_an_error_pointer_marks_the_characters() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("zlib ^openssl@")
    assert caught.value.pointer("zlib ^openssl@") == "zlib ^openssl@\n             ^"


def test_dependencies_anywhere_are_refused_where_no_source_has_them() -> None:
    index = IndexService([]).load().index  # summaries: a compiler, and no dependencies
    with pytest.raises(QueryError) as caught:
        evaluate(index, Filter("zlib ^openssl"))
    assert "not in cache.spack.io summaries" in caught.value.message
    assert caught.value.pointer("zlib ^openssl") == "zlib ^openssl\n     ^^^^^^^^"


def test_target_ranges_follow_the_microarchitecture_graph() -> None:
    index = IndexService([]).load().index
    specs = [index.spec(row) for row in range(index.n_specs)]
    targets = {s.target for s in specs}
    assert {"x86_64_v3", "aarch64"} <= targets  # the sample data has both families
    x86 = evaluate(index, Filter("target=x86_64:"))
    assert x86.matching_specs == sum(1 for s in specs if s.target.startswith("x86_64")) > 0
    assert evaluate(index, Filter("target=:x86_64_v3")).matching_specs == x86.matching_specs
    assert evaluate(index, Filter("target=x86_64_v4:")).matching_specs == 0
    either = evaluate(index, Filter("target=x86_64:,aarch64:"))
    assert either.matching_specs == sum(
        1 for s in specs if s.target.startswith(("x86_64", "aarch64", "neoverse"))
    )


# -- every construct against a brute-force filter ---------------------------------------


def _numbers(version: str) -> tuple[tuple[int, int | str], ...]:
    """Spack's order of versions: component by component (runs of digits or of letters, the
    separators dropped), numbers by value and newer than words (`1.18-beta` after `1.18`)."""
    return tuple(
        (1, int(part)) if part.isdigit() else (0, part)
        for part in re.findall(r"[0-9]+|[a-zA-Z]+", version)
    )


def _in_series(version: str, series: str) -> bool:
    """`@1.18` holds 1.18, 1.18.2 and 1.18-beta: the versions whose components start with its."""
    return _numbers(version)[: len(_numbers(series))] == _numbers(series)


def _version_ok(version: str, item: str) -> bool:
    """Spack's reading of one version-list item, written out independently (numeric versions)."""
    if item.startswith("="):
        return version == item[1:]
    if ":" not in item:
        return _in_series(version, item)
    low, high = item.split(":")
    if low and _numbers(version) < _numbers(low):
        return False
    return not high or _numbers(version) <= _numbers(high) or _in_series(version, high)


def _variant_values(spec: Spec) -> dict[str, set[str]]:
    out = {}
    for variant in spec.variants:
        if variant[0] in "+~":
            out[variant[1:]] = {"true" if variant[0] == "+" else "false"}
        else:
            name, value = variant.split("=", 1)
            out[name.rstrip(":")] = set(value.split(","))
    return out


def _brute_force(spec: Spec, token: str) -> bool:
    """What one token asks of a spec, from the spec's own fields."""
    if token.startswith("@"):
        return any(_version_ok(spec.version, item) for item in token[1:].split(","))
    if token.startswith("%"):
        name, _, versions = token[1:].partition("@")
        have_name, _, have_version = spec.compiler.partition("@")
        return have_name == name and (
            not versions or any(_version_ok(have_version, i) for i in versions.split(","))
        )
    if token.startswith("/"):
        return spec.hash.startswith(token[1:].lower())
    if token[0] in "+~":
        return _variant_values(spec).get(token[1:]) == {"true" if token[0] == "+" else "false"}
    key, value = token.split("=", 1)
    if key == "arch":
        return all(
            not want or want == have
            for want, have in zip(value.split("-"), (spec.platform, spec.os, spec.target))
        )
    if key == "stack":
        return value in spec.stacks
    if key in ("platform", "os", "target", "tag"):
        return getattr(spec, key) == value
    return set(value.split(",")) <= _variant_values(spec).get(key, set())


def _constructs(specs: list[Spec]) -> list[str]:
    """One or more queries per construct, built from values the data holds (and one it does not)."""
    version = sorted({s.version for s in specs}, key=_numbers)[
        len(specs) and len({s.version for s in specs}) // 2
    ]
    major = version.split(".")[0]
    compiler = next(s.compiler for s in specs if "@" in s.compiler)
    name, _, compiler_version = compiler.partition("@")
    spec = specs[len(specs) // 3]
    multi = next((v for s in specs for v in s.variants if "," in v), None)
    queries = [
        f"@{version}",
        f"@={version}",
        f"@{major}",
        f"@{major}:",
        f"@:{major}",
        f"@:{version}",
        f"@0:{major}",
        f"@{major},{version}",
        "@999:",
        f"%{name}",
        f"%{name}@{compiler_version.split('.')[0]}",
        f"%{name}@{compiler_version}",
        f"%{name}@:1",
        "%nosuch",
        f"/{spec.hash[:2]}",
        f"/{spec.hash[:7].upper()}",
        f"arch={spec.platform}-{spec.os}-{spec.target}",
        f"arch=-{spec.os}-",
        f"arch={spec.platform}--{spec.target}",
        f"platform={spec.platform}",
        f"os={spec.os}",
        f"target={spec.target}",
        f"tag={spec.tag}",
        "tag=nosuch",
    ]
    queries += [f"stack={stack}" for stack in sorted({st for s in specs for st in s.stacks})[:3]]
    for variant in sorted({v for s in specs for v in s.variants})[:12]:
        queries.append(variant if variant[0] in "+~" else variant.replace(":=", "="))
    if multi:
        key, values = multi.split("=", 1)
        queries += [f"{key}={values.split(',')[0]}", f"{key}={multi.split('=', 1)[1]}"]
    queries.append(
        f"os={spec.os} {queries[3]} %{name}"
    )  # tokens are AND-ed (a dependency's last: they bind to it)
    return queries


def _check_every_construct(index) -> None:
    specs = [index.spec(row) for row in range(index.n_specs)]
    for query in _constructs(specs):
        expected = {
            row
            for row, spec in enumerate(specs)
            if all(_brute_force(spec, token) for token in query.split())
        }
        result = evaluate(index, Filter(query))
        got = {row for row in range(index.n_specs) if result.mask >> row & 1}
        assert got == expected, query
        assert result.matching_specs == len(expected), query
        assert result.matching_packages == len({specs[r].package for r in expected}), query
    # A name with constraints: the ranked packages' specs that satisfy them.
    word = index.packages[0][:4]
    ranked = set(index.package_ranker.rank(word))
    query = f"{word} {_constructs(specs)[3]}"
    expected = {
        r
        for r, s in enumerate(specs)
        if index.package_of(r) in ranked and _brute_force(s, query.split()[1])
    }
    result = evaluate(index, Filter(query))
    assert {r for r in range(index.n_specs) if result.mask >> r & 1} == expected


def test_every_construct_matches_brute_force_on_the_sample_data() -> None:
    _check_every_construct(IndexService([]).load().index)


def test_every_construct_matches_brute_force_on_the_100k_corpus(corpus_100k: Path) -> None:
    _check_every_construct(IndexService([str(corpus_100k)], use_cache=False).load().index)


def test_facet_counts_follow_the_constraints() -> None:
    index = IndexService([]).load().index
    specs = [index.spec(row) for row in range(index.n_specs)]
    compiler = specs[0].compiler.split("@")[0]
    result = evaluate(index, Filter(f"%{compiler}"))
    for os_name, count in result.facet_counts["os"].items():
        assert count == sum(
            1 for s in specs if s.os == os_name and s.compiler.startswith(compiler + "@")
        )
