"""Showing a long text in the user's pager, as git does: `$PAGER` run by the shell
(so `less -R` or `bat -l json` work), the text on its standard input. Nothing here
imports Textual: the app suspends itself around `run_pager`."""

from __future__ import annotations

import subprocess

DEFAULT_PAGER = "less"


def run_pager(command: str, text: str) -> str | None:
    """Run `command` with `text` on its stdin and wait; None if it ran, else why not."""
    try:
        finished = subprocess.run(command, shell=True, input=text.encode("utf-8"), check=False)
    except OSError as error:  # no shell, or no such directory
        return f"the pager {command!r} could not start: {error.strerror or error}"
    if finished.returncode in (126, 127):  # the shell's "cannot run" and "not found"
        return f"the pager {command!r} could not run (the shell said {finished.returncode}: {'not found' if finished.returncode == 127 else 'not executable'})"
    return None
