"""A cache.spack.io summary's `spec_details` records: as msgspec decodes them on the fast
path (typed, in C, checked in bulk), and as the careful path checks them one at a time, with
a problem per kind of fault."""

from __future__ import annotations

import re
from collections import Counter
from operator import attrgetter
from typing import Annotated, Any

import msgspec

from cachetui.model import LoadProblem

HASH_RE = re.compile(r"^[a-z2-7]{32}$")
_BASE32_RUN = re.compile(r"[a-z2-7]*")


class _SpecFields(msgspec.Struct, gc=False):
    """What every `spec_details` entry holds but its hash, versions, stacks and variants.

    gc=False: a million of these are created during a load and hold no cycles.
    """

    os: str
    platform: str
    target: str
    compiler: str | None = None
    size: int | str | None = None
    tarball: str | None = None


class Record(_SpecFields, gc=False, kw_only=True):
    """One `spec_details` entry, validated and normalised (the careful path's)."""

    hash: str
    versions: list[str]
    stacks: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()


class _FastRecord(_SpecFields, gc=False, kw_only=True):
    """A `spec_details` entry as the fast path decodes it (typed, in C): stacks and variants
    stay JSON text, versions a tuple (so that a row's build is one hashable key), and the
    hash is checked to be 32 characters by msgspec (its alphabet, a regex over all of them).

    Most specs of a file share a few stack lists and variant lists. Kept as bytes, each is
    hashed once (bytes cache their hash; tuples hash every item on every look-up) and
    decoded once per distinct value rather than once per spec: about a tenth of the read.
    """

    hash: Annotated[str, msgspec.Meta(min_length=32, max_length=32)]
    versions: tuple[str, ...]
    stacks: msgspec.Raw = msgspec.Raw(b"[]")
    variants: msgspec.Raw = msgspec.Raw(b"[]")


_DECODE_RECORDS = msgspec.json.Decoder(list[_FastRecord])


def _clean_hashes(records: list[_FastRecord]) -> bool:
    """Bulk checks, so that the common case never runs per-record Python validation: each hash
    is 32 characters (msgspec checked that), all of them base32."""
    return _BASE32_RUN.fullmatch("".join(map(attrgetter("hash"), records))) is not None


def _checked_records(details: list[Any], source: str, problems: list[LoadProblem]) -> list[Record]:
    """The careful path: each record on its own, with a problem per kind of fault."""
    out: list[Record] = []
    skipped: Counter[str] = Counter()
    for position, record in enumerate(details, start=1):
        try:
            out.append(_record_from(record))
        except ValueError as reason:
            skipped[str(reason)] += 1
            if skipped[str(reason)] == 1:
                problems.append(
                    LoadProblem(source, f"spec_details record {position} skipped: {reason}")
                )
    for why, count in skipped.items():
        if count > 1:
            problems.append(LoadProblem(source, f"{count - 1} more records skipped: {why}"))
    return out


def _record_from(record: Any) -> Record:
    if not isinstance(record, dict):
        raise ValueError(f"a record should be a mapping, found {_type_name(record)}")
    digest = record.get("hash")
    if not isinstance(digest, str):
        raise ValueError("missing 'hash'" if digest is None else "'hash' is not a string")
    digest = digest.strip().lower()
    if not HASH_RE.match(digest):
        raise ValueError("'hash' is not 32 base32 characters")
    version = record.get("versions", record.get("version"))
    if isinstance(version, list) and len(version) >= 1:
        version = version[0]
    if version is None or version == [] or (isinstance(version, str) and not version.strip()):
        raise ValueError("missing 'versions'")
    if not isinstance(version, str):
        raise ValueError("'versions' should be a list of strings")
    compiler = record.get("compiler")
    if compiler is not None and not isinstance(compiler, str):
        raise ValueError("'compiler' is not a string")
    # Any: each is checked to be a non-empty str just below
    arch: list[Any] = [record.get(key) for key in ("platform", "os", "target")]
    for key, value in zip(("platform", "os", "target"), arch):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"missing '{key}'")
    return Record(
        hash=digest,
        versions=[version.strip()],
        platform=arch[0].strip(),
        os=arch[1].strip(),
        target=arch[2].strip(),
        compiler=compiler,
        variants=_strings(record.get("variants"), "variants"),
        stacks=tuple(sorted(set(_strings(record.get("stacks"), "stacks")))),
        size=record.get("size") if isinstance(record.get("size"), (int, str)) else None,
        tarball=record.get("tarball") if isinstance(record.get("tarball"), str) else None,
    )


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError(f"'{key}' should be a list of strings")


def size_of(value: Any) -> int | None:
    """Bytes, or None when unknown. Always "-" in summaries so far (the generator's
    binary_size() is a TODO); an int means bytes. Sizes are kept in 64-bit columns: a number
    past any real file (2**62 bytes) is not a size."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 62:
        return value
    return None


def tarball_of(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", type(None): "nothing"}.get(
        type(value), type(value).__name__
    )
