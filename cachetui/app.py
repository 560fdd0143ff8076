"""The cachetui App: bindings (each with an id), the stylesheet, the main screen, and what
the user's config sets (theme, keymap); copying to the terminal's clipboard."""

from __future__ import annotations

import os

from textual.app import App
from textual.binding import Binding
from textual.theme import Theme

from cachetui.clipboard import clipboard_sequences
from cachetui.commands import CacheCommands
from cachetui.config import Config, ConfigProblem, remember_theme
from cachetui.keys import KeyEntry, key_entries, key_label
from cachetui.resources import stylesheet
from cachetui.screens.hash_lookup import HashLookupScreen
from cachetui.screens.help import HelpScreen
from cachetui.screens.main import MainScreen
from cachetui.service import IndexService
from cachetui.textsafe import visible
from cachetui.widgets.facet_sidebar import FacetSidebar
from cachetui.widgets.line_list import LineList
from cachetui.widgets.spec_detail import SpecDetail

DEFAULT_THEME = "textual-dark"


class CacheTUI(App):
    TITLE = "cachetui"
    CSS_PATH = str(stylesheet())
    HELP_GROUP = "anywhere"
    COMMANDS = {CacheCommands}  # our commands only: the palette, the help and the footer agree
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit cachetui"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-anywhere", tooltip="Quit cachetui, even from the search box"),
        Binding("question_mark,f1", "help", "Help", id="help", tooltip="Show every key binding"),
        Binding("ctrl+p", "command_palette", "Palette", show=False, priority=True, id="command-palette",
                tooltip="Commands: go to a package, toggle a filter, switch tag, look up a hash, copy, theme"),
        Binding("ctrl+g", "go_to_hash", "Go to hash", priority=True, id="go-to-hash", tooltip="Go to a spec by the start of its hash, from anywhere"),
    ]

    def __init__(self, sources: list[str] | None = None, service: IndexService | None = None, config: Config | None = None) -> None:
        super().__init__()
        self.service = service or IndexService(sources)
        # No config given (tests, embedding): the defaults, and nothing remembered.
        self.config = config or Config()
        self.config_problems: list[ConfigProblem] = list(self.config.problems)
        # Over SSH every animated frame costs bandwidth and latency: none unless asked for
        # (TEXTUAL_ANIMATIONS in the environment still wins).
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            self.animation_level = "none"
        self.set_keymap(self.config.keymap)
        self.config_problems += self._keymap_clashes()
        self.theme = self._remembered_theme = self._starting_theme()

    def _keymap_clashes(self) -> list[ConfigProblem]:
        """Keys the keymap gives to one binding that another still has (Textual lets the
        keymap's win where both are in force, silently)."""
        problems = []
        for binding_id, keys in self._keymap.items():
            for owner in HELP_OWNERS:
                for binding in owner.BINDINGS:
                    if binding.id == binding_id or binding.id in self._keymap:
                        continue
                    taken = set(keys.split(",")) & {key.strip() for key in binding.key.split(",")}
                    if taken:
                        problems.append(ConfigProblem(self.config.origin(f"keymap.{binding_id}"),
                                        f"keymap: {binding_id} = {key_label(','.join(sorted(taken)))!r} is also the key of "
                                        f"{binding.id} ({binding.description}); give one of them another key"))
        return problems

    def _starting_theme(self) -> str:
        wanted = self.config.theme
        if wanted and wanted not in self.available_themes:
            where = self.config.origin("theme")
            known = ", ".join(sorted(self.available_themes))
            self.config_problems.append(ConfigProblem(where, f"key 'theme': no theme named {visible(wanted)!r} (themes: {known})"))
            wanted = None
        return wanted or DEFAULT_THEME

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.push_screen(MainScreen(self.service))
        for problem in self.config_problems:
            self.notify(visible(f"{problem.source}: {problem.message}"), title="Config", severity="warning", timeout=15, markup=False)

    def _theme_changed(self, theme: Theme) -> None:
        # A choice made in the app is kept for next time (not the one it started with).
        if theme.name != self._remembered_theme:
            self._remembered_theme = theme.name
            remember_theme(self.config, theme.name)

    def key_entries(self) -> list[KeyEntry]:
        """Every binding, with the keys the user's keymap gives it."""
        return key_entries(HELP_OWNERS, self._keymap)

    def copy(self, text: str, what: str) -> None:
        """Put `text` on the terminal's clipboard (OSC 52, for tmux too) and show it, so it can be
        selected by hand where the terminal ignores OSC 52."""
        self._clipboard = text  # as App.copy_to_clipboard keeps it
        if self._driver is not None:
            for sequence in clipboard_sequences(text):
                self._driver.write(sequence)
            self._driver.flush()
        self.notify(visible(text), title=f"Copied {what}", timeout=10, markup=False)

    def action_go_to_hash(self) -> None:
        """From any pane or screen: close what covers the main screen, then look up."""
        if isinstance(self.screen, HashLookupScreen) or not any(isinstance(s, MainScreen) for s in self.screen_stack):
            return  # already there; or nothing loaded to look in yet
        while not isinstance(self.screen, MainScreen):
            self.pop_screen()
        self.screen.go_to_hash()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_entries()))


# Whose bindings the help lists, in this order.
HELP_OWNERS: list[type] = [CacheTUI, MainScreen, LineList, FacetSidebar, SpecDetail, HashLookupScreen]
