"""A VerticalScroll whose keys scroll at once.

Textual's scroll actions aim at `scroll_target_y + 1` and apply the move after the next
repaint, so keys that arrive together (a held key, one SSH packet) all aim at the same line:
five downs in a burst moved one line. Here each key moves from where the last one left.
"""

from __future__ import annotations

from textual.containers import VerticalScroll


class ImmediateScroll(VerticalScroll):
    def _scroll_by(self, lines: float) -> None:
        self.scroll_to(y=self.scroll_y + lines, animate=False, immediate=True)

    def action_scroll_up(self) -> None:
        self._scroll_by(-1)

    def action_scroll_down(self) -> None:
        self._scroll_by(1)

    def action_page_up(self) -> None:
        self._scroll_by(-max(1, self.scrollable_content_region.height))

    def action_page_down(self) -> None:
        self._scroll_by(max(1, self.scrollable_content_region.height))

    def action_scroll_home(self) -> None:
        self.scroll_to(y=0, animate=False, immediate=True)

    def action_scroll_end(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)
