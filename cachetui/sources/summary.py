"""Reader for cache.spack.io package summaries (spack-formats.md §5).

A summary is a Markdown file whose whole content is YAML front matter:
`title`, `categories: [package, <tag>]`, `meta: {json}`, `spec_details: [json]`.
The generator writes `meta` and `spec_details` as one line of JSON each, so we parse
those lines with `json` (fast: a whole develop checkout is ~10k files) and fall back to
`yaml.safe_load` for any front matter that is not in that shape.

The records themselves are summary_records.py's (the fast path's typed structs, and the
careful path's checks); the check of `meta` against them is summary_meta.py's.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Any, cast

import msgspec

from cachetui.model import LoadProblem
from cachetui.sources.summary_meta import _meta_disagreements
from cachetui.sources.summary_records import (
    _DECODE_RECORDS,
    HASH_RE,
    Record,
    _checked_records,
    _clean_hashes,
    _FastRecord,
    _type_name,
    size_of,
    tarball_of,
)

# (Record, HASH_RE, size_of and tarball_of are summary_records.py's, read through here.)
__all__ = [
    "BUILD_COLUMNS",
    "HASH_RE",
    "LIST_COLUMNS",
    "UNTAGGED",
    "NotASummary",
    "OlderPage",
    "Record",
    "SummaryFile",
    "load_yaml_safely",
    "read_summary",
    "read_summary_bytes",
    "size_of",
    "tarball_of",
]

_DECODE_STRINGS = msgspec.json.Decoder(tuple[str, ...])
LIST_COLUMNS = ("stacks", "variants")  # a tuple of strings a record
_RAW = "raw"  # marks a spec_details value kept as unparsed JSON text by the fast path
_JSON_KEYS = frozenset({"meta", "spec_details", "spec_files", "spec_names"})
_PLAIN_LIST_RE = re.compile(r"^\[([^\[\]{}\"']*)\]$")
UNTAGGED = "untagged"


class NotASummary(Exception):
    """The file is not a cache.spack.io package summary (or is broken beyond reading)."""


class OlderPage(Exception):
    """An older cache.spack.io page: its specs are in the `spec_files` it lists."""

    def __init__(self, front: dict[str, Any], tag: str) -> None:
        super().__init__("older cache.spack.io page")
        self.front, self.tag = front, tag


class _NeedYaml(Exception):
    """The fast path met YAML it does not handle."""


def load_yaml_safely(text: str) -> Any:
    """safe_load without aliases: Spack never writes them, and nested aliases are a YAML bomb.
    Imported here: only front matter the fast path cannot read needs YAML."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    "uses YAML aliases, which Spack and cache.spack.io never write "
                    "(refused: a possible YAML bomb)",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)

    return yaml.load(text, Loader=NoAliasLoader)


# A row's build: (version, compiler, platform, os, target). A file has a build for about
# every three specs, so the five are taken from each record in one pass, as one key, and
# checked and split into columns once per distinct key and column value (each column on its
# own cost a pass over the records, and a check of every value).
BUILD_COLUMNS = ("version", "compiler", "platform", "os", "target")
_BUILD_KEY = attrgetter("versions", "compiler", "platform", "os", "target")


@dataclass
class SummaryFile:
    package: str
    tag: str
    records: list[Any] = field(default_factory=list)  # Record, or _FastRecord (the fast path's)
    problems: list[LoadProblem] = field(default_factory=list)
    # A value per record: "build" ((versions, compiler, platform, os, target) as the record
    # writes them; the careful path's versions are the version), "stacks" and "variants" (a tuple
    # of strings, or from the fast path its JSON text as bytes, decoded in `decoded`).
    columns: dict[str, list[Any]] = field(default_factory=dict)
    distinct: dict[str, set[Any]] = field(default_factory=dict)  # column -> the set of its values
    decoded: dict[bytes, tuple[str, ...]] = field(default_factory=dict)
    hashes: list[str] = field(default_factory=list)

    def set_records(
        self,
        records: list[Any],
        columns: dict[str, list[Any]] | None = None,
        distinct: dict[str, set[Any]] | None = None,
        decoded: dict[bytes, tuple[str, ...]] | None = None,
    ) -> None:
        self.records = records
        self.hashes = list(map(attrgetter("hash"), records))
        self.columns = columns if columns is not None else _value_columns(records)
        self.distinct = (
            distinct if distinct is not None else {c: set(v) for c, v in self.columns.items()}
        )
        self.decoded = decoded or {}

    def strings(self, value: Any) -> tuple[str, ...]:
        """The strings of a stacks or variants value, however it is held."""
        return self.decoded[value] if isinstance(value, bytes) else value

    def values(self, column: str) -> set[Any]:
        """The distinct values of one of BUILD_COLUMNS in this file."""
        parts = self.__dict__.get("_parts")
        if parts is None:
            parts = self.__dict__["_parts"] = _build_parts(self.distinct["build"])
        return parts[BUILD_COLUMNS.index(column)]

    def stack_counts(self) -> dict[str, int]:
        """Specs per stack: each distinct stack list counted in C, then spread over its stacks."""
        counts: dict[str, int] = {}
        get, strings = counts.get, self.strings
        for stacks, n in Counter(self.columns["stacks"]).items():
            for stack in strings(stacks):
                counts[stack] = get(stack, 0) + n
        return counts


def _build_parts(keys: set[tuple]) -> list[set[Any]]:
    """The distinct values of each of BUILD_COLUMNS among build keys (C-level passes)."""
    parts = [set(column) for column in zip(*keys)] if keys else [set() for _ in BUILD_COLUMNS]
    parts[0] = {
        v[0] if isinstance(v, tuple) else v for v in parts[0]
    }  # versions: a few distinct tuples
    return parts


def _value_columns(records: list[Record]) -> dict[str, list[Any]]:
    return {
        "build": [(r.versions[0], r.compiler, r.platform, r.os, r.target) for r in records],
        **{c: list(map(attrgetter(c), records)) for c in LIST_COLUMNS},
    }


def _fast_columns(records: list[_FastRecord]) -> tuple[dict, dict, dict] | None:
    """(columns, distinct, decoded) when every record passes the bulk checks, else None."""
    if not _clean_hashes(records):
        return None
    columns: dict[str, list[Any]] = {
        "build": list(map(_BUILD_KEY, records)),
        **{c: list(map(bytes, map(attrgetter(c), records))) for c in LIST_COLUMNS},
    }
    distinct = {c: set(v) for c, v in columns.items()}
    versions, _, *arch = (
        set(map(itemgetter(at), distinct["build"])) for at in range(len(BUILD_COLUMNS))
    )
    if not all(v and v[0] and v[0] == v[0].strip() for v in versions):
        return None
    if not all(value and value == value.strip() for values in arch for value in values):
        return None
    decoded: dict[bytes, tuple[str, ...]] = {}
    try:
        for column in LIST_COLUMNS:
            known = _DECODED[column]
            for value in distinct[column]:
                strings = known.get(value)
                if strings is None:
                    if len(known) >= _DECODED_MOST:
                        known.clear()
                    strings = known[value] = _decode_list(column, value)
                decoded[value] = strings
    except msgspec.DecodeError:  # e.g. "stacks": null, or a list of numbers
        return None
    return columns, distinct, decoded


# Stack and variant lists already decoded by this process, by JSON text: files share most
# of them, and decoding each again costs more than the look-up. Bounded: hostile input
# can hold any number of distinct lists.
_DECODED: dict[str, dict[bytes, tuple[str, ...]]] = {column: {} for column in LIST_COLUMNS}
_DECODED_MOST = 100_000


def _decode_list(column: str, text: bytes) -> tuple[str, ...]:
    strings = _DECODE_STRINGS.decode(text)
    return (
        tuple(sorted(set(strings))) if column == "stacks" else strings
    )  # a spec's stacks are a set


def read_summary(text: str, source: str, fallback_package: str = "") -> SummaryFile:
    """Parse one summary. Raises NotASummary with a user-facing reason."""
    try:
        return _read_summary(text, source, fallback_package)
    except RecursionError:
        raise NotASummary("data is nested too deeply to read") from None


def read_summary_bytes(data: bytes, source: str, fallback_package: str = "") -> SummaryFile | None:
    """The common shape of a summary read straight from its bytes, or None for the text path.

    A summary is one long `spec_details` line and a few short ones. Decoding the whole file,
    splitting it into lines and stripping the long one copied it three times: here only the
    short lines are decoded, and msgspec reads `spec_details` where it lies. Any other shape
    (a byte-order mark, CRLF, keys after spec_details, YAML), and any fault at all, is left
    to read_summary, so that what it finds and says is the same either way."""
    if not data.startswith(b"---\n"):
        return None
    at = data.find(b"\nspec_details: [")
    end = data.find(b"\n", at + 1) if at >= 0 else -1
    if end < 0:
        return None
    close, _, after = data[end + 1 :].partition(b"\n")
    if close.rstrip() not in (b"---", b"..."):
        return None
    try:
        lines = data[4:at].decode("utf-8").split("\n")
        after.decode("utf-8")  # (the text path decodes the whole file: so must this one)
        if any(line.rstrip() in ("---", "...") for line in lines):
            return None
        front = _fast_front_matter(lines)
        while end > at and data[end - 1] in b" \t\r":
            end -= 1
        start = at + len(b"\nspec_details: ")
        if "spec_details" in front:
            return None
        front["spec_details"] = (_RAW, memoryview(data)[start:end])
        return _summary_from(front, source, fallback_package)
    except (_NeedYaml, NotASummary, OlderPage, UnicodeDecodeError, RecursionError, ValueError):
        return None


def _read_summary(text: str, source: str, fallback_package: str) -> SummaryFile:
    return _summary_from(_parse_front_matter(text), source, fallback_package)


def _summary_from(front: dict[str, Any], source: str, fallback_package: str) -> SummaryFile:
    details = front.get("spec_details")
    records: list[_FastRecord] | None = None
    raw: str | memoryview | None = None
    if isinstance(details, tuple) and details[0] is _RAW:
        raw = details[1]
        records, details = _decode_records(raw)
    if details is None:
        if "spec_files" in front or "spec_names" in front:
            raise OlderPage(front, _tag_from(front))
        if "meta" in front:
            raise NotASummary("front matter has meta but no spec_details")
        raise NotASummary("not a cache.spack.io package summary: front matter has no spec_details")
    if not isinstance(details, list):
        raise NotASummary(f"spec_details should be a list, found {_type_name(details)}")

    problems: list[LoadProblem] = []
    package = front.get("title")
    if not isinstance(package, str) or not package.strip():
        if not fallback_package:
            raise NotASummary("front matter has no title (the package name)")
        package = fallback_package
        problems.append(
            LoadProblem(
                source, f"no title; package name {package!r} taken from the directory", "warning"
            )
        )
    package = package.strip()
    tag = _tag_from(front)

    summary = SummaryFile(package=package, tag=tag, problems=problems)
    fast = _fast_columns(records) if records is not None else None
    if fast is not None:  # the fast path: typed by msgspec, checked in bulk
        assert records is not None  # (fast was worked out from them)
        summary.set_records(records, *fast)
    else:  # the careful path, from the plain JSON: each record on its own
        summary.set_records(
            _checked_records(
                # (records were decoded from raw: it is text when not a memoryview)
                json.loads(bytes(raw) if isinstance(raw, memoryview) else cast(str, raw))
                if records is not None
                else details,
                source,
                problems,
            )
        )

    meta = front.get("meta")
    if isinstance(meta, dict):
        problems.extend(
            LoadProblem(source, msg, "warning") for msg in _meta_disagreements(meta, summary)
        )
    elif meta is not None:
        problems.append(
            LoadProblem(
                source, f"meta should be a mapping, found {_type_name(meta)}; ignored", "warning"
            )
        )
    return summary


# -- front matter ---------------------------------------------------------------------


def _parse_front_matter(text: str) -> dict[str, Any]:
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise NotASummary(
            "neither a cache.spack.io package summary (no YAML front matter) "
            "nor a Spack build-cache index (not JSON)"
        )
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        raise NotASummary("front matter is not closed by a '---' line (truncated file?)")
    block = lines[1:end]
    try:
        return _fast_front_matter(block)
    except _NeedYaml as fast_failure:
        try:
            front = load_yaml_safely("\n".join(block))
        except Exception as error:  # yaml.YAMLError, without importing yaml up front
            detail = str(fast_failure) or _one_line(error)
            raise NotASummary(f"front matter is not valid YAML: {detail}") from None
        if not isinstance(front, dict):
            raise NotASummary(
                f"front matter should be a mapping, found {_type_name(front)}"
            ) from None  # the fast path's _NeedYaml is not the cause: kept out of the traceback
        return front


def _fast_front_matter(block: list[str]) -> dict[str, Any]:
    """`key: value` lines, JSON values for the generator's keys; anything else -> YAML."""
    front: dict[str, Any] = {}
    for number, line in enumerate(block, start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t-":
            raise _NeedYaml()
        key, sep, value = line.partition(":")
        if not sep or not key or key != key.strip():
            raise _NeedYaml()
        value = value.strip()
        if key == "spec_details" and value[:1] == "[":
            front[key] = (_RAW, value)  # decoded later, straight into typed records
        elif key in _JSON_KEYS and value[:1] in ("{", "["):
            try:
                front[key] = _json_value(value)
            except json.JSONDecodeError as error:
                raise _NeedYaml(f"line {number} ({key}): invalid JSON: {error}") from None
        elif value.startswith('"'):
            try:
                front[key] = _json_value(value)
            except json.JSONDecodeError:
                raise _NeedYaml() from None
        elif value.startswith("["):
            match = _PLAIN_LIST_RE.match(value)
            if not match:
                raise _NeedYaml()
            front[key] = [item.strip() for item in match.group(1).split(",") if item.strip()]
        elif value[:1] in ("{", "'", "|", ">", "&", "*", "!"):
            raise _NeedYaml()
        else:
            front[key] = value
    return front


def _json_value(text: str) -> Any:
    """msgspec first (several times faster on a summary's meta), json for what only it takes
    (NaN, Infinity) and for its error messages."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return json.loads(text)


def _tag_from(front: dict[str, Any]) -> str:
    categories = front.get("categories")
    if isinstance(categories, str):
        categories = [categories]
    if isinstance(categories, list):
        for category in categories:
            if isinstance(category, str) and category.strip() and category.strip() != "package":
                return category.strip()
    return UNTAGGED


# -- records --------------------------------------------------------------------------


def _decode_records(raw: str | memoryview) -> tuple[list[_FastRecord] | None, Any]:
    """(typed records or None, the decoded value): msgspec decodes and type-checks every
    record in C; on a type mismatch the plain JSON goes to the careful path."""
    try:
        records = _DECODE_RECORDS.decode(raw)
        return records, records
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError as error:
        raise NotASummary(f"spec_details: invalid JSON ({error})") from None
    try:
        return None, json.loads(bytes(raw) if isinstance(raw, memoryview) else raw)
    except RecursionError:
        raise NotASummary("spec_details: data is nested too deeply to read") from None
    except json.JSONDecodeError as error:
        raise NotASummary(f"spec_details: invalid JSON ({error})") from None


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
