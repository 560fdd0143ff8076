"""Strings and lists of ids kept in arrays, decoded only when read.

A table of a million strings as Python objects costs about 100 MB and a second to build
at every start; as one UTF-8 blob and an array of offsets it costs its bytes, maps
straight from the on-disk index, and a string is made only when something reads it (a
row shown, exported or printed).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

# Stands for None: the byte 0xFF never occurs in UTF-8 (surrogates passed through included).
_NONE = b"\xff"


def _decode(raw: Any) -> str | None:
    if len(raw) == 1 and raw[0] == 0xFF:
        return None
    try:
        return str(raw, "utf-8", "surrogatepass")
    except UnicodeDecodeError:  # only a tampered file gets here: show it, never crash on it
        return str(raw, "utf-8", "replace")


class StringTable(Sequence["str | None"]):
    """`table[i]`: the i-th string (or None), decoded from `blob[offsets[i]:offsets[i + 1]]`."""

    __slots__ = ("offsets", "blob")

    def __init__(self, offsets: np.ndarray, blob: bytes | memoryview) -> None:
        self.offsets = offsets
        self.blob = blob

    @classmethod
    def of(cls, values: Iterable[str | None]) -> StringTable:
        encoded = [_NONE if v is None else v.encode("utf-8", "surrogatepass") for v in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            np.cumsum(
                np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:]
            )
        return cls(offsets, b"".join(encoded))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, item: int) -> str | None: ...
    @overload
    def __getitem__(self, item: slice) -> list[str | None]: ...

    def __getitem__(self, item):
        if isinstance(item, slice):
            return self.take(range(*item.indices(len(self))))
        item = int(item)
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        return _decode(self.blob[int(self.offsets[item]) : int(self.offsets[item + 1])])

    def __iter__(self) -> Iterator[str | None]:
        return iter(self.take(range(len(self))))

    def take(self, items: Iterable[int]) -> list[str | None]:
        """Several strings at once (one conversion of the offsets, not one per string)."""
        offsets, blob = self.offsets, self.blob
        items = list(items)
        starts = offsets[items].tolist() if items else []
        ends = offsets[np.asarray(items, dtype=np.int64) + 1].tolist() if items else []
        return [_decode(blob[a:b]) for a, b in zip(starts, ends)]

    def longest(self) -> int:
        """The most bytes any string has: its width in cells at most, for ASCII exactly."""
        return int(np.diff(self.offsets).max()) if len(self) else 0

    def check(self) -> None:
        """ValueError unless the offsets lie in order inside the blob (a file read from disk)."""
        offsets = self.offsets
        if (
            offsets.ndim != 1
            or len(offsets) < 1
            or int(offsets[0]) != 0
            or int(offsets[-1]) != len(self.blob)
        ):
            raise ValueError("string table bounds")
        if len(offsets) > 1 and (np.diff(offsets) < 0).any():
            raise ValueError("string table order")


class Ragged(Sequence[np.ndarray]):
    """Lists of ints in two arrays: list i is `values[offsets[i]:offsets[i + 1]]`."""

    __slots__ = ("offsets", "values")

    def __init__(self, offsets: np.ndarray, values: np.ndarray) -> None:
        self.offsets = offsets
        self.values = values

    @classmethod
    def of(cls, lists: Sequence[Sequence[int]], dtype: Any = np.int32) -> Ragged:
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        if lists:
            np.cumsum(
                np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=offsets[1:]
            )
        values = np.fromiter(
            (v for items in lists for v in items), dtype=dtype, count=int(offsets[-1])
        )
        return cls(offsets, values)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, item):
        item = int(item)
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError(item)
        return self.values[int(self.offsets[item]) : int(self.offsets[item + 1])]

    def tolists(self) -> list[list[int]]:
        values, bounds = self.values.tolist(), self.offsets.tolist()
        return [values[a:b] for a, b in zip(bounds, bounds[1:])]

    def check(self, limit: int) -> None:
        """ValueError unless the offsets lie in order and every value is in range(limit)."""
        offsets, values = self.offsets, self.values
        if (
            offsets.ndim != 1
            or len(offsets) < 1
            or int(offsets[0]) != 0
            or int(offsets[-1]) != len(values)
        ):
            raise ValueError("list bounds")
        if len(offsets) > 1 and (np.diff(offsets) < 0).any():
            raise ValueError("list order")
        if len(values) and (int(values.min()) < 0 or int(values.max()) >= limit):
            raise ValueError("list values out of range")
