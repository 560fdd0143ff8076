"""Property-based tests (hypothesis): every reader, the whole load pipeline and the query
parser, on any input, give specs, load problems or parse errors, never another exception.

Inputs are structure-aware: JSON built like each real format (cache.spack.io summaries,
Spack databases 5-8, spec files 1-5, v3 index manifests, tag maps, older cache.spack.io
pages) with fields of the wrong type, missing or extra, huge numbers, deep nesting and odd
unicode (control characters, bidi overrides, lone surrogates escaped in JSON or written raw);
front matter with random YAML-ish lines; clear-signed and gzip wrappers, whole and broken;
real fixture files truncated, flipped and spliced; plain random bytes and text.

Deterministic (derandomize=True, no example database): the same pytest command tries the same
inputs every run. (Hypothesis also mixes in constants from the project modules loaded so far,
so this file alone and the whole suite try somewhat different inputs.) No shrinking unless
CACHETUI_SHRINK=1 (see PHASES). Nothing here touches the network: a module fixture makes every
connection fail at once.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from helpers import BUILDCACHE, SAMPLE_DATA, fake_hash
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from cachetui.index.deps import dependencies_of, reverse_tree
from cachetui.index.evaluate import evaluate
from cachetui.index.filter import Filter
from cachetui.index.hashes import HashPrefixError, hash_prefix_in, normalise_hash_prefix
from cachetui.index.highlight import highlight_for
from cachetui.index.query import QueryError, parse_query
from cachetui.index.store import Index, build_index
from cachetui.model import FACETS, LoadProblem
from cachetui.service import IndexService
from cachetui.sources import read_batch, read_file
from cachetui.sources.clearsign import BEGIN, strip_clearsign
from cachetui.sources.database import DatabaseFile, NotADatabase, read_database
from cachetui.sources.fetch import FetchError, read_body
from cachetui.sources.mirror import index_blob_of
from cachetui.sources.resolve import resolve
from cachetui.sources.specfile import read_spec_file
from cachetui.sources.summary import UNTAGGED, NotASummary, OlderPage, SummaryFile, read_summary

HASH_RE = re.compile(r"[a-z2-7]{32}")
B32 = "abcdefghijklmnopqrstuvwxyz234567"


# Shrinking these nested inputs takes minutes per failure (and the explain phase traces every
# line): a failure is reported as found. CACHETUI_SHRINK=1 minimises it, to report a bug.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target) + (
    (Phase.shrink,) if os.environ.get("CACHETUI_SHRINK") else ()
)


def fuzz(examples: int):
    """Settings for every property here: deterministic, no deadline (a cold import or a
    gzip bomb check may take a while once), and no complaint about large or slow inputs."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        phases=PHASES,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
            HealthCheck.large_base_example,
        ],
    )


# A failing example is printed whole, however long: hypothesis need not warn that it is.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning"
)


@pytest.fixture(autouse=True, scope="module")
def no_network():
    """A tag map or a URL made up by a strategy must never reach a real host."""

    def refuse(*args, **kwargs):
        raise OSError("network disabled in the property tests")

    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "network disabled in the property tests")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", no_dns)
        patch.setattr(socket, "create_connection", refuse)
        patch.setattr(socket.socket, "connect", refuse)
        yield


# -- building blocks ------------------------------------------------------------------------

MISSING = object()  # a field left out

ODD_PIECES = [
    "\x00",
    "\x07",
    "\x08",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u200b",
    "\u200f",
    "\ufeff",
    "\ufffd",
    "\ud800",
    "\udfff",
    "\udc80",
    "\U0001f600",
    "\U0010ffff",
    "İ",
    "ß",
    "ǅ",
    "\r\n",
    "\r",
    "\n",
    "\t",
    '"',
    "\\",
    "'",
    "`",
    "---",
    "...",
    ": ",
    "- ",
    "#",
    "{",
    "}",
    "[",
    "]",
    "&a",
    "*a",
    "!!python/object:os.system",
    "%",
    "@",
    "=",
    "/",
    "^",
    "~",
    "+",
    ",",
    "*",
    "[bold]",
    "[/]",
    "[link=x]",
    "NaN",
    "null",
    "true",
    "1e999",
    "-0",
    "=1.0",
    "@=",
    "%%",
    "  ",
    "",
]
any_char = st.characters(codec=None, exclude_categories=())  # surrogates included
odd_text = st.lists(
    st.one_of(st.sampled_from(ODD_PIECES), st.text(any_char, max_size=6)), max_size=5
).map("".join)
plain_text = st.text(st.characters(codec="utf-8"), max_size=12)

HUGE_INTS = [2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, 10**400, -(10**400)]
ints = st.one_of(st.integers(-5, 5), st.integers(), st.sampled_from(HUGE_INTS))
floats = st.floats(allow_nan=True, allow_infinity=True)


def deep(depth: int, kind: str) -> str:
    """A placeholder that `dump` turns into `depth` levels of nesting."""
    return f"\x00deep{depth}{kind}\x00"


_DEEP = re.compile(r'"\\u0000deep([0-9]+)([\[{])\\u0000"')
nesting = st.builds(
    deep, st.sampled_from([1, 2, 50, 500, 999, 1000, 1001, 3000, 20000]), st.sampled_from("[{")
)

scalars = st.one_of(st.none(), st.booleans(), ints, floats, odd_text, plain_text, nesting)
keys_text = st.one_of(plain_text, odd_text)
any_json = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys_text, inner, max_size=4)
    ),
    max_leaves=5,
)


def dump(value: Any, ascii_only: bool = True, indent: int | None = None) -> bytes:
    """JSON as Python writes it (NaN and Infinity included), deep placeholders expanded,
    lone surrogates written raw (invalid UTF-8) when not escaped."""
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent, allow_nan=True)

    def expand(match: re.Match) -> str:
        depth = int(match[1])
        return "[" * depth + "]" * depth if match[2] == "[" else '{"a":' * depth + "1" + "}" * depth

    return _DEEP.sub(expand, text).encode("utf-8", "surrogatepass")


@st.composite
def dumped(draw, value: Any) -> bytes:
    return dump(value, draw(st.booleans()), draw(st.sampled_from([None, None, 1])))


# How a field is given: mostly right; sometimes a value of another type, anything, or left out.
PLACEMENT = st.sampled_from(("good",) * 5 + ("scalar", "any", "missing"))
GOOD = object()  # a field whose value is filled in when drawn (see `record_of`)


def place(draw, good: Any) -> Any:
    how = draw(PLACEMENT)
    return (
        good
        if how == "good"
        else draw(scalars)
        if how == "scalar"
        else draw(any_json)
        if how == "any"
        else MISSING
    )


def record_of(fields: dict[str, st.SearchStrategy | object]) -> st.SearchStrategy:
    """JSON objects with these fields (each maybe wrong or missing), maybe an extra one, keys
    sometimes in another order. A field given as GOOD takes its value from `given` when drawn.
    (Strategies are built here once: building them per draw cost most of the run.)"""

    @st.composite
    def draw_record(draw, given: dict[str, Any] | None = None) -> dict:
        out = {}
        for key, strategy in fields.items():
            value = place(draw, given[key] if strategy is GOOD else draw(strategy))
            if value is not MISSING:
                out[key] = value
        if draw(st.integers(0, 3)) == 0:
            out[draw(keys_text)] = draw(any_json)
        if draw(st.booleans()):
            out = dict(reversed(list(out.items())))
        return out

    return draw_record


# Hashes: a small pool (so that edges resolve, and duplicates happen), fresh ones, broken ones.
POOL = [
    fake_hash(i, prefix)
    for i, prefix in enumerate(["aaaa", "aaaa", "aaab", "bbbb", "zzzz", "2222", "", ""])
]
good_hash = st.one_of(st.sampled_from(POOL), st.text(B32, min_size=32, max_size=32))
bad_hash = st.one_of(
    good_hash.map(str.upper),
    good_hash.map(lambda h: h[:31]),
    good_hash.map(lambda h: h + "a"),
    good_hash.map(lambda h: " " + h + "\n"),
    good_hash.map(lambda h: h[:-1] + "0"),
    st.text(B32 + "01", max_size=40),
    odd_text,
)
hashes = st.one_of(good_hash, good_hash, bad_hash)

names = st.one_of(
    st.sampled_from(
        ["zlib", "zlib-ng", "py-numpy", "gcc", "llvm", "openssl", "hdf5", "c", "Zlib", "x" * 300]
    ),
    odd_text,
)
versions = st.one_of(
    st.sampled_from(
        [
            "1.3.1",
            "1.2.13",
            "=1.0",
            "develop",
            "main",
            "2024.2.1",
            "1.0-rc1",
            "0" * 5000,
            "9" * 400,
            " ",
            "",
        ]
    ),
    st.from_regex(r"[0-9]{1,4}(\.[0-9a-z]{1,3}){0,3}", fullmatch=True),
    odd_text,
)
compilers = st.one_of(
    st.sampled_from(
        [
            "gcc@11.4.0",
            "gcc@=12.3.0",
            "clang@=17.0.6",
            "apple-clang@16.0.0",
            "none",
            "gcc",
            "@",
            "gcc@",
            "",
        ]
    ),
    odd_text,
)
platforms = st.one_of(st.sampled_from(["linux", "darwin", "windows", "cray"]), odd_text)
oss = st.one_of(
    st.sampled_from(["ubuntu22.04", "ubuntu24.04", "rhel8", "sequoia", "amzn2"]), odd_text
)
targets = st.one_of(
    st.sampled_from(["x86_64_v3", "aarch64", "neoverse_v1", "zen4", "ppc64le"]), odd_text
)
tags = st.one_of(
    st.sampled_from(["develop", "develop-2025-06-01", "v0.23.0", "package", "untagged", " ", ""]),
    odd_text,
)
stack_names = st.one_of(
    st.sampled_from(["root", "e4s", "ml-linux-x86_64-cuda", "tutorial"]), odd_text
)
variant_strings = st.one_of(
    st.sampled_from(
        [
            "+mpi",
            "~cuda",
            "build_system=cmake",
            "libs=shared,static",
            "patches:=abcdef0",
            'cflags="-O2 -g"',
            "cuda_arch=70",
            "+",
            "~",
            "=",
            "a=",
            "=b",
            "x=,",
            "+mpi",
        ]
    ),
    odd_text,
)


SUMMARY_RECORD = record_of(
    {
        "hash": hashes,
        "versions": st.one_of(st.lists(versions, min_size=1, max_size=2), versions),
        "compiler": st.one_of(compilers, st.none()),
        "os": oss,
        "platform": platforms,
        "target": targets,
        "stacks": st.lists(stack_names, max_size=4),
        "variants": st.lists(variant_strings, max_size=4),
        "size": st.one_of(st.just("-"), ints, odd_text),
        "tarball": st.one_of(st.just("https://binaries.spack.io/x.spack"), odd_text, st.none()),
    }
)()


def meta_for(records: list[dict]) -> dict:
    """The meta a generator would write for these records (as far as they make sense)."""

    def strings(key: str) -> list:
        values = [r.get(key) for r in records if isinstance(r, dict)]
        return sorted({v for v in values if isinstance(v, str)})

    stacks = [
        s
        for r in records
        if isinstance(r, dict) and isinstance(r.get("stacks"), list)
        for s in r["stacks"]
        if isinstance(s, str)
    ]
    return {
        "num_specs": len(records),
        "compilers": strings("compiler"),
        "oss": strings("os"),
        "platforms": strings("platform"),
        "targets": strings("target"),
        "stacks": sorted(set(stacks)),
        "num_specs_by_stack": {s: stacks.count(s) for s in set(stacks)},
        "versions": sorted(
            {
                v
                for r in records
                if isinstance(r, dict) and isinstance(r.get("versions"), list)
                for v in r["versions"]
                if isinstance(v, str)
            }
        ),
    }


YAMLISH_LINES = [
    "- item",
    "  indented: 1",
    "key: |",
    "  block text",
    "key: >",
    "&anchor x",
    "*alias",
    "? complex",
    "!!binary aGVsbG8=",
    "key: [a, b",
    "key: {a: 1}",
    "'quoted': x",
    "# a comment",
    "...",
    "spec_details:",
    " - hash: x",
    "spec_details: []",
    "spec_details: [",
    "spec_details: null",
    "spec_details: {}",
    'spec_details: "text"',
    "meta: {",
    "meta: [1, 2]",
    "meta: 5",
    "spec_files:",
    " - spec-0.json",
    "title:",
    "title: ''",
    "categories: package",
    "categories: [package, develop]",
    "a: &a [x, x, x]",
    "b: &b [*a, *a, *a]",
    "c: [*b, *b, *b]",
    "title: !!python/object/apply:os.system [echo]",
    'spec_details: [{"hash": 1}]',
    "\t- tab",
    "key:value",
    ":",
    "---x",
    "%YAML 1.2",
    "%TAG ! tag:x,2000:",
]
yamlish = st.one_of(
    st.sampled_from(YAMLISH_LINES),
    st.builds(
        lambda k, v: f"{k}: {v}",
        st.one_of(
            plain_text, st.sampled_from(["title", "meta", "spec_details", "categories", "layout"])
        ),
        st.one_of(plain_text, odd_text),
    ),
    odd_text,
)


@st.composite
def summary_text(draw, older: bool = False, spec_files: list[str] | None = None) -> str:
    """A cache.spack.io summary (or, `older`, an older page listing `spec_files`) with
    every line maybe wrong, and random YAML-ish lines in between."""
    records = draw(st.lists(SUMMARY_RECORD, max_size=6))
    name, tag = draw(names), draw(tags)
    lines = []
    title = draw(st.sampled_from(["json", "plain", "missing", "odd"]))
    if title == "json":
        lines.append("title: " + json.dumps(name))
    elif title == "plain":
        lines.append(f"title: {name}")
    elif title == "odd":
        lines.append("title: " + draw(odd_text))
    lines.append("layout: cache")
    categories = draw(st.sampled_from(["flow", "json", "one", "none", "block", "odd"]))
    lines += {
        "flow": [f"categories: [package, {tag}]"],
        "json": ["categories: " + json.dumps(["package", tag])],
        "one": ["category: package"],
        "none": [],
        "block": ["categories:", " - package", f" - {tag}"],
        "odd": ["categories: " + draw(odd_text)],
    }[categories]
    meta = draw(st.one_of(st.none(), st.just(meta_for(records)), any_json, nesting))
    if meta is not None:
        lines.append("meta: " + dump(meta, draw(st.booleans())).decode("utf-8", "surrogatepass"))
    if older:
        names_ = spec_files or []
        form = draw(st.sampled_from(["names", "mapping", "json", "odd"]))
        if form == "names":
            lines += (
                ["spec_files:"]
                + [f" - {n}" for n in names_]
                + ["spec_names:"]
                + [f" - 'spec {i}'" for i in range(len(names_))]
            )
        elif form == "mapping":
            lines += ["spec_files:"] + [
                f' - "{draw(plain_text).replace(chr(34), "")}": {n}' for n in names_
            ]
        elif form == "json":
            lines.append("spec_files: " + json.dumps(names_))
        else:
            lines.append("spec_files: " + dump(draw(any_json)).decode("utf-8", "surrogatepass"))
    else:
        details = draw(
            st.sampled_from(["json", "json", "json", "yaml", "missing", "broken", "any"])
        )
        if details == "json":
            lines.append(
                "spec_details: "
                + dump(records, draw(st.booleans())).decode("utf-8", "surrogatepass")
            )
        elif details == "yaml":
            try:
                import yaml

                lines += yaml.safe_dump(
                    {"spec_details": records}, allow_unicode=draw(st.booleans())
                ).splitlines()
            except Exception:  # (a value YAML cannot write: another shape then)
                lines.append("spec_details: " + dump(records).decode())
        elif details == "broken":
            text = dump(records).decode()
            lines.append("spec_details: " + text[: draw(st.integers(0, max(0, len(text) - 1)))])
        elif details == "any":
            lines.append("spec_details: " + dump(draw(any_json)).decode("utf-8", "surrogatepass"))
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), draw(yamlish))
    opening = draw(st.sampled_from(["---", "---", "--- ", "\ufeff---", "", "----"]))
    closing = draw(st.sampled_from(["---", "---", "...", "--- ", None]))
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    body = [opening, *lines] + ([closing] if closing is not None else [])
    return (
        newline.join(body) + newline + draw(st.sampled_from(["", "", "# Body\n", "---\n", "\x00"]))
    )


# -- Spack databases, spec files, manifests, tag maps ---------------------------------------

deptypes = st.lists(st.sampled_from(["build", "link", "run", "test", "weird", ""]), max_size=4)
virtuals = st.lists(st.sampled_from(["c", "cxx", "fortran", "mpi", "zlib-api", ""]), max_size=3)


EDGE = record_of(
    {
        "name": names,
        "hash": hashes,
        "build_hash": hashes,
        "parameters": record_of(
            {
                "deptypes": st.one_of(deptypes, st.sampled_from(["link", "build"])),
                "virtuals": virtuals,
                "direct": st.booleans(),
                "when": plain_text,
                "propagation": plain_text,
            }
        )(),
        "type": deptypes,
    }
)()
arch = record_of(
    {
        "platform": platforms,
        "platform_os": oss,
        "target": st.one_of(
            targets,
            record_of(
                {
                    "name": targets,
                    "vendor": plain_text,
                    "features": st.lists(plain_text, max_size=3),
                    "generation": ints,
                    "parents": st.lists(targets, max_size=2),
                    "cpupart": plain_text,
                }
            )(),
        ),
    }
)()
parameters = st.dictionaries(
    st.one_of(
        st.sampled_from(
            [
                "shared",
                "mpi",
                "build_system",
                "cflags",
                "cxxflags",
                "ldlibs",
                "patches",
                "libs",
                "dev_path",
                "fortran_kind",
                "propagate",
                "abstract",
                "compiler_flags",
            ]
        ),
        plain_text,
        odd_text,
    ),
    st.one_of(
        st.booleans(),
        plain_text,
        odd_text,
        ints,
        floats,
        st.none(),
        st.lists(st.one_of(plain_text, ints, st.none()), max_size=3),
        any_json,
    ),
    max_size=4,
)


SPEC_NODE = record_of(
    {
        "name": names,
        "version": st.one_of(versions, ints, floats),
        "versions": st.lists(versions, max_size=2),
        "arch": arch,
        "compiler": record_of(
            {"name": names, "version": versions, "versions": st.lists(versions, max_size=2)}
        )(),
        "namespace": st.just("builtin"),
        "parameters": parameters,
        "dependencies": st.one_of(
            st.lists(EDGE, max_size=2), st.dictionaries(names, EDGE, max_size=2)
        ),
        "external": st.one_of(
            st.none(),
            st.just(False),
            record_of(
                {
                    "path": plain_text,
                    "module": st.one_of(st.none(), st.lists(plain_text, max_size=2)),
                    "extra_attributes": any_json,
                }
            )(),
        ),
        "annotations": record_of({"compiler": compilers, "original_specfile_version": ints})(),
        "package_hash": plain_text,
        "build_spec": record_of({"name": names, "hash": hashes})(),
        "hash": hashes,
        "full_hash": hashes,
        "_hash": hashes,
        "build_hash": hashes,
    }
)()
INSTALL_RECORD = record_of(
    {
        "spec": GOOD,
        "in_buildcache": st.one_of(st.booleans(), st.none()),
        "ref_count": ints,
        "path": st.one_of(st.none(), st.just("None"), plain_text),
        "installed": st.booleans(),
        "explicit": st.booleans(),
    }
)
DATABASE = record_of(
    {
        "version": st.sampled_from(["8", "7", "6", "5", "0.9.3", "4", 8, 7.0, "9", "", None]),
        "installs": GOOD,
    }
)
SPEC_FILE_SPEC = record_of(
    {"_meta": record_of({"version": st.sampled_from([1, 2, 3, 4, 5, "5", None])})(), "nodes": GOOD}
)
SPEC_FILE_EXTRAS = record_of(
    {
        "buildcache_layout_version": st.sampled_from([1, 2]),
        "binary_cache_checksum": record_of({"hash_algorithm": plain_text, "hash": plain_text})(),
        "archive_size": ints,
        "buildinfo": any_json,
    }
)()


@st.composite
def database_doc(draw) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(any_json, st.builds(lambda v: {"database": v}, any_json)))
    by_name = draw(st.integers(0, 3)) == 0  # database 5 and older: {name: node}
    installs = {}
    for _ in range(draw(st.integers(0, 4))):
        node = draw(SPEC_NODE)
        spec = {draw(names): node} if by_name else node
        installs[draw(hashes)] = draw(INSTALL_RECORD({"spec": spec}))
    return {"database": draw(DATABASE({"installs": installs}))}


@st.composite
def spec_file_doc(draw) -> Any:
    nodes = draw(st.lists(SPEC_NODE, max_size=3))
    form = draw(st.sampled_from(["nodes", "nodes", "nodes", "format1", "odd"]))
    if form == "format1":
        spec: Any = [{draw(names): node} for node in nodes]
    elif form == "odd":
        spec = draw(st.one_of(any_json, st.builds(lambda v: {"nodes": v}, any_json)))
    else:
        spec = draw(SPEC_FILE_SPEC({"nodes": nodes}))
    return {"spec": spec, **draw(SPEC_FILE_EXTRAS)}


hex_checksum = st.text("0123456789abcdef", min_size=64, max_size=64)


MANIFEST_RECORD = record_of(
    {
        "contentLength": ints,
        "mediaType": st.sampled_from(
            ["application/vnd.spack.db.v8+json", "application/vnd.spack.db", "application/json"]
        ),
        "compression": st.sampled_from(["gzip", "none"]),
        "checksumAlgorithm": st.sampled_from(["sha256", "SHA256", "sha-256", ""]),
        "checksum": st.one_of(
            hex_checksum,
            st.text("0123456789abcdef", max_size=8),
            st.just("../../../../etc/passwd"),
            odd_text,
        ),
    }
)()
MANIFEST = record_of({"version": st.sampled_from([3, "3", 2]), "data": GOOD})


@st.composite
def manifest_doc(draw) -> dict:
    return draw(MANIFEST({"data": draw(st.lists(MANIFEST_RECORD, max_size=2))}))


# -- wrappers and mutations -------------------------------------------------------------


def clearsigned(body: bytes, newline: bytes = b"\n", signature: bool = True) -> bytes:
    out = BEGIN + newline + b"Hash: SHA512" + newline + newline + body + newline
    if signature:
        out += (
            b"-----BEGIN PGP SIGNATURE-----"
            + newline
            + newline
            + b"iQIzBAEBCgAd"
            + newline
            + b"-----END PGP SIGNATURE-----"
            + newline
        )
    return out


@st.composite
def wrapped(draw, body: bytes) -> bytes:
    """The document as a file may hold it: plain, behind a BOM or blank lines, clear-signed,
    gzip-compressed (whole, in members, padded, truncated)."""
    how = draw(
        st.sampled_from(
            [
                "plain",
                "plain",
                "plain",
                "bom",
                "space",
                "clearsign",
                "clearsign-crlf",
                "clearsign-unsigned",
                "gzip",
                "gzip-members",
                "gzip-padded",
                "gzip-truncated",
                "gzip-clearsign",
            ]
        )
    )
    if how == "bom":
        return b"\xef\xbb\xbf" + body
    if how == "space":
        return b" \r\n\t" + body
    if how.startswith("clearsign"):
        return clearsigned(
            body, b"\r\n" if how.endswith("crlf") else b"\n", signature=not how.endswith("unsigned")
        )
    if how == "gzip":
        return gzip.compress(body, mtime=0)
    if how == "gzip-members":
        cut = draw(st.integers(0, len(body)))
        return gzip.compress(body[:cut], mtime=0) + gzip.compress(body[cut:], mtime=0)
    if how == "gzip-padded":
        return gzip.compress(body, mtime=0) + b"\0" * draw(st.integers(1, 600))
    if how == "gzip-truncated":
        packed = gzip.compress(body, mtime=0)
        return packed[: draw(st.integers(2, max(2, len(packed) - 1)))]
    if how == "gzip-clearsign":
        return gzip.compress(clearsigned(body), mtime=0)
    return body


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """A file after a bad copy: truncated, bytes flipped, bytes inserted, a range deleted or
    doubled."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "double"]))
        at = draw(st.integers(0, 2**20)) % (len(data) + 1)
        if op == "truncate":
            del data[at:]
        elif op == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= draw(st.integers(1, 255))
        elif op == "insert":
            piece = draw(
                st.one_of(
                    st.binary(max_size=6),
                    st.sampled_from(ODD_PIECES).map(lambda s: s.encode("utf-8", "surrogatepass")),
                )
            )
            data[at:at] = piece
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif op == "double":
            data[at:at] = data[at : at + draw(st.integers(1, 64))]
    return bytes(data)


def _seed_files() -> list[Path]:
    files = [p for p in sorted(BUILDCACHE.rglob("*")) if p.is_file() and p.name != "README.md"]
    return files + sorted(SAMPLE_DATA.rglob("specs.md"))


SEEDS = _seed_files()
seed_bytes = st.sampled_from(SEEDS).map(Path.read_bytes)
random_bytes = st.one_of(
    st.binary(max_size=300),
    odd_text.map(lambda s: s.encode("utf-8", "surrogatepass")),
    plain_text.map(str.encode),
)


def maybe_mutated(documents: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(documents, documents, documents, documents.flatmap(mutated))


summary_bytes = summary_text().map(lambda s: s.encode("utf-8", "surrogatepass"))
database_bytes = database_doc().flatmap(dumped).flatmap(wrapped)
spec_file_bytes = spec_file_doc().flatmap(dumped).flatmap(wrapped)
manifest_bytes = manifest_doc().flatmap(dumped).flatmap(wrapped)
any_document = maybe_mutated(
    st.one_of(
        summary_bytes,
        database_bytes,
        spec_file_bytes,
        manifest_bytes,
        seed_bytes,
        random_bytes,
        any_json.flatmap(dumped),
    )
)


# -- cases: files in the layouts the readers look for -----------------------------------------

# A case: (the file to read, relative to a directory; {relative path: bytes} to write there).
Case = tuple[str, dict[str, bytes]]


@st.composite
def summary_case(draw) -> Case:
    package = draw(st.sampled_from(["zlib", "py-numpy", "odd name", "x"]))
    entry = f"develop/{package}/specs.md"
    return entry, {entry: draw(maybe_mutated(summary_bytes))}


@st.composite
def database_case(draw) -> Case:
    entry = draw(st.sampled_from(["index.json", "build_cache/index.json", "whatever.bin"]))
    return entry, {entry: draw(maybe_mutated(database_bytes))}


@st.composite
def mirror_v3_case(draw) -> Case:
    """A v3 mirror root: the manifest, and the database blob it names (maybe missing, broken,
    or not where it says)."""
    entry = "v3/manifests/index/index.manifest.json"
    manifest = draw(manifest_doc())
    files = {entry: draw(maybe_mutated(dumped(manifest).flatmap(wrapped)))}
    records = manifest.get("data") if isinstance(manifest, dict) else None
    records = records if isinstance(records, list) else []
    checksum = next(
        (
            r.get("checksum")
            for r in records
            if isinstance(r, dict) and isinstance(r.get("checksum"), str)
        ),
        None,
    )
    if checksum and re.fullmatch(r"[0-9a-f]{8,128}", checksum) and draw(st.integers(0, 4)):
        files[f"blobs/sha256/{checksum[:2]}/{checksum}"] = draw(maybe_mutated(database_bytes))
    return entry, files


@st.composite
def spec_file_case(draw) -> Case:
    entry = draw(
        st.sampled_from(["zlib-1.3-abc.spec.json", "zlib-1.3-abc.spec.json.sig", "spec-0.json"])
    )
    return entry, {entry: draw(maybe_mutated(spec_file_bytes))}


@st.composite
def old_page_case(draw) -> Case:
    """An older cache.spack.io page and the spec files it lists (some missing, outside, broken)."""
    present = [f"spec-{i}.json" for i in range(draw(st.integers(0, 3)))]
    listed = present + draw(
        st.lists(
            st.sampled_from(
                [
                    "spec-9.json",
                    "../outside.json",
                    "/etc/hostname",
                    "sub",
                    "a\x00b",
                    "",
                    "spec-0.json",
                ]
            ),
            max_size=2,
        )
    )
    entry = "_cache/pkg/index.md"
    files = {
        entry: draw(summary_text(older=True, spec_files=listed)).encode("utf-8", "surrogatepass")
    }
    for name in present:
        files[f"_cache/pkg/{name}"] = draw(maybe_mutated(spec_file_bytes))
    files["_cache/outside.json"] = draw(spec_file_bytes)
    files["_cache/pkg/sub/keep"] = b""
    return entry, files


@st.composite
def anything_case(draw) -> Case:
    entry = draw(st.sampled_from(["a.json", "specs.md", "index.json.gz", "blob"]))
    return entry, {entry: draw(any_document)}


file_cases = st.one_of(
    summary_case(),
    database_case(),
    mirror_v3_case(),
    spec_file_case(),
    old_page_case(),
    anything_case(),
)


def write_case(directory: Path, case: Case) -> Path:
    entry, files = case
    for relative, data in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return directory / entry


# -- what every answer must satisfy ---------------------------------------------------------


def check_problems(problems: list[LoadProblem]) -> None:
    assert isinstance(problems, list)
    for problem in problems:
        assert isinstance(problem, LoadProblem)
        assert isinstance(problem.source, str) and problem.source.strip(), problem
        assert isinstance(problem.message, str) and problem.message.strip(), problem
        assert problem.severity in ("error", "warning"), problem


def rows_of(loaded: SummaryFile | DatabaseFile | None, origin=None) -> set[tuple[str, str]]:
    """(hash, tag) of every spec a reader lists, as the index will key them."""
    if isinstance(loaded, SummaryFile):
        return {(r.hash, loaded.tag) for r in loaded.records}
    if isinstance(loaded, DatabaseFile):
        tag = (origin.tag if origin is not None else None) or loaded.tag or UNTAGGED
        return {(loaded.hashes[i], tag) for i in loaded.listed}
    return set()


def check_loaded(loaded: Any, problems: list[LoadProblem]) -> None:
    """read_file's answer: what it holds (with well-formed specs) or None, and its problems."""
    check_problems(problems)
    if loaded is None:
        assert problems and any(p.severity == "error" for p in problems), (
            "nothing loaded, and no error says why"
        )
        return
    assert isinstance(loaded, (SummaryFile, DatabaseFile))
    if isinstance(loaded, SummaryFile):
        assert isinstance(loaded.package, str) and loaded.package.strip()
        assert isinstance(loaded.tag, str) and loaded.tag
        for record in loaded.records:
            assert HASH_RE.fullmatch(record.hash), record.hash
            assert (
                record.versions
                and isinstance(record.versions[0], str)
                and record.versions[0].strip()
            )
            for value in (record.os, record.platform, record.target):
                assert isinstance(value, str) and value.strip()
        for column, values in loaded.columns.items():
            assert len(values) == len(loaded.records), column
    else:
        n = len(loaded.hashes)
        for hash_ in loaded.hashes:
            assert HASH_RE.fullmatch(hash_), hash_
        for column in ("names", "versions", "compilers", "platforms", "oss", "targets", "variants"):
            assert len(getattr(loaded, column)) == n, column
        assert len(loaded.kinds) == len(loaded.compiler_sources) == n
        assert (
            len(loaded.edge_from)
            == len(loaded.edge_to)
            == len(loaded.edge_types)
            == len(loaded.edge_virtuals)
        )
        assert all(0 <= i < n for i in loaded.edge_from) and all(0 <= i < n for i in loaded.edge_to)
        assert all(
            isinstance(v, str)
            for column in ("names", "versions", "compilers")
            for v in getattr(loaded, column)
        )


def check_index(index: Index, expected_rows: set[tuple[str, str]] | None = None) -> None:
    """The index the app is given: every row readable, lookups and queries answer."""
    n = index.n_specs
    if expected_rows is not None:
        assert n == len(expected_rows), (n, len(expected_rows))
        assert {(index.hashes[r], index.field("tag", r)) for r in range(n)} == expected_rows
    assert len(index.hashes) == n and int(index.sizes_array.sum()) == n
    for row in range(n):
        spec = index.spec(row)
        assert HASH_RE.fullmatch(spec.hash), spec.hash
        assert row in index.lookup_hash(spec.hash[:3])
        assert index.package_name(row) == spec.package
    for row in range(min(n, 40)):
        deps = dependencies_of(index, row)
        if deps is not None:
            node = index.graph.node_of_row(row)
            reverse_tree(index.graph, node)
    everything = evaluate(index, Filter())
    assert everything.matching_specs == n and everything.matching_packages == index.n_packages
    for facet in FACETS:
        for value in index.facet_values[facet][:3]:
            result = evaluate(index, Filter.of("", {facet: {value}}))
            assert 0 < result.matching_specs <= n
    for name in index.packages[:3]:
        try:
            parse_query(name)  # (a name from the data need not be a valid query: `Á`, `a b`)
        except QueryError:
            continue
        evaluate(index, Filter(name))


# -- the readers, one at a time --------------------------------------------------------------


# Inputs this file found to crash a reader (reported with issue 6); tried first on every run.
H = "a" * 32
# Deeper than any recursion limit: hypothesis raises the limit while it runs a test (to about
# 2000 frames above the caller), so 1000 levels overflow in one run and not in another.
DEEP = "[" * 100_000 + "]" * 100_000
BAD_UTF8_DATABASE = (
    b'{"database": {"version": "8", "installs": {"%s": '
    b'{"spec": {"name": "zlib\xff", "version": "1.3"}, "in_buildcache": true}}}}' % H.encode()
)
BAD_UTF8_SPEC_FILE = (
    b'{"spec": {"_meta": {"version": 5}, '
    b'"nodes": [{"name": "zlib\xff", "version": "1.3", "hash": "%s"}]}}' % H.encode()
)
BAD_UTF8_MANIFEST = (
    b'{"version": 3, "data": [{"mediaType": "application/vnd.spack.db.v8+json\xff", '
    b'"checksumAlgorithm": "sha256", "checksum": "%s"}]}' % (b"ab" * 32)
)


@fuzz(200)
@example(case=("index.json", {"index.json": BAD_UTF8_DATABASE}))
@example(case=("x.spec.json", {"x.spec.json": BAD_UTF8_SPEC_FILE}))
@example(
    case=(
        "v3/manifests/index/index.manifest.json",
        {"v3/manifests/index/index.manifest.json": BAD_UTF8_MANIFEST},
    )
)
@given(case=file_cases)
def test_read_file_gives_specs_or_problems_and_the_index_holds_them(case: Case) -> None:
    """Any file: read_file never raises; what it lists goes through the columns and the index
    builder whole (the load pipeline without the walk), and queries on it answer."""
    with tempfile.TemporaryDirectory() as tmp:
        entry = write_case(Path(tmp), case)
        loaded, problems = read_file(str(entry))
        check_loaded(loaded, problems)
        if isinstance(loaded, DatabaseFile):
            assert loaded.claimed == [] or case[0].endswith("index.md")
        chunk = read_batch([str(entry)])
        index, duplicates = build_index([chunk])
        check_problems(duplicates)
        check_index(index, rows_of(loaded))


def as_read(text: str) -> str:
    """Text as read_file hands it over: decoded from UTF-8, so without lone surrogates (a
    surrogate escaped in JSON, `\\ud800`, stays as it is)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


@fuzz(200)
@example(text=f"---\ntitle: zlib\nmeta: {DEEP}\nspec_details: []\n---\n")
@given(
    text=st.one_of(
        summary_text(),
        summary_text(),
        summary_text(older=True, spec_files=["spec-0.json"]),
        odd_text,
        plain_text,
        any_document.map(lambda b: b.decode("utf-8", "replace")),
    ).map(as_read)
)
def test_read_summary_raises_only_not_a_summary_or_older_page(text: str) -> None:
    try:
        summary = read_summary(text, "src.md", fallback_package="fallback")
    except NotASummary as reason:
        assert str(reason).strip()
    except OlderPage as page:
        assert isinstance(page.front, dict) and isinstance(page.tag, str)
    else:
        check_loaded(summary, summary.problems)


@fuzz(120)
@example(data=BAD_UTF8_DATABASE)
@given(data=st.one_of(database_bytes, database_bytes, maybe_mutated(database_bytes), any_document))
def test_read_database_raises_only_not_a_database(data: bytes) -> None:
    try:
        db = read_database(data, "index.json")
    except NotADatabase as reason:
        assert str(reason).strip()
    else:
        check_loaded(db, db.problems)


@fuzz(150)
@example(data=BAD_UTF8_SPEC_FILE)
@given(
    data=st.one_of(spec_file_bytes, spec_file_bytes, maybe_mutated(spec_file_bytes), any_document)
)
def test_read_spec_file_raises_only_not_a_database(data: bytes) -> None:
    try:
        db = read_spec_file(data, "x.spec.json")
    except NotADatabase as reason:
        assert str(reason).strip()
    else:
        check_loaded(db, db.problems)


@fuzz(150)
@example(data=BAD_UTF8_MANIFEST)
@given(data=st.one_of(manifest_bytes, manifest_bytes, maybe_mutated(manifest_bytes), any_document))
def test_index_blob_of_raises_only_fetch_error_and_never_leaves_the_mirror(data: bytes) -> None:
    try:
        blob = index_blob_of(data, "index.manifest.json")
    except FetchError as error:
        assert error.url == "index.manifest.json" and error.reason.strip()
    else:
        assert re.fullmatch(r"blobs/[a-z0-9]+/[0-9a-f]{2}/[0-9a-f]{8,128}", blob), blob


@pytest.mark.parametrize(
    "reader, data, allowed",
    [
        (
            read_database,
            (
                f'{{"database": {{"version": "8", "installs": {{"{H}": '
                f'{{"spec": {{"name": "z", "version": "1", "parameters": {DEEP}}}}}}}}}}}'
            ).encode(),
            NotADatabase,
        ),
        (
            read_spec_file,
            f'{{"spec": {{"_meta": {{"version": 5}}, "nodes": [{DEEP}]}}}}'.encode(),
            NotADatabase,
        ),
        (index_blob_of, f'{{"version": 3, "data": {DEEP}}}'.encode(), FetchError),
        (read_summary, f"---\ntitle: zlib\nmeta: {DEEP}\nspec_details: []\n---\n", NotASummary),
    ],
    ids=["read_database", "read_spec_file", "index_blob_of", "read_summary-meta"],
)
def test_low_level_readers_say_when_data_is_nested_too_deeply(reader, data, allowed) -> None:
    """read_file and resolve catch a RecursionError; a reader called on its own should raise
    its own error, as read_summary already does for spec_details ("nested too deeply")."""
    with pytest.raises(allowed):
        reader(data, "src")


@st.composite
def gzip_bodies(draw) -> tuple[bytes, bytes | None]:
    """(file content, what read_body must return, or None when it may refuse it)."""
    payload = draw(
        st.one_of(st.binary(max_size=2000), st.binary(max_size=20).map(lambda b: b * 500))
    )
    how = draw(
        st.sampled_from(
            [
                "raw",
                "gzip",
                "members",
                "padded",
                "truncated",
                "corrupt",
                "trailing",
                "empty-gzip",
                "magic-only",
            ]
        )
    )
    if how == "raw":
        return payload, payload if payload[:2] != b"\x1f\x8b" else None
    if how == "gzip":
        return gzip.compress(payload, mtime=0), payload
    if how == "members":
        cut = draw(st.integers(0, len(payload)))
        return gzip.compress(payload[:cut], mtime=0) + gzip.compress(
            payload[cut:], mtime=0
        ), payload
    if how == "padded":
        return gzip.compress(payload, mtime=0) + b"\0" * draw(st.integers(1, 300000)), payload
    if how == "empty-gzip":
        return gzip.compress(b"", mtime=0), b""
    if how == "magic-only":
        return b"\x1f\x8b", None
    packed = gzip.compress(payload, mtime=0)
    if how == "truncated":
        return packed[: draw(st.integers(2, len(packed) - 1))], None
    if how == "corrupt":
        return draw(mutated(packed)), None
    return packed + draw(st.binary(min_size=1, max_size=20).filter(lambda b: b.strip(b"\0"))), None


@fuzz(250)
@given(body=gzip_bodies(), limit=st.one_of(st.integers(0, 3000), st.just(10**9)))
def test_read_body_raises_only_fetch_error(body: tuple[bytes, bytes | None], limit: int) -> None:
    data, expected = body
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "body"
        path.write_bytes(data)
        try:
            out = read_body(path, "the-source", limit)
        except FetchError as error:
            assert error.url == "the-source" and error.reason.strip()
            assert expected is None or len(expected) > limit
        else:
            assert len(out) <= limit
            if expected is not None:
                assert out == expected


@fuzz(100)
@given(
    data=st.one_of(
        any_document,
        any_document.map(clearsigned),
        st.binary(max_size=80).map(lambda b: b"  " + BEGIN + b),
    )
)
def test_strip_clearsign_never_raises(data: bytes) -> None:
    out = strip_clearsign(data)
    assert isinstance(out, bytes) and len(out) <= len(data)
    if not data.lstrip().startswith(BEGIN):
        assert out == data


# -- the whole pipeline --------------------------------------------------------------------

# Tag-map URLs that cannot reach a network: names in the tree, local absolute paths, file://,
# and URLs refused before any connection. No '/' in made-up names: nothing outside the tree.
local_names = odd_text.filter(
    lambda s: (
        "/" not in s and "\\" not in s and not s.startswith("~") and s.strip() not in ("..", "...")
    )
)
map_urls = st.one_of(
    st.sampled_from(
        [
            "s0",
            "s1",
            "s1/build_cache/index.json",
            "s2/v3/manifests/index/index.manifest.json",
            "s0/develop/zlib/specs.md",
            "s0/index.json",
            "cache_spack_io_index.json",
            ".",
            "missing.json",
            "s3://other-bucket/x/index.json",
            "http://host:99999/index.json",
            "https://[::1/x",
            "http:///nothing",
            "ftp://x/y",
            "gopher://x",
            "file:///nonexistent/index.json",
            "S3://other/x",
            "  s1  ",
            "",
        ]
    ),
    local_names,
    st.none(),
    ints,
)


MAP_ENTRY = record_of({"label": st.one_of(stack_names, st.none()), "url": map_urls})()


@st.composite
def tag_map(draw) -> bytes:
    mapping = draw(
        st.dictionaries(
            st.one_of(tags, st.just("develop")),
            st.one_of(st.lists(st.one_of(MAP_ENTRY, any_json), max_size=4), any_json),
            max_size=3,
        )
    )
    if draw(st.booleans()):  # file:// to a real place in the tree, filled in when written
        mapping.setdefault("develop", [])
        if isinstance(mapping["develop"], list):
            mapping["develop"].append({"label": "root", "url": "file://<tree>/s1"})
    return draw(maybe_mutated(dumped(mapping)))


@fuzz(50)
@example(
    cases=[
        ("index.json", {"index.json": BAD_UTF8_DATABASE}),
        (
            "develop/zlib/specs.md",
            {
                "develop/zlib/specs.md": (
                    SAMPLE_DATA / "develop" / "py-mpi4py" / "specs.md"
                ).read_bytes()
            },
        ),
    ],
    the_map=None,
)
@given(cases=st.lists(file_cases, min_size=1, max_size=4), the_map=st.one_of(st.none(), tag_map()))
def test_whole_pipeline_never_raises_and_counts_add_up(
    cases: list[Case], the_map: bytes | None
) -> None:
    """A tree of generated files (and maybe a tag map naming parts of it) through resolve,
    the readers, the index builder: no exception, every problem says where and why, and the
    index holds exactly the distinct (hash, tag) rows the readers listed (less the spec files
    an older page claimed)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        for i, case in enumerate(cases):
            write_case(tree / f"s{i}", case)
        sources = [str(tree)]
        if the_map is not None:
            path = tree / "cache_spack_io_index.json"
            path.write_bytes(the_map.replace(b"<tree>", str(tree).encode()))
            sources = [str(path), str(tree / "s0")]

        report = IndexService(sources, use_cache=False).load()

        check_problems(report.problems)
        resolved = resolve(sources, None)
        check_problems(resolved.problems)
        assert report.files == len(resolved.files)
        rows: dict[str, set[tuple[str, str]]] = {}
        claimed: set[str] = set()
        for file in resolved.files:
            loaded, problems = read_file(file.path, file.origin, file.shown_as)
            check_loaded(loaded, problems)
            rows.setdefault(file.shown_as or file.path, set()).update(rows_of(loaded, file.origin))
            if isinstance(loaded, DatabaseFile):
                claimed.update(loaded.claimed)
        expected = set().union(
            *(r for source, r in rows.items() if os.path.abspath(source) not in claimed)
        )
        check_index(report.index, expected)


@fuzz(15)
@example(cases=[("index.json", {"index.json": BAD_UTF8_DATABASE})])
@given(cases=st.lists(file_cases, min_size=1, max_size=3))
def test_on_disk_index_round_trip_of_odd_data(cases: list[Case]) -> None:
    """The app saves what it loaded and starts from that the next time: odd data (lone
    surrogates, control characters, huge numbers) must survive the snapshot, or be rebuilt."""
    with tempfile.TemporaryDirectory() as tmp:
        tree, cache = Path(tmp) / "tree", Path(tmp) / "cache"
        for i, case in enumerate(cases):
            write_case(tree / f"s{i}", case)
        first = IndexService([str(tree)], cache_dir=cache).load()
        second = IndexService([str(tree)], cache_dir=cache).load()
        check_problems(first.problems)
        check_problems(second.problems)
        assert second.index.n_specs == first.index.n_specs
        assert [second.index.spec(r) for r in range(second.index.n_specs)] == [
            first.index.spec(r) for r in range(first.index.n_specs)
        ]
        check_index(second.index)


# -- the query parser ------------------------------------------------------------------------

query_tokens = st.one_of(
    st.sampled_from(
        [
            "zlib",
            "py-numpy",
            "py-*",
            "*",
            "**",
            "a*b*c",
            "safet",
            "mpi4py",
            "ZLIB",
            "py",
            "x" * 40,
            "İ",
            "_",
            "1",
        ]
    ),
    st.from_regex(r"[A-Za-z0-9_*][A-Za-z0-9_\-.*]{0,8}", fullmatch=True),
    st.builds(
        "@{}".format,
        st.lists(
            st.sampled_from(
                [
                    "1.2",
                    "=1.2",
                    "1.2:",
                    ":2",
                    "1.0:2.0",
                    "2.0:1.0",
                    ":",
                    "develop",
                    "1:2:3",
                    "",
                    "=",
                    "a..b",
                    "9" * 60,
                    "0" * 5000 + "1",
                    "1.2-rc1",
                    "=",
                    "-1",
                ]
            ),
            min_size=1,
            max_size=3,
        ).map(",".join),
    ),
    st.builds(
        "%{}".format,
        st.sampled_from(
            [
                "gcc",
                "gcc@13",
                "gcc@13:",
                "apple-clang@16.0.0",
                "c,cxx=gcc@12:",
                "[virtuals=c] gcc",
                "%gcc",
                "[virtuals=c",
                "gcc@",
                "GCC@=11",
                "c=gcc",
                "*",
                "gcc@1,,2",
            ]
        ),
    ),
    st.sampled_from(["+mpi", "++mpi", "~cuda", "~~cuda", "-cuda", "--cuda", "+", "~", "-", "+-x"]),
    st.builds(
        "{}{}{}".format,
        st.sampled_from(
            [
                "os",
                "target",
                "arch",
                "architecture",
                "platform",
                "stack",
                "tag",
                "operating_system",
                "libs",
                "build_system",
                "cuda_arch",
                "ARCH",
                "Os",
                "mpi",
                "patches",
            ]
        ),
        st.sampled_from(["=", "==", ":="]),
        st.sampled_from(
            [
                "ubuntu22.04",
                "x86_64_v3",
                "linux-ubuntu22.04-x86_64_v3",
                "--",
                "a-b-c-d",
                "-",
                "",
                "true",
                "False",
                "x:y",
                "'quoted value'",
                '"x',
                "'",
                "shared,static",
                "a,,b",
                "develop/x",
                "root",
                "*",
            ]
        ),
    ),
    st.builds("/{}".format, st.text("abcdefghijklmnopqrstuvwxyz0123456789ABC", max_size=40)),
    st.sampled_from(
        ["/", "//", "/-", "^zlib", "^", "%", "@", "=", ":", ",", '"', "'", "\\", "[", "]"]
    ),
    odd_text,
)
queries = st.one_of(
    st.lists(
        st.tuples(query_tokens, st.sampled_from([" ", " ", "", "  ", "\t", "\n", "\u3000"])),
        max_size=6,
    ).map(lambda parts: "".join(token + space for token, space in parts)),
    st.text(any_char, max_size=30),
    st.text(st.sampled_from("abz09@%+~=/^:,. *-_'\"[]"), max_size=30),
)


@fuzz(1500)
@given(text=queries)
def test_parse_query_raises_only_query_error_with_a_place_in_the_text(text: str) -> None:
    try:
        query = parse_query(text)
    except QueryError as error:
        assert error.message.strip()
        assert 0 <= error.start < error.end and error.start <= len(text), (
            error.start,
            error.end,
            len(text),
        )
        error.pointer(text)
    else:
        assert query.text == text
        assert (
            isinstance(query.name_text, str)
            and isinstance(query.globs, tuple)
            and isinstance(query.has_constraints, bool)
        )
    highlight = highlight_for(text)
    for name in ("zlib", "py-numpy", "İstanbul", "a" * 50):
        highlight.name_spans(name)
    for variant in ("+mpi", "libs=shared,static", "=", "~"):
        highlight.spec.variant_matches(variant)


@fuzz(500)
@given(
    text=st.one_of(
        queries, st.text(any_char, max_size=60), st.text(B32.upper() + B32 + "/ -", max_size=80)
    )
)
def test_hash_prefixes_raise_only_hash_prefix_error(text: str) -> None:
    for parse in (normalise_hash_prefix, hash_prefix_in):
        try:
            prefix = parse(text)
        except HashPrefixError as error:
            assert str(error).strip()
        else:
            assert 1 <= len(prefix) <= 32 and re.fullmatch(r"[a-z0-9]+", prefix), prefix


@lru_cache(maxsize=1)
def small_index() -> Index:
    """The sample data and the local build-cache fixtures (not the tag map: it names s3://)."""
    sources = [str(SAMPLE_DATA)] + [
        str(p) for p in sorted(BUILDCACHE.iterdir()) if p.is_dir() and p.name != "tag-map"
    ]
    report = IndexService(sources, use_cache=False).load()
    assert report.index.n_specs > 20
    return report.index


@st.composite
def selections(draw) -> dict[str, set[str]]:
    index = small_index()
    chosen: dict[str, set[str]] = {}
    for facet in draw(st.lists(st.sampled_from(FACETS), max_size=3, unique=True)):
        known = index.facet_values[facet]
        values = draw(
            st.lists(
                st.one_of(st.sampled_from(known), odd_text) if known else odd_text,
                min_size=1,
                max_size=2,
            )
        )
        chosen[facet] = set(values)
    return chosen


@fuzz(500)
@given(text=queries, chosen=selections())
def test_evaluate_answers_every_query_that_parses(text: str, chosen: dict[str, set[str]]) -> None:
    try:
        parse_query(text)
    except QueryError:
        return
    index = small_index()
    result = evaluate(index, Filter.of(text, chosen))
    assert result.matching_specs == result.mask.bit_count()
    assert len(result.packages) == len(result.counts) == len(set(result.packages))
    assert all(0 <= p < index.n_packages for p in result.packages) and all(
        c > 0 for c in result.counts
    )
    assert set(result.facet_counts) == set(FACETS)
    assert re.fullmatch(r"\d+ of \d+ packages · \d+ of \d+ specs", result.status_text())
