"""Bad input: a corpus of broken files (tests/fixtures/bad_inputs/), each with the message
the user gets (tests/fixtures/bad_inputs.expected.json), and the valid rest always loads;
plus the cases a file in the repository cannot hold (2 GB, a symlink loop, unreadable,
missing are in test_reader.py) and faults of the on-disk index. The app's list of the
problems: ui/test_bad_inputs_app.py."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers import BAD_INPUTS, BAD_INPUTS_EXPECTED, SAMPLE, SAMPLE_DATA

from cachetui.cli import main
from cachetui.service import IndexService

CORPUS = BAD_INPUTS
EXPECTED = json.loads(BAD_INPUTS_EXPECTED.read_text())


def _by_file(problems) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for p in problems:
        out.setdefault(Path(p.source).name, []).append(
            [p.severity, p.message.replace(str(CORPUS) + os.sep, "")]
        )
    return {k: sorted(v) for k, v in out.items()}


def test_every_bad_input_gets_its_message_and_the_valid_rest_loads(tmp_path):
    corpus = tmp_path / "bad_inputs"
    shutil.copytree(CORPUS, corpus)
    report = IndexService([str(corpus)], use_cache=False).load()
    got = {
        k: [[s, m.replace(str(corpus) + os.sep, "")] for s, m in v]
        for k, v in _by_file(report.problems).items()
    }
    assert got == EXPECTED["problems"]
    index = report.index
    specs = {name: len(index.package_range(i)) for i, name in enumerate(index.packages)}
    assert specs == EXPECTED["specs"]


def test_a_2_gb_file_is_refused_without_being_read(tmp_path):
    big = tmp_path / "huge.md"
    with open(big, "wb") as handle:
        handle.truncate(2 * 1024**3)  # sparse: no disk, and reading it would cost 2 GB of memory
    shutil.copytree(SAMPLE_DATA, tmp_path / "sample")
    started = time.perf_counter()
    report = IndexService([str(tmp_path)], use_cache=False).load()
    assert time.perf_counter() - started < 10
    [problem] = [p for p in report.problems if p.source == str(big)]
    assert (
        problem.message
        == "file is 2,147,483,648 bytes, larger than the 268,435,456-byte limit; skipped"
    )
    assert report.index.n_specs == SAMPLE.specs


def test_problems_are_on_stderr_and_in_stats_json(capsys):
    code = main(["stats", str(CORPUS), "--json", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 0
    listed = json.loads(out)["problems"]
    count = sum(len(v) for v in EXPECTED["problems"].values())
    assert len(listed) == count
    assert {
        (Path(p["source"]).name, p["error"].replace(str(CORPUS) + os.sep, "")) for p in listed
    } == {(f, m) for f, v in EXPECTED["problems"].items() for _, m in v}
    lines = [line for line in err.splitlines() if line.startswith("cachetui: ")]
    assert len(lines) == count
    assert f"cachetui: error: {CORPUS / 'empty.md'}: empty file" in lines


# -- faults of the on-disk index --------------------------------------------------------


def test_a_full_disk_still_loads_from_the_sources_and_says_so_once(tmp_path, monkeypatch):
    from cachetui.index import snapshot

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(snapshot, "_write", full)
    report = IndexService([str(SAMPLE_DATA)], cache_dir=tmp_path / "cache").load()
    assert report.index.n_specs == SAMPLE.specs
    notes = [p for p in report.problems if "could not save the on-disk index" in p.message]
    assert len(notes) == 1 and "No space left on device" in notes[0].message
    assert not list((tmp_path / "cache").glob("*.cachetui"))


def test_two_processes_writing_the_on_disk_index_at_once(tmp_path):
    """Both answer from the sources; what is left on disk is whole, and the next start uses it."""
    sources = tmp_path / "sources"
    shutil.copytree(SAMPLE_DATA, sources)
    cache = tmp_path / "cache"
    command = [
        sys.executable,
        "-m",
        "cachetui",
        "stats",
        str(sources),
        "--json",
        "--cache-dir",
        str(cache),
    ]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert all(json.loads(out)["specs"] == SAMPLE.specs for out, _ in outputs)
    assert not list(cache.glob("*.tmp"))  # no half-written file left behind
    warm = IndexService([str(sources)], cache_dir=cache).load()
    assert warm.from_snapshot and warm.index.n_specs == SAMPLE.specs and not warm.problems
