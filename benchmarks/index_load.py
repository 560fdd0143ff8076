"""Loading a large Spack build-cache index (database v8 with dependency edges); prints figures.

    python benchmarks/index_load.py [--specs 1000000] [--repeat 3]

Writes the index with benchmarks/make_index.py when it is missing (a v2 mirror root in
benchmarks/index-<N>). The floor: a plain `msgspec.json.decode` of the whole file on one
core, as Python runs it (the cyclic collector on) and with the collector paused (which
the ratio uses: the stricter floor). Cold: `cachetui stats --json` with an empty cache
directory (read in parts by 1 and by 2 loader processes, normalise, merge the parts, index,
graph, save), whole processes, with the peak RSS of the process tree (sampled every 20 ms).
Warm: the same commands again, from the on-disk index; `deps` also reads the graph file.
Then the detail pane's question, in-process: the dependencies and used-by of a spec.
Medians and maxima; the machine is noisy, so quote one run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHETUI = str(Path(sys.executable).parent / "cachetui")
sys.path.insert(0, str(HERE))
from run import child_env, timed  # noqa: E402  (the whole-process timer and its environment)

_FLOOR = r"""
import gc, sys, time, msgspec
if sys.argv[2] == "paused":
    gc.disable()
start = time.perf_counter()
with open(sys.argv[1], "rb") as handle:
    msgspec.json.decode(handle.read())
open(sys.argv[3], "w").write(str(time.perf_counter() - start))
"""

# `cachetui` with this many loader processes (the CLI has no option for it: the default
# is one a core, at most 4).
_WITH_LOADERS = """
import sys
from cachetui.sources import parallel
loaders = int(sys.argv.pop(1))
parallel.default_workers = lambda: loaders
from cachetui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def row(name: str, walls: list[float], rss: list[float]) -> str:
    return f"  {name:<52} {statistics.median(walls):8.2f} {max(walls):8.2f}   {max(rss):,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--specs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    label = (
        f"{args.specs // 1_000_000}m" if args.specs % 1_000_000 == 0 else f"{args.specs // 1000}k"
    )
    mirror = HERE / f"index-{label}"
    index_file = mirror / "build_cache" / "index.json"
    if not index_file.exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "make_index.py"),
                "--specs",
                str(args.specs),
                "--out",
                str(mirror),
            ],
            check=True,
        )
    size = index_file.stat().st_size

    floors: dict[str, list[float]] = {"collector on": [], "collector paused": []}
    floor_rss: dict[str, list[float]] = {"collector on": [], "collector paused": []}
    for how, flag in (("collector on", "on"), ("collector paused", "paused")):
        for _ in range(1 if how == "collector on" else args.repeat):  # (the first takes minutes)
            out = Path(tempfile.mkstemp()[1])
            wall, rss = timed([sys.executable, "-c", _FLOOR, str(index_file), flag, str(out)])
            floors[how].append(float(out.read_text().strip()))
            floor_rss[how].append(rss)
            out.unlink()

    cold: dict[int, list[float]] = {1: [], 2: []}
    cold_rss: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as scratch:
        env = child_env(Path(scratch) / "xdg")
        for i in range(args.repeat):
            for loaders in (1, 2):
                cache = Path(scratch) / f"cold-{loaders}-{i}"
                wall, rss = timed(
                    [
                        sys.executable,
                        "-c",
                        _WITH_LOADERS,
                        str(loaders),
                        "stats",
                        str(mirror),
                        "--json",
                        "--cache-dir",
                        str(cache),
                    ],
                    env,
                )
                cold[loaders].append(wall / 1000)
                cold_rss[loaders].append(rss)
        cache = Path(scratch) / "cold-2-0"
        index_mb = sum(p.stat().st_size for p in cache.glob("index-*")) / 1e6
        sys.path.insert(0, str(HERE.parent))
        from cachetui.service import IndexService

        index = IndexService([str(mirror)], cache_dir=cache).load().index
        graph = index.graph
        rng = random.Random(1)
        sample = [rng.randrange(index.n_specs) for _ in range(5)]
        warm = {
            "warm: stats --json": [],
            "warm: lookup HASH": [],
            "warm: deps HASH --json (reads the graph)": [],
        }
        warm_rss: dict[str, list[float]] = {k: [] for k in warm}
        for i in range(args.repeat):
            target = index.hashes[sample[i % len(sample)]]
            for name, command in (
                ("warm: stats --json", ["stats", str(mirror), "--json"]),
                ("warm: lookup HASH", ["lookup", target[:8], str(mirror)]),
                (
                    "warm: deps HASH --json (reads the graph)",
                    ["deps", target[:8], str(mirror), "--json"],
                ),
            ):
                wall, rss = timed([CACHETUI, *command, "--cache-dir", str(cache)], env)
                warm[name].append(wall / 1000)
                warm_rss[name].append(rss)

        import numpy as np

        from cachetui.index.deps import dependencies_of

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

    print(
        f"index: {mirror} ({size / 1e9:.2f} GB, {index.n_specs:,} binaries, "
        f"{graph.parts.n_nodes:,} nodes, {len(graph.parts.edge_to):,} edges); "
        f"on-disk index {index_mb:,.0f} MB; {os.cpu_count()} cores"
    )
    print(f"{'':<54} {'median':>8} {'max':>8}   peak RSS   (seconds)")
    for how in floors:
        print(row(f"floor: msgspec.json.decode, {how}", floors[how], floor_rss[how]))
    for loaders in (1, 2):
        print(
            row(
                f"cold: stats --json, {loaders} loader process{'es' if loaders > 1 else ''}",
                cold[loaders],
                cold_rss[loaders],
            )
        )
    for name, walls in warm.items():
        print(row(name, walls, warm_rss[name]))
    floor = statistics.median(floors["collector paused"])
    for loaders in (1, 2):
        print(
            f"  {f'cold with {loaders} / floor (collector paused)':<52} "
            f"{statistics.median(cold[loaders]) / floor:8.2f}"
        )
    print(f"\n{'':<54} {'median':>8} {'max':>8}   (milliseconds)")
    print(
        f"  {'dependencies_of, 5 random specs':<52} "
        f"{statistics.median(typical):8.1f} {max(typical):8.1f}"
    )
    print(
        f"  {f'dependencies_of, {graph.name(busiest)} ({counts[busiest]:,} users)':<52} "
        f"{statistics.median(heavy):8.1f} {max(heavy):8.1f}"
    )


if __name__ == "__main__":
    main()
