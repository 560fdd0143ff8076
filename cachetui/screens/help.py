"""Help: every binding, generated from the bindings themselves (cachetui/keys.py), with\nthe keys the user's keymap gives them."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from cachetui.keys import KeyEntry


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close help", id="close-help")]

    def __init__(self, entries: list[KeyEntry]) -> None:
        super().__init__()
        self._entries = entries

    def compose(self) -> ComposeResult:
        table = Table(title="cachetui keys", expand=True, show_edge=False)
        for column in ("where", "keys", "what it does", "binding id"):
            table.add_column(column)
        for entry in self._entries:
            table.add_row(*(Text(cell) for cell in (entry.group, entry.keys, entry.tooltip, entry.id)))
        with VerticalScroll(id="help-box"):
            yield Static(table)
            yield Static(Text("The search box takes Spack spec syntax (zlib@1.3: %gcc +shared os=ubuntu24.04); /2feova4 in it finds a hash, enter goes there. Escape closes this help."))

    def action_close(self) -> None:
        self.dismiss(None)
