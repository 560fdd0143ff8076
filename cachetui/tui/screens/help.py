"""Help: every binding, generated from the bindings themselves (cachetui/keys.py), with
the keys the user's keymap gives them and the names the footer and the palette use."""

from __future__ import annotations

from itertools import groupby

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

from cachetui.tui.keys import KeyEntry
from cachetui.tui.screens.once import DismissOnce
from cachetui.tui.widgets.immediate_scroll import ImmediateScroll


def _group_table(group: str, entries: list[KeyEntry], id_width: int, header: bool) -> Table:
    """One table per place a binding works; the same column widths keep them aligned."""
    table = Table(
        title=Text(group, style="bold underline"),
        title_justify="left",
        expand=True,
        show_edge=False,
        show_header=header,
    )
    table.add_column("keys", ratio=2)
    table.add_column("name", ratio=2)
    table.add_column("what it does", ratio=5)
    table.add_column("binding id", width=id_width, no_wrap=True)  # what a keymap names: never cut
    for entry in entries:
        table.add_row(
            *(Text(cell) for cell in (entry.keys, entry.description, entry.tooltip, entry.id))
        )
    return table


class HelpScreen(DismissOnce, ModalScreen[None]):
    HELP_GROUP = "help"
    BINDINGS = [
        Binding(
            "escape,q,question_mark,f1",
            "close",
            "Close help",
            id="close-help",
            tooltip="Close this help",
        )
    ]

    def __init__(self, entries: list[KeyEntry]) -> None:
        super().__init__()
        self._entries = entries

    def compose(self) -> ComposeResult:
        with ImmediateScroll(id="help-box"):
            yield Static(
                Text(
                    "cachetui keys · binding ids name them in the config file's [keymap]",
                    style="bold",
                )
            )
            id_width = max(len(entry.id) for entry in self._entries)
            for number, (group, entries) in enumerate(
                groupby(self._entries, key=lambda entry: entry.group)
            ):
                yield Static(_group_table(group, list(entries), id_width, header=number == 0))
            yield Static(
                Text(
                    "The search box takes Spack spec syntax "
                    "(zlib@1.3: %gcc +shared os=ubuntu24.04); /2feova4 in it "
                    "finds a hash, enter goes there. ctrl+p finds every command by name. "
                    "Escape closes this help."
                )
            )

    def action_close(self) -> None:
        self.dismiss_once(None)
