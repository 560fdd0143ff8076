"""Text from data files is data: make it safe to show in a terminal.

Control characters (terminal escapes such as ESC]52 or ESC[2J, bell, backspace,
carriage return, C1 controls) and bidirectional overrides are replaced by visible
escapes, so a hostile package name can neither drive the terminal nor reorder what
the user reads. Markup is never an issue for us because we build `rich.text.Text`
objects directly and never parse data as markup.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, and the Unicode bidi embedding/override/isolate marks.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control or bidi character written as a visible escape."""
    if text.isprintable():  # the common case, and fast
        return text
    return _UNSAFE.sub(_escape, text)
