"""Environments and caches built from one real Spack index (v3-rich, Spack 1.x's database v8):
a spack.lock whose nodes are its records, and build caches holding some of those records as
they are and some changed in one field each (a new hash each), as a cache built with one
setting otherwise would."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from helpers import SPACK_REAL, fake_hash

from cachetui.model import NO_COMPILER, EnvironmentSpec, deptype_names

_BLOB = "893351c1838d74464bf14efcf2087b8f6ef020849dbf87bb2e8a2acdd49300a4"
V3_RICH_BLOB = SPACK_REAL / "sources/v3-rich/blobs/sha256" / _BLOB[:2] / _BLOB
HDF5 = "vglgw4reavn65vx5d4dlqn6rjywnq76d"  # hdf5@1.10.5 +mpi: openmpi, zlib, ... below it


def real_nodes() -> dict[str, dict]:
    """hash -> spec node, every record of the real index."""
    installs = json.loads(V3_RICH_BLOB.read_bytes())["database"]["installs"]
    return {h: r["spec"] for h, r in installs.items()}


def closure(nodes: dict[str, dict], root: str) -> dict[str, dict]:
    """`root` and everything below it, in the index's order."""
    wanted, todo = set(), [root]
    while todo:
        h = todo.pop()
        if h in wanted or h not in nodes:
            continue
        wanted.add(h)
        todo.extend(d["hash"] for d in nodes[h].get("dependencies", []))
    return {h: n for h, n in nodes.items() if h in wanted}


def write_lockfile(path: Path, nodes: dict[str, dict], roots: list[str]) -> Path:
    """A spack.lock v6 (Spack 1.x) whose concrete specs are `nodes`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "_meta": {
                    "file-type": "spack-lockfile",
                    "lockfile-version": 6,
                    "specfile-version": 5,
                },
                "spack": {"version": "1.0.0", "type": "git", "commit": "0" * 40},
                "roots": [{"hash": h, "spec": nodes[h]["name"]} for h in roots],
                "concrete_specs": nodes,
            }
        )
    )
    return path


def write_cache(root: Path, nodes: dict[str, dict]) -> Path:
    """A v2 build-cache mirror (`build_cache/index.json`, database v8) holding `nodes`."""
    index = root / "build_cache" / "index.json"
    index.parent.mkdir(parents=True, exist_ok=True)
    installs = {
        h: {"spec": n, "ref_count": 0, "in_buildcache": not n.get("external")}
        for h, n in nodes.items()
    }
    index.write_text(json.dumps({"database": {"version": "8", "installs": installs}}))
    return root


_fresh = iter(range(1, 1_000_000))


def changed(node: dict, change) -> dict:
    """A copy of `node` with `change(copy)` applied and a new hash."""
    out = copy.deepcopy(node)
    change(out)
    out["hash"] = fake_hash(next(_fresh), "zz")
    return out


def with_node(nodes: dict[str, dict], old: str, new: dict) -> dict[str, dict]:
    """`nodes` with `old` replaced by `new` (in the same place)."""
    return {(new["hash"] if h == old else h): (new if h == old else n) for h, n in nodes.items()}


def by_name(nodes: dict[str, dict], name: str) -> str:
    return next(h for h, n in nodes.items() if n["name"] == name)


def node_of(spec: EnvironmentSpec) -> dict:
    """`spec` as a build cache's record writes it (Spack 1.x's node, the compiler as an
    annotation): what the readers give back as the same fields."""
    parameters: dict = {}
    for variant in spec.variants:
        if variant[:1] in "+~":
            parameters[variant[1:]] = variant[0] == "+"
        else:
            key, _, value = variant.partition("=")
            parameters[key.rstrip(":")] = value.split(",") if key.endswith(":") else value
    node = {
        "name": spec.name,
        "version": spec.version,
        "arch": {"platform": spec.platform, "platform_os": spec.os, "target": spec.target},
        "namespace": "builtin",
        "parameters": parameters,
        "dependencies": [
            {"name": name, "hash": hash_, "parameters": {"deptypes": deptype_names(bits)}}
            for name, hash_, bits in spec.dependencies
        ],
        "hash": spec.hash,
    }
    if spec.compiler != NO_COMPILER:
        node["annotations"] = {"compiler": spec.compiler.replace("@", "@=", 1)}
    if spec.external:
        node["external"] = {"path": "/usr", "module": None}
    return node
