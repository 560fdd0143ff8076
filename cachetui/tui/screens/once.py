"""Closing a screen once.

Textual's `Screen.dismiss` pops whatever screen is on top: two enters or escapes that
arrive together (a held key, one SSH packet) closed the screen and then the main screen
under it, leaving a blank app. A screen that is no longer on top ignores the second.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen


class DismissOnce(Screen[Any]):
    def dismiss_once(self, result: object = None) -> None:
        if self.is_active:
            self.dismiss(result)
