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

# How long a spare may take to put up its screen before its tab's size is sent regardless.
STARTUP_WAIT = 20.0
# More than the terminal modes an app sets as it starts (a few hundred bytes), less than a
# frame (tens of kB even for an 80x24 screen): once this much is out, the first frame is.
FRAME_BYTES = 4096
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

    def __init__(self, argv: Sequence[str]) -> None:
        # Until a tab attaches, what the app writes is kept, to be sent on attaching.
        self._held: list[bytes] = []
        self._ended_unattached = False
        super().__init__(
            shlex.join(argv),
            write_bytes=self._hold,
            write_str=self._drop,
            close=self._closed_unattached,
            download_manager=DownloadManager(),
        )
        self.argv = list(argv)
        self._painted = asyncio.Event()  # its first frame is out: its screen is up
        self._written = 0

    async def on_data(self, payload: bytes) -> None:
        self._written += len(payload)
        if self._written >= FRAME_BYTES:
            self._painted.set()
        await self.remote_write_bytes(payload)

    async def resize_when_painted(self, width: int, height: int) -> None:
        """Resize a spare to its tab; not before its first frame. Textual's web driver posts
        the starting size from its own thread: a size sent before the app has handled that
        one can be handled first, and then lost under it."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._painted.wait(), STARTUP_WAIT)
        await self.set_terminal_size(width, height)

    async def _hold(self, data: bytes) -> None:
        self._held.append(data)

    async def _drop(self, text: str) -> None:
        pass

    async def _closed_unattached(self) -> None:
        self._ended_unattached = True

    async def attach(
        self,
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        """From now on the app's output goes to this tab, what it wrote before first."""
        while self._held:  # the reader may add to it while this sends
            await write_bytes(self._held.pop(0))
        self.remote_write_bytes, self.remote_close = write_bytes, close
        if self._ended_unattached:
            await close()

    def alive(self) -> bool:
        return (
            self._process is not None
            and self._process.returncode is None
            and not self._ended_unattached
        )

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

    async def ended(self) -> None:
        """Return when the app's output has ended (it exited, or closed it)."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def kill(self) -> None:
        """End it now (an app no tab has seen: nothing to let it finish)."""
        if self._process is not None:
            _signal_group(self._process.pid, signal.SIGKILL)
        await self.close()

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
    """The apps of the open tabs, at most `limit` at once; and, while there is room for one
    more, a spare: an app started ahead (its index loaded) that the next tab takes, so that
    a tab opens with data in the time its page takes to load, not in the app's start. So no
    more than `limit` app processes run at once. A tab's session counts from the moment it is
    taken until its process has ended: a closing tab's slot is free once its app is gone.
    An untaken spare is replaced after SPARE_AGE seconds: no tab gets data loaded longer ago.
    """

    def __init__(self, argv: Sequence[str], limit: int) -> None:
        self.argv = list(argv)
        self.limit = limit
        self.live: set[AppSession] = set()
        self.spare: AppSession | None = None
        self._starting = False
        self._closing = False
        self._size = (120, 36)  # the spare's; then the last tab's, most likely the next's
        self._tasks: set[asyncio.Future[None]] = set()  # spares retired, closing
        self._spawning: asyncio.Future[None] | None = None

    def full(self) -> bool:
        return len(self.live) >= self.limit

    def take(self, width: int, height: int) -> tuple[AppSession, bool] | None:
        """A session for a new tab (None at the limit), and whether its app runs already (the
        spare). Taken with nothing awaited, so the slot is the caller's."""
        if self.full():
            return None
        if self._spawning is not None and not self._spawning.done():
            if len(self.live) + 2 > self.limit:  # no room for it beside this tab's
                self._spawning.cancel()
        self._size = (width, height)
        session, started = self.spare, True
        self.spare = None
        if session is None or not session.alive():
            if session is not None:
                self._background(session.close())
            session, started = AppSession(self.argv), False
        self.live.add(session)
        return session, started

    def replenish(self) -> None:
        """Start a spare, if there is room for one and none is running or starting."""
        if (
            not self._closing
            and not self._starting
            and self.spare is None
            and len(self.live) < self.limit
        ):
            self._starting = True
            self._spawning = asyncio.ensure_future(self._spawn())

    async def _spawn(self) -> None:
        spare = AppSession(self.argv)
        try:
            await spare.start(*self._size)
        except asyncio.CancelledError:  # close_all, or its room taken by a tab
            await spare.kill()
            raise
        except OSError as error:  # the next tab starts its own, and fails in view
            log.error("cannot start a spare app: %s", error)
            return
        finally:
            self._starting = False
        if self._closing or len(self.live) >= self.limit:  # the room went while it started
            await spare.kill()
            return
        self.spare = spare
        asyncio.get_running_loop().call_later(
            SPARE_AGE, lambda: self._background(self._retire(spare))
        )

    async def _retire(self, spare: AppSession) -> None:
        if self.spare is spare:  # untaken: a fresh one in its place
            self.spare = None
            await spare.close()
            self.replenish()

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # held: the loop keeps only a weak reference
        task.add_done_callback(self._tasks.discard)

    async def close(self, session: AppSession) -> None:
        try:
            await session.close()
        finally:
            self.live.discard(session)
        self.replenish()

    async def close_all(self) -> None:
        self._closing = True
        if self._spawning is not None:
            self._spawning.cancel()
            await asyncio.gather(self._spawning, return_exceptions=True)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        spare, self.spare = self.spare, None
        closing = [self.close(session) for session in list(self.live)]
        if spare is not None:
            closing.append(spare.close())
        await asyncio.gather(*closing)


SPARE_AGE = 600.0
