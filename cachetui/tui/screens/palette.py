"""Textual's command palette, made safe against keys that arrive in a burst (a held key,
one SSH packet; the monkey test sends them so):

- page down before the list has laid out its lines raised KeyError inside Textual's
  OptionList (`_move_page` reads `_index_to_line` of an option not laid out yet): the key
  is dropped instead; the next one works;
- a second escape dismissed the screen under the palette too (`dismiss` pops whatever is
  on top): only the palette on top closes.
"""

from __future__ import annotations

from textual.command import CommandPalette


class Palette(CommandPalette):
    def _action_command_list(self, action: str) -> None:
        try:
            super()._action_command_list(action)
        except KeyError:
            pass

    def dismiss(self, result=None):
        if self.is_active:
            return super().dismiss(result)
        return None
