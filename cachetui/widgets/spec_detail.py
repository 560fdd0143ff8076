"""The detail pane of the highlighted spec; it follows the `row` reactive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from cachetui.index.highlight import NO_MARKS, SpecMarks
from cachetui.output import size_text
from cachetui.textsafe import visible

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class SpecDetail(VerticalScroll, can_focus=True):
    COMPONENT_CLASSES = {"spec-detail--match"}

    row: reactive[int | None] = reactive(None)
    marks: reactive[SpecMarks] = reactive(NO_MARKS)  # what the search matched, marked

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index: Index | None = None

    def compose(self):
        yield Static(Text("Highlight a spec to see its details.", style="dim"), id="detail-body")

    def watch_row(self, row: int | None) -> None:
        self._render_detail()
        self.scroll_home(animate=False)

    def watch_marks(self) -> None:
        self._render_detail()

    def _render_detail(self) -> None:
        body = self.query_one("#detail-body", Static)
        if self.index is None or self.row is None:
            body.update(Text("Highlight a spec to see its details.", style="dim"))
        else:
            body.update(detail_text(self.index, self.row, self.marks, self.get_component_rich_style("spec-detail--match")))


def detail_text(index: Index, row: int, marks: SpecMarks = NO_MARKS, match: Style | str = "reverse") -> Text:
    """Every field of one spec; data goes in as plain text, never as markup. What the search
    matched (`marks`) is drawn in the `match` style."""
    spec = index.spec(row)
    text = Text()
    marked = marks.columns

    def line(label: str, value: str, style: str = "") -> None:
        text.append(f"{label:<9}", style="bold")
        text.append(visible(value) + "\n", style=style)

    text.append(visible(spec.package), style="bold")
    text.append("@" + visible(spec.version) + "\n", style=match if "version" in marked else "bold")
    text.append(f"{'hash':<9}", style="bold")
    matched = marks.hash_length(spec.hash)
    text.append(spec.hash[:matched], style=match)
    text.append(spec.hash[matched:] + "\n", style="bold")
    line("compiler", spec.compiler, match if "compiler" in marked else "")
    text.append(f"{'arch':<9}", style="bold")
    for i, column in enumerate(("platform", "os", "target")):
        text.append("-" if i else "")
        text.append(visible(getattr(spec, column)), style=match if column in marked else "")
    text.append("\n")
    line("tag", spec.tag, match if "tag" in marked else "")
    line("size", size_text(spec.size))
    line("tarball", spec.tarball or "unknown")
    line("source", spec.source)
    line("install", spec.install_command, "bold")
    text.append("variants\n", style="bold")
    for variant in spec.variants or ("(none)",):
        text.append("  ")
        text.append(visible(variant) + "\n", style=match if marks.variant_matches(variant) else "")
    text.append("stacks\n", style="bold")
    for stack in spec.stacks or ("(none)",):
        text.append("  ")
        text.append(visible(stack) + "\n", style=match if stack in marks.stacks else "")
    text.rstrip()
    return text
