"""SafeInput: a text box that never echoes a control or bidi character raw.

Textual's Input draws its value as it is: a pasted log line holding terminal escapes (ESC[2J,
an OSC 52 clipboard write, colour codes) or a right-to-left override would reach the terminal
from the search box or the hash lookup. What is typed or pasted goes in with those characters
as visible escapes (`\\x1b`), as every other widget shows data.
"""

from __future__ import annotations

from textual.widgets import Input

from cachetui.textsafe import visible


class SafeInput(Input):
    def replace(self, text: str, start: int, end: int) -> None:
        # Every insertion (a key, a paste, the clipboard) comes through here: escape first, so
        # the cursor lands after the escaped text.
        super().replace(visible(text), start, end)

    def validate_value(self, value: str) -> str:
        return visible(value)  # a value set in code, too
