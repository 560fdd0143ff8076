"""One browser tab's app: a process of its own, spoken to through textual-serve's protocol;
and the limit on how many run at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
from asyncio.subprocess import PIPE, Process
from collections.abc import Awaitable, Callable, Sequence

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

log = logging.getLogger("cachetui.web")

# How long an app has to quit when asked, then to end on SIGTERM, before SIGKILL.
QUIT_GRACE = 3.0
TERM_GRACE = 2.0


class AppSession(AppService):
    """textual-serve's AppService, with three changes.

    - The app starts from a list of arguments, not a shell line: a source path is never read
      by a shell.
    - It runs in a process group of its own, so that closing the session ends the app and
      every process it started (the index's loader processes), even an app that ignores the
      request to quit; and so that Ctrl+C at the server's terminal reaches the server only,
      which then closes every session itself.
    - Of the app's requests to the page, only "the app ended" is passed on: "open this URL"
      and "download this file" would let the app (and so, in principle, the data) make the
      browser open an address; cachetui asks neither.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(
            shlex.join(argv),
            write_bytes=write_bytes,
            write_str=write_str,
            close=close,
            download_manager=DownloadManager(),
        )
        self.argv = list(argv)

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        environment = self._build_environment(width=width, height=height)
        # The browser's terminal shows colour whatever the server's terminal does; the config
        # file's `color = "none"` still applies (the app reads it).
        environment.pop("NO_COLOR", None)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=environment,
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def on_meta(self, data: bytes) -> None:
        try:
            kind = json.loads(data).get("type")
        except (ValueError, AttributeError):
            return
        if kind == "exit":
            await self.remote_close()
        else:
            log.debug("dropped the app's %r request", kind)

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def ended(self) -> None:
        """Return when the app's output has ended (it exited, or closed it)."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def close(self) -> None:
        """Ask the app to quit; if it has not within QUIT_GRACE seconds, SIGTERM its process
        group, then SIGKILL. Whatever it left behind in its group is killed too."""
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            await self.send_meta({"type": "quit"})
            if not await _exited(process, QUIT_GRACE):
                _signal_group(process.pid, signal.SIGTERM)
                if not await _exited(process, TERM_GRACE):
                    _signal_group(process.pid, signal.SIGKILL)
                    await process.wait()
        _signal_group(process.pid, signal.SIGKILL)
        if self._task is not None:
            # Its output ends with the last process holding it; then the reader ends.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._task, TERM_GRACE)
            self._task = None


async def _exited(process: Process, seconds: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), seconds)
    except asyncio.TimeoutError:
        return False
    return True


def _signal_group(leader: int, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal_number)


class Sessions:
    """The live apps, at most `limit` at once. A session counts from the moment it is opened
    until its process has ended, so a closing tab's slot is free only once its app is gone."""

    def __init__(self, argv: Sequence[str], limit: int) -> None:
        self.argv = list(argv)
        self.limit = limit
        self.live: set[AppSession] = set()

    def full(self) -> bool:
        return len(self.live) >= self.limit

    def open(
        self,
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
    ) -> AppSession | None:
        """A new session (its app not started yet), or None at the limit."""
        if self.full():
            return None
        session = AppSession(self.argv, write_bytes=write_bytes, write_str=write_str, close=close)
        self.live.add(session)
        return session

    async def close(self, session: AppSession) -> None:
        try:
            await session.close()
        finally:
            self.live.discard(session)

    async def close_all(self) -> None:
        await asyncio.gather(*(self.close(session) for session in list(self.live)))
