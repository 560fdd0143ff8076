"""The on-disk index: used when fresh, rebuilt when stale or damaged, never trusted blindly."""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

import pytest
from helpers import fake_hash, raw_front_matter, record, write_summary

from cachetui.index import snapshot
from cachetui.index.store import Index
from cachetui.service import IndexService
from cachetui.sources import discover_stamped


def tree(root: Path) -> Path:
    write_summary(
        root / "develop" / "zlib" / "specs.md",
        "zlib",
        [record(fake_hash(1), "1.3"), record(fake_hash(2), "1.2", os="rhel8")],
    )
    write_summary(root / "develop" / "bzip2" / "specs.md", "bzip2", [record(fake_hash(3), "1.0.8")])
    (root / "junk.txt").write_text("not a summary")
    return root


def load(root: Path, cache: Path, **kwargs):
    return IndexService([str(root)], cache_dir=cache, **kwargs).load()


def view(report) -> tuple:
    index = report.index
    return (
        [index.spec(r) for r in range(index.n_specs)],
        index.facet_values,
        [(p.source, p.message) for p in report.problems],
        report.files,
    )


def snapshot_file(cache: Path) -> Path:
    [path] = cache.glob("index-*.cachetui")
    return path


def test_second_load_comes_from_the_snapshot_and_is_identical(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    cold = load(root, cache)
    warm = load(root, cache)
    assert not cold.from_snapshot and warm.from_snapshot
    assert view(warm) == view(cold)
    assert warm.index.lookup_hash("/" + fake_hash(2)[:6]) == cold.index.lookup_hash(
        fake_hash(2)[:6]
    )
    assert len(warm.problems) == 1 and warm.problems[0].source.endswith(
        "junk.txt"
    )  # problems survive too


@pytest.mark.parametrize("change", ["edit", "add", "remove", "rename", "add-deep"])
def test_any_change_to_the_sources_rebuilds(tmp_path: Path, change: str) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    load(root, cache)
    zlib = root / "develop" / "zlib" / "specs.md"
    time.sleep(0.01)
    if change == "edit":  # same size, new content: the mtime tells
        text = zlib.read_text().replace('"1.3"', '"1.4"')
        zlib.write_text(text)
    elif change == "add":
        write_summary(root / "develop" / "xz" / "specs.md", "xz", [record(fake_hash(9))])
    elif change == "remove":
        zlib.unlink()
    elif change == "rename":
        zlib.rename(zlib.with_name("specs2.md"))
    else:
        write_summary(
            root / "develop" / "zlib" / "old" / "specs.md", "zlib-old", [record(fake_hash(8))]
        )
    again = load(root, cache)
    fresh = load(root, tmp_path / "other-cache")
    assert not again.from_snapshot
    assert view(again)[:3] == view(fresh)[:3]


def test_snapshot_is_per_set_of_sources(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    load(root, cache)
    only = IndexService([str(root / "develop" / "bzip2")], cache_dir=cache).load()
    assert not only.from_snapshot and only.index.packages == ["bzip2"]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "foreign-version"])
def test_a_damaged_snapshot_is_rebuilt_and_said_once(tmp_path: Path, damage: str) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    cold = load(root, cache)
    path = snapshot_file(cache)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) - 40] ^= 0xFF  # inside the hash blob: would show a hash not in the sources
    elif damage == "garbage":
        data = bytearray(os.urandom(4096))
    elif damage == "empty":
        data = bytearray()
    else:
        data = data.replace(f'"format": {snapshot.FORMAT}'.encode(), b'"format": 99', 1)
    path.write_bytes(bytes(data))
    rebuilt = load(root, cache)
    assert not rebuilt.from_snapshot
    assert view(rebuilt)[:2] == view(cold)[:2]  # the data is the sources', not the damaged file's
    notes = [p for p in rebuilt.problems if p.source == str(path)]
    assert len(notes) == 1 and "rebuilt from the sources" in notes[0].message
    assert load(root, cache).from_snapshot  # and the next start is warm again


def test_a_crafted_snapshot_with_codes_out_of_range_is_refused(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    cold = load(root, cache)
    path = snapshot_file(cache)
    # Rewrite a consistent file (valid checksum) whose package codes point past the table.
    index = cold.index
    codes = dict(index.parts.codes)
    codes["package"] = codes["package"] + 50
    index.parts.codes = codes
    files, stamps, _ = discover_stamped([str(root)])
    snapshot.save(path, index, [], [str(root)], stamps, len(files))
    with pytest.raises(snapshot.SnapshotError, match="out of range"):
        snapshot.load(path, [str(root)])


def test_no_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    load(root, cache, use_cache=False)
    assert not cache.exists()


def test_an_unwritable_cache_dir_still_loads_and_says_so(tmp_path: Path) -> None:
    root = tree(tmp_path / "src")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    report = load(root, blocker / "cache")
    assert report.index.n_specs == 3
    [note] = [p for p in report.problems if "could not save the on-disk index" in p.message]
    assert note.severity == "warning"


def test_the_app_never_writes_into_its_sources(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    load(root, cache)
    load(root, cache)
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before


class _Payload:
    """Unpickling this runs code: it creates the marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickle_in_place_of_the_snapshot_never_runs(tmp_path: Path) -> None:
    import pickle

    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    load(root, cache)
    marker = tmp_path / "pwned"
    snapshot_file(cache).write_bytes(pickle.dumps(_Payload(str(marker))))
    report = load(root, cache)
    assert not marker.exists() and report.index.n_specs == 3 and not report.from_snapshot


def test_a_cache_without_any_stack_is_warm_on_the_second_start(tmp_path: Path) -> None:
    """A facet with no values at all (no spec names a stack) must not spoil the snapshot."""
    root, cache = tmp_path / "src", tmp_path / "cache"
    write_summary(
        root / "develop" / "zlib" / "specs.md", "zlib", [record(fake_hash(1), "1.3", stacks=())]
    )
    cold = load(root, cache)
    warm = load(root, cache)
    assert warm.from_snapshot and view(warm) == view(cold)
    assert not [p for p in warm.problems if "on-disk index" in p.message]


def test_a_snapshot_with_a_blob_where_an_array_belongs_is_rebuilt(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    load(root, cache)
    path = snapshot_file(cache)
    data = path.read_bytes()
    start = len(snapshot.MAGIC) + 8
    length = int.from_bytes(data[len(snapshot.MAGIC) : start], "little")
    header = json.loads(data[start : start + length])
    entry = next(e for e in header["layout"] if e["name"] == "codes.os")
    entry["dtype"] = "bytes"  # a well-formed file that says an array is a blob
    head = json.dumps(header).encode()
    assert len(head) <= length
    _rewrite(path, start, head.ljust(length))  # a right checksum: only validation stands
    rebuilt = load(root, cache)
    assert not rebuilt.from_snapshot and rebuilt.index.n_specs == 3
    assert any(
        "on-disk index not used" in p.message and "wrong kind" in p.message
        for p in rebuilt.problems
    )


# -- per-row strings in columns (issue 17) -------------------------------------------------


def _sections(path: Path) -> dict[str, dict]:
    """The layout entries of a snapshot, by section name."""
    return {entry["name"]: entry for entry in snapshot._Mapped(path).header["layout"]}


def _rewrite(path: Path, offset: int, data: bytes) -> None:
    """`data` written at `offset`, the checksum made right again: only validation stands."""
    body = bytearray(path.read_bytes()[: -snapshot._DIGEST])
    body[offset : offset + len(data)] = data
    path.write_bytes(bytes(body) + zlib.crc32(body).to_bytes(snapshot._DIGEST, "little"))


def _odd_tarballs(root: Path) -> dict[str, str | None]:
    """A summary whose tarball URLs follow cache.spack.io's rule, or almost, or not at all."""
    rule = (
        "linux-ubuntu22.04-x86_64_v3/gcc-11.4.0/zlib-1.3/"
        "linux-ubuntu22.04-x86_64_v3-gcc-11.4.0-zlib-1.3-{h}.spack"
    )
    urls = {
        fake_hash(11): "https://binaries.spack.io/develop/build_cache/" + rule,
        fake_hash(12): "https://binaries.spack.io/releases/v0.20/build_cache/" + rule,
        fake_hash(13): "https://mirror.example.org//build_cache/"
        + rule,  # a root ending in "/": kept as written
        fake_hash(14): "build_cache/" + rule,  # no root at all
        fake_hash(15): "https://binaries.spack.io/develop/build_cache/"
        + rule.replace("{h}", fake_hash(99)),  # another hash
        fake_hash(16): "https://binaries.spack.io/develop/build_cache/"
        + rule.replace("gcc-11.4.0", "gcc-=11.4.0"),
        fake_hash(17): "  https://binaries.spack.io/develop/build_cache/"
        + rule
        + "\n",  # spaces around: stripped
        fake_hash(18): "https://binaries.spack.io/dévelop/build_cache/" + rule,  # not ASCII
        fake_hash(19): "https://example.org/blobs/sha256/ab/"
        + "ab" * 32,  # another layout altogether
        fake_hash(20): "",
    }
    records = [
        record(
            h,
            "1.3",
            compiler="gcc@=11.4.0",
            os="ubuntu22.04",
            target="x86_64_v3",
            tarball=url.replace("{h}", h),
        )
        for h, url in urls.items()
    ]
    records.append(record(fake_hash(21), "1.3"))  # no tarball key
    write_summary(root / "develop" / "zlib" / "specs.md", "zlib", records)
    return {r["hash"]: (r.get("tarball") or "").strip() or None for r in records}


def test_every_stored_tarball_url_reads_back_exactly(tmp_path: Path) -> None:
    root, cache = tmp_path / "src", tmp_path / "cache"
    expected = _odd_tarballs(root)
    for report in (load(root, cache), load(root, cache)):
        index = report.index
        assert {index.hashes[r]: index.tarball(r) for r in range(index.n_specs)} == expected
    assert report.from_snapshot
    # Only the URLs the rule does not give back are stored as text.
    stored = {text for text in report.index.parts.values["tarball_text"] if text is not None}
    assert stored == {expected[fake_hash(n)] for n in (13, 14, 15, 16, 19)}


def test_every_tarball_url_of_the_100k_corpus_reads_back_exactly(
    corpus_100k: Path, tmp_path: Path
) -> None:
    written = {}
    for summary in corpus_100k.glob("develop/*/specs.md"):
        for rec in raw_front_matter(summary)["spec_details"]:
            written[rec["hash"]] = rec.get("tarball")
    assert (
        sum(url is not None for url in written.values()) > len(written) // 2
    )  # most files carry them, as real ones do
    cold = load(corpus_100k, tmp_path / "cache")
    warm = load(corpus_100k, tmp_path / "cache")
    assert warm.from_snapshot
    for report in (cold, warm):
        index = report.index
        assert {index.hashes[r]: index.tarball(r) for r in range(index.n_specs)} == written
    # The corpus writes every URL by cache.spack.io's rule: none is kept as text.
    assert list(warm.index.parts.values["tarball_text"]) == [None]


def test_a_warm_start_makes_no_object_per_row(corpus_100k: Path, tmp_path: Path) -> None:
    import gc
    import tracemalloc

    load(corpus_100k, tmp_path / "cache")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        warm = load(corpus_100k, tmp_path / "cache")
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert warm.from_snapshot
    blocks = sum(stat.count_diff for stat in after.compare_to(before, "filename"))
    index = warm.index
    # What a warm start keeps grows with the packages (names for the search), never with the
    # rows: 100,000 rows, 1,000 packages.
    assert blocks < 8 * index.n_packages + 1_000, blocks
    assert 8 * index.n_packages + 1_000 < index.n_specs // 10
    assert (
        index.tarball(index.n_specs // 2) is not None
    )  # and every string is still there, when read


@pytest.mark.parametrize(
    "section",
    [
        "table.tarball_text.blob",
        "table.source.blob",
        "variant_tokens.blob",
        "table.tarball_root.offsets",
    ],
)
def test_a_damaged_string_column_is_detected_and_rebuilt(tmp_path: Path, section: str) -> None:
    root, cache = tmp_path / "src", tmp_path / "cache"
    expected = _odd_tarballs(root)
    cold = load(root, cache)
    path = snapshot_file(cache)
    entry = _sections(path)[section]
    data = bytearray(path.read_bytes())
    data[entry["offset"] + entry["length"] // 2] ^= 0x20
    path.write_bytes(bytes(data))
    rebuilt = load(root, cache)
    assert not rebuilt.from_snapshot
    assert {
        rebuilt.index.hashes[r]: rebuilt.index.tarball(r) for r in range(rebuilt.index.n_specs)
    } == expected
    assert view(rebuilt)[:2] == view(cold)[:2]
    [note] = [p for p in rebuilt.problems if p.source == str(path)]
    assert "checksum mismatch" in note.message and "rebuilt from the sources" in note.message
    assert load(root, cache).from_snapshot


@pytest.mark.parametrize(
    "forgery",
    [
        "offset past the blob",
        "offsets out of order",
        "code past the table",
        "list value out of range",
    ],
)
def test_a_crafted_string_column_with_a_right_checksum_is_refused(
    tmp_path: Path, forgery: str
) -> None:
    import numpy as np

    root, cache = tmp_path / "src", tmp_path / "cache"
    _odd_tarballs(root)
    load(root, cache)
    path = snapshot_file(cache)
    sections = _sections(path)
    if forgery == "offset past the blob":
        entry = sections["table.tarball_text.offsets"]
        _rewrite(
            path, entry["offset"] + entry["length"] - 8, np.array([10**9], dtype=np.int64).tobytes()
        )
    elif forgery == "offsets out of order":
        entry = sections["table.source.offsets"]
        _rewrite(path, entry["offset"] + 8, np.array([-5], dtype=np.int64).tobytes())
    elif forgery == "code past the table":
        entry = sections["codes.tarball_text"]
        _rewrite(path, entry["offset"], bytes([250]))
    else:
        entry = sections["variantsets.values"]
        _rewrite(path, entry["offset"], np.array([10**6], dtype=entry["dtype"]).tobytes())
    with pytest.raises(snapshot.SnapshotError, match="inconsistent contents|out of range"):
        snapshot.load(path, [str(root)])


def test_a_million_distinct_tarball_urls_keep_the_on_disk_index_within_its_bound(
    tmp_path: Path,
) -> None:
    """1M specs, each with its own tarball URL (one in a hundred not by the rule): the on-disk
    index stays under 100 MB, and URLs read back exactly from it."""
    import base64
    import random

    from cachetui.index.store import build_index
    from cachetui.sources.columns import ColumnChunk
    from cachetui.sources.summary import Record, SummaryFile

    rng = random.Random(17)
    archs = [
        ("linux", "ubuntu22.04", "x86_64_v3"),
        ("linux", "ubuntu24.04", "aarch64"),
        ("darwin", "sequoia", "aarch64"),
    ]
    chunks, samples = [], {}
    for batch in range(10):
        chunk = ColumnChunk()
        for f in range(100):
            package = f"pkg{batch}x{f}"
            records = []
            for i in range(1000):
                digest = base64.b32encode(rng.randbytes(20)).decode().lower()
                platform, os_, target = archs[i % 3]
                arch, version = f"{platform}-{os_}-{target}", f"1.{i % 7}"
                url = (
                    f"https://binaries.spack.io/develop/build_cache/{arch}/gcc-11.4.0/{package}-{version}/"
                    f"{arch}-gcc-11.4.0-{package}-{version}-{digest}.spack"
                )
                if i % 100 == 0:
                    url = f"https://mirror{i}.example.org/{digest}.spack"
                records.append(
                    Record(
                        hash=digest,
                        versions=[version],
                        os=os_,
                        platform=platform,
                        target=target,
                        compiler="gcc@=11.4.0",
                        size="-",
                        tarball=url,
                        stacks=("root", "e4s"),
                        variants=("build_system=cmake", "+shared" if i % 2 else "~shared"),
                    )
                )
                if i % 997 == 0:
                    samples[digest] = url
            summary = SummaryFile(package=package, tag="develop")
            summary.set_records(records)
            chunk.add(summary, f"/nowhere/develop/{package}/specs.md")
        chunks.append(chunk.seal())
    index, problems = build_index(chunks)
    assert index.n_specs == 1_000_000 and not problems
    path = tmp_path / "index.cachetui"
    snapshot.save(path, index, [], ["/nowhere"], [], 1000)
    assert path.stat().st_size <= 100 * 1024 * 1024
    mapped = snapshot._Mapped(path)
    mapped.check()
    warm = Index(snapshot._parts(mapped.header, mapped.sections()))
    rows = {warm.hashes[r]: r for r in range(warm.n_specs)}
    assert {digest: warm.tarball(rows[digest]) for digest in samples} == samples
