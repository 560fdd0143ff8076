"""Showing a long text in the user's pager, as git does: `$PAGER` run by the shell
(so `less -R` or `bat -l json` work), the text on its standard input. Nothing here
imports Textual: the app suspends itself around `run_pager`."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Iterator

DEFAULT_PAGER = "less"


def run_pager(command: str, text: str) -> str | None:
    """Run `command` with `text` on its stdin and wait; None if it ran, else why not."""
    try:
        with _interrupts_for_the_pager():
            finished = subprocess.run(command, shell=True, input=text.encode("utf-8"), check=False)
    except OSError as error:  # no shell, or no such directory
        return f"the pager {command!r} could not start: {error.strerror or error}"
    if finished.returncode in (126, 127):  # the shell's "cannot run" and "not found"
        return (
            f"the pager {command!r} could not run (the shell said {finished.returncode}: "
            f"{'not found' if finished.returncode == 127 else 'not executable'})"
        )
    return None


@contextlib.contextmanager
def _interrupts_for_the_pager() -> Iterator[None]:
    """ctrl+c in the pager is the pager's: the terminal sends SIGINT to us too, and the
    event loop's handler would end the app the moment the pager returns. A handler that
    does nothing (not SIG_IGN, which the pager would inherit) is reset in the child."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; the app calls from there
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
