"""What a URL is, for every part of cachetui: a source, a mirror root, a path in the config.
(Light on purpose: the command line asks it before anything heavy is imported.)"""

from __future__ import annotations

URL_SCHEMES = ("http", "https", "file", "s3")


def is_url(text: str) -> bool:
    """`http://`, `https://`, `file://` or `s3://` (any case), as a SOURCE may be."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in URL_SCHEMES


def is_remote_url(text: str) -> bool:
    """A URL fetched over the network (`http://`, `https://`, `s3://`): what a tag map fetched
    from a server may list (never a `file://` on the machine that reads it)."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in ("http", "https", "s3")


def has_scheme(text: str) -> bool:
    """Any `scheme://...` (a config file's path that is a URL of any kind is kept as written,
    never taken as a path relative to the file)."""
    scheme, sep, _ = text.partition("://")
    return (
        bool(sep)
        and scheme.isascii()
        and scheme[:1].isalpha()
        and all(c.isalnum() or c in "+.-" for c in scheme)
    )
