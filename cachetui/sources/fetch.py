"""Download build-cache files from http(s)://, file:// and s3://spack-binaries/ URLs.

Downloads are kept in `cache_dir/downloads/`, one body file per URL (named by a hash of
the URL) plus a JSON file of validators, so the next start asks the server only whether
the file changed: through Spack's `index.json.hash` when there is one, else with a
conditional GET. When the server cannot be reached, the copy already downloaded is used
with a warning. Every network or data problem surfaces as a one-line FetchError.
"""

from __future__ import annotations

import atexit
import hashlib
import http.client
import json
import os
import shutil
import socket
import ssl
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, BinaryIO

from cachetui import __version__
from cachetui.urls import is_url as is_url  # (re-exported: what a URL is, said once in urls.py)

MAX_DOWNLOAD_BYTES = 4 * 1024**3
DEFAULT_TIMEOUT = 30.0

USER_AGENT = f"cachetui/{__version__}"
SPACK_BUCKET = "s3://spack-binaries/"
SPACK_MIRROR = "https://binaries.spack.io/"
MAX_HASH_BYTES = 1024
CHUNK = 256 * 1024
PROGRESS_INTERVAL = 0.1  # seconds: a progress bar needs no more than ~10 updates a second
GZIP_MAGIC = b"\x1f\x8b"

Progress = Callable[[int, int | None], None]


class FetchError(Exception):
    """A download or read that failed; str() is 'URL: reason' on one line."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(url, reason)
        self.url = url
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.url}: {self.reason}"


class _Unreachable(FetchError):
    """The server could not be reached or failed (5xx): a cached copy may stand in."""


@dataclass(frozen=True)
class Fetched:
    url: str
    path: Path
    from_cache: bool
    note: str | None


def normalise_url(url: str) -> str:
    """s3://spack-binaries/X is served over HTTPS at binaries.spack.io; other URLs are unchanged."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() == "s3" and rest.startswith("spack-binaries/"):
        return SPACK_MIRROR + rest[len("spack-binaries/") :]
    return url


def join_url(base: str, relative: str) -> str:
    """`relative` resolved against `base`, which is taken as a directory."""
    if not base.endswith("/"):
        base += "/"
    if urllib.parse.urlsplit(base).scheme.lower() in urllib.parse.uses_relative:
        return urllib.parse.urljoin(base, relative)
    return base + relative.lstrip("/")  # s3://: urljoin does not know the scheme


def fetch(
    url: str,
    cache_dir: Path | None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
    progress: Progress | None = None,
    hash_url: str | None = None,
) -> Fetched:
    """A local file holding the body of `url`, downloaded or revalidated from `cache_dir`."""
    url = normalise_url(url)
    scheme = _scheme(url)
    if scheme == "file":
        path = _file_path(url)
        if not os.path.isfile(path):
            raise FetchError(url, "not a regular file" if os.path.exists(path) else "no such file")
        return Fetched(url, path, False, None)

    if cache_dir is None:
        directory = _private_dir()
    else:
        directory = Path(cache_dir) / "downloads"
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise FetchError(
                url, f"cannot create the download cache {directory}: {_os_reason(error)}"
            ) from None
    name = hashlib.blake2b(url.encode(), digest_size=16).hexdigest()
    body, meta_path = directory / name, directory / (name + ".json")
    cached = _load_meta(meta_path, body, url) if cache_dir is not None else None

    try:
        remote_hash = None
        if hash_url is not None and cache_dir is not None:
            remote_hash = _fetch_hash(normalise_url(hash_url), timeout)
            if cached is not None and remote_hash is not None and remote_hash == cached.get("hash"):
                return Fetched(url, body, True, None)
        headers = {}
        # A hash that differs says the body changed, whatever the etag says.
        if cached is not None and remote_hash is None:
            if cached.get("etag"):
                headers["If-None-Match"] = cached["etag"]
            if cached.get("last_modified"):
                headers["If-Modified-Since"] = cached["last_modified"]
        validators = _download(url, body, timeout, max_bytes, progress, headers)
    except _Unreachable as error:
        if cached is None:
            raise
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(cached["fetched_at"]))
        return Fetched(url, body, True, f"{error}; using the copy downloaded {when}")
    if validators is None:  # 304 Not Modified
        return Fetched(url, body, True, None)
    if cache_dir is not None:
        meta = {
            "url": url,
            **validators,
            "hash": remote_hash,
            "size": body.stat().st_size,
            "fetched_at": time.time(),
        }
        _write_atomic(meta_path, json.dumps(meta).encode(), url)
    return Fetched(url, body, False, None)


def exists(url: str, timeout: float = DEFAULT_TIMEOUT) -> bool:
    """Whether `url` answers 2xx; False for 404, 403 and 410; FetchError when unreachable."""
    url = normalise_url(url)
    if _scheme(url) == "file":
        return os.path.isfile(_file_path(url))
    try:
        try:
            with _open(url, timeout, method="HEAD"):
                return True
        except urllib.error.HTTPError as error:
            error.close()
            if error.code not in (405, 501):  # some servers refuse HEAD: ask for one byte instead
                raise
        with _open(url, timeout, headers={"Range": "bytes=0-0"}):
            return True
    except urllib.error.HTTPError as error:
        error.close()
        if error.code in (403, 404, 410):
            return False
        if error.code == 416:  # an empty file cannot serve byte 0, but it is there
            return True
        raise _error(url, error, timeout) from None
    except Exception as error:
        raise _error(url, error, timeout) from None


def read_body(path: Path, source: str, max_bytes: int = MAX_DOWNLOAD_BYTES) -> bytes:
    """The bytes of `path`, gunzipped when they are gzip data (sniffed, not guessed from the
    name)."""
    try:
        with open(path, "rb") as handle:
            if handle.read(2) != GZIP_MAGIC:
                if os.fstat(handle.fileno()).st_size > max_bytes:
                    raise FetchError(source, f"larger than the {max_bytes:,}-byte limit")
                handle.seek(0)
                return handle.read()
            handle.seek(0)
            return _gunzip(handle, source, max_bytes)
    except OSError as error:
        raise FetchError(source, _os_reason(error)) from None


def _gunzip(handle: BinaryIO, source: str, max_bytes: int) -> bytes:
    # Inflate with an output cap, so a small file that expands to terabytes (a gzip bomb)
    # stops at max_bytes instead of exhausting memory.
    out = bytearray()
    inflater = zlib.decompressobj(wbits=31)
    data = b""
    try:
        while True:
            if not data:
                data = handle.read(CHUNK)
                if not data:
                    break
            if inflater.eof:  # gzip allows members one after another, and zero padding
                data = data.lstrip(b"\0")
                if not data:
                    continue
                inflater = zlib.decompressobj(wbits=31)
            out += inflater.decompress(data, max_bytes - len(out) + 1)
            if len(out) > max_bytes:
                raise FetchError(
                    source, f"decompressed data larger than the {max_bytes:,}-byte limit"
                )
            data = inflater.unconsumed_tail or inflater.unused_data
    except zlib.error as error:
        detail = str(error).split(": ", 1)[-1]  # drop zlib's "Error -3 while decompressing data"
        raise FetchError(source, f"corrupt gzip data ({detail})") from None
    if not inflater.eof:
        raise FetchError(source, "truncated gzip data")
    return bytes(out)


def _scheme(url: str) -> str:
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "s3":
        raise FetchError(url, "s3:// URLs other than s3://spack-binaries/ are not supported")
    if scheme not in ("http", "https", "file"):
        raise FetchError(url, "not an http://, https://, file:// or s3:// URL")
    if scheme != "file":
        try:
            parts = urllib.parse.urlsplit(url)
            _ = parts.port  # raises for a port that is not a number in 0-65535
        except ValueError as error:
            raise FetchError(url, f"invalid URL ({str(error).lower()})") from None
        if not parts.hostname:
            raise FetchError(url, "invalid URL (no host name)")
    return scheme


def _file_path(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))


_private: Path | None = None


def _private_dir() -> Path:
    """Where downloads go without a cache: a directory of our own, removed at exit."""
    global _private
    if _private is None:
        _private = Path(tempfile.mkdtemp(prefix="cachetui-"))
        atexit.register(shutil.rmtree, _private, ignore_errors=True)
    return _private


def _load_meta(meta_path: Path, body: Path, url: str) -> dict[str, Any] | None:
    """The cached entry's metadata, or None when there is no complete, consistent entry."""
    try:
        meta = json.loads(meta_path.read_bytes())
        size = body.stat().st_size
    except (OSError, ValueError):
        return None
    if (
        not isinstance(meta, dict)
        or meta.get("url") != url
        or meta.get("size") != size
        or not isinstance(meta.get("fetched_at"), (int, float))
    ):
        return None
    return meta


def _write_atomic(path: Path, data: bytes, url: str) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except OSError as error:
        _unlink(temp)
        raise FetchError(url, f"cannot write the download cache: {_os_reason(error)}") from None


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = 5


def _open(url: str, timeout: float, method: str = "GET", headers: dict[str, str] | None = None):
    request = urllib.request.Request(
        url,
        method=method,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **(headers or {})},
    )
    return urllib.request.build_opener(_Redirects).open(request, timeout=timeout)


def _fetch_hash(hash_url: str, timeout: float) -> str | None:
    """The published hash of the body, or None when the server has none to give."""
    try:
        with _open(hash_url, timeout) as response:
            data = response.read(MAX_HASH_BYTES + 1)
    except urllib.error.HTTPError as error:
        error.close()
        if error.code >= 500:
            raise _error(hash_url, error, timeout) from None
        return None  # no hash file (404) or not allowed to read it: revalidate the body instead
    except Exception as error:
        raise _error(hash_url, error, timeout) from None
    if len(data) > MAX_HASH_BYTES:
        return None
    return data.strip().decode("ascii", "replace") or None


def _download(
    url: str,
    body: Path,
    timeout: float,
    max_bytes: int,
    progress: Progress | None,
    headers: dict[str, str],
) -> dict[str, str | None] | None:
    """Stream `url` into `body` (replaced atomically); its validators, or None on 304."""
    temp = None
    try:
        with _open(url, timeout, headers=headers) as response:
            length = _content_length(response)
            if length is not None and length > max_bytes:
                raise FetchError(url, f"larger than the {max_bytes:,}-byte download limit")
            fd, temp = tempfile.mkstemp(dir=body.parent, prefix=body.name + ".", suffix=".part")
            got, last_report = 0, float("-inf")
            with os.fdopen(fd, "wb") as out:
                while chunk := response.read1(
                    CHUNK
                ):  # what has arrived: progress keeps moving on slow links
                    got += len(chunk)
                    if got > max_bytes:
                        raise FetchError(url, f"larger than the {max_bytes:,}-byte download limit")
                    out.write(chunk)
                    if progress is not None and time.monotonic() - last_report >= PROGRESS_INTERVAL:
                        last_report = time.monotonic()
                        progress(got, length)
            # http.client returns a short body without complaint when the connection closes early.
            if length is not None and got < length:
                raise _Unreachable(url, f"download truncated (got {got:,} of {length:,} bytes)")
            if progress is not None:
                progress(got, length)
            # Drop the old metadata first: a crash between the two writes then leaves no
            # entry rather than new bytes described by old validators.
            _unlink(body.with_name(body.name + ".json"))
            os.replace(temp, body)
            temp = None
            return {
                "etag": response.headers.get("ETag"),
                "last_modified": response.headers.get("Last-Modified"),
            }
    except urllib.error.HTTPError as error:
        error.close()
        if error.code == 304:
            return None
        raise _error(url, error, timeout) from None
    except FetchError:
        raise
    except http.client.IncompleteRead as error:  # a chunked body cut short
        raise _Unreachable(url, f"download truncated (got {len(error.partial):,} bytes)") from None
    except Exception as error:
        raise _error(url, error, timeout) from None
    finally:
        if temp is not None:
            _unlink(temp)


def _content_length(response) -> int | None:
    try:
        length = int(response.headers.get("Content-Length", ""))
    except ValueError:
        return None
    return length if length >= 0 else None


def _error(url: str, error: BaseException, timeout: float) -> FetchError:
    """The FetchError for an exception from urllib, http.client, ssl or socket."""
    if isinstance(error, urllib.error.HTTPError):
        if error.code == 404:
            return FetchError(url, "not found (HTTP 404)")
        if 300 <= error.code < 400:  # urllib gives up on loops and long chains
            return FetchError(url, f"redirect loop or too many redirects (HTTP {error.code})")
        try:
            phrase = HTTPStatus(error.code).phrase
        except ValueError:
            phrase = str(error.reason).splitlines()[0] if error.reason else ""
        problem = FetchError if error.code < 500 else _Unreachable
        return problem(url, f"HTTP {error.code} {phrase}".rstrip())
    if isinstance(error, urllib.error.URLError) and isinstance(error.reason, BaseException):
        error = error.reason
    if isinstance(error, socket.gaierror):
        return _Unreachable(url, f"cannot resolve host {_host_port(url)[0]}")
    if isinstance(error, ConnectionRefusedError):
        return _Unreachable(url, "connection refused by {}:{}".format(*_host_port(url)))
    if isinstance(error, TimeoutError):
        return _Unreachable(url, f"timed out after {timeout:g} s")
    if isinstance(error, ssl.SSLCertVerificationError):
        return _Unreachable(url, f"TLS error: certificate verify failed ({error.verify_message})")
    if isinstance(error, ssl.SSLError):
        short = error.reason.lower().replace("_", " ") if error.reason else _os_reason(error)
        return _Unreachable(url, f"TLS error: {short}")
    if isinstance(error, http.client.RemoteDisconnected):
        return _Unreachable(url, "connection closed without a response")
    if isinstance(error, http.client.HTTPException):
        return _Unreachable(url, f"bad HTTP response ({type(error).__name__})")
    if isinstance(
        error, urllib.error.URLError
    ):  # (an OSError) with a message, e.g. "unknown url type"
        return FetchError(url, str(error.reason).splitlines()[0])
    if isinstance(error, OSError):
        return _Unreachable(url, _os_reason(error))
    if isinstance(error, ValueError):  # a malformed URL: bad port, bad IPv6 address
        return FetchError(url, f"invalid URL ({error})")
    raise error


def _host_port(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)  # checked by _scheme before any connection
    return parts.hostname or "", parts.port or (443 if parts.scheme.lower() == "https" else 80)


def _os_reason(error: OSError) -> str:
    return (
        error.strerror.lower()
        if error.strerror
        else (str(error).splitlines() or [type(error).__name__])[0]
    )
