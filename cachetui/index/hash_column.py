"""The hashes of an index: one blob of 32 ASCII bytes a row, read as a column of str, and
the first 8 characters of each as a 64-bit integer that sorts like the text (the builder's
sort by hash, the Index's prefix search)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

# Base32 characters in text order ('2'-'7' sort before 'a'-'z') -> 5-bit values.
_BASE32_BITS = np.zeros(256, dtype=np.uint64)
_BASE32_BITS[np.frombuffer(b"234567abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)] = np.arange(
    32, dtype=np.uint64
)


def hash_bits(blob: bytes | memoryview) -> np.ndarray:
    """The first 8 characters of each hash as a 40-bit integer that sorts like the text."""
    heads = np.frombuffer(blob, dtype=np.uint8).reshape(-1, 32)
    bits = np.zeros(len(heads), dtype=np.uint64)
    for i in range(8):
        bits <<= np.uint64(5)
        bits |= _BASE32_BITS[heads[:, i]]
    return bits


def hash_keys(blob: bytes | memoryview) -> np.ndarray:
    """The first 8 characters of each 32-byte hash as a big-endian integer: sorts like the text."""
    return np.frombuffer(blob, dtype=">u8").reshape(-1, 4)[:, 0].astype(np.uint64)


class HashColumn(Sequence[str]):
    """`index.hashes[row]` without a million str objects in memory. The blob may be a view of
    the on-disk index; a byte that is not ASCII (a tampered file) shows, it never raises."""

    def __init__(self, blob: bytes | memoryview) -> None:
        self.blob = blob

    def __len__(self) -> int:
        return len(self.blob) // 32

    def __getitem__(self, row):
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(len(self)))]
        row = int(row)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return str(self.blob[row * 32 : row * 32 + 32], "ascii", "replace")

    def __iter__(self) -> Iterator[str]:
        return (
            str(self.blob[i : i + 32], "ascii", "replace") for i in range(0, len(self.blob), 32)
        )
