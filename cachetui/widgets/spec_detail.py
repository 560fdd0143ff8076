"""The detail pane of the highlighted spec; it follows the `row` reactive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from cachetui.output import size_text
from cachetui.textsafe import visible

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class SpecDetail(VerticalScroll, can_focus=True):
    row: reactive[int | None] = reactive(None)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index: Index | None = None

    def compose(self):
        yield Static(Text("Highlight a spec to see its details.", style="dim"), id="detail-body")

    def watch_row(self, row: int | None) -> None:
        body = self.query_one("#detail-body", Static)
        if self.index is None or row is None:
            body.update(Text("Highlight a spec to see its details.", style="dim"))
            return
        body.update(detail_text(self.index, row))
        self.scroll_home(animate=False)


def detail_text(index: Index, row: int) -> Text:
    """Every field of one spec; data goes in as plain text, never as markup."""
    spec = index.spec(row)
    text = Text()

    def line(label: str, value: str, style: str = "") -> None:
        text.append(f"{label:<9}", style="bold")
        text.append(visible(value) + "\n", style=style)

    text.append(visible(f"{spec.package}@{spec.version}") + "\n", style="bold")
    line("hash", spec.hash, "bold")
    line("compiler", spec.compiler)
    line("arch", spec.arch)
    line("tag", spec.tag)
    line("size", size_text(spec.size))
    line("tarball", spec.tarball or "unknown")
    line("source", spec.source)
    line("install", spec.install_command, "bold")
    text.append("variants\n", style="bold")
    for variant in spec.variants or ("(none)",):
        text.append("  " + visible(variant) + "\n")
    text.append("stacks\n", style="bold")
    for stack in spec.stacks or ("(none)",):
        text.append("  " + visible(stack) + "\n")
    text.rstrip()
    return text
