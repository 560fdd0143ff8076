"""The web server: every URL carries the start's token (else 403, and no app is started); the
page at `/?token=T`, its websocket at `/ws/T` (one app process each), textual-serve's script
and styles at `/static/T/...`; at most `limit` apps at once. It runs until SIGINT or SIGTERM,
then ends every app it started before it exits."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import re
import signal
import socket
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import textual_serve
from aiohttp import WSMsgType, web

from cachetui.web.pages import (
    APP_POLICY,
    FORBIDDEN_TEXT,
    PLAIN_POLICY,
    app_page,
    limit_page,
)
from cachetui.web.session import AppSession, Sessions

STATIC = Path(textual_serve.__file__).parent / "static"
TOKEN: web.AppKey[str] = web.AppKey("token", str)
SESSIONS: web.AppKey[Sessions] = web.AppKey("sessions", Sessions)
TITLE = "cachetui"

# A Host header as a browser sends it (a name or an address, a port): the page's websocket
# URL is built from it, so that it is the address the browser used (through an SSH tunnel,
# localhost:PORT, not the server's own).
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]+)?|\[[0-9A-Fa-f:.]+\](:[0-9]+)?")
# Terminal sizes a browser asks for, bounded: an app allocates its screen from them.
_SIZE = (10, 1000)


def _token_in(request: web.Request) -> str:
    """The token the request carries: `?token=` on the page, the path's second part on the
    websocket and the static files (textual.js appends its own query to the websocket's URL,
    and the stylesheets' relative URLs keep the path)."""
    parts = request.path.split("/")
    if request.path == "/":
        return request.query.get("token", "")
    if len(parts) >= 3 and parts[1] in ("ws", "static"):
        return parts[2]
    return ""


@web.middleware
async def _guard(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """403 for any URL without the token (compared in constant time); headers for the rest."""
    if not hmac.compare_digest(
        _token_in(request).encode("utf-8", "replace"), request.app[TOKEN].encode()
    ):
        response: web.StreamResponse = web.Response(status=403, text=FORBIDDEN_TEXT)
    else:
        response = await handler(request)
    if not response.prepared:  # a websocket's headers are sent by then
        response.headers.setdefault("Content-Security-Policy", PLAIN_POLICY)
        response.headers["Referrer-Policy"] = "no-referrer"  # the token is in the URL
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers.setdefault("Cache-Control", "no-store")
    return response


async def _page(request: web.Request) -> web.Response:
    sessions = request.app[SESSIONS]
    if sessions.full():
        return _limit_response(sessions.limit)
    host = request.headers.get("Host", "")
    if not _HOST.fullmatch(host):
        return web.Response(status=400, text="400 Bad Request: no usable Host header\n")
    token = request.app[TOKEN]
    scheme = "wss" if request.secure else "ws"
    try:
        font_size = min(max(int(request.query.get("fontsize", "16")), 6), 64)
    except ValueError:
        font_size = 16
    page = app_page(
        static_url=f"/static/{token}/",
        websocket_url=f"{scheme}://{host}/ws/{token}",
        font_size=font_size,
        title=TITLE,
    )
    response = web.Response(text=page, content_type="text/html")
    response.headers["Content-Security-Policy"] = APP_POLICY
    return response


def _limit_response(limit: int) -> web.Response:
    response = web.Response(status=503, text=limit_page(limit), content_type="text/html")
    response.headers["Retry-After"] = "10"
    return response


async def _static(request: web.Request) -> web.StreamResponse:
    """textual-serve's script, styles, font and image: package files, no data."""
    relative = request.match_info["path"]
    path = (STATIC / relative).resolve()
    if not path.is_relative_to(STATIC.resolve()) or not path.is_file():
        return web.Response(status=404, text="404 Not Found\n")
    response = web.FileResponse(path)
    response.headers["Cache-Control"] = "private, max-age=3600"
    return response


def _size(text: str | None, default: int) -> int:
    try:
        value = int(text or default)
    except ValueError:
        return default
    return min(max(value, _SIZE[0]), _SIZE[1])


def _same_origin(request: web.Request) -> bool:
    """A browser's websocket from another site's page carries that site's Origin: refused (the
    token would be needed too; this is a second lock)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1] == request.headers.get("Host")


async def _websocket(request: web.Request) -> web.StreamResponse:
    """An app for this websocket (the spare, else a new one), for as long as both last."""
    sessions = request.app[SESSIONS]
    if not _same_origin(request):
        return web.Response(status=403, text="403 Forbidden: another site's page\n")
    width, height = _size(request.query.get("width"), 80), _size(request.query.get("height"), 24)
    taken = sessions.take(width, height)
    if taken is None:
        return _limit_response(sessions.limit)
    session, running = taken
    websocket = web.WebSocketResponse(heartbeat=15)

    async def close() -> None:  # the app has ended
        await websocket.close()

    try:
        await websocket.prepare(request)
        await session.attach(write_bytes=websocket.send_bytes, close=close)
        if running:
            await session.resize_when_painted(width, height)
        else:
            await session.start(width, height)
        sessions.replenish()
        browser = asyncio.ensure_future(_relay(websocket, session))
        app = asyncio.ensure_future(session.ended())
        try:
            await asyncio.wait({browser, app}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            browser.cancel()
            app.cancel()
    finally:
        # A closed tab, a dropped connection or a shutdown: the app goes with it.
        await sessions.close(session)
        if websocket.prepared:
            await websocket.close()
    return websocket


async def _relay(websocket: web.WebSocketResponse, session: AppSession) -> None:
    """The browser's messages to the app; anything malformed is dropped."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            envelope = json.loads(message.data)
        except ValueError:
            continue
        if not isinstance(envelope, list) or not envelope:
            continue
        kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        if kind == "stdin" and isinstance(data, str):
            await session.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await session.set_terminal_size(
                _size(str(data.get("width")), 80), _size(str(data.get("height")), 24)
            )
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await session.blur()
        elif kind == "focus":
            await session.focus()


def make_app(token: str, sessions: Sessions) -> web.Application:
    app = web.Application(middlewares=[_guard])
    app[TOKEN] = token
    app[SESSIONS] = sessions
    app.add_routes(
        [
            web.get("/", _page),
            web.get("/ws/{token}", _websocket),
            web.get("/static/{token}/{path:.+}", _static),
        ]
    )
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one). OSError and socket.gaierror are
    the caller's to explain."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        # Lets a restarted server take its port while the old connections linger; a port a
        # live server listens on is still refused.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def run(
    sock: socket.socket,
    token: str,
    app_argv: Sequence[str],
    limit: int,
    on_ready: Callable[[], None],
    on_stop: Callable[[int], None],
) -> None:
    """Serve until SIGINT or SIGTERM; then end every app, then return. `on_ready` once the
    server accepts connections; `on_stop(number of live apps)` when stopping begins."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, stop.set)
    sessions = Sessions(app_argv, limit)
    runner = web.AppRunner(make_app(token, sessions), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.SockSite(runner, sock, shutdown_timeout=TERM_SHUTDOWN).start()
        sessions.replenish()  # the first tab's app, started ahead
        on_ready()
        await stop.wait()
        on_stop(len(sessions.live) + (sessions.spare is not None))
        await sessions.close_all()
    finally:
        with contextlib.suppress(Exception):
            await sessions.close_all()
        await runner.cleanup()


TERM_SHUTDOWN = 2.0  # for the last connections once every app has ended
