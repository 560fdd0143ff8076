"""What the query grammar costs a keystroke: this checkout against another revision (A/B), in
one run, and `^dependency` queries on a 1M-spec build-cache index; prints figures.

    python benchmarks/query_ab.py [--base REV] [--corpus benchmarks/corpus-1m]
                                  [--index benchmarks/index-1m] [--repeat 7]

A keystroke in the search box parses the text and evaluates it on the index (the paint that
follows does not depend on the grammar, and benchmarks/run.py times it). Each side runs in
its own process, importing its own tree (the base is checked out with `git worktree` into a
temporary directory) with its own warm on-disk index, and times parse + evaluate for every
prefix of a few typed queries, as typing them does; the sides alternate, `--repeat` rounds.
The typed queries mean the same in both grammars (the root's tokens before `%`).
Then, with this checkout: `^dep` queries on the build-cache index, the first (which reads
the dependency graph from the on-disk index) apart from the rest. Medians; quote one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TYPED = [
    "zlib@1.2: +shared %gcc@11",
    "py-numpy os=ubuntu22.04 target=x86_64_v3 %gcc",
    "+cuda cuda_arch=80 %gcc@11:",
]
DEPENDENCY_QUERIES = [
    "^gcc-runtime",
    "^gcc-runtime@10",
    "^compiler-wrapper",
    "^mpi",
    "hdf5 ^mpi",
    "^llvm %gcc",
    "^nosuch",
]

_SIDE = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from cachetui.service import IndexService
from cachetui.index.evaluate import evaluate
from cachetui.index.filter import Filter
from cachetui.index.query import QueryError, parse_query
index = IndexService([sys.argv[2]], cache_dir=sys.argv[3]).load().index
out = {}
for typed in json.loads(sys.argv[4]):
    per_key = []
    for end in range(1, len(typed) + 1):
        text = typed[:end]
        start = time.perf_counter()
        try:
            parse_query(text)
            evaluate(index, Filter(text))
        except QueryError:
            pass
        per_key.append(time.perf_counter() - start)
    out[typed] = per_key
print(json.dumps(out))
"""


def side(tree: Path, corpus: Path, cache: Path) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, "-c", _SIDE, str(tree), str(corpus), str(cache), json.dumps(TYPED)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


def dependency_queries(
    index_root: Path, cache: Path, repeat: int
) -> list[tuple[str, float, float]]:
    sys.path.insert(0, str(HERE.parent))
    import time

    from cachetui.index import dependency_match
    from cachetui.index.evaluate import evaluate
    from cachetui.index.filter import Filter
    from cachetui.service import IndexService

    index = IndexService([str(index_root)], cache_dir=cache).load().index
    start = time.perf_counter()
    evaluate(index, Filter(DEPENDENCY_QUERIES[0]))
    rows = [("first ^ query, reading the graph", time.perf_counter() - start, 0.0)]
    for query in DEPENDENCY_QUERIES:
        times = []
        for _ in range(repeat):
            # each time computed, not remembered from the last round
            dependency_match._CACHE.clear()
            start = time.perf_counter()
            result = evaluate(index, Filter(query))
            times.append(time.perf_counter() - start)
        rows.append(
            (f"{query!r} ({result.matching_specs:,} specs)", statistics.median(times), max(times))
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--base",
        default="HEAD",
        help="the revision to compare with (default HEAD: the last commit)",
    )
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus-1m")
    parser.add_argument("--index", type=Path, default=HERE / "index-1m")
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="query-ab-"))
    base = work / "base"
    subprocess.run(
        ["git", "-C", str(HERE.parent), "worktree", "add", "--detach", str(base), options.base],
        check=True,
        capture_output=True,
    )
    try:
        trees = {"this checkout": HERE.parent, f"base {options.base}": base}
        for name, tree in trees.items():  # warm each side's on-disk index first
            side(tree, options.corpus, work / f"cache-{name.split()[0]}")
        per_key: dict[str, dict[str, list[float]]] = {
            name: {t: [] for t in TYPED} for name in trees
        }
        for _ in range(options.repeat):
            for name, tree in trees.items():
                for typed, times in side(
                    tree, options.corpus, work / f"cache-{name.split()[0]}"
                ).items():
                    per_key[name][typed].extend(times)
        print(
            f"corpus: {options.corpus}; parse + evaluate a keystroke, ms "
            f"(median, max of {options.repeat} rounds)"
        )
        for typed in TYPED:
            medians = {name: statistics.median(per_key[name][typed]) * 1e3 for name in trees}
            cells = "   ".join(
                f"{name}: {medians[name]:6.2f} (max {max(per_key[name][typed]) * 1e3:6.1f})"
                for name in trees
            )
            a, b = medians.values()
            print(f"  {typed!r:48} {cells}   ratio {a / b:.2f}")
        everything = {
            name: statistics.median([t for ts in per_key[name].values() for t in ts]) * 1e3
            for name in trees
        }
        a, b = everything.values()
        print(
            f"  {'every keystroke':48} "
            + "   ".join(f"{n}: {v:6.2f}" for n, v in everything.items())
            + f"   ratio {a / b:.2f}"
        )
    finally:
        subprocess.run(
            ["git", "-C", str(HERE.parent), "worktree", "remove", "--force", str(base)],
            check=False,
            capture_output=True,
        )
    if options.index.exists():
        print(
            f"\nbuild-cache index: {options.index}; in-process evaluate, ms "
            f"(median, max of {options.repeat})"
        )
        for label, median, most in dependency_queries(
            options.index, work / "cache-index", options.repeat
        ):
            print(f"  {label:56} {median * 1e3:8.1f} {most * 1e3:8.1f}")


if __name__ == "__main__":
    main()
