"""Values from the config file written back as TOML: in full for `cachetui config`, and
quoted, escaped and shortened where a warning echoes a bad key or value."""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from datetime import date, datetime, time

from cachetui.textsafe import visible

# Bad values are echoed in messages; a line of terminal is enough to recognise them.
_SHOWN = 60
_BARE_TOML_KEY = re.compile(r"[A-Za-z0-9_-]+")


def quoted_name(text: str) -> str:
    """A key or id from the file, quoted, escaped and short enough to read."""
    return f"'{_shorten(visible(text[: _SHOWN * 2]))}'"


def suggestion(word: str, candidates: Collection[str]) -> str:
    close = difflib.get_close_matches(word[: _SHOWN * 2], list(candidates), n=1)
    return f" (did you mean {quoted_name(close[0])}?)" if close else ""


def shown(value: object) -> str:
    """A bad value as the user wrote it (near enough), escaped and shortened."""
    return _shorten(visible(as_toml(value, brief=True)))


def _shorten(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def as_toml(value: object, brief: bool = False, depth: int = 0) -> str:
    """`value` written as TOML. `brief`: only as much as a message shows, whatever its size."""
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value[: _SHOWN * 2] if brief else value
        # Quotes and backslashes escaped as TOML does; control characters are left for
        # `visible`, so they read the same here as everywhere else in cachetui.
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (int, float)):
        return repr(value)  # TOML spells inf and nan as Python does
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if brief and depth >= 3:  # a hostile file can nest thousands deep
        return "…"
    if isinstance(value, list):
        items = value[:_SHOWN] if brief else value
        more = ", …" if len(items) < len(value) else ""
        return "[" + ", ".join(as_toml(item, brief, depth + 1) for item in items) + more + "]"
    if isinstance(value, dict):
        pairs = list(value.items())
        shown = pairs[:_SHOWN] if brief else pairs
        more = ", …" if len(shown) < len(pairs) else ""
        return (
            "{"
            + ", ".join(
                f"{toml_key(k[:_SHOWN] if brief else k)} = {as_toml(v, brief, depth + 1)}"
                for k, v in shown
            )
            + more
            + "}"
        )
    return repr(value)


def toml_key(key: str) -> str:
    return key if _BARE_TOML_KEY.fullmatch(key) else as_toml(key)
