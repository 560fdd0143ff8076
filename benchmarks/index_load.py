"""Loading a large Spack build-cache index (database v8 with dependency edges); prints figures.

    python benchmarks/index_load.py [--specs 1000000] [--repeat 3]

Writes the index with benchmarks/make_index.py when it is missing (a v2 mirror root in
benchmarks/index-<N>). Cold: `cachetui stats --json` with an empty cache directory (parse
and normalise every record, build the index and the graph, save the on-disk index). Warm:
the same commands again, from the on-disk index; `deps` also reads the graph file. Then
the detail pane's question, in-process: the dependencies and used-by of a spec. Medians
and maxima; the machine is noisy, so quote one run.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHETUI = str(Path(sys.executable).parent / "cachetui")
TIME = shutil.which("time") or "/usr/bin/time"


def run(args: list[str]) -> tuple[float, float | None]:
    """(wall seconds, peak RSS in MB or None) of one cachetui command."""
    measure = [TIME, "-f", "%M"] if Path(TIME).exists() else []
    start = time.perf_counter()
    done = subprocess.run([*measure, CACHETUI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    rss = None
    if measure:
        last = done.stderr.strip().splitlines()[-1:] or ["0"]
        rss = int(last[0]) / 1024 if last[0].isdigit() else None
    return wall, rss


def row(name: str, walls: list[float], rss: list[float | None]) -> str:
    peak = max((r for r in rss if r is not None), default=None)
    return f"  {name:<44} {statistics.median(walls):8.2f} {max(walls):8.2f}   {'' if peak is None else f'{peak:,.0f} MB'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    label = f"{args.specs // 1_000_000}m" if args.specs % 1_000_000 == 0 else f"{args.specs // 1000}k"
    mirror = HERE / f"index-{label}"
    if not (mirror / "build_cache" / "index.json").exists():
        subprocess.run([sys.executable, str(HERE / "make_index.py"), "--specs", str(args.specs), "--out", str(mirror)], check=True)
    size = (mirror / "build_cache" / "index.json").stat().st_size

    cold: list[float] = []
    cold_rss: list[float | None] = []
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.repeat):
            cache = Path(scratch) / f"cold-{i}"
            wall, rss = run(["stats", str(mirror), "--json", "--cache-dir", str(cache)])
            cold.append(wall)
            cold_rss.append(rss)
        cache = Path(scratch) / "cold-0"
        sys.path.insert(0, str(HERE.parent))
        from cachetui.service import IndexService

        index = IndexService([str(mirror)], cache_dir=cache).load().index
        graph = index.graph
        rng = random.Random(1)
        sample = [rng.randrange(index.n_specs) for _ in range(5)]
        warm = {"warm: stats --json": [], "warm: lookup HASH": [], "warm: deps HASH --json (reads the graph)": []}
        warm_rss: dict[str, list[float | None]] = {k: [] for k in warm}
        for i in range(args.repeat):
            target = index.hashes[sample[i % len(sample)]]
            for name, command in (("warm: stats --json", ["stats", str(mirror), "--json"]),
                                  ("warm: lookup HASH", ["lookup", target[:8], str(mirror)]),
                                  ("warm: deps HASH --json (reads the graph)", ["deps", target[:8], str(mirror), "--json"])):
                wall, rss = run([*command, "--cache-dir", str(cache)])
                warm[name].append(wall)
                warm_rss[name].append(rss)

        from cachetui.index.deps import dependencies_of
        import numpy as np

        def timed_ms(row_: int) -> list[float]:
            out = []
            for _ in range(5):
                start = time.perf_counter()
                found = dependencies_of(index, row_)
                _ = found.used_by[:40]  # the lines a pane shows
                out.append((time.perf_counter() - start) * 1000)
            return out

        typical = [ms for r in sample for ms in timed_ms(r)]
        counts = np.diff(graph.parts.reverse_starts)
        binaries = np.flatnonzero(graph.parts.kinds == 0)
        busiest = int(binaries[np.argmax(counts[binaries])])
        busiest_row = index.lookup_hash(graph.hash(busiest))[0]
        heavy = timed_ms(busiest_row)

    print(f"index: {mirror} ({size / 1e9:.2f} GB, {index.n_specs:,} binaries, {graph.parts.n_nodes:,} nodes, {len(graph.parts.edge_to):,} edges)")
    print(f"{'':<46} {'median':>8} {'max':>8}   peak RSS   (seconds)")
    print(row("cold: stats --json (empty cache dir)", cold, cold_rss))
    for name, walls in warm.items():
        print(row(name, walls, warm_rss[name]))
    print(f"\n{'':<46} {'median':>8} {'max':>8}   (milliseconds)")
    print(f"  {'dependencies_of, 5 random specs':<44} {statistics.median(typical):8.1f} {max(typical):8.1f}")
    print(f"  {f'dependencies_of, {graph.name(busiest)} ({counts[busiest]:,} users)':<44} {statistics.median(heavy):8.1f} {max(heavy):8.1f}")


if __name__ == "__main__":
    main()
