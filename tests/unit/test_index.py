"""The index: fuzzy ranking, facet semantics and counts, hash prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import fake_hash, record, write_summary

from cachetui.index.evaluate import evaluate
from cachetui.index.filter import Filter
from cachetui.index.fuzzy import NameRanker
from cachetui.index.hashes import HashPrefixError
from cachetui.index.store import Index
from cachetui.service import IndexService


def load(*sources: str) -> Index:
    return IndexService(list(sources)).load().index


@pytest.fixture(scope="module")
def sample() -> Index:
    return load()  # no source: the bundled sample data


@pytest.fixture
def small(synthetic: Path) -> Index:
    return load(str(synthetic))


def names(index: Index, result) -> list[str]:
    return [index.packages[p] for p in result.packages]


# -- fuzzy search ---------------------------------------------------------------------


def test_typo_finds_the_package(sample: Index) -> None:
    assert names(sample, evaluate(sample, Filter("pymp4py")))[0] == "py-mpi4py"


def test_exact_then_prefix_then_substring_then_fuzzy() -> None:
    pool = sorted(["zlib", "zlib-ng", "zlibx", "libzlib", "zlbi", "openssl"])
    ranked = [pool[i] for i in NameRanker(pool).rank("zlib")]
    assert ranked[:4] == ["zlib", "zlibx", "zlib-ng", "libzlib"]
    assert "zlbi" in ranked[4:] and "openssl" not in ranked


def test_search_is_case_insensitive_and_empty_lists_all(sample: Index) -> None:
    assert names(sample, evaluate(sample, Filter("PY-SAFE"))) == ["py-safetensors"]
    assert names(sample, evaluate(sample, Filter("  "))) == sample.packages


def test_nonsense_query_matches_nothing(sample: Index) -> None:
    result = evaluate(sample, Filter("qqqqxxxx"))
    assert result.packages == [] and result.matching_specs == 0


# -- facets ---------------------------------------------------------------------------


def brute(index: Index, selections: dict[str, set[str]]) -> set[int]:
    """Rows matching `selections` by checking every spec (OR within, AND across)."""
    attr = {
        "os": "os",
        "target": "target",
        "compiler": "compiler",
        "platform": "platform",
        "tag": "tag",
    }
    out = set()
    for row in range(index.n_specs):
        spec = index.spec(row)
        ok = all(
            (set(spec.stacks) & values)
            if facet == "stack"
            else getattr(spec, attr[facet]) in values
            for facet, values in selections.items()
            if values
        )
        if ok:
            out.add(row)
    return out


@pytest.mark.parametrize(
    "selections",
    [
        {"os": {"ubuntu22.04"}},
        {"os": {"ubuntu22.04", "sequoia"}},
        {"os": {"ubuntu24.04"}, "target": {"aarch64"}},
        {
            "stack": {"e4s", "ml-darwin-aarch64-mps"},
            "compiler": {"gcc@11.4.0", "apple-clang@16.0.0"},
        },
        {"platform": {"darwin"}, "os": {"ubuntu24.04"}},
    ],
)
def test_facets_or_within_and_across(sample: Index, selections) -> None:
    result = evaluate(sample, Filter.of("", selections))
    expected = brute(sample, selections)
    assert {r for r in range(sample.n_specs) if result.mask >> r & 1} == expected
    assert result.matching_specs == len(expected)
    assert result.matching_packages == len({sample.package_of(r) for r in expected})


def test_facet_counts_ignore_their_own_selection(sample: Index) -> None:
    selections = {"os": {"sequoia"}, "stack": {"e4s"}}
    result = evaluate(sample, Filter.of("", selections))
    for facet in ("os", "stack", "target", "compiler"):
        others = {f: v for f, v in selections.items() if f != facet}
        for value, count in result.facet_counts[facet].items():
            assert count == len(brute(sample, {**others, facet: {value}})), (facet, value)
    # The alternative OS stays visible with its count although sequoia is selected.
    assert result.facet_counts["os"]["ubuntu22.04"] > 0


@pytest.mark.parametrize(
    "query, selections",
    [
        ("", {}),
        ("py", {}),
        ("safet", {"os": {"ubuntu22.04"}}),
        ("py", {"stack": {"e4s"}, "target": {"x86_64_v3"}}),
        ("nothing-like-this", {}),
    ],
)
def test_every_facet_count_equals_a_brute_force_count(
    sample: Index, query: str, selections
) -> None:
    """Whichever way a count is computed (histograms or bitsets), it is the number of specs."""
    result = evaluate(sample, Filter.of(query, selections))
    in_query = (
        {sample.package_of(r) for r in range(sample.n_specs)}
        if not query
        else set(NameRanker(sample.packages_lower).rank(query))
    )
    for facet in ("stack", "os", "target", "compiler", "platform", "tag"):
        others = {f: v for f, v in selections.items() if f != facet}
        for value, count in result.facet_counts[facet].items():
            rows = brute(sample, {**others, facet: {value}})
            assert count == len({r for r in rows if sample.package_of(r) in in_query}), (
                facet,
                value,
            )


def test_facet_counts_follow_the_search_text(small: Index) -> None:
    result = evaluate(small, Filter("py-numpy"))
    assert result.facet_counts["os"] == {
        "rhel8": 0,
        "sequoia": 1,
        "ubuntu22.04": 0,
        "ubuntu24.04": 1,
    }
    assert result.facet_counts["compiler"]["none"] == 1


def test_package_counts_show_matching_specs(small: Index) -> None:
    result = evaluate(small, Filter.of("", {"os": {"ubuntu22.04"}}))
    assert dict(zip(names(small, result), result.counts)) == {"zlib": 2, "zlib-ng": 1}
    assert result.status_text() == "2 of 3 packages · 3 of 7 specs"


def test_tags_are_a_facet(small: Index) -> None:
    result = evaluate(small, Filter.of("", {"tag": {"v1.0.0"}}))
    assert names(small, result) == ["zlib"] and result.counts == [1]
    assert small.facet_values["tag"] == ["develop", "v1.0.0"]


def test_unknown_facet_value_matches_nothing(small: Index) -> None:
    assert evaluate(small, Filter.of("", {"os": {"plan9"}})).packages == []


def test_filter_toggle_round_trip() -> None:
    flt = Filter("x").toggled("os", "rhel8").toggled("os", "sequoia")
    assert flt.selected == {"os": frozenset({"rhel8", "sequoia"})}
    assert flt.toggled("os", "rhel8").toggled("os", "sequoia") == Filter("x")


# -- hash prefixes --------------------------------------------------------------------


def test_unique_prefix_any_case_with_or_without_slash(sample: Index) -> None:
    for text in ("2feova4", "/2feova4", "/2FEOVA4", " 2feova4prghd2gkebr23if6bojkyydpt "):
        [row] = sample.lookup_hash(text)
        assert sample.hashes[row] == "2feova4prghd2gkebr23if6bojkyydpt"
        assert sample.package_name(row) == "py-mpi4py"


def test_ambiguous_prefix_returns_every_match(sample: Index) -> None:
    rows = sample.lookup_hash("2")
    assert sorted(sample.hashes[r] for r in rows) == sorted(
        h for h in sample.hashes if h.startswith("2")
    )
    assert len(rows) > 1


def test_missing_prefix_returns_nothing(small: Index) -> None:
    assert small.lookup_hash("zzzz") == []
    assert [small.hashes[r] for r in small.lookup_hash("aaa")] == [
        fake_hash(1, "aaaa"),
        fake_hash(2, "aaab"),
    ]


@pytest.mark.parametrize("bad", ["", "/", "a" * 33, "ab-c", "a b"])
def test_malformed_prefix_is_an_error(sample: Index, bad: str) -> None:
    with pytest.raises(HashPrefixError):
        sample.lookup_hash(bad)


def test_same_hash_in_two_tags_is_kept_per_tag(tmp_path: Path) -> None:
    digest = fake_hash(42)
    write_summary(tmp_path / "a" / "x.md", "pkg", [record(digest)], tag="develop")
    write_summary(tmp_path / "b" / "x.md", "pkg", [record(digest)], tag="v1.0.0")
    write_summary(
        tmp_path / "c" / "x.md", "pkg", [record(digest)], tag="v1.0.0"
    )  # an exact duplicate
    report = IndexService([str(tmp_path)]).load()
    assert [report.index.field("tag", r) for r in report.index.lookup_hash(digest)] == [
        "develop",
        "v1.0.0",
    ]
    assert report.problems == []


def test_values_only_in_dropped_duplicates_are_not_facets(tmp_path: Path) -> None:
    digest = fake_hash(42)
    write_summary(tmp_path / "a" / "x.md", "pkg", [record(digest, os="rhel8")])
    write_summary(
        tmp_path / "b" / "x.md", "pkg", [record(digest, os="centos7")]
    )  # same hash and tag: dropped
    report = IndexService([str(tmp_path)]).load()
    assert report.index.facet_values["os"] == ["rhel8"]
    assert "different content" in report.problems[0].message


def test_duplicates_keep_the_first_in_file_order_among_lookalike_hashes(tmp_path: Path) -> None:
    """Hashes sharing their first 8 characters sort together; only a full match is a duplicate."""
    same_start = [fake_hash(n, "abcdefgh") for n in (1, 2, 3)]
    write_summary(
        tmp_path / "a" / "x.md", "pkg", [record(same_start[0], os="rhel8"), record(same_start[1])]
    )
    write_summary(
        tmp_path / "b" / "x.md", "pkg", [record(same_start[2]), record(same_start[0], os="centos7")]
    )
    write_summary(
        tmp_path / "c" / "x.md", "pkg", [record(same_start[1]), record(same_start[0], os="sles15")]
    )
    report = IndexService([str(tmp_path)]).load()
    index = report.index
    assert sorted(index.hashes[r] for r in index.lookup_hash("abcdefgh")) == sorted(same_start)
    assert index.field("os", index.lookup_hash(same_start[0])[0]) == "rhel8"  # the first file's
    dropped = sorted(p.source.split("/")[-2] for p in report.problems)
    assert dropped == [
        "b",
        "c",
    ]  # different content: each named; c's same-content copy of [1] silently


def test_rows_are_in_display_order_and_every_hash_is_found(tmp_path: Path) -> None:
    """Packages by name; within one, tag, newest version, os, target, compiler, then hash."""
    import random

    from cachetui.index.versions import version_key

    rng = random.Random(7)
    written = []
    for f in range(12):
        recs = [
            record(
                fake_hash(rng.randrange(32**32)),
                version=rng.choice(["1.2", "1.10", "2.0", "0.9"]),
                os=rng.choice(["rhel8", "ubuntu22.04"]),
                target=rng.choice(["x86_64", "aarch64"]),
                compiler=rng.choice(["gcc@9.1.0", "gcc@13.2.0", "clang@17.0.1"]),
            )
            for _ in range(30)
        ]
        tag = rng.choice(["develop", "v1.0"])
        name = ["zlib", "Alpha", "beta", "Zeta", "gamma"][f % 5]  # mixed case sorts by lower case
        write_summary(tmp_path / tag / name / f"{f}.md", name, recs, tag=tag)
        written += [(tag, r["hash"]) for r in recs]
    index = IndexService([str(tmp_path)]).load().index
    rows = [
        (
            index.packages[index.package_of(r)],
            index.field("tag", r),
            index.field("version", r),
            index.field("os", r),
            index.field("target", r),
            index.field("compiler", r),
            index.hashes[r],
        )
        for r in range(index.n_specs)
    ]
    compiler_key = lambda c: (c.split("@")[0], version_key(c.split("@")[1]))  # noqa: E731
    assert rows == sorted(
        rows,
        key=lambda t: (
            t[0].lower(),
            t[1],
            _Newest(version_key(t[2])),
            t[3],
            t[4],
            compiler_key(t[5]),
            t[6],
        ),
    )
    for r in range(index.n_specs):  # each row's package is the one its file named
        assert index.field("source", r).split("/")[-2] == index.packages[index.package_of(r)]
    assert sorted(set(written)) == sorted(
        (index.field("tag", r), index.hashes[r]) for r in range(index.n_specs)
    )
    for _tag, digest in written:
        assert digest in [index.hashes[r] for r in index.lookup_hash(digest[:9])]


class _Newest:
    def __init__(self, key) -> None:
        self.key = key

    def __lt__(self, other: _Newest) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Newest) and other.key == self.key


def _snapshot(index: Index) -> tuple:
    return (index.packages, [index.spec(r) for r in range(index.n_specs)], index.facet_values)


def test_loader_processes_build_the_same_index_as_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cachetui import sources
    from cachetui.sources import parallel as parallel_module

    for p in range(12):
        write_summary(
            tmp_path / f"p{p:02d}" / "specs.md",
            f"pkg{p:02d}",
            [
                record(fake_hash(p * 100 + i), f"1.{i % 3}", os=("rhel8", "sequoia")[i % 2])
                for i in range(p + 1)
            ],
        )
    serial = IndexService([str(tmp_path)]).load()
    monkeypatch.setattr(parallel_module, "PARALLEL_MIN_FILES", 0)
    files, _ = sources.discover([str(tmp_path)])
    chunks = list(sources.read_chunks(files, workers=2))
    assert len(chunks) > 1  # really batched, each batch read by a loader process
    parallel = IndexService([str(tmp_path)])
    monkeypatch.setattr(
        sources, "read_chunks", lambda files, progress=None, cancelled=None, pool=None: iter(chunks)
    )
    assert _snapshot(parallel.load().index) == _snapshot(serial.index)


def test_a_broken_loader_pool_falls_back_to_reading_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from cachetui import sources
    from cachetui.sources import parallel as parallel_module

    for p in range(5):
        write_summary(tmp_path / f"p{p}" / "specs.md", f"pkg{p}", [record(fake_hash(p))])

    class BrokenPool:
        def __init__(self, *args, **kwargs) -> None:
            raise BrokenProcessPool("no processes here")

    monkeypatch.setattr(parallel_module, "ProcessPoolExecutor", BrokenPool)
    monkeypatch.setattr(parallel_module, "PARALLEL_MIN_FILES", 0)
    files, _ = sources.discover([str(tmp_path)])
    chunks = list(sources.read_chunks(files, workers=2))
    assert sum(c.rows for c in chunks) == 5


def test_loader_processes_start_under_a_replaced_stderr(tmp_path: Path) -> None:
    # Textual swaps sys.stderr for an object without a real descriptor; loading from the
    # app must still use the loader processes (a fresh interpreter: no tracker running yet).
    import subprocess
    import sys

    for p in range(6):
        write_summary(tmp_path / f"p{p}" / "specs.md", f"pkg{p}", [record(fake_hash(p))])
    script = tmp_path / "probe.py"
    script.write_text(
        "import sys\n"
        "from cachetui import sources\n"
        "class FakeStderr:\n"
        "    def write(self, text): pass\n"
        "    def flush(self): pass\n"
        "    def fileno(self): return -1\n"
        "if __name__ == '__main__':\n"
        "    sources.parallel.PARALLEL_MIN_FILES = 0\n"
        "    sys.stderr = FakeStderr()\n"
        f"    files, _ = sources.discover([{str(tmp_path)!r}])\n"
        "    chunks = list(sources.read_chunks(files, workers=2))\n"
        "    import multiprocessing.resource_tracker as rt\n"
        "    assert rt._resource_tracker._pid is not None, 'no tracker: the pool did not start'\n"
        "    print(sum(c.rows for c in chunks))\n"
    )
    import os

    import cachetui

    env = {
        **os.environ,
        "PYTHONPATH": str(Path(cachetui.__file__).resolve().parent.parent),
    }  # the code under test
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0 and done.stdout.strip() == "6", done.stdout


def test_one_or_two_characters_match_only_as_substrings() -> None:
    pool = sorted(["zlib", "bzip2", "lz4", "zstd"])
    assert [pool[i] for i in NameRanker(pool).rank("zl")] == ["zlib"]
    assert [pool[i] for i in NameRanker(pool).rank("z")] == [
        "zlib",
        "zstd",
        "lz4",
        "bzip2",
    ]  # prefix, then substring by length
    # From three characters on, typos are forgiven.
    assert "zstd" in [pool[i] for i in NameRanker(pool).rank("zsdt")]


def test_a_query_matching_every_package_still_ranks_the_exact_name_first(tmp_path: Path) -> None:
    write_summary(tmp_path / "develop" / "abc-x" / "specs.md", "abc-x", [record(fake_hash(1))])
    write_summary(tmp_path / "develop" / "x" / "specs.md", "x", [record(fake_hash(2))])
    index = IndexService([str(tmp_path)], use_cache=False).load().index
    result = evaluate(index, Filter("x"))
    assert [index.packages[p] for p in result.packages] == ["x", "abc-x"]
