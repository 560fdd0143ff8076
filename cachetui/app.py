"""The cachetui App: bindings (each with an id), the stylesheet, the main screen."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from cachetui.resources import stylesheet
from cachetui.screens.hash_lookup import HashLookupScreen
from cachetui.screens.help import HelpScreen
from cachetui.screens.main import MainScreen
from cachetui.service import IndexService
from cachetui.widgets.facet_sidebar import FacetSidebar
from cachetui.widgets.line_list import LineList
from cachetui.widgets.spec_detail import SpecDetail


class CacheTUI(App):
    TITLE = "cachetui"
    CSS_PATH = str(stylesheet())
    HELP_GROUP = "anywhere"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit", tooltip="Quit cachetui"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit-anywhere", tooltip="Quit cachetui, even from the search box"),
        Binding("question_mark,f1", "help", "Help", id="help", tooltip="Show every key binding"),
        Binding("ctrl+g", "go_to_hash", "Go to hash", priority=True, id="go-to-hash", tooltip="Go to a spec by the start of its hash, from anywhere"),
    ]

    def __init__(self, sources: list[str] | None = None, service: IndexService | None = None) -> None:
        super().__init__()
        self.service = service or IndexService(sources)

    def on_mount(self) -> None:
        self.push_screen(MainScreen(self.service))

    def action_go_to_hash(self) -> None:
        """From any pane or screen: close what covers the main screen, then look up."""
        if isinstance(self.screen, HashLookupScreen) or not any(isinstance(s, MainScreen) for s in self.screen_stack):
            return  # already there; or nothing loaded to look in yet
        while not isinstance(self.screen, MainScreen):
            self.pop_screen()
        self.screen.go_to_hash()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(HELP_OWNERS))


# Whose bindings the help lists, in this order.
HELP_OWNERS: list[type] = [CacheTUI, MainScreen, LineList, FacetSidebar, SpecDetail, HashLookupScreen]
