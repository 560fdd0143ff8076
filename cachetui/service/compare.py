"""Comparing two cache tags (or two sources): the sides, and each comparison worked out once
per index and kept, so that going back to a diff is instant. Shared by the app's compare
screen and `cachetui diff`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from cachetui.index.diff import Side, TagDiff
    from cachetui.index.store import Index


class NotATag(ValueError):
    """A name that is not a cache tag among the loaded sources; str() says which tags are."""


def tag_side(index: Index, tag: str) -> Side:
    """The rows of one cache tag, as a side of a comparison. Raises NotATag."""
    from cachetui.index.diff import Side

    tags = index.facet_values.get("tag", [])
    if tag not in tags:
        raise NotATag(", ".join(tags))
    return Side(tag, index, index.rows_in(index.facet_bits["tag"][tags.index(tag)]))


def whole_side(name: str, index: Index) -> Side:
    """Everything an index holds, as a side named by its one tag (else by `name`)."""
    from cachetui.index.diff import Side

    tags = index.facet_values.get("tag", [])
    return Side(tags[0] if len(tags) == 1 else name, index, list(range(index.n_specs)))


class TagComparisons:
    """Tag diffs of one index, each worked out once (in a worker: `compare` is thread-safe)."""

    def __init__(self) -> None:
        # Per index (a reload is a new one; a worker still busy with the old one stores
        # there, where nothing looks), each dropped with its index.
        self._done: WeakKeyDictionary[Index, dict[tuple[str, str], TagDiff]] = WeakKeyDictionary()
        self._lock = threading.Lock()

    def known(self, index: Index, old: str, new: str) -> TagDiff | None:
        """The diff of `old` -> `new` if it was worked out for this index."""
        with self._lock:
            return self._done.get(index, {}).get((old, new))

    def compare(self, index: Index, old: str, new: str) -> TagDiff:
        """Work out (or recall) what changed from tag `old` to tag `new`. Raises NotATag."""
        from cachetui.index.diff import diff

        found = self.known(index, old, new)
        if found is not None:
            return found
        changes = diff(tag_side(index, old), tag_side(index, new))
        with self._lock:
            self._done.setdefault(index, {})[(old, new)] = changes
        return changes
