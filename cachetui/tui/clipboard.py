"""Copying over SSH: the terminal's own clipboard, by OSC 52.

A program on a build host cannot reach the clipboard of the laptop in front of the user,
but the terminal emulator can: OSC 52 asks it to set its clipboard. Inside tmux, the
plain sequence reaches tmux, which keeps it as a paste buffer and passes it on when
`set-clipboard` is on (the default, `external`, ignores it); the same sequence wrapped in
tmux's DCS passthrough goes straight to the outer terminal when `allow-passthrough` is on.
We send both inside tmux, so either setting works; a terminal that gets both sets the
same text twice. Nothing here imports Textual.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping


def osc52(text: str) -> str:
    """The OSC 52 sequence that sets the system clipboard (`c`) to `text`."""
    return f"\x1b]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\a"


def tmux_passthrough(sequence: str) -> str:
    """`sequence` wrapped for tmux's DCS passthrough (every ESC inside doubled)."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def clipboard_sequences(text: str, environ: Mapping[str, str] = os.environ) -> list[str]:
    """What to write to the terminal to copy `text`: OSC 52, and inside tmux its wrapped form
    too."""
    plain = osc52(text)
    return [plain, tmux_passthrough(plain)] if environ.get("TMUX") else [plain]
