"""Hash prefixes as users type them: `/abc12`, `ABC12`, `abc12`.

No numpy here: the app checks what is typed in the search box before any index exists.
"""

from __future__ import annotations

import re

_HASH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class HashPrefixError(ValueError):
    """A hash prefix that cannot match anything by its form (empty, too long, bad characters)."""


def normalise_hash_prefix(text: str) -> str:
    prefix = text.strip().lstrip("/").lower()
    if not prefix:
        raise HashPrefixError("a hash prefix needs 1 to 32 characters")
    if len(prefix) > 32:
        raise HashPrefixError(f"a hash has 32 characters; {len(prefix)} given")
    if not set(prefix) <= _HASH_CHARS:
        raise HashPrefixError("a hash prefix has only letters and digits")
    return prefix


# A whole Spack hash inside other text: base32 (a-z, 2-7), 32 long, not part of a longer word.
_FULL_HASH_IN_TEXT = re.compile(r"(?<![a-z0-9])[a-z2-7]{32}(?![a-z0-9])")


def hash_prefix_in(text: str) -> str:
    """The hash prefix in what was typed or pasted: a prefix (`/abc12`, `ABC12`), or else the
    last full hash in a line of a log or an install path (`zlib-1.3.1-2feova4…/lib`).

    Raises HashPrefixError, for the text as a prefix, when neither is there.
    """
    try:
        return normalise_hash_prefix(text)
    except HashPrefixError:
        found = _FULL_HASH_IN_TEXT.findall(text.lower())
        if found:
            return found[-1]
        raise
