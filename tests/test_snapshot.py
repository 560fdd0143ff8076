"""The on-disk index: used when fresh, rebuilt when stale or damaged, never trusted blindly."""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

import pytest

from cachetui.index import snapshot
from cachetui.service import IndexService
from cachetui.sources import discover_stamped
from conftest import fake_hash, record, write_summary


def tree(root: Path) -> Path:
    write_summary(root / "develop" / "zlib" / "specs.md", "zlib", [record(fake_hash(1), "1.3"), record(fake_hash(2), "1.2", os="rhel8")])
    write_summary(root / "develop" / "bzip2" / "specs.md", "bzip2", [record(fake_hash(3), "1.0.8")])
    (root / "junk.txt").write_text("not a summary")
    return root


def load(root: Path, cache: Path, **kwargs):
    return IndexService([str(root)], cache_dir=cache, **kwargs).load()


def view(report) -> tuple:
    index = report.index
    return ([index.spec(r) for r in range(index.n_specs)], index.facet_values, [(p.source, p.message) for p in report.problems], report.files)


def snapshot_file(cache: Path) -> Path:
    [path] = cache.glob("index-*.cachetui")
    return path


def test_second_load_comes_from_the_snapshot_and_is_identical(tmp_path: Path) -> None:
    root, cache = tree(tmp_path / "src"), tmp_path / "cache"
    cold = load(root, cache)
    warm = load(root, cache)
    assert not cold.from_snapshot and warm.from_snapshot
    assert view(warm) == view(cold)
    assert warm.index.lookup_hash("/" + fake_hash(2)[:6]) == cold.index.lookup_hash(fake_hash(2)[:6])
    assert len(warm.problems) == 1 and warm.problems[0].source.endswith("junk.txt")  # problems survive too


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
        write_summary(root / "develop" / "zlib" / "old" / "specs.md", "zlib-old", [record(fake_hash(8))])
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
    write_summary(root / "develop" / "zlib" / "specs.md", "zlib", [record(fake_hash(1), "1.3", stacks=())])
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
    body = snapshot.MAGIC + len(head).to_bytes(8, "little") + head + data[start + length : -4]
    path.write_bytes(body + zlib.crc32(body).to_bytes(4, "little"))  # a right checksum: only validation stands
    rebuilt = load(root, cache)
    assert not rebuilt.from_snapshot and rebuilt.index.n_specs == 3
    assert any("on-disk index not used" in p.message for p in rebuilt.problems)
