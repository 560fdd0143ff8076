"""cachetui.sources.fetch against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import socket
import threading
import time
import tracemalloc
from collections import Counter
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cachetui import __version__
from cachetui.sources.fetch import (
    Fetched,
    FetchError,
    exists,
    fetch,
    is_url,
    join_url,
    normalise_url,
    read_body,
)

SLOW = 1.5  # how long the slow routes stall; the tests pass timeout=0.5
BIG = 600_000


class Handler(BaseHTTPRequestHandler):
    timeout = 5  # no connection may hold a server thread for ever
    server: Server

    def log_message(self, *args) -> None:
        pass

    def handle(self) -> None:
        # A TLS ClientHello starts with 0x16: answer in plain HTTP, as a plain server does,
        # then wait for the client to hang up so that it reads the answer (not a reset).
        try:
            first = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return
        if first == b"\x16":
            self.server.counts["TLS"] += 1
            self.connection.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
            self.connection.shutdown(socket.SHUT_WR)
            try:
                while self.connection.recv(4096):
                    pass
            except OSError:
                pass
            return
        super().handle()

    def do_HEAD(self) -> None:
        self.route("HEAD")

    def do_GET(self) -> None:
        self.route("GET")

    def route(self, method: str) -> None:
        server, path, state = self.server, self.path, self.server.state
        server.counts[f"{method} {path}"] += 1
        server.headers_of[path] = dict(self.headers)
        if path == "/etag":
            etag = f'"v{state["etag_version"]}"'
            if self.headers.get("If-None-Match") == etag:
                return self.reply(304, b"", {"ETag": etag})
            return self.reply(200, f"etag body {state['etag_version']}".encode(), {"ETag": etag})
        if path == "/lastmod":
            since = self.headers.get("If-Modified-Since")
            if since and parsedate_to_datetime(since).timestamp() >= state["lastmod"]:
                return self.reply(304, b"")
            body = f"lastmod body {state['lastmod']}".encode()
            return self.reply(
                200, body, {"Last-Modified": formatdate(state["lastmod"], usegmt=True)}
            )
        if path == "/plain":
            return self.reply(200, b"no validators")
        if path in ("/idx/index.json", "/nohash/index.json"):
            etag = f'"{hashlib.sha256(state["index"]).hexdigest()[:8]}"'
            if self.headers.get("If-None-Match") == etag:
                return self.reply(304, b"", {"ETag": etag})
            return self.reply(200, state["index"], {"ETag": etag})
        if path == "/idx/index.json.hash":
            return self.reply(200, hashlib.sha256(state["index"]).hexdigest().encode() + b"\n")
        if path == "/flaky":
            if state["flaky"] != 200:
                return self.reply(state["flaky"], b"down")
            return self.reply(200, b"flaky body", {"ETag": '"f1"'})
        if path == "/error":
            return self.reply(500, b"oops")
        if path == "/truncated":
            return self.reply(200, b"x" * 400, {"Content-Length": "1000"})
        if path == "/slow-headers":
            time.sleep(SLOW)
            return self.reply(200, b"late")
        if path == "/slow-body":
            self.reply(200, b"0123456789", {"Content-Length": "100"})
            time.sleep(SLOW)
            self.wfile.write(b"y" * 90)
            return None
        if path == "/big":
            return self.reply(200, b"b" * BIG)
        if path == "/big-stream":  # no Content-Length: the body ends when the connection closes
            return self.reply(200, b"s" * BIG, {"Content-Length": None})
        if path == "/dribble":
            self.reply(200, b"", {"Content-Length": "6000"})
            for _ in range(6):
                self.wfile.write(b"d" * 1000)
                self.wfile.flush()
                time.sleep(0.05)
            return None
        if path == "/gzip":
            return self.reply(
                200, gzip.compress(b"inflated text"), {"Content-Type": "application/gzip"}
            )
        if path == "/redirect":
            return self.reply(302, b"", {"Location": "/etag"})
        if path.startswith("/chain/"):  # /chain/N takes N redirects to reach its body
            hops = int(path.rsplit("/", 1)[1])
            return (
                self.reply(302, b"", {"Location": f"/chain/{hops - 1}"})
                if hops
                else self.reply(200, b"end")
            )
        if path == "/loop":
            return self.reply(302, b"", {"Location": "/loop"})
        if path == "/no-head":
            if method == "HEAD":
                return self.reply(405, b"")
            return self.reply(206, b"n", {"Content-Range": "bytes 0-0/10"})
        return self.reply(404, b"not here")

    def reply(self, code: int, body: bytes, headers: dict[str, str | None] | None = None) -> None:
        headers = {"Content-Length": str(len(body)), **(headers or {})}
        self.send_response(code)
        for name, value in headers.items():
            if value is not None:
                self.send_header(name, value)
        self.end_headers()
        if code == 200:
            self.server.counts[f"200 {self.path}"] += 1
        if self.command != "HEAD" and code != 304:
            self.wfile.write(body)
            self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that timed out and hung up on a slow route

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


def start_server() -> Server:
    server = Server(("127.0.0.1", 0), Handler)
    server.counts = Counter()
    server.headers_of = {}
    server.state = {"etag_version": 1, "lastmod": 1_700_000_000, "index": b'{"v": 1}', "flaky": 200}
    threading.Thread(
        target=server.serve_forever, args=(0.01,), daemon=True
    ).start()  # quick shutdown
    return server


def stop_server(server: Server) -> None:
    server.shutdown()
    server.server_close()


@pytest.fixture
def server():
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def downloads(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "downloads").iterdir())


# --- URLs -----------------------------------------------------------------------------


def test_is_url():
    for text in (
        "http://a/b",
        "HTTPS://a/b",
        "file:///x",
        "s3://bucket/k",
        "S3://spack-binaries/x",
    ):
        assert is_url(text), text
    for text in ("/tmp/x", "x.json", "ftp://a/b", "http:/a", "C:\\x", ""):
        assert not is_url(text), text


def test_normalise_url():
    assert (
        normalise_url("s3://spack-binaries/develop/build_cache/index.json")
        == "https://binaries.spack.io/develop/build_cache/index.json"
    )
    assert normalise_url("S3://spack-binaries/v0.22/") == "https://binaries.spack.io/v0.22/"
    assert normalise_url("s3://other-bucket/x") == "s3://other-bucket/x"
    assert normalise_url("https://example.org/x") == "https://example.org/x"


def test_join_url():
    assert (
        join_url("https://h/cache", "build_cache/index.json")
        == "https://h/cache/build_cache/index.json"
    )
    assert join_url("https://h/cache/", "index.json") == "https://h/cache/index.json"
    assert (
        join_url("file:///srv/mirror", "build_cache/index.json")
        == "file:///srv/mirror/build_cache/index.json"
    )
    assert (
        join_url("s3://spack-binaries/develop", "build_cache/x")
        == "s3://spack-binaries/develop/build_cache/x"
    )


def test_other_s3_buckets_are_refused_without_network(tmp_path):
    with pytest.raises(FetchError) as caught:
        fetch("s3://my-bucket/build_cache/index.json", tmp_path)
    assert str(caught.value) == (
        "s3://my-bucket/build_cache/index.json:"
        " s3:// URLs other than s3://spack-binaries/ are not supported"
    )
    assert not (tmp_path / "downloads").exists()


# --- file:// --------------------------------------------------------------------------


def test_file_url_is_used_in_place(tmp_path):
    local = tmp_path / "a dir" / "index 1.json"
    local.parent.mkdir()
    local.write_bytes(b"local")
    url = local.as_uri()
    assert "%20" in url
    got = fetch(url, tmp_path / "cache")
    assert got == Fetched(url, local, False, None)
    assert not (tmp_path / "cache").exists()
    assert exists(url) and not exists(url + "-missing")


def test_missing_file_url(tmp_path):
    url = (tmp_path / "nope.json").as_uri()
    with pytest.raises(FetchError) as caught:
        fetch(url, tmp_path)
    assert caught.value.url == url and caught.value.reason == "no such file"


# --- revalidation ---------------------------------------------------------------------


def test_etag_revalidation(server, tmp_path):
    url = server.url("/etag")
    first = fetch(url, tmp_path)
    assert (first.from_cache, first.note, first.path.read_bytes()) == (False, None, b"etag body 1")
    assert server.headers_of["/etag"]["User-Agent"] == f"cachetui/{__version__}"
    assert server.headers_of["/etag"]["Accept-Encoding"] == "identity"

    second = fetch(url, tmp_path)
    assert server.headers_of["/etag"]["If-None-Match"] == '"v1"'
    assert (second.from_cache, second.path, second.path.read_bytes()) == (
        True,
        first.path,
        b"etag body 1",
    )
    assert server.counts["GET /etag"] == 2 and server.counts["200 /etag"] == 1

    server.state["etag_version"] = 2
    third = fetch(url, tmp_path)
    assert (third.from_cache, third.path.read_bytes()) == (False, b"etag body 2")
    assert server.counts["200 /etag"] == 2
    assert fetch(url, tmp_path).from_cache


def test_cache_layout(server, tmp_path):
    url = server.url("/etag")
    got = fetch(url, tmp_path)
    name = hashlib.blake2b(url.encode(), digest_size=16).hexdigest()
    assert got.path == tmp_path / "downloads" / name
    assert downloads(tmp_path) == [name, name + ".json"]  # no temporary files left behind
    meta = json.loads((tmp_path / "downloads" / (name + ".json")).read_text())
    assert meta["url"] == url and meta["etag"] == '"v1"' and meta["size"] == len(b"etag body 1")
    assert set(meta) == {"url", "etag", "last_modified", "hash", "size", "fetched_at"}


def test_last_modified_revalidation(server, tmp_path):
    url = server.url("/lastmod")
    assert fetch(url, tmp_path).path.read_bytes() == b"lastmod body 1700000000"
    second = fetch(url, tmp_path)
    assert "If-None-Match" not in server.headers_of["/lastmod"]
    assert second.from_cache and server.counts["200 /lastmod"] == 1

    server.state["lastmod"] += 60
    third = fetch(url, tmp_path)
    assert not third.from_cache and third.path.read_bytes() == b"lastmod body 1700000060"


def test_no_validators_downloads_again(server, tmp_path):
    url = server.url("/plain")
    fetch(url, tmp_path)
    second = fetch(url, tmp_path)
    assert not second.from_cache and second.path.read_bytes() == b"no validators"
    assert server.counts["200 /plain"] == 2
    assert "If-None-Match" not in server.headers_of["/plain"]


def test_hash_file_avoids_body_request(server, tmp_path):
    url, hash_url = server.url("/idx/index.json"), server.url("/idx/index.json.hash")
    assert fetch(url, tmp_path, hash_url=hash_url).path.read_bytes() == b'{"v": 1}'
    second = fetch(url, tmp_path, hash_url=hash_url)
    assert second.from_cache and second.path.read_bytes() == b'{"v": 1}'
    assert (
        server.counts["GET /idx/index.json"] == 1 and server.counts["GET /idx/index.json.hash"] == 2
    )

    server.state["index"] = b'{"v": 2}'
    third = fetch(url, tmp_path, hash_url=hash_url)
    assert not third.from_cache and third.path.read_bytes() == b'{"v": 2}'
    assert server.counts["GET /idx/index.json"] == 2
    assert fetch(url, tmp_path, hash_url=hash_url).from_cache
    assert server.counts["GET /idx/index.json"] == 2


def test_missing_hash_file_falls_back_to_conditional_get(server, tmp_path):
    url, hash_url = server.url("/nohash/index.json"), server.url("/nohash/index.json.hash")
    fetch(url, tmp_path, hash_url=hash_url)
    second = fetch(url, tmp_path, hash_url=hash_url)
    assert server.counts["GET /nohash/index.json.hash"] == 2
    assert "If-None-Match" in server.headers_of["/nohash/index.json"]
    assert (
        server.counts["GET /nohash/index.json"] == 2
        and server.counts["200 /nohash/index.json"] == 1
    )
    assert second.from_cache and second.path.read_bytes() == b'{"v": 1}'


@pytest.mark.parametrize("damage", ["garbage metadata", "wrong size", "no metadata"])
def test_damaged_cache_entry_is_downloaded_again(server, tmp_path, damage):
    url = server.url("/etag")
    body = fetch(url, tmp_path).path
    meta = body.with_name(body.name + ".json")
    if damage == "garbage metadata":
        meta.write_bytes(b"{not json")
    elif damage == "wrong size":
        body.write_bytes(b"etag body 1 and more")
    else:
        meta.unlink()
    got = fetch(url, tmp_path)
    assert not got.from_cache and got.path.read_bytes() == b"etag body 1"
    assert server.counts["200 /etag"] == 2
    assert "If-None-Match" not in server.headers_of["/etag"]
    assert fetch(url, tmp_path).from_cache  # and the entry is whole again


def test_without_cache_dir_downloads_to_a_private_file(server, tmp_path):
    url = server.url("/etag")
    first, second = fetch(url, None), fetch(url, None)
    assert not first.from_cache and not second.from_cache
    assert second.path.read_bytes() == b"etag body 1" and tmp_path not in second.path.parents
    assert server.counts["200 /etag"] == 2 and "If-None-Match" not in server.headers_of["/etag"]


# --- offline fallback -----------------------------------------------------------------


def test_offline_uses_cached_copy_with_a_note(tmp_path):
    server = start_server()
    url = server.url("/etag")
    try:
        fetch(url, tmp_path)
    finally:
        stop_server(server)
    got = fetch(url, tmp_path, timeout=2)
    assert got.from_cache and got.path.read_bytes() == b"etag body 1"
    port = server.server_address[1]
    assert re.fullmatch(
        rf"{re.escape(url)}: connection refused by 127\.0\.0\.1:{port}; "
        r"using the copy downloaded \d{4}-\d\d-\d\d \d\d:\d\d UTC",
        got.note,
    ), got.note


def test_server_error_uses_cached_copy_but_not_found_does_not(server, tmp_path):
    url = server.url("/flaky")
    fetch(url, tmp_path)
    server.state["flaky"] = 503
    got = fetch(url, tmp_path)
    assert got.from_cache and got.path.read_bytes() == b"flaky body"
    assert got.note.startswith(f"{url}: HTTP 503 Service Unavailable; using the copy downloaded ")
    server.state["flaky"] = 404  # the index was removed: saying so beats showing a stale copy
    with pytest.raises(FetchError, match="not found"):
        fetch(url, tmp_path)


def test_hash_server_unreachable_uses_cached_copy(tmp_path):
    server = start_server()
    url, hash_url = server.url("/idx/index.json"), server.url("/idx/index.json.hash")
    try:
        fetch(url, tmp_path, hash_url=hash_url)
    finally:
        stop_server(server)
    got = fetch(url, tmp_path, hash_url=hash_url)
    assert (
        got.from_cache and "connection refused" in got.note and got.path.read_bytes() == b'{"v": 1}'
    )


# --- errors ---------------------------------------------------------------------------


def fetch_error(url: str, cache: Path | None, **kwargs) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, cache, **kwargs)
    assert str(caught.value) == f"{caught.value.url}: {caught.value.reason}"
    assert "\n" not in str(caught.value)
    return caught.value


def test_http_errors(server, tmp_path):
    url = server.url("/missing")
    assert str(fetch_error(url, tmp_path)) == f"{url}: not found (HTTP 404)"
    assert fetch_error(server.url("/error"), tmp_path).reason == "HTTP 500 Internal Server Error"
    assert downloads(tmp_path) == []


def test_server_error_without_cached_copy(server, tmp_path):
    server.state["flaky"] = 503
    assert fetch_error(server.url("/flaky"), tmp_path).reason == "HTTP 503 Service Unavailable"


def test_connection_refused(tmp_path):
    port = dead_port()
    error = fetch_error(f"http://127.0.0.1:{port}/index.json", tmp_path)
    assert error.reason == f"connection refused by 127.0.0.1:{port}"


def test_unresolvable_host(tmp_path):
    error = fetch_error("https://x.invalid/build_cache/index.json", tmp_path)
    assert str(error) == "https://x.invalid/build_cache/index.json: cannot resolve host x.invalid"


def test_tls_error(server, tmp_path):
    url = server.url("/etag").replace("http://", "https://")
    assert fetch_error(url, tmp_path, timeout=5).reason.startswith("TLS error: ")
    assert server.counts["TLS"] == 1


@pytest.mark.parametrize("path", ["/slow-headers", "/slow-body"])
def test_timeout(server, tmp_path, path):
    started = time.monotonic()
    assert fetch_error(server.url(path), tmp_path, timeout=0.5).reason == "timed out after 0.5 s"
    assert time.monotonic() - started < SLOW
    assert downloads(tmp_path) == []


def test_truncated_body(server, tmp_path):
    assert (
        fetch_error(server.url("/truncated"), tmp_path).reason
        == "download truncated (got 400 of 1,000 bytes)"
    )
    assert downloads(tmp_path) == []


@pytest.mark.parametrize("path", ["/big", "/big-stream"])
def test_size_cap_removes_partial_file(server, tmp_path, path):
    error = fetch_error(server.url(path), tmp_path, max_bytes=300_000)
    assert error.reason == "larger than the 300,000-byte download limit"
    assert downloads(tmp_path) == []
    assert fetch(server.url(path), tmp_path, max_bytes=BIG).path.stat().st_size == BIG


def test_redirects(server, tmp_path):
    url = server.url("/redirect")
    got = fetch(url, tmp_path)
    assert got.url == url and got.path.read_bytes() == b"etag body 1"
    assert server.counts["GET /redirect"] == 1 and server.counts["GET /etag"] == 1
    error = fetch_error(server.url("/loop"), tmp_path)
    assert "redirect" in error.reason and server.counts["GET /loop"] <= 6
    assert fetch(server.url("/chain/5"), tmp_path).path.read_bytes() == b"end"
    assert (
        fetch_error(server.url("/chain/6"), tmp_path).reason
        == "redirect loop or too many redirects (HTTP 302)"
    )


# --- progress and gzip ----------------------------------------------------------------


def test_progress_reports(server, tmp_path):
    calls: list[tuple[int, int | None]] = []
    started = time.monotonic()
    fetch(
        server.url("/dribble"), tmp_path, progress=lambda done, total: calls.append((done, total))
    )
    elapsed = time.monotonic() - started
    assert calls[-1] == (6000, 6000)
    assert calls[0][0] < 6000 and all(total == 6000 for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert 2 <= len(calls) <= elapsed / 0.1 + 2  # throttled to ~10 a second, plus the last


def test_progress_without_content_length(server, tmp_path):
    calls = []
    fetch(
        server.url("/big-stream"),
        tmp_path,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls[-1] == (BIG, None)


def test_gzip_body_is_stored_as_sent(server, tmp_path):
    got = fetch(server.url("/gzip"), tmp_path)
    assert got.path.read_bytes()[:2] == b"\x1f\x8b"
    assert read_body(got.path, got.url) == b"inflated text"


# --- read_body ------------------------------------------------------------------------


def test_read_body_plain_and_gzip(tmp_path):
    plain, packed, members = (
        tmp_path / "plain.json.gz",
        tmp_path / "packed.json",
        tmp_path / "two.gz",
    )
    plain.write_bytes(b'{"plain": true}')  # the name lies: content decides
    packed.write_bytes(gzip.compress(b'{"packed": true}'))
    members.write_bytes(gzip.compress(b"one ") + gzip.compress(b"two") + b"\0\0")
    assert read_body(plain, "p") == b'{"plain": true}'
    assert read_body(packed, "p") == b'{"packed": true}'
    assert read_body(members, "p") == b"one two"


def read_error(path: Path, **kwargs) -> str:
    with pytest.raises(FetchError) as caught:
        read_body(path, "SRC", **kwargs)
    assert caught.value.url == "SRC"
    return caught.value.reason


def test_read_body_errors(tmp_path):
    data = gzip.compress(bytes(range(256)) * 400)
    truncated, corrupt, bomb, big = (tmp_path / n for n in ("truncated", "corrupt", "bomb", "big"))
    truncated.write_bytes(data[: len(data) // 2])
    corrupt.write_bytes(data[:10] + b"\xff" * 40 + data[50:])
    bomb.write_bytes(gzip.compress(b"\0" * 20_000_000))
    big.write_bytes(b"x" * 2000)
    assert read_error(truncated) == "truncated gzip data"
    assert read_error(corrupt).startswith("corrupt gzip data (")
    assert bomb.stat().st_size < 100_000
    tracemalloc.start()
    try:
        reason = read_error(bomb, max_bytes=1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reason == "decompressed data larger than the 1,000,000-byte limit"
    assert peak < 5_000_000  # it stopped inflating at the limit rather than checking afterwards
    assert read_body(bomb, "SRC", max_bytes=20_000_000) == b"\0" * 20_000_000
    assert read_error(big, max_bytes=1000) == "larger than the 1,000-byte limit"
    assert read_error(tmp_path / "missing") == "no such file or directory"


# --- exists ---------------------------------------------------------------------------


def test_exists(server):
    assert exists(server.url("/etag")) and server.counts["HEAD /etag"] == 1
    assert not exists(server.url("/missing"))
    assert exists(server.url("/no-head"))
    assert (
        server.counts["GET /no-head"] == 1 and server.headers_of["/no-head"]["Range"] == "bytes=0-0"
    )
    with pytest.raises(FetchError, match="HTTP 500"):
        exists(server.url("/error"))
    port = dead_port()
    with pytest.raises(FetchError, match=f"connection refused by 127.0.0.1:{port}"):
        exists(f"http://127.0.0.1:{port}/x")
    with pytest.raises(FetchError, match="cannot resolve host x.invalid"):
        exists("http://x.invalid/x")
