"""Write a synthetic cache.spack.io tree (`<tag>/<package>/specs.md`) for benchmarks.

Deterministic by seed, and shaped like the real files (benchmarks/corpus_shape.py compares
the two; see the README's "Speed" section for how closely):

- a long-tailed number of specs per package (most under 20, a few in the thousands);
- CI stacks as Spack runs them: each builds for its own OS, target and compiler(s), and a
  binary built alike for two stacks is one spec listed in both (`root` holds every spec);
- a package has a fixed set of variants (from one to fifty) and is built in a few
  configurations of their values: `+cuda`/`~cuda`, `cuda_arch=80`, `build_system=cmake`,
  `libs=shared,static`, `patches=...`, sorted by name as Spack prints them;
- the file formats of the cache.spack.io generator's eras, mixed file by file:
  half `older` (insertion-ordered keys, unsorted stacks, `gcc@=11.4.0`, a `tarball` URL on
  every spec), a quarter `sorted` (sorted keys and a tarball, as v0.23.1 was written) and a
  quarter `current` (sorted keys, specs sorted by hash, no tarball; half of them written by
  Spack 1.x: `gcc@13.3.0`, and `none` for specs built without a compiler). Tarball URLs
  follow the rule those eras used: `https://binaries.spack.io/<tag>/build_cache/<arch>/
  <compiler>-<version>/<name>-<version>/<arch>-<compiler>-<version>-<name>-<version>-<hash>.spack`.

    python benchmarks/make_corpus.py OUT_DIR --specs 1000000 --packages 10000
        [--seed 1] [--tag develop]
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

B32 = "abcdefghijklmnopqrstuvwxyz234567"
# Used by make_index.py (a database index has its own, smaller set of architectures).
ARCHS = [
    ("linux", "ubuntu22.04", "x86_64_v3"),
    ("linux", "ubuntu22.04", "aarch64"),
    ("linux", "ubuntu24.04", "x86_64_v3"),
    ("linux", "ubuntu24.04", "aarch64"),
    ("linux", "rhel8", "x86_64_v3"),
    ("linux", "amzn2", "neoverse_v1"),
    ("linux", "amzn2", "neoverse_v2"),
    ("linux", "sles15", "zen4"),
    ("linux", "rocky9", "x86_64_v4"),
    ("darwin", "sequoia", "aarch64"),
]
BUILD_SYSTEMS = ["cmake", "autotools", "python_pip", "makefile", "meson", "generic", "cargo"]

# Spack's CI stacks of the v0.21-v1.0 era: stack -> the (platform, os, target, compilers)
# it builds for (from real summaries' stacks and architectures).
STACKS: dict[str, list[tuple[str, str, str, tuple[str, ...]]]] = {
    "e4s": [("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0",))],
    "e4s-oneapi": [("linux", "ubuntu22.04", "x86_64_v3", ("oneapi@2024.2.1", "gcc@11.4.0"))],
    "e4s-rocm-external": [("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0",))],
    "e4s-neoverse_v1": [("linux", "ubuntu22.04", "neoverse_v1", ("gcc@11.4.0",))],
    "e4s-neoverse-v2": [("linux", "ubuntu22.04", "neoverse_v2", ("gcc@11.4.0",))],
    "e4s-power": [
        ("linux", "ubuntu20.04", "ppc64le", ("gcc@9.4.0",)),
        ("linux", "ubuntu20.04", "x86_64_v3", ("gcc@9.4.0",)),
    ],
    "e4s-cray-rhel": [("linux", "rhel8", "zen4", ("gcc@12.2.0", "cce@17.0.0"))],
    "e4s-cray-sles": [("linux", "sles15", "zen4", ("gcc@12.2.0",))],
    "ml-linux-x86_64-cpu": [("linux", "ubuntu24.04", "x86_64_v3", ("gcc@13.2.0",))],
    "ml-linux-x86_64-cuda": [("linux", "ubuntu24.04", "x86_64_v3", ("gcc@13.2.0",))],
    "ml-linux-x86_64-rocm": [("linux", "ubuntu24.04", "x86_64_v3", ("gcc@13.2.0",))],
    "ml-linux-aarch64-cpu": [("linux", "ubuntu24.04", "aarch64", ("gcc@13.2.0",))],
    "ml-linux-aarch64-cuda": [("linux", "ubuntu24.04", "aarch64", ("gcc@13.2.0",))],
    "ml-darwin-aarch64-mps": [("darwin", "sequoia", "aarch64", ("apple-clang@16.0.0",))],
    "data-vis-sdk": [("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0",))],
    "developer-tools-x86_64_v3-linux-gnu": [
        ("linux", "rhel8", "x86_64_v3", ("gcc@13.3.0", "gcc@8.5.0")),
        ("linux", "centos7", "x86_64_v3", ("gcc@10.5.0",)),
    ],
    "developer-tools-aarch64-linux-gnu": [
        ("linux", "rhel8", "aarch64", ("gcc@13.3.0",)),
        ("linux", "centos7", "aarch64", ("gcc@10.5.0",)),
    ],
    "developer-tools-darwin": [("darwin", "sequoia", "aarch64", ("apple-clang@16.0.0",))],
    "aws-pcluster-neoverse_v1": [("linux", "amzn2", "neoverse_v1", ("gcc@12.4.0",))],
    "aws-pcluster-x86_64_v4": [("linux", "amzn2", "x86_64_v4", ("gcc@12.4.0", "oneapi@2024.1.0"))],
    "aws-isc": [("linux", "amzn2", "x86_64_v3", ("gcc@7.3.1",))],
    "aws-isc-aarch64": [
        ("linux", "amzn2", "aarch64", ("gcc@7.3.1",)),
        ("linux", "amzn2", "neoverse_n1", ("gcc@7.3.1",)),
    ],
    "radiuss": [("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0", "clang@14.0.0"))],
    "radiuss-aws": [("linux", "amzn2", "x86_64_v4", ("gcc@12.4.0",))],
    "hep": [
        ("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0",)),
        ("linux", "ubuntu24.04", "x86_64_v3", ("gcc@13.3.0",)),
    ],
    "tutorial": [("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0",))],
    "build_systems": [
        ("linux", "ubuntu18.04", "x86_64_v3", ("gcc@7.5.0",)),
        ("linux", "ubuntu22.04", "x86_64_v3", ("gcc@12.4.0",)),
    ],
    "bootstrap-x86_64-linux-gnu": [("linux", "centos7", "x86_64", ("gcc@10.2.1",))],
    "bootstrap-aarch64-darwin": [("darwin", "ventura", "aarch64", ("apple-clang@15.0.0",))],
    "e4s-cuda": [("linux", "ubuntu22.04", "x86_64_v3", ("gcc@11.4.0", "nvhpc@24.5"))],
}
# Popular stacks carry most packages.
STACK_WEIGHTS = {
    name: (
        6
        if name in ("e4s", "ml-linux-x86_64-cpu", "developer-tools-x86_64_v3-linux-gnu")
        else 3
        if name.startswith(("e4s", "ml-", "developer-tools"))
        else 1
    )
    for name in STACKS
}

BOOL_VARIANTS = [
    "shared",
    "pic",
    "mpi",
    "openmp",
    "cuda",
    "rocm",
    "ipo",
    "doc",
    "tests",
    "static",
    "python",
    "threads",
    "fortran",
    "cxx",
    "debug",
    "examples",
    "hdf5",
    "netcdf",
    "zlib",
    "ssl",
    "x",
    "opengl",
    "qt",
    "lapack",
    "blas",
    "fftw",
    "int64",
    "complex",
    "ncurses",
    "ownlibs",
    "atomic",
    "chrono",
    "graph",
    "iostreams",
    "regex",
    "thread",
    "timer",
    "wave",
    "log",
    "locale",
    "json",
    "numpy",
    "icu",
    "mmap",
    "lto",
    "gold",
    "plugins",
    "libxml2",
    "cairo",
    "tiff",
    "png",
    "jpeg",
    "gui",
    "tools",
    "vtkm",
    "kokkos",
    "raja",
]
STRING_VARIANTS = {
    "build_type": ["Release", "RelWithDebInfo", "Debug"],
    "cxxstd": ["11", "14", "17", "20"],
    "generator": ["make", "ninja"],
    "precision": ["single", "double"],
    "visibility": ["hidden", "global"],
    "cuda_arch": ["70", "80", "90"],
    "tls": ["openssl", "mbedtls"],
    "default_library": ["shared", "static"],
}
MULTI_VARIANTS = {
    "libs": ["shared", "static"],
    "amdgpu_target": ["gfx90a", "gfx942", "gfx1100"],
    "languages": ["c", "c++", "fortran", "lto"],
    "fabrics": ["ofi", "ucx", "psm2"],
}
PREFIXES = ["", "", "", "py-", "py-", "r-", "perl-", "lib", "rust-", "go-"]
SYLLABLES = [
    "ab",
    "ar",
    "bo",
    "ca",
    "de",
    "el",
    "fi",
    "go",
    "ha",
    "io",
    "ju",
    "ka",
    "lo",
    "mi",
    "ne",
    "no",
    "pa",
    "qu",
    "ro",
    "sa",
    "ti",
    "ur",
    "ve",
    "wi",
    "xo",
    "ya",
    "ze",
    "mpi",
    "hdf",
    "net",
    "cdf",
    "blas",
    "fft",
]

# The generator's eras, by share of files.
ERAS = [("older", 0.50), ("sorted", 0.25), ("current", 0.125), ("spack1", 0.125)]
OLDER_KEYS = (
    "hash",
    "compiler",
    "versions",
    "os",
    "platform",
    "target",
    "variants",
    "stacks",
    "size",
    "tarball",
)
OLDER_META = (
    "versions",
    "compilers",
    "oss",
    "platforms",
    "targets",
    "stacks",
    "num_specs",
    "num_specs_by_stack",
)


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


def weighted(rng: random.Random, items: list[tuple[Any, float]]) -> Any:
    r = rng.random()
    for item, weight in items:
        r -= weight
        if r < 0:
            return item
    return items[-1][0]


class Variant:
    """One variant of a package and the values its builds give it."""

    def __init__(self, rng: random.Random, name: str, kind: str) -> None:
        self.name, self.kind = name, kind
        if kind == "bool":
            self.choices = ["+" + name, "~" + name]
        elif kind == "string":
            self.choices = [
                f"{name}={v}" for v in rng.sample(STRING_VARIANTS[name], rng.randint(1, 2))
            ]
        elif kind == "multi":
            options = MULTI_VARIANTS[name]
            sets = {
                ",".join(sorted(rng.sample(options, rng.randint(1, len(options)))))
                for _ in range(2)
            }
            self.choices = [f"{name}={s}" for s in sorted(sets)]
        else:  # build_system, patches: one value for every build of the package
            self.choices = [kind]

    def value(self, rng: random.Random) -> str:
        return rng.choice(self.choices)


def package_variants(rng: random.Random, builds: int) -> list[Variant]:
    """A package's variants: most have only build_system, some a handful, a few dozens (the
    packages built most, libraries with many options, have the most)."""
    # (share with build_system only, with 1-6 more, with 7-20 more) by how often it is built
    shares = (
        (0.75, 0.2, 0.05)
        if builds <= 3
        else (0.6, 0.25, 0.13)
        if builds <= 15
        else (0.25, 0.3, 0.35)
    )
    r = rng.random()
    count = (
        0
        if r < shares[0]
        else rng.randint(1, 6)
        if r < shares[0] + shares[1]
        else rng.randint(7, 20)
        if r < sum(shares)
        else rng.randint(21, 50)
    )
    variants = [Variant(rng, "build_system", f"build_system={rng.choice(BUILD_SYSTEMS)}")]
    names = rng.sample(
        BOOL_VARIANTS + sorted(STRING_VARIANTS) + sorted(MULTI_VARIANTS), min(count, 60)
    )
    for name in names:
        kind = (
            "string" if name in STRING_VARIANTS else "multi" if name in MULTI_VARIANTS else "bool"
        )
        variants.append(Variant(rng, name, kind))
    if rng.random() < 0.08:
        patches = ",".join(
            sorted(
                "".join(rng.choice("0123456789abcdef") for _ in range(7))
                for _ in range(rng.randint(1, 2))
            )
        )
        variants.append(
            Variant(rng, "patches", f"patches=={patches}")
        )  # "==": how the era spells it is decided per file
    return sorted(variants, key=lambda v: v.name)


def package_versions(rng: random.Random, count: int) -> list[str]:
    """A few versions (more for packages with many builds), newest first."""
    wanted = min(count, 1 + round(math.log2(count) * rng.uniform(0.1, 0.8)))
    style = rng.random()
    out: set[str] = set()
    while len(out) < wanted:
        if style < 0.8:
            out.add(f"{rng.randint(0, 12)}.{rng.randint(0, 40)}.{rng.randint(0, 12)}")
        elif style < 0.95:
            out.add(f"{rng.randint(2019, 2025)}.{rng.randint(1, 12):02d}.{rng.randint(0, 3)}")
        else:
            out.add(
                f"{rng.randint(1, 4)}.{rng.randint(0, 30)}-"
                f"{rng.choice(['t9b_atlas', 'rc1', 'p1', 'beta'])}"
            )
    return sorted(
        out,
        key=lambda v: [int(p) if p.isdigit() else 0 for p in v.replace("-", ".").split(".")],
        reverse=True,
    )


def package_records(rng: random.Random, name: str, count: int, era: str, tag: str) -> list[dict]:
    versions = package_versions(rng, count)
    # The stacks that build this package: more for popular packages.
    want = max(1, min(len(STACKS), round(count**0.72 * rng.uniform(0.5, 1.1))))
    stacks = []
    pool = dict(STACK_WEIGHTS)
    while len(stacks) < want:
        stack = weighted(rng, [(s, w / sum(pool.values())) for s, w in pool.items()])
        stacks.append(stack)
        del pool[stack]
    variants = package_variants(rng, count)
    configurations = (
        max(1, min(count, round(len(variants) ** 0.8 * rng.uniform(0.4, 1.4))))
        if len(variants) > 1
        else 1
    )
    configs = [tuple(v.value(rng) for v in variants) for _ in range(configurations)]
    without_compiler = era == "spack1" and rng.random() < 0.15  # data, binaries, pure Python
    records = []
    seen: set[str] = set()
    for _ in range(count):
        stack = rng.choice(stacks)
        platform, os_, target, compilers = rng.choice(STACKS[stack])
        compiler = "none" if without_compiler else rng.choice(compilers)
        # The same build also serves other stacks of this package built alike.
        alike = [
            s
            for s in stacks
            if s != stack
            and any(a[:3] == (platform, os_, target) and compiler in a[3] for a in STACKS[s])
        ]
        carried = {"root", stack} | (
            {rng.choice(alike)} if alike and rng.random() < 0.15 else set()
        )
        version = versions[0] if rng.random() < 0.75 else rng.choice(versions)
        digest = make_hash(rng)
        while digest in seen:
            digest = make_hash(rng)
        seen.add(digest)
        records.append(
            spec_record(
                rng,
                name,
                digest,
                version,
                compiler,
                platform,
                os_,
                target,
                rng.choice(configs),
                carried,
                era,
                tag,
            )
        )
    if era in ("current", "spack1"):
        records.sort(key=lambda r: r["hash"])
    return records


def spec_record(
    rng: random.Random,
    name: str,
    digest: str,
    version: str,
    compiler: str,
    platform: str,
    os_: str,
    target: str,
    variants: tuple[str, ...],
    stacks: set[str],
    era: str,
    tag: str,
) -> dict:
    patches = "patches:=" if era == "spack1" else "patches="
    variants = [v.replace("patches==", patches) for v in variants]
    stack_list = sorted(stacks)
    if era == "older":
        rng.shuffle(stack_list)  # the older generator wrote list(set(...))
    written = compiler if era == "spack1" or compiler == "none" else compiler.replace("@", "@=", 1)
    record = {
        "hash": digest,
        "compiler": written,
        "versions": [version],
        "os": os_,
        "platform": platform,
        "target": target,
        "variants": variants,
        "stacks": stack_list,
        "size": "-",
    }
    if era in ("older", "sorted"):
        compiler_dir = compiler.replace("@", "-", 1)
        arch = f"{platform}-{os_}-{target}"
        record["tarball"] = (
            f"https://binaries.spack.io/{tag}/build_cache/{arch}/{compiler_dir}/{name}-{version}/"
            f"{arch}-{compiler_dir}-{name}-{version}-{digest}.spack"
        )
    return record if era == "older" else dict(sorted(record.items()))


def meta_for(records: list[dict], era: str) -> dict:
    by_stack = Counter(s for r in records for s in r["stacks"])
    meta = {
        "versions": sorted({v for r in records for v in r["versions"]}),
        "compilers": sorted(
            {r["compiler"] for r in records} - ({"none"} if era != "spack1" else set())
        ),
        "oss": sorted({r["os"] for r in records}),
        "platforms": sorted({r["platform"] for r in records}),
        "targets": sorted({r["target"] for r in records}),
        "stacks": sorted(by_stack),
        "num_specs": len(records),
        "num_specs_by_stack": dict(by_stack if era == "older" else sorted(by_stack.items())),
    }
    return meta if era == "older" else dict(sorted(meta.items()))


def write_corpus(out: Path, specs: int, packages: int, seed: int = 1, tag: str = "develop") -> int:
    rng = random.Random(seed)
    names = package_names(rng, packages)
    written = 0
    for name, count in zip(names, spec_counts(rng, packages, specs)):
        era = weighted(rng, ERAS)
        records = package_records(rng, name, count, era, tag)
        folder = out / tag / name
        folder.mkdir(parents=True, exist_ok=True)
        text = (
            f'---\ntitle: "{name}"\nlayout: cache\ncategories: [package, {tag}]\n'
            f"meta: {json.dumps(meta_for(records, era))}\n"
            f"spec_details: {json.dumps(records)}\n---"
        )
        (folder / "specs.md").write_text(text, encoding="utf-8")
        written += count
    return written


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
