"""Help: every binding, generated from the bindings themselves (id, keys, description)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def binding_rows(owners: list[type]) -> list[tuple[str, str, str, str]]:
    """(where, keys, description, id) for every binding with an id, in owner order."""
    rows, seen = [], set()
    for owner in owners:
        for binding in getattr(owner, "BINDINGS", []):
            if isinstance(binding, Binding) and binding.id and binding.id not in seen:
                seen.add(binding.id)
                keys = ", ".join(_key_name(k) for k in binding.key.split(","))
                rows.append((getattr(owner, "HELP_GROUP", owner.__name__), keys, binding.tooltip or binding.description, binding.id))
    return rows


def _key_name(key: str) -> str:
    return {"question_mark": "?", "slash": "/", "space": "space"}.get(key.strip(), key.strip())


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close help", id="close-help")]

    def __init__(self, owners: list[type]) -> None:
        super().__init__()
        self._owners = owners

    def compose(self) -> ComposeResult:
        table = Table(title="cachetui keys", expand=True, show_edge=False)
        for column in ("where", "keys", "what it does", "binding id"):
            table.add_column(column)
        for row in binding_rows(self._owners):
            table.add_row(*(Text(cell) for cell in row))
        with VerticalScroll(id="help-box"):
            yield Static(table)
            yield Static(Text("The search box takes Spack spec syntax (zlib@1.3: %gcc +shared os=ubuntu24.04); /2feova4 in it finds a hash, enter goes there. Escape closes this help."))

    def action_close(self) -> None:
        self.dismiss(None)
