"""Write a synthetic cache.spack.io tree (`<tag>/<package>/specs.md`) for benchmarks.

Deterministic by seed, shaped like the real develop cache: a long-tailed number of specs
per package (most under 20, a few over 500), 24 stacks, 10 platform-os-target
combinations, several compilers (some written `name@=version`, as Spack 0.20-0.23 did)
and variants like the real ones. Files are written in the current generator's format
(sorted keys, one JSON line each for `meta` and `spec_details`).

    python benchmarks/make_corpus.py OUT_DIR --specs 1000000 --packages 10000 [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

B32 = "abcdefghijklmnopqrstuvwxyz234567"
ARCHS = [
    ("linux", "ubuntu22.04", "x86_64_v3"), ("linux", "ubuntu22.04", "aarch64"),
    ("linux", "ubuntu24.04", "x86_64_v3"), ("linux", "ubuntu24.04", "aarch64"),
    ("linux", "rhel8", "x86_64_v3"), ("linux", "amzn2", "neoverse_v1"),
    ("linux", "amzn2", "neoverse_v2"), ("linux", "sles15", "zen4"),
    ("linux", "rocky9", "x86_64_v4"), ("darwin", "sequoia", "aarch64"),
]
LINUX_COMPILERS = ["gcc@11.4.0", "gcc@=12.3.0", "gcc@13.2.0", "gcc@=13.3.0", "clang@=17.0.6", "oneapi@2024.2.1", "nvhpc@24.5", "none"]
DARWIN_COMPILERS = ["apple-clang@16.0.0", "apple-clang@=15.0.0", "none"]
STACKS = [
    "e4s", "e4s-oneapi", "e4s-rocm-external", "e4s-cray-rhel", "e4s-neoverse_v1", "e4s-neoverse-v2",
    "ml-linux-x86_64-cpu", "ml-linux-x86_64-cuda", "ml-linux-x86_64-rocm", "ml-linux-aarch64-cpu",
    "ml-linux-aarch64-cuda", "ml-darwin-aarch64-mps", "data-vis-sdk", "developer-tools-x86_64_v3-linux-gnu",
    "developer-tools-aarch64-linux-gnu", "developer-tools-darwin", "aws-pcluster-neoverse_v1",
    "aws-pcluster-x86_64_v4", "radiuss", "radiuss-aws", "hep", "bootstrap-x86_64-linux-gnu",
    "tutorial", "build_systems",
]
BUILD_SYSTEMS = ["cmake", "autotools", "python_pip", "makefile", "meson", "generic", "cargo"]
PREFIXES = ["", "", "", "py-", "py-", "r-", "perl-", "lib", "rust-", "go-"]
SYLLABLES = ["ab", "ar", "bo", "ca", "de", "el", "fi", "go", "ha", "io", "ju", "ka", "lo", "mi", "ne", "no",
             "pa", "qu", "ro", "sa", "ti", "ur", "ve", "wi", "xo", "ya", "ze", "mpi", "hdf", "net", "cdf", "blas", "fft"]


def package_names(rng: random.Random, count: int) -> list[str]:
    names: set[str] = set()
    while len(names) < count:
        stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        name = rng.choice(PREFIXES) + stem + (str(rng.randint(2, 9)) if rng.random() < 0.1 else "")
        names.add(name)
    return sorted(names)


def spec_counts(rng: random.Random, packages: int, specs: int) -> list[int]:
    """Long-tailed: ~70% of packages under 20 specs, ~1% over 1,000; scaled to `specs` in all."""
    raw = []
    for _ in range(packages):
        r = rng.random()
        if r < 0.70:
            raw.append(rng.randint(1, 19))
        elif r < 0.95:
            raw.append(rng.randint(20, 200))
        elif r < 0.99:
            raw.append(rng.randint(200, 1000))
        else:
            raw.append(rng.randint(1000, 5000))
    # Scale the tail only, so that most packages stay small.
    small = sum(c for c in raw if c < 20)
    factor = (specs - small) / max(1, sum(c for c in raw if c >= 20))
    counts = [c if c < 20 else max(20, round(c * factor)) for c in raw]
    counts[counts.index(max(counts))] += specs - sum(counts)  # exact total
    return counts


def make_hash(rng: random.Random) -> str:
    return "".join(rng.choice(B32) for _ in range(32))


def variants_for(rng: random.Random) -> list[str]:
    chosen = [f"build_system={rng.choice(BUILD_SYSTEMS)}"]
    for flag in ("shared", "mpi", "openmp", "cuda", "rocm", "pic"):
        if rng.random() < 0.35:
            chosen.append(("+" if rng.random() < 0.6 else "~") + flag)
    if rng.random() < 0.15:
        chosen.append(f"cuda_arch={rng.choice(['70', '80', '90'])}")
    if rng.random() < 0.2:
        chosen.append("libs=" + rng.choice(["shared", "static", "shared,static"]))
    if rng.random() < 0.05:
        chosen.append("patches:=" + "".join(rng.choice("0123456789abcdef") for _ in range(7)))
    return sorted(chosen, key=lambda v: v.lstrip("+~"))


def package_records(rng: random.Random, count: int) -> list[dict]:
    versions = sorted({f"{rng.randint(0, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}" for _ in range(rng.randint(1, 5))})
    archs = rng.sample(ARCHS, rng.randint(2, len(ARCHS)))
    # Like the real caches: a package is built in a few variant configurations, not a new
    # random one per binary.
    configurations = [variants_for(rng) for _ in range(rng.randint(1, 4))]
    records = []
    for _ in range(count):
        platform, os_, target = rng.choice(archs)
        compilers = DARWIN_COMPILERS if platform == "darwin" else LINUX_COMPILERS
        stacks = {"root"} | set(rng.sample(STACKS, rng.randint(1, 3)))
        records.append({
            "compiler": rng.choice(compilers), "hash": make_hash(rng), "os": os_, "platform": platform,
            "size": "-", "stacks": sorted(stacks), "target": target, "variants": rng.choice(configurations),
            "versions": [rng.choice(versions)],
        })
    records.sort(key=lambda r: r["hash"])
    return records


def meta_for(records: list[dict]) -> dict:
    by_stack = Counter(s for r in records for s in r["stacks"])
    return {
        "compilers": sorted({r["compiler"] for r in records} - {"none"}),
        "num_specs": len(records), "num_specs_by_stack": dict(sorted(by_stack.items())),
        "oss": sorted({r["os"] for r in records}), "platforms": sorted({r["platform"] for r in records}),
        "stacks": sorted(by_stack), "targets": sorted({r["target"] for r in records}),
        "versions": sorted({v for r in records for v in r["versions"]}),
    }


def write_corpus(out: Path, specs: int, packages: int, seed: int = 1, tag: str = "develop") -> int:
    rng = random.Random(seed)
    names = package_names(rng, packages)
    written = 0
    for name, count in zip(names, spec_counts(rng, packages, specs)):
        records = package_records(rng, count)
        folder = out / tag / name
        folder.mkdir(parents=True, exist_ok=True)
        text = (f'---\ntitle: "{name}"\nlayout: cache\ncategories: [package, {tag}]\n'
                f"meta: {json.dumps(meta_for(records), sort_keys=True)}\n"
                f"spec_details: {json.dumps(records, sort_keys=True)}\n---\n")
        (folder / "specs.md").write_text(text, encoding="utf-8")
        written += count
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--specs", type=int, default=1_000_000)
    parser.add_argument("--packages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tag", default="develop")
    args = parser.parse_args()
    total = write_corpus(args.out, args.specs, args.packages, args.seed, args.tag)
    print(f"{args.out}: {args.packages:,} packages, {total:,} specs (seed {args.seed})")


if __name__ == "__main__":
    main()
