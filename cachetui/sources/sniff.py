"""Which reader fits a file, from its first bytes: files are recognised by their content,
never by their name (a summary may be called anything, an index blob has no extension)."""

from __future__ import annotations

import re

from cachetui.sources.database import looks_like_database
from cachetui.sources.specfile import looks_like_spec_file, looks_like_spec_yaml

# How much of a file is read to tell what it holds (and, for a small file, all of it).
SNIFF_BYTES = 4096


def kind_of(head: bytes) -> str:
    """What a file holds, from its first bytes."""
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"-----BEGIN PGP SIGNED MESSAGE-----"):
        return "clearsigned"
    if not text.startswith(b"{"):
        return "spec yaml" if looks_like_spec_yaml(text) else "text"
    if looks_like_database(text):
        return "database"
    if looks_like_spec_file(text):
        return "spec file"
    if re.match(rb'\{\s*"(version|data)"\s*:', text) and b"application/vnd.spack.db" in text:
        return "manifest"
    if re.match(rb'\{\s*"(version|data)"\s*:', text) and b"application/vnd.spack.spec" in text:
        return "spec manifest"
    if re.match(rb'\{\s*"[^"]+"\s*:\s*\[\s*(\]|\{\s*"(label|url)")', text):
        return "tag map"
    return "json"


def gunzipped_head(path: str) -> bytes:
    """The first few KB of a gzip file, inflated (b"" if it cannot be)."""
    import zlib

    try:
        with open(path, "rb") as handle:
            return zlib.decompressobj(31).decompress(handle.read(64 * 1024), SNIFF_BYTES)
    except (OSError, zlib.error):
        return b""
