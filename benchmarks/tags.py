"""Comparing two cache tags and summarising a tag, at scale; prints figures.

    python benchmarks/tags.py [--specs 500000] [--repeat 5]

Writes two tags of N specs each with benchmarks/make_corpus.py (in benchmarks/tags-<N>,
kept for later runs): `old`, and `new` from the same seed with one package in fifty given
new hashes by a different seed, so most specs are unchanged, as between two snapshots.
Then, in-process on the loaded index: `diff` of the two tags (what the app's `c` and
`cachetui diff` do), the stats of everything and of one tag (the app's `s`), and the
export of one tag as CSV and as spec lines. Medians and maxima; quote one run.
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def corpus(specs: int) -> Path:
    root = HERE / f"tags-{specs // 1000}k"
    if (root / "new").is_dir():
        return root
    make = [sys.executable, str(HERE / "make_corpus.py")]
    packages = max(10, specs // 100)
    subprocess.run(
        [*make, str(root), "--specs", str(specs), "--packages", str(packages), "--tag", "old"],
        check=True,
    )
    subprocess.run(
        [*make, str(root), "--specs", str(specs), "--packages", str(packages), "--tag", "new"],
        check=True,
    )
    changed = root / "changed"
    subprocess.run(
        [
            *make,
            str(changed),
            "--specs",
            str(specs),
            "--packages",
            str(packages),
            "--tag",
            "new",
            "--seed",
            "2",
        ],
        check=True,
    )
    for number, package in enumerate(sorted((changed / "new").iterdir())):
        if number % 50 == 0 and (root / "new" / package.name).is_dir():
            shutil.copy(package / "specs.md", root / "new" / package.name / "specs.md")
    shutil.rmtree(changed)
    return root


def timed(function, repeat: int) -> tuple[float, float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times), result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--specs", type=int, default=500_000, help="specs per tag")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    from cachetui.index.diff import Side, diff
    from cachetui.index.stats import summarize
    from cachetui.output import write_csv, write_spec_lines
    from cachetui.service import IndexService

    root = corpus(options.specs)
    index = IndexService([str(root)], use_cache=False).load().index
    tags = index.facet_values["tag"]
    rows = {tag: index.rows_in(index.facet_bits["tag"][tags.index(tag)]) for tag in ("old", "new")}
    print(
        f"{index.n_specs:,} specs ({', '.join(f'{t}: {len(r):,}' for t, r in rows.items())}), "
        f"{index.n_packages:,} packages"
    )

    median, worst, changes = timed(
        lambda: diff(Side("old", index, rows["old"]), Side("new", index, rows["new"])),
        options.repeat,
    )
    added, removed, rebuilt = changes.totals()
    print(
        f"diff old -> new: {median * 1000:,.0f} ms median, {worst * 1000:,.0f} ms max "
        f"({len(changes.packages):,} packages changed; {added:,} added, {removed:,} removed, "
        f"{rebuilt:,} rebuilt)"
    )
    for label, mask in (
        ("everything", index.all_rows),
        ("one tag", index.facet_bits["tag"][tags.index("new")]),
    ):
        median, worst, _ = timed(lambda mask=mask: summarize(index, mask), options.repeat)
        print(f"stats of {label}: {median * 1000:,.1f} ms median, {worst * 1000:,.1f} ms max")
    for label, writer in (("CSV", write_csv), ("spec lines", write_spec_lines)):
        median, worst, _ = timed(
            lambda writer=writer: writer(index, rows["new"], io.StringIO()),
            max(1, options.repeat // 2),
        )
        print(f"export of one tag as {label}: {median:,.2f} s median, {worst:,.2f} s max")


if __name__ == "__main__":
    main()
