"""`cachetui check` of a spack.lock against a large build cache, as a whole process (warm).

The cache is the database v8 that make_index.py writes (1M binaries, ~6 edges each, Spack
1.x's compiler edges). The environment is a spack.lock v6 made of that cache's own records:
roots drawn at random (seeded) with everything they depend on, until it holds --env-specs
specs; then a share of them (--changed) get one variant flipped and a new hash, and every
spec that depends on a changed one gets a new hash too (as Spack's hashes would): those miss,
the first by a variant, their dependents by a dependency. The rest hit.

    python benchmarks/check_env.py [--specs 1000000] [--env-specs 1000] [--repeat 5]

Prints the medians (and maxima) of the whole `cachetui check --json` process, the hits and
misses, and an in-process breakdown: reading the lockfile, opening the on-disk index,
checking. The first run builds the on-disk index (cold, not timed).
"""

from __future__ import annotations

import argparse
import json
import mmap
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RECORD = re.compile(rb'"([a-z2-7]{32})":\{"spec":')


def make_mirror(out: Path, specs: int) -> Path:
    index = out / "build_cache" / "index.json"
    if not index.exists():
        subprocess.run(
            [sys.executable, str(HERE / "make_index.py"), "--specs", str(specs), "--out", str(out)],
            check=True,
        )
    return index


def read_records(index: Path) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """Every record's hash, and where its JSON lies in the file (one pass over it)."""
    with open(index, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        starts = [(match.group(1).decode(), match.start()) for match in RECORD.finditer(m)]
    spans = {}
    for (hash_, start), (_, end) in zip(starts, [*starts[1:], ("", -1)]):
        spans[hash_] = (start, end)
    return [h for h, _ in starts], spans


def record_at(m: mmap.mmap, span: tuple[int, int]) -> dict:
    """The record `"hash":{...}` at `span` (what follows it, a comma or the file's closing
    braces, left unread)."""
    start, end = span
    value = m[start : end if end >= 0 else len(m)].partition(b":")[2]
    return _DECODER.raw_decode(value.decode())[0]


_DECODER = json.JSONDecoder()


def make_lockfile(
    index: Path, out: Path, specs: int, changed: float, seed: int, recompile: bool = False
) -> Path:
    """A spack.lock v6 of `specs` of the cache's own records (roots and their dependencies),
    `changed` of them with a variant flipped (new hashes up their dependents)."""
    if out.exists():
        return out
    rng = random.Random(seed)
    hashes, spans = read_records(index)
    nodes: dict[str, dict] = {}
    roots: list[str] = []
    with open(index, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        decoded: dict[str, dict] = {}

        def node(hash_: str) -> dict:
            if hash_ not in decoded:
                decoded[hash_] = record_at(m, spans[hash_])["spec"]
            return decoded[hash_]

        def closure(root: str, limit: int) -> set[str] | None:
            """`root` and what it depends on that is not in yet; None past `limit`."""
            found: set[str] = set()
            todo = [root]
            while todo:
                hash_ = todo.pop()
                if hash_ in found or hash_ in nodes or hash_ not in spans:
                    continue
                found.add(hash_)
                if len(found) > limit:
                    return None
                todo.extend(d["hash"] for d in node(hash_).get("dependencies", []))
            return found

        # Roots drawn at random whose closures fit what is left (as an environment's roots,
        # they share much of what they depend on), until the lockfile holds `specs`.
        for _ in range(100_000):
            if len(nodes) >= specs:
                break
            root = rng.choice(hashes)
            if root in nodes or node(root).get("external"):
                continue
            added = closure(root, max(specs - len(nodes), 20))
            if not added:
                continue
            roots.append(root)
            nodes.update((h, node(h)) for h in added)
        if recompile:
            _recompile(nodes, node, hashes, spans)
    _change(nodes, roots, changed, rng)
    out.write_text(
        json.dumps(
            {
                "_meta": {
                    "file-type": "spack-lockfile",
                    "lockfile-version": 6,
                    "specfile-version": 5,
                },
                "spack": {"version": "1.0.0", "type": "git", "commit": "0" * 40},
                "roots": [{"hash": h, "spec": nodes[h]["name"]} for h in roots if h in nodes],
                "concrete_specs": nodes,
            }
        )
    )
    return out


def _recompile(nodes: dict[str, dict], node, hashes: list[str], spans: dict) -> None:
    """Every spec built with gcc built with the other gcc of the index instead (the external
    compiler records of make_index.py): what an environment concretized with another compiler
    version than the cache's holds. _change then gives them new hashes."""
    gccs = {}
    for hash_ in hashes[:64]:  # (the compiler records come first)
        record = node(hash_)
        if record["name"] == "gcc":
            gccs[hash_] = record
    swap = dict(zip(gccs, reversed(list(gccs))))
    for spec in list(nodes.values()):
        for edge in spec.get("dependencies", []):
            if edge["hash"] in swap:
                edge["hash"] = swap[edge["hash"]]
                nodes[edge["hash"]] = gccs[edge["hash"]]
        spec["_recompiled"] = any(e["hash"] in swap for e in spec.get("dependencies", []))


def _change(nodes: dict[str, dict], roots: list[str], share: float, rng: random.Random) -> None:
    """Flip a boolean variant of `share` of the specs; give them and every spec above them a
    new hash (edges follow). A spec _recompile changed counts as changed."""
    eligible = [
        h
        for h, n in nodes.items()
        if not n.get("external") and any(isinstance(v, bool) for v in n["parameters"].values())
    ]
    flipped = set(rng.sample(eligible, int(len(nodes) * share)))
    recompiled = {h for h, n in nodes.items() if n.pop("_recompiled", False)}
    for h in flipped:
        parameters = nodes[h]["parameters"]
        name = next(k for k, v in parameters.items() if isinstance(v, bool))
        parameters[name] = not parameters[name]
    # New hashes, up the graph until nothing more changes.
    renamed: dict[str, str] = {}
    changed = flipped | recompiled
    while changed:
        for h in changed:
            renamed[h] = _fresh_hash(rng)
        changed = {
            h
            for h, n in nodes.items()
            if h not in renamed and any(d["hash"] in renamed for d in n.get("dependencies", []))
        }
    for old, new in renamed.items():
        node = nodes.pop(old)
        node["hash"] = new
        nodes[new] = node
    for node in nodes.values():
        for edge in node.get("dependencies", []):
            edge["hash"] = renamed.get(edge["hash"], edge["hash"])
    roots[:] = [renamed.get(h, h) for h in roots]


def _fresh_hash(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(32))


def timed_process(argv: list[str]) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the process, its stdout). CPU time moves less than wall
    time when something else runs on this 2-core machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"cachetui check failed ({done.returncode}): {done.stderr.decode()[:2000]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


def in_process(lock: Path, mirror: Path, cache_dir: Path) -> dict[str, float]:
    sys.path.insert(0, str(REPO))
    from cachetui.service import IndexService
    from cachetui.service.check import check_environment
    from cachetui.sources.environment import read_environment

    figures = {}
    started = time.perf_counter()
    environment = read_environment(str(lock))
    figures["read the lockfile"] = time.perf_counter() - started
    started = time.perf_counter()
    index = IndexService([str(mirror)], cache_dir=cache_dir).load().index
    figures["open the on-disk index"] = time.perf_counter() - started
    started = time.perf_counter()
    check_environment(index, environment)
    figures["check (graph read on first miss)"] = time.perf_counter() - started
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--specs", type=int, default=1_000_000, help="binaries in the cache")
    parser.add_argument("--env-specs", type=int, default=1000, help="specs in the lockfile")
    parser.add_argument("--changed", type=float, default=0.02, help="share of specs changed")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--recompile",
        action="store_true",
        help="every spec built with the other gcc of the cache (all of them miss)",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/cachetui-bench-check"))
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    mirror = args.work / f"mirror-{args.specs}"
    index = make_mirror(mirror, args.specs)
    lock = make_lockfile(
        index,
        args.work / f"spack-{args.specs}-{args.env_specs}-{args.changed}-{args.seed}"
        f"{'-recompiled' if args.recompile else ''}.lock",
        args.env_specs,
        args.changed,
        args.seed,
        recompile=args.recompile,
    )
    cache_dir = args.work / "cache"
    cachetui = str(Path(sys.executable).with_name("cachetui"))
    argv = [cachetui, "check", str(lock), str(mirror), "--json", "--cache-dir", str(cache_dir)]
    *_, out = timed_process(argv)  # cold: builds the on-disk index
    summary = json.loads(out)["summary"]
    runs = [timed_process(argv) for _ in range(args.repeat)]
    times, cpu = [r[0] for r in runs], [r[1] for r in runs]
    print(
        f"cache: {args.specs:,} binaries; lockfile: {summary['specs']:,} specs, "
        f"{summary['roots']} roots"
    )
    print(
        f"hits {summary['hits']:,}, misses {summary['misses']:,}, "
        f"externals {summary['externals']:,}, roots covered {summary['roots_covered']}"
    )
    print(
        f"cachetui check --json, warm, whole process: median {statistics.median(times):.3f} s, "
        f"max {max(times):.3f} s; CPU median {statistics.median(cpu):.3f} s ({args.repeat} runs)"
    )
    for name, seconds in in_process(lock, mirror, cache_dir).items():
        print(f"  in-process: {name}: {seconds * 1000:.0f} ms")


if __name__ == "__main__":
    main()
