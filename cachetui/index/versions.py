"""Ordering of version strings, newest first in lists."""

from __future__ import annotations

import re
from functools import lru_cache

_PART = re.compile(r"(\d+|[a-zA-Z]+)")
# Spack treats these as newer than any numbered release.
_INFINITY = {"develop": 4, "main": 3, "master": 2, "head": 1, "trunk": 1}


@lru_cache(maxsize=1 << 16)  # a query compares each distinct version with its bounds, keystroke after keystroke
def version_key(version: str) -> tuple:
    """A sort key that orders `1.10` after `1.9` and `develop` after every number."""
    infinity = _INFINITY.get(version.lower(), 0)
    parts = tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in _PART.findall(version))
    return (infinity, parts)
