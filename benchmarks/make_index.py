"""Write a synthetic Spack build-cache mirror whose index is a large database v8 (Spack 1.x).

Deterministic by seed. Shaped like a real index (see /work/shared/docs/spack-formats.md
§1): nodes with `name`, `version`, `arch` (target dicts with realistic feature lists),
`namespace`, `parameters` (build_system, bool/string/multi-valued variants, the six flag
lists), `package_hash`, `annotations`, `dependencies` with `parameters.deptypes`/`virtuals`
and `hash`; records `{"spec": ..., "ref_count": n, "in_buildcache": true}`. Compilers are
external records (`in_buildcache: false`, string target, `external` block) reached through
`c`/`cxx`/`fortran` edges, next to gcc-runtime and compiler-wrapper records, as Spack 1.0
writes them. About 6 edges per spec; link/run/build edges only point to specs of the same
index (mostly of the same architecture), except ~0.1% dangling ones. Package names and the
long-tailed number of specs per package come from make_corpus.py, so for the same seed and
package count the names match the corpus.

The JSON is streamed out compactly on one line (as Spack writes it), never built as one
dict: two passes over small arrays (structure and ref counts first, then text).

    python benchmarks/make_index.py --specs 1000000 --out DIR [--layout v2|v3] [--seed N]

v2 writes DIR/build_cache/index.json + index.json.hash; v3 writes DIR/v3/layout.json,
DIR/v3/manifests/index/index.manifest.json and the blob DIR/blobs/sha256/<c[:2]>/<c>.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import sys
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_corpus import ARCHS, BUILD_SYSTEMS, package_names, spec_counts, weighted  # noqa: E402

DB_VERSION = "8"
FLAG_KEYS = ("cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs")
DANGLING_RATE = 0.0015  # per package-to-package edge: ~0.1% of all edges

_V3 = [
    "avx",
    "avx2",
    "bmi1",
    "bmi2",
    "cx16",
    "f16c",
    "fma",
    "lahf_lm",
    "mmx",
    "movbe",
    "popcnt",
    "sse",
    "sse2",
    "sse4_1",
    "sse4_2",
    "ssse3",
    "xsave",
    "abm",
]
_AVX512 = ["avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"]
_NEOVERSE = [
    "aes",
    "asimd",
    "asimddp",
    "asimdhp",
    "asimdrdm",
    "atomics",
    "cpuid",
    "crc32",
    "dcpop",
    "fcma",
    "fp",
    "fphp",
    "jscvt",
    "lrcpc",
    "pmull",
    "sha1",
    "sha2",
    "sha3",
    "sha512",
    "sve",
]
# name -> (vendor, features, parents, cpupart); generic family for the external compilers
TARGETS = {
    "x86_64_v3": ("generic", sorted(_V3), ["x86_64_v2"], ""),
    "x86_64_v4": ("generic", sorted(_V3 + _AVX512), ["x86_64_v3"], ""),
    "zen4": (
        "AuthenticAMD",
        sorted(
            _V3
            + _AVX512
            + [
                "adx",
                "aes",
                "avx512_bf16",
                "avx512ifma",
                "avx512vbmi",
                "clflushopt",
                "clwb",
                "clzero",
                "sha_ni",
            ]
        ),
        ["zen3", "x86_64_v4"],
        "",
    ),
    "aarch64": ("generic", ["asimd", "evtstrm", "fp"], [], ""),
    "neoverse_v1": ("ARM", sorted(_NEOVERSE + ["bf16", "i8mm", "uscat"]), ["neoverse_n1"], "0xd40"),
    "neoverse_v2": (
        "ARM",
        sorted(_NEOVERSE + ["bf16", "i8mm", "sve2", "svebf16", "svei8mm", "uscat"]),
        ["neoverse_n2"],
        "0xd4f",
    ),
}
LINUX_COMPILERS = [
    ("gcc", "13.3.0", ("c", "cxx", "fortran"), 0.50),
    ("gcc", "11.4.0", ("c", "cxx", "fortran"), 0.30),
    ("llvm", "18.1.8", ("c", "cxx"), 0.20),
]
DARWIN_COMPILERS = [("apple-clang", "16.0.0", ("c", "cxx"), 1.0)]
# languages a package compiles, with weights; None = no compiler (pure Python, data, ...)
LANGUAGES = [
    (("c",), 0.35),
    (("c", "cxx"), 0.40),
    (("c", "cxx", "fortran"), 0.10),
    (("fortran",), 0.03),
    (None, 0.12),
]
DEPTYPES = [
    (("build", "link"), 0.50),
    (("build",), 0.15),
    (("link",), 0.10),
    (("build", "run"), 0.10),
    (("run",), 0.10),
    (("build", "link", "run"), 0.05),
]
BOOL_VARIANTS = [
    "shared",
    "pic",
    "mpi",
    "openmp",
    "cuda",
    "rocm",
    "ipo",
    "docs",
    "tests",
    "static",
    "python",
    "threads",
]
STRING_VARIANTS = {
    "build_type": ["Release", "RelWithDebInfo", "Debug"],
    "cxxstd": ["11", "14", "17", "20"],
    "generator": ["make", "ninja"],
    "precision": ["single", "double"],
}
MULTI_VARIANTS = {
    "libs": [["shared"], ["static"], ["shared", "static"]],
    "cuda_arch": [["80"], ["90"], ["80", "90"]],
    "amdgpu_target": [["gfx90a"], ["gfx90a", "gfx942"]],
    "languages": [["c", "c++"], ["c", "c++", "fortran"]],
}


def dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def b32(data: bytes) -> str:
    return base64.b32encode(data).decode().lower()


def hash_table(seed: int, n: int) -> str:
    """n made-up DAG hashes (base32 of a sha1, 32 chars) as one string; hash i = [32i:32i+32]."""
    sha1, enc, prefix = hashlib.sha1, base64.b32encode, f"cachetui-index:{seed}:".encode()
    return b"".join(enc(sha1(prefix + str(i).encode()).digest()) for i in range(n)).lower().decode()


def target_json(name: str) -> str:
    vendor, features, parents, cpupart = TARGETS[name]
    return dumps(
        {
            "name": name,
            "vendor": vendor,
            "features": features,
            "generation": 0,
            "parents": parents,
            "cpupart": cpupart,
        }
    )


class Package:
    __slots__ = (
        "name",
        "start",
        "count",
        "archs",
        "versions",
        "package_hashes",
        "configs",
        "languages",
        "deps",
    )


def make_params(rng: random.Random) -> dict:
    params: dict = {"build_system": rng.choice(BUILD_SYSTEMS)}
    for name in rng.sample(BOOL_VARIANTS, rng.randint(1, 5)):
        params[name] = rng.random() < 0.6
    for name in rng.sample(sorted(STRING_VARIANTS), rng.randint(0, 2)):
        params[name] = rng.choice(STRING_VARIANTS[name])
    for name in rng.sample(sorted(MULTI_VARIANTS), rng.randint(0, 2)):
        params[name] = rng.choice(MULTI_VARIANTS[name])
    if rng.random() < 0.05:
        params["patches"] = sorted(
            hashlib.sha256(str(rng.random()).encode()).hexdigest() for _ in range(rng.randint(1, 2))
        )
    params = dict(sorted(params.items()))
    params.update({flag: [] for flag in FLAG_KEYS})
    return params


def plan(rng: random.Random, specs: int, packages: int):
    """Packages (names, spec ranges, architectures, variants, dependency packages) and the
    infrastructure records (external compilers, gcc-runtime, compiler-wrapper) per arch."""
    names = package_names(rng, packages)  # same rng use as make_corpus.write_corpus
    counts = spec_counts(rng, packages, specs)
    if min(counts) < 1 or sum(counts) != specs:  # tiny runs: spread evenly instead
        counts = [specs // packages + (1 if i < specs % packages else 0) for i in range(packages)]
    rank = list(range(packages))
    rng.shuffle(rank)  # rank[k]: position in a random topological order; deps have a lower rank
    by_rank = sorted(range(packages), key=rank.__getitem__)
    pkgs, start = [], 0
    for k, (name, count) in enumerate(zip(names, counts)):
        p = Package()
        p.name, p.start, p.count = name, start, count
        start += count
        p.archs = sorted(rng.sample(range(len(ARCHS)), rng.randint(1, 4)))
        nver = rng.randint(1, 5)
        p.versions = sorted(
            {f"{rng.randint(0, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}" for _ in range(nver)}
        )
        p.package_hashes = [
            b32(hashlib.sha256(f"{name}@{v}:{rng.random()}".encode()).digest()) for v in p.versions
        ]
        p.configs = [dumps(make_params(rng)) for _ in range(rng.randint(1, 4))]
        p.languages = (
            None
            if name.startswith(("py-", "r-", "perl-")) and rng.random() < 0.6
            else weighted(rng, LANGUAGES)
        )
        p.deps = []
        r = rank[k]
        if r:
            chosen: list[int] = []
            for _ in range(min(r, rng.randint(1, 8))):
                q = by_rank[int(r * rng.random() ** 2)]  # favour foundational packages (zlib-like)
                if q not in chosen:
                    chosen.append(q)
            for q in chosen:
                dep = names[q]
                stem = dep.split("-", 1)[
                    -1
                ]  # an MPI / BLAS provider by name, reached through its virtuals
                virtuals = (
                    ["mpi"]
                    if stem.startswith("mpi")
                    else ["blas", "lapack"]
                    if stem.endswith("blas")
                    else []
                )
                p.deps.append((q, dumps(list(weighted(rng, DEPTYPES))), dumps(virtuals)))
        pkgs.append(p)
    return pkgs


def infra_records(specs_total: int):
    """Per arch: external compilers, gcc-runtime per gcc, one compiler-wrapper. Returns the
    list of records (kind, arch id, compiler tuple) and the lookup tables."""
    records = []  # (kind, arch, compiler)
    for a, (platform, _os, _target) in enumerate(ARCHS):
        compilers = DARWIN_COMPILERS if platform == "darwin" else LINUX_COMPILERS
        for c in compilers:
            records.append(("external", a, c))
        for c in compilers:
            if c[0] == "gcc":
                records.append(("gcc-runtime", a, c))
        records.append(("compiler-wrapper", a, None))
    first = specs_total - len(records)
    index = {(kind, a, c[:2] if c else None): first + i for i, (kind, a, c) in enumerate(records)}
    return records, first, index


def build_structure(rng, pkgs, n_pkg_specs, infra_index):
    """Pass 1: per package spec, its arch, version, variant config, compiler and dependency
    targets (-1 = dangling), all in flat arrays; plus link/run ref counts."""
    arch_of, ver_of, cfg_of, comp_of = array("B"), array("B"), array("B"), array("b")
    dep_off, dep_tgt = array("I", [0]), array("i")
    refc = array("I", bytes(4 * (n_pkg_specs + len(infra_index))))
    link_run = {}
    for p in pkgs:
        for _q, dt, _v in p.deps:
            link_run[dt] = '"link"' in dt or '"run"' in dt
    for p in pkgs:
        archs, L = p.archs, len(p.archs)
        for m in range(p.count):
            a = archs[m % L]
            arch_of.append(a)
            ver_of.append(rng.randrange(len(p.versions)))
            cfg_of.append(rng.randrange(len(p.configs)))
            compilers = DARWIN_COMPILERS if ARCHS[a][0] == "darwin" else LINUX_COMPILERS
            usable = (
                []
                if p.languages is None
                else [(i, c[3]) for i, c in enumerate(compilers) if set(p.languages) <= set(c[2])]
            )
            if (
                not usable
            ):  # nothing to compile, or no compiler for its languages here (fortran on darwin)
                comp_of.append(-1)
            else:
                total = sum(w for _, w in usable)
                comp_of.append(weighted(rng, [(i, w / total) for i, w in usable]))
                c = compilers[comp_of[-1]]
                if c[0] == "gcc":
                    refc[infra_index[("gcc-runtime", a, c[:2])]] += 1
            for q, dt, _v in p.deps:
                if rng.random() < DANGLING_RATE:
                    dep_tgt.append(-1)
                    continue
                d = pkgs[q]
                if a in d.archs:  # a spec of the same arch: positions pos, pos+L', ...
                    pos, Ld = d.archs.index(a), len(d.archs)
                    slots = (d.count - pos + Ld - 1) // Ld
                    j = (
                        d.start + pos + Ld * rng.randrange(slots)
                        if slots > 0
                        else d.start + rng.randrange(d.count)
                    )
                else:
                    j = d.start + rng.randrange(d.count)
                dep_tgt.append(j)
                if link_run[dt]:
                    refc[j] += 1
            dep_off.append(len(dep_tgt))
    return arch_of, ver_of, cfg_of, comp_of, dep_off, dep_tgt, refc


class Sink:
    """Buffered binary writer that also hashes and counts what it writes."""

    def __init__(self, path: Path) -> None:
        self.file = open(path, "wb")
        self.sha = hashlib.sha256()
        self.size = 0
        self.parts: list[str] = []
        self.pending = 0

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.pending += 1
        if self.pending >= 4096:
            self.flush()

    def flush(self) -> None:
        data = "".join(self.parts).encode()
        self.parts, self.pending = [], 0
        self.sha.update(data)
        self.size += len(data)
        self.file.write(data)

    def close(self) -> None:
        self.flush()
        self.file.close()


def write_index(sink: Sink, seed: int, specs: int, packages: int) -> tuple[int, int, int]:
    rng = random.Random(seed)
    pkgs = plan(rng, specs, packages)
    infra, first_infra, infra_index = infra_records(specs)
    if first_infra < len(pkgs):
        raise SystemExit(
            f"--specs must be at least {len(infra) + len(pkgs)} "
            "(infrastructure records + one spec per package)"
        )
    # The package plan was made for `specs`; trim the tail so the total stays exact.
    excess = sum(p.count for p in pkgs) - first_infra
    for p in sorted(pkgs, key=lambda p: -p.count):
        if excess <= 0:
            break
        cut = min(excess, p.count - 1)
        p.count -= cut
        excess -= cut
    start = 0
    for p in pkgs:
        p.start, start = start, start + p.count
    hashes = hash_table(seed, specs)
    arch_of, ver_of, cfg_of, comp_of, dep_off, dep_tgt, refc = build_structure(
        rng, pkgs, first_infra, infra_index
    )

    target_str = {name: target_json(name) for name in TARGETS}
    arch_json = [
        dumps({"platform": pl, "platform_os": os_, "target": "@T@"}).replace('"@T@"', target_str[t])
        for pl, os_, t in ARCHS
    ]
    family = [
        "aarch64" if t in ("aarch64",) or t.startswith("neoverse") else "x86_64"
        for _pl, _os, t in ARCHS
    ]
    empty_flags = ",".join(f'"{flag}":[]' for flag in FLAG_KEYS)
    annotations = '"annotations":{"original_specfile_version":5}'

    def h(i: int) -> str:
        return hashes[32 * i : 32 * i + 32]

    sink.write(f'{{"database":{{"version":"{DB_VERSION}","installs":{{')
    sep = ""
    edges_total = dangling = 0
    # Infrastructure records: external compilers, gcc-runtime, compiler-wrapper.
    for i, (kind, a, c) in enumerate(infra):
        idx = first_infra + i
        pl, os_, _t = ARCHS[a]
        if kind == "external":
            name, version, langs, _w = c
            exe = {
                "gcc": ("gcc", "g++", "gfortran"),
                "llvm": ("clang", "clang++"),
                "apple-clang": ("clang", "clang++"),
            }[name]
            prefix = "/usr" if name != "llvm" else f"/opt/llvm-{version}"
            paths = {
                lang: f"{prefix}/bin/{e}{'' if name != 'gcc' else '-' + version.split('.')[0]}"
                for lang, e in zip(langs, exe)
            }
            lang_param = ["c", "c++"] + (["fortran"] if "fortran" in langs else [])
            node = (
                f'"name":"{name}","version":"{version}",'
                f'"arch":{{"platform":"{pl}","platform_os":"{os_}","target":"{family[a]}"}},"namespace":"builtin",'
                '"parameters":{"build_system":"'
                f'{"cmake" if name == "llvm" else "autotools" if name == "gcc" else "bundle"}",'
                f'"languages":{dumps(lang_param)},{empty_flags}}},'
                f'"external":{{"path":"{prefix}","module":null,"extra_attributes":{{"compilers":{dumps(paths)}}}}},'
                f'{annotations},"hash":"{h(idx)}"'
            )
            in_bc = "false"
        elif kind == "gcc-runtime":
            ext = infra_index[("external", a, c[:2])]
            node = (
                f'"name":"gcc-runtime","version":"{c[1]}","arch":{arch_json[a]},"namespace":"builtin",'
                f'"parameters":{{"build_system":"generic",{empty_flags}}},'
                f'"package_hash":"{b32(hashlib.sha256(f"gcc-runtime@{c[1]}".encode()).digest())}",'
                f'"dependencies":[{{"name":"gcc","hash":"{h(ext)}","parameters":{{"deptypes":["build"],"virtuals":[]}}}}],'
                f'{annotations},"hash":"{h(idx)}"'
            )
            in_bc = "true"
        else:
            node = (
                f'"name":"compiler-wrapper","version":"1.0","arch":{arch_json[a]},"namespace":"builtin",'
                f'"parameters":{{"build_system":"generic",{empty_flags}}},'
                f'"package_hash":"{b32(hashlib.sha256(b"compiler-wrapper@1.0").digest())}",'
                f'{annotations},"hash":"{h(idx)}"'
            )
            in_bc = "true"
        sink.write(
            f'{sep}"{h(idx)}":{{"spec":{{{node}}},"ref_count":{refc[idx]},"in_buildcache":{in_bc}}}'
        )
        sep = ","
        edges_total += kind == "gcc-runtime"

    # Package specs, grouped by package in name order (as an index built from the sorted
    # spec-file listing of a mirror would be).
    for p in pkgs:
        name, deps = p.name, p.deps
        dep_names = [pkgs[q].name for q, _dt, _v in deps]
        langs = dumps(list(p.languages)) if p.languages else None
        for i in range(p.start, p.start + p.count):
            a = arch_of[i]
            edges = []
            c = comp_of[i]
            if c >= 0:
                compilers = DARWIN_COMPILERS if ARCHS[a][0] == "darwin" else LINUX_COMPILERS
                comp = compilers[c]
                edges.append(
                    (
                        "compiler-wrapper",
                        '{"name":"compiler-wrapper","hash":"'
                        f'{h(infra_index[("compiler-wrapper", a, None)])}",'
                        f'"parameters":{{"deptypes":["build"],"virtuals":[]}}}}',
                    )
                )
                edges.append(
                    (
                        comp[0],
                        f'{{"name":"{comp[0]}","hash":"'
                        f'{h(infra_index[("external", a, comp[:2])])}",'
                        f'"parameters":{{"deptypes":["build"],"virtuals":{langs}}}}}',
                    )
                )
                if comp[0] == "gcc":
                    edges.append(
                        (
                            "gcc-runtime",
                            '{"name":"gcc-runtime","hash":"'
                            f'{h(infra_index[("gcc-runtime", a, comp[:2])])}",'
                            f'"parameters":{{"deptypes":["link"],"virtuals":[]}}}}',
                        )
                    )
            lo = dep_off[i]
            for n, (dep_name, (_q, dt, virtuals)) in enumerate(zip(dep_names, deps)):
                j = dep_tgt[lo + n]
                if j < 0:
                    dh = b32(hashlib.sha1(f"dangling:{seed}:{i}:{n}".encode()).digest())
                    dangling += 1
                else:
                    dh = h(j)
                edges.append(
                    (
                        dep_name,
                        f'{{"name":"{dep_name}","hash":"{dh}","parameters":{{"deptypes":{dt},"virtuals":{virtuals}}}}}',
                    )
                )
            edges_total += len(edges)
            edges.sort()  # Spack writes the edges sorted by dependency name
            v = ver_of[i]
            hi = h(i)
            sink.write(
                f'{sep}"{hi}":{{"spec":{{"name":"{name}","version":"{p.versions[v]}","arch":{arch_json[a]},'
                f'"namespace":"builtin","parameters":{p.configs[cfg_of[i]]},"package_hash":"{p.package_hashes[v]}",'
                + (f'"dependencies":[{",".join(e for _n, e in edges)}],' if edges else "")
                + f'{annotations},"hash":"{hi}"}},"ref_count":{refc[i]},"in_buildcache":true}}'
            )
    sink.write("}}}")
    return specs, edges_total, dangling


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--specs", type=int, default=1_000_000, help="install records in all (default 1,000,000)"
    )
    parser.add_argument("--out", type=Path, required=True, help="mirror root to write")
    parser.add_argument("--layout", choices=("v2", "v3"), default="v2")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--packages",
        type=int,
        default=None,
        help="distinct package names (default specs/100, at most 10,000, as make_corpus)",
    )
    args = parser.parse_args()
    packages = args.packages or min(10_000, max(1, args.specs // 100))
    started = time.perf_counter()

    if args.layout == "v2":
        folder = args.out / "build_cache"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "index.json"
        sink = Sink(path)
        total, edges, dangling = write_index(sink, args.seed, args.specs, packages)
        sink.close()
        (folder / "index.json.hash").write_text(sink.sha.hexdigest())
    else:
        tmp_dir = args.out / "blobs" / "sha256"
        tmp_dir.mkdir(parents=True, exist_ok=True)
        tmp = tmp_dir / f".index-{os.getpid()}.tmp"
        sink = Sink(tmp)
        total, edges, dangling = write_index(sink, args.seed, args.specs, packages)
        sink.close()
        checksum = sink.sha.hexdigest()
        path = tmp_dir / checksum[:2] / checksum
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, path)
        manifest = {
            "version": 3,
            "data": [
                {
                    "contentLength": sink.size,
                    "mediaType": f"application/vnd.spack.db.v{DB_VERSION}+json",
                    "compression": "none",
                    "checksumAlgorithm": "sha256",
                    "checksum": checksum,
                }
            ],
        }
        (args.out / "v3" / "manifests" / "index").mkdir(parents=True, exist_ok=True)
        (args.out / "v3" / "layout.json").write_text(json.dumps({"signing": "gpg"}))
        (args.out / "v3" / "manifests" / "index" / "index.manifest.json").write_text(
            json.dumps(manifest, indent=0)
        )

    elapsed = time.perf_counter() - started
    print(
        f"{path}: {sink.size:,} bytes ({sink.size / 1e6:,.1f} MB), {total:,} specs, "
        f"{packages:,} packages, "
        f"{edges:,} edges ({edges / total:.2f}/spec, {dangling:,} dangling), layout {args.layout}, "
        f"seed {args.seed}, {elapsed:.2f} s"
    )


if __name__ == "__main__":
    main()
