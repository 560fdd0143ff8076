"""The search language's tokens: the pattern that cuts typed text into them, the virtuals
a `%` or `^` sigil names, and what a key=value token asks (a field, an arch or a variant).
"""

from __future__ import annotations

import re

from cachetui.index.query_terms import QueryError, Variant

FIELD_KEYS = {
    "platform": "platform",
    "os": "os",
    "operating_system": "os",
    "target": "target",
    "stack": "stack",
    "tag": "tag",
    "kind": "kind",
}
# Properties of a binary's listing, not of a node: they bind to the root wherever they stand.
_LISTING_FIELDS = frozenset({"stack", "tag", "kind"})
_ARCH_KEYS = ("arch", "architecture")
_NAME = r"[A-Za-z0-9_*][A-Za-z0-9_\-.*]*"
TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<hash>/+[A-Za-z0-9_]*)
  | (?P<version>@[^\s%^/@~+]*)
  | (?P<sigil>(?:\^|%%?)\s*(?:\[[^\]]*\]\s*)?
        (?:[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*\s*=(?!=)\s*)?)
  | (?P<on>\+\+?[A-Za-z0-9_][A-Za-z0-9_\-.]*)
  | (?P<off>(?:~~?|--?)[A-Za-z0-9_][A-Za-z0-9_\-.]*)
  | (?P<keyvalue>[A-Za-z0-9_][A-Za-z0-9_\-]*(?:==|:=|=)(?:"[^"]*"|'[^']*'|[^\s%^@]*))
  | (?P<name>"""
    + _NAME
    + r""")
    """,
    re.VERBOSE,
)


def sigil_virtuals(sigil: str) -> tuple[str, ...]:
    """`%c,cxx=`: the virtuals an edge must provide; `%[virtuals=c]` the same."""
    body = sigil.lstrip("^%").strip()
    virtuals: list[str] = []
    if body.startswith("["):
        inside, _, body = body[1:].partition("]")
        for item in inside.split():
            key, _, value = item.partition("=")
            if key == "virtuals":
                virtuals.extend(v for v in value.split(",") if v)
        body = body.strip()
    if body.endswith("="):
        virtuals.extend(v.strip() for v in body[:-1].split(",") if v.strip())
    return tuple(virtuals)


def _field(name: str, value: str, at: int, fields: list[tuple[str, str]]) -> None:
    if name == "target" and (":" in value or "," in value):
        from cachetui.index.targets import TargetRangeError, check_target_range

        try:
            check_target_range(value)
        except TargetRangeError as error:
            raise QueryError(str(error), at, at + len(value)) from None
    fields.append((name, value))


def add_key_value(
    token: str, start: int, variants: list[Variant], fields: list[tuple[str, str]]
) -> str:
    """Adds the token's constraint; says which kind it was ("arch", "field", "listing" for
    stack= and tag=, "variant")."""
    key, operator, value = re.split(r"(==|:=|=)", token, maxsplit=1)
    at = start + len(token) - len(value)  # where the value starts in the query
    if value[:1] in ("'", '"'):
        if len(value) < 2 or value[-1] != value[0]:
            raise QueryError(f"the quote {value[0]} is not closed", at, at + len(value))
        value, at = value[1:-1], at + 1
    lowered = key.lower()
    if lowered in _ARCH_KEYS:
        parts = value.split("-")
        if len(parts) == 1:  # as Spack reads it: arch=x86_64_v3 names a target
            parts = ["", "", value]
        if len(parts) != 3:
            raise QueryError(
                "arch is platform-os-target (parts may be empty) or a target", at, at + len(value)
            )
        offset = at
        for name, part in zip(("platform", "os", "target"), parts):
            if part:
                _field(name, part, offset, fields)
            offset += len(part) + 1
        return "arch"
    if lowered in FIELD_KEYS:
        if not value:
            raise QueryError(f"{key}= needs a value", start, start + len(token))
        _field(FIELD_KEYS[lowered], value, at, fields)
        return "listing" if FIELD_KEYS[lowered] in _LISTING_FIELDS else "field"
    if not value:
        raise QueryError(f"{key}= needs a value", start, start + len(token))
    values = value.split(",")
    if "" in values:
        raise QueryError("an empty value in the list", at, at + len(value))
    lowered_values = {v.lower() for v in values}
    if lowered_values <= {"true", "false"} and len(values) == 1:
        values = [values[0].lower()]  # mpi=True is +mpi
    variants.append(Variant(key, frozenset(values), exact=operator == ":="))
    return "variant"
