"""Hash prefixes as users type them: `/abc12`, `ABC12`, `abc12`.

No numpy here: the app checks what is typed in the search box before any index exists.
"""

from __future__ import annotations

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
