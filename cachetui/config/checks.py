"""Checking a config file's values, one key each: the value to use, or why it is unusable.

A check raises `BadValue` when the whole value is unusable (the default is kept), and
`report`s the items it skips inside a value that is otherwise usable.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from cachetui.config.settings import COLORS
from cachetui.config.toml_text import shown


class BadValue(Exception):
    """A value unusable as a whole: the message says what it must be."""


Report = Callable[[str], None]


def check_sources(raw: object, report: Report) -> list[str]:
    if isinstance(raw, str):  # one source written without the brackets: clear enough
        raw = [raw]
    if not isinstance(raw, list):
        raise BadValue(f"must be a list of strings, not {shown(raw)}")
    sources = []
    for number, item in enumerate(raw, 1):
        if isinstance(item, str) and item.strip():
            # Only a leading "~" is expanded, which no URL has: URLs pass through as written.
            sources.append(os.path.expanduser(item))
        else:
            # Skip just this one: the other sources are still worth opening.
            report(
                f"key 'sources': item {number} must be a non-empty string, "
                f"not {shown(item)}; skipped"
            )
    return sources


def check_env(raw: object, report: Report) -> str:
    """A spack.lock, an environment directory, a spec file or an install database."""
    if not isinstance(raw, str) or not raw.strip():
        raise BadValue(f"must be a non-empty string (a path), not {shown(raw)}")
    return os.path.expanduser(raw)


def check_theme(raw: object, report: Report) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise BadValue(f"must be a non-empty string, not {shown(raw)}")
    return raw


def check_color(raw: object, report: Report) -> str:
    # `color = 256` without quotes means the obvious thing; so does "TrueColor".
    value = str(raw) if type(raw) is int and raw == 256 else raw
    if isinstance(value, str) and value.strip().lower() in COLORS:
        return value.strip().lower()
    raise BadValue(f"must be one of {', '.join(COLORS)}, not {shown(raw)}")


def check_mouse(raw: object, report: Report) -> bool:
    if not isinstance(raw, bool):
        raise BadValue(f"must be true or false, not {shown(raw)}")
    return raw


def check_pager(raw: object, report: Report) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise BadValue(f"must be a non-empty string (a shell command), not {shown(raw)}")
    return raw
