"""Ordering of version strings, newest first in lists."""

from __future__ import annotations

import re
from functools import lru_cache

_PART = re.compile(r"([0-9]+|[a-zA-Z]+)")
# Spack treats these as newer than any numbered release.
_INFINITY = {"develop": 4, "main": 3, "master": 2, "head": 1, "trunk": 1}


@lru_cache(
    maxsize=1 << 16
)  # a query compares each distinct version with its bounds, keystroke after keystroke
def version_key(version: str) -> tuple:
    """A sort key that orders `1.10` after `1.9` and `develop` after every number."""
    infinity = _INFINITY.get(version.lower(), 0)
    return (infinity, tuple(map(_part_key, _PART.findall(version))))


def _part_key(part: str) -> tuple:
    # Numbers compare by value without int(): a version pasted with thousands of digits
    # would exceed Python's int-from-string limit. Digits of equal length compare as text.
    if part[0].isdigit():
        digits = part.lstrip("0") or "0"
        return (1, len(digits), digits)
    return (0, 0, part)
