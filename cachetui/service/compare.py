"""Comparing two cache tags (or two sources): the sides, and each comparison worked out once
per index and kept, so that going back to a diff is instant. Shared by the app's compare
screen and `cachetui diff`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

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
        self._index: Index | None = None
        self._done: dict[tuple[str, str], TagDiff] = {}
        self._lock = threading.Lock()

    def known(self, index: Index, old: str, new: str) -> TagDiff | None:
        """The diff of `old` -> `new` if it was worked out for this index."""
        with self._lock:
            return self._done.get((old, new)) if index is self._index else None

    def compare(self, index: Index, old: str, new: str) -> TagDiff:
        """Work out (or recall) what changed from tag `old` to tag `new`. Raises NotATag."""
        from cachetui.index.diff import diff

        found = self.known(index, old, new)
        if found is not None:
            return found
        changes = diff(tag_side(index, old), tag_side(index, new))
        with self._lock:
            if index is not self._index:  # a new index: the old diffs describe nothing loaded
                self._index, self._done = index, {}
            self._done[(old, new)] = changes
        return changes
