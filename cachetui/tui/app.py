"""The cachetui App: bindings (each with an id), the stylesheet, the main screen, and what
the user's config sets (theme, keymap); copying to the terminal's clipboard."""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence

from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter, Monochrome, NoColor
from textual.theme import BUILTIN_THEMES, Theme

from cachetui.config import (
    DEFAULT_THEME,
    ORIGIN_DEFAULT,
    Config,
    ConfigProblem,
    check_keymap,
    remember_theme,
)
from cachetui.resources import stylesheet
from cachetui.service import IndexService
from cachetui.textsafe import visible
from cachetui.tui.clipboard import clipboard_sequences
from cachetui.tui.keys import KeyEntry, binding_ids, key_entries, keymap_clashes
from cachetui.tui.messages import Loaded
from cachetui.tui.palette import CacheCommands
from cachetui.tui.screens.coverage import CoverageScreen
from cachetui.tui.screens.diff import DiffScreen
from cachetui.tui.screens.export import ExportScreen
from cachetui.tui.screens.hash_lookup import HashLookupScreen
from cachetui.tui.screens.help import HelpScreen
from cachetui.tui.screens.main import MainScreen
from cachetui.tui.screens.palette import Palette
from cachetui.tui.screens.problems import ProblemsScreen
from cachetui.tui.widgets.facet_sidebar import FacetSidebar
from cachetui.tui.widgets.line_list import LineList
from cachetui.tui.widgets.spec_detail import SpecDetail


class CacheTUI(App):
    TITLE = "cachetui"
    CSS_PATH = str(stylesheet())
    HELP_GROUP = "anywhere"
    COMMANDS = {CacheCommands}  # our commands only: the palette, the help and the footer agree
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit cachetui"),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            show=False,
            priority=True,
            id="quit-anywhere",
            tooltip="Quit cachetui, even from the search box",
        ),
        Binding("question_mark,f1", "help", "Help", id="help", tooltip="Show every key binding"),
        Binding(
            "ctrl+p",
            "command_palette",
            "Palette",
            show=False,
            priority=True,
            id="command-palette",
            tooltip=(
                "Commands: go to a package, toggle a filter, switch tag, "
                "look up a hash, copy, theme"
            ),
        ),
        Binding(
            "ctrl+g",
            "go_to_hash",
            "Go to hash",
            show=False,
            priority=True,
            id="go-to-hash",
            tooltip="Go to a spec by the start of its hash, from anywhere",
        ),
    ]

    def __init__(
        self,
        sources: list[str] | None = None,
        service: IndexService | None = None,
        config: Config | None = None,
    ) -> None:
        super().__init__()
        self.service = service or IndexService(sources)
        # No config given (tests, embedding): the defaults, and nothing remembered.
        self.config = config or Config()
        check_config(self.config)
        # Over SSH every animated frame costs bandwidth and latency: none unless asked for
        # (TEXTUAL_ANIMATIONS in the environment still wins).
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            self.animation_level = "none"
        self.set_keymap(self.config.keymap)
        self.theme = self._remembered_theme = self.config.theme or DEFAULT_THEME

    def get_line_filters(self) -> Sequence[LineFilter]:
        """With NO_COLOR (`--color none`), no colour at all: Textual's own choice, greys, still
        sends colours. The terminal's default colours and the text attributes remain; the
        stylesheet marks the cursor and the focused pane with attributes then (:nocolor)."""
        return [NoColor() if isinstance(f, Monochrome) else f for f in super().get_line_filters()]

    def on_loaded(self, message: Loaded) -> None:
        """Data is loaded (the screen has shown it; the message bubbles up here)."""
        settle_memory_for_good()

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.push_screen(MainScreen(self.service))
        self._tell_config_problems()

    def _tell_config_problems(self) -> None:
        """One notification, not one each: a dozen toasts would cover the screen and expire
        unread. The CLI prints them all on stderr when the app ends; `cachetui config` too."""
        problems = self.config.problems
        if not problems:
            return
        shown = "\n".join(visible(f"{p.source}: {p.message}") for p in problems[:3])
        more = (
            f"\n… and {len(problems) - 3} more: `cachetui config` lists them"
            if len(problems) > 3
            else ""
        )
        self.notify(
            shown + more,
            title=f"Config: {len(problems)} problem{'s' if len(problems) > 1 else ''}",
            severity="warning",
            timeout=20,
            markup=False,
        )

    def _theme_changed(self, theme: Theme) -> None:
        # A choice made in the app is kept for next time (not the one it started with).
        if theme.name != self._remembered_theme:
            self._remembered_theme = theme.name
            remember_theme(self.config, theme.name)

    def key_entries(self) -> list[KeyEntry]:
        """Every binding, with the keys the user's keymap gives it."""
        return key_entries(HELP_OWNERS, self._keymap)

    def copy_to_clipboard(self, text: str) -> None:
        """OSC 52, and inside tmux its passthrough form too (clipboard.py); Textual's own copies
        (ctrl+c in a text box) go this way as well."""
        self._clipboard = text
        if self._driver is not None:
            for sequence in clipboard_sequences(text):
                self._driver.write(sequence)

    def copy(self, text: str, what: str) -> None:
        """Copy, and show what was copied: to select by hand where the terminal ignores OSC 52."""
        self.copy_to_clipboard(text)
        self.notify(visible(text), title=f"Copied {what}", timeout=10, markup=False)

    def action_command_palette(self) -> None:
        """Textual's palette, safe against key bursts (screens/palette.py)."""
        if self.use_command_palette and not Palette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    def action_go_to_hash(self) -> None:
        """From any pane or screen: close what covers the main screen, then look up."""
        if isinstance(self.screen, HashLookupScreen) or not any(
            isinstance(s, MainScreen) for s in self.screen_stack
        ):
            return  # already there; or nothing loaded to look in yet
        while not isinstance(self.screen, MainScreen):
            self.pop_screen()
        self.screen.go_to_hash()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_entries()))


# Whose bindings the help lists, in this order.
HELP_OWNERS: list[type] = [
    CacheTUI,
    MainScreen,
    LineList,
    FacetSidebar,
    SpecDetail,
    HashLookupScreen,
    DiffScreen,
    CoverageScreen,
    ExportScreen,
    HelpScreen,
    ProblemsScreen,
]


def check_config(config: Config) -> None:
    """Check what only the app knows: its binding ids, the keys the keymap gives them, its
    theme names. What is wrong is dropped, with a problem naming the file and the key."""
    found = []
    check_keymap(config, binding_ids(HELP_OWNERS))
    for binding_id, why in keymap_clashes(
        CacheTUI._normalize_keymap(config.keymap), binding_chains()
    ):
        found.append(ConfigProblem(config.origin(f"keymap.{binding_id}"), why))
    if config.theme and config.theme not in BUILTIN_THEMES:
        known = ", ".join(sorted(BUILTIN_THEMES))
        found.append(
            ConfigProblem(
                config.origin("theme"),
                f"key 'theme': no theme named '{visible(config.theme)}' (themes: {known})",
            )
        )
        config.theme, config.origins["theme"] = None, ORIGIN_DEFAULT
    config.problems += [
        problem for problem in found if problem not in config.problems
    ]  # checked twice: said once


def binding_chains() -> list[list[type]]:
    """The owners whose bindings are in force together, for each place the focus can be."""
    return [
        [LineList, MainScreen, CacheTUI],  # the package and spec lists
        [FacetSidebar, LineList, MainScreen, CacheTUI],
        [SpecDetail, MainScreen, CacheTUI],
        [MainScreen, CacheTUI],  # the search box
        [HashLookupScreen, LineList, CacheTUI],
        [DiffScreen, LineList, CacheTUI],
        [ExportScreen, CacheTUI],
        [HelpScreen, CacheTUI],
        [ProblemsScreen, LineList, CacheTUI],
    ]


def settle_memory_for_good() -> None:
    # The index and the app are built and live as long as the process: move them out of
    # the collector's sight. Otherwise every oldest-generation collection walks them all,
    # a pause of 50-65 ms at a million specs that lands in the middle of a keystroke.
    gc.collect()  # what is garbage now would otherwise be frozen with the rest, for good
    gc.freeze()
    # Every frame leaves garbage in cycles (Textual's Strips cache themselves in their
    # own crop caches: seven caches a strip). Collected with the youngest generation
    # (threshold 1), it goes a few thousand objects at a time; left to pile up in the
    # middle one (20_000, 20, 20), one collection freed 90k objects in 142 ms, in the
    # middle of a facet toggle at 1M. (10_000, 1, 50): the longest pause 33 ms.
    gc.set_threshold(10_000, 1, 50)
