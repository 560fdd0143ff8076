"""How a corpus of cache.spack.io summaries is shaped, beside real ones; prints a table.

    python benchmarks/corpus_shape.py --real DIR [DIR ...] --corpus DIR [--draws 50]

Real summaries are few and of every size, and a package of 3 specs and one of 300 do not
share a shape. So for every real summary found under the --real directories, a corpus file
with the nearest number of specs is drawn (each at most once per draw), and both sides are
compared over files of the same sizes. The corpus side is the mean over --draws draws.
Pooled over those files (sums, then divided), it prints:

- bytes per spec, of the whole file and of the `spec_details` line;
- distinct values per spec, per column, counted within each file (versions, compilers
  with `@=` read as `@`, OSes, platforms, targets, arches, variant lists, stack sets, stack
  names, variant names);
- variants and stacks per spec; distinct tarball URLs per spec that has one;
- the share of files with a `tarball` on every spec, with sorted keys, with `@=` compilers
  (the eras mixed: set by make_corpus.py, not fitted to these few files).

A ratio (corpus / real) outside 0.8-1.2 is marked `!`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

COLUMNS = ("version", "compiler", "os", "platform", "target", "arch", "variant list", "stack set", "stack name",
           "variant name")
INFORMATIVE = ("files", "specs", "median specs per file")


def summaries(root: Path) -> list[Path]:
    """Every file under `root` that starts like a package summary (front matter)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder, name)
            with path.open("rb") as handle:
                if handle.read(3) == b"---":
                    found.append(path)
    return found


def shape(path: Path) -> dict | None:
    """What one summary holds, or None if it is not one."""
    data = path.read_bytes()
    details = next((line for line in data.split(b"\n") if line.startswith(b"spec_details:")), None)
    if details is None:
        return None
    records = json.loads(details[len(b"spec_details:"):])
    if not records:
        return None

    def distinct(values) -> int:
        return len(set(values))

    return {
        "specs": len(records),
        "bytes": len(data),
        "details bytes": len(details),
        "version": distinct(tuple(r["versions"]) for r in records),
        "compiler": distinct(str(r.get("compiler")).replace("@=", "@", 1) for r in records),
        "os": distinct(r["os"] for r in records),
        "platform": distinct(r["platform"] for r in records),
        "target": distinct(r["target"] for r in records),
        "arch": distinct((r["platform"], r["os"], r["target"]) for r in records),
        "variant list": distinct(tuple(r.get("variants") or ()) for r in records),
        "stack set": distinct(frozenset(r.get("stacks") or ()) for r in records),
        "stack name": distinct(s for r in records for s in r.get("stacks") or ()),
        "variant name": distinct(v.lstrip("+~").split("=")[0].rstrip(":") for r in records for v in r.get("variants") or ()),
        "tarballs": sum(1 for r in records if r.get("tarball")),
        "distinct tarballs": distinct(r["tarball"] for r in records if r.get("tarball")),
        "variants": sum(len(r.get("variants") or ()) for r in records),
        "stacks": sum(len(r.get("stacks") or ()) for r in records),
        "with tarball": all("tarball" in r for r in records),
        "sorted keys": all(list(r) == sorted(r) for r in records),
        "@= compilers": any("@=" in str(r.get("compiler")) for r in records),
    }


def draw(real: list[dict], by_size: dict[int, list[dict]], rng: random.Random) -> list[dict]:
    """For each real file, an unused corpus file nearest in spec count (ties at random)."""
    left = {size: rng.sample(items, len(items)) for size, items in by_size.items()}
    chosen = []
    for item in sorted(real, key=lambda r: r["specs"]):
        best = min((s for s in left if left[s]), key=lambda s: (abs(s - item["specs"]), s))
        chosen.append(left[best].pop())
    return chosen


def pooled(items: list[dict]) -> dict[str, float]:
    specs = sum(i["specs"] for i in items)
    with_tarball = sum(i["tarballs"] for i in items)
    out = {"files": len(items), "specs": specs,
           "bytes per spec (file)": sum(i["bytes"] for i in items) / specs,
           "bytes per spec (spec_details)": sum(i["details bytes"] for i in items) / specs}
    for column in COLUMNS:
        out[f"distinct {column} per spec"] = sum(i[column] for i in items) / specs
    out["variants per spec"] = sum(i["variants"] for i in items) / specs
    out["stacks per spec"] = sum(i["stacks"] for i in items) / specs
    out["distinct tarballs per spec with one"] = sum(i["distinct tarballs"] for i in items) / with_tarball if with_tarball else 0.0
    for flag in ("with tarball", "sorted keys", "@= compilers"):
        out[f"share of files {flag}"] = sum(i[flag] for i in items) / len(items)
    sizes = sorted(i["specs"] for i in items)
    out["median specs per file"] = sizes[len(sizes) // 2]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", type=Path, nargs="+", required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    real = [s for root in args.real for s in map(shape, summaries(root)) if s]
    corpus = [s for s in map(shape, summaries(args.corpus)) if s]
    if not real or len(corpus) < len(real):
        sys.exit("no real summaries found, or fewer corpus files than real ones")
    by_size: dict[int, list[dict]] = {}
    for item in corpus:
        by_size.setdefault(item["specs"], []).append(item)
    rng = random.Random(args.seed)
    draws = [pooled(draw(real, by_size, rng)) for _ in range(args.draws)]
    theirs = pooled(real)
    print(f"{len(real)} real summaries ({theirs['specs']:,} specs) beside files of the same sizes drawn from "
          f"{args.corpus} ({args.draws} draws)\n")
    print(f"{'':<40} {'real':>10} {'corpus':>10} {'ratio':>7}   {'draws: min':>10} {'max':>8}")
    outside = 0
    for key, value in theirs.items():
        seen = [d[key] for d in draws]
        ours = sum(seen) / len(seen)
        ratio = ours / value if value else (float("nan") if ours else 1.0)
        checked = key not in INFORMATIVE and not key.startswith("share")
        mark = " !" if checked and not 0.8 <= ratio <= 1.2 else ""
        outside += bool(mark)
        print(f"{key:<40} {value:>10.3f} {ours:>10.3f} {ratio:>7.2f}{mark:<2} {min(seen):>10.3f} {max(seen):>8.3f}")
    whole = pooled(corpus)
    print(f"\nthe whole corpus: {whole['files']:,} files, {whole['specs']:,} specs, "
          f"{whole['bytes per spec (file)']:.0f} bytes per spec, "
          f"{whole['share of files with tarball']:.0%} of files with tarballs, "
          f"{whole['share of files sorted keys']:.0%} with sorted keys, {whole['share of files @= compilers']:.0%} with @= compilers")
    print(f"{outside} checked figures outside 0.8-1.2")


if __name__ == "__main__":
    main()
