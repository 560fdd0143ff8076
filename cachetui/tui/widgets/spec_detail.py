"""The detail pane of the highlighted spec; it follows the `row` reactive.

Below the fields, the spec's dependencies (DependencyList): the pane holds the focus, and
up/down (j/k) move through the dependency lines, enter goes to the highlighted one. Where
there is no dependency line to move to, up/down scroll the pane as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Region
from textual.reactive import reactive
from textual.widgets import Static

from cachetui.index.highlight import NO_MARKS, SpecMarks
from cachetui.model import BINARY_KIND, INSTALLED_KIND, split_flags
from cachetui.output import size_text
from cachetui.spack_format import compiler_texts, ordered_variants
from cachetui.textsafe import visible
from cachetui.tui.widgets.dependency_list import DependencyList
from cachetui.tui.widgets.immediate_scroll import ImmediateScroll

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.store import Index


class SpecDetail(ImmediateScroll, can_focus=True, can_focus_children=False):
    HELP_GROUP = "detail pane"
    BINDINGS = [
        Binding(
            "up,k",
            "dependency_up",
            "Previous dependency",
            show=False,
            id="dependency-up",
            tooltip="Detail pane: highlight the dependency line above (or scroll up)",
        ),
        Binding(
            "down,j",
            "dependency_down",
            "Next dependency",
            show=False,
            id="dependency-down",
            tooltip="Detail pane: highlight the dependency line below (or scroll down)",
        ),
        Binding(
            "enter",
            "go_to_dependency",
            "Go to dependency",
            id="go-to-dependency",
            tooltip="Detail pane: go to the highlighted dependency's spec, when it is loaded",
        ),
    ]
    COMPONENT_CLASSES = {"spec-detail--match"}

    row: reactive[int | None] = reactive(None)
    marks: reactive[SpecMarks] = reactive(NO_MARKS)  # what the search matched, marked

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index: Index | None = None

    def compose(self):
        yield Static(Text("Highlight a spec to see its details.", style="dim"), id="detail-body")
        yield DependencyList(id="dependencies")

    def watch_row(self, row: int | None) -> None:
        self._render_detail()
        self._render_dependencies()
        self.scroll_home(animate=False)

    def watch_marks(self) -> None:
        self._render_detail()

    def _render_dependencies(self) -> None:
        dependencies = self.query_one(DependencyList)
        could_go = dependencies.has_dependencies
        if self.index is None or self.row is None:
            dependencies.clear()
        else:
            from cachetui.index.deps import dependencies_of  # the index brings numpy: see above

            dependencies.show(
                dependencies_of(self.index, self.row), self.index.graph, self.index.graph_problem
            )
        if self.has_focus and dependencies.has_dependencies != could_go:
            self.refresh_bindings()  # enter shows in the footer only where there is a line to go to

    # -- the dependency lines -------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "go_to_dependency":
            return self.query_one(DependencyList).has_dependencies
        return True

    def action_dependency_up(self) -> None:
        if not self._move_dependency(-1):
            self.action_scroll_up()  # above the first line: the fields

    def action_dependency_down(self) -> None:
        if not self._move_dependency(1):
            self.action_scroll_down()

    def action_go_to_dependency(self) -> None:
        self.query_one(DependencyList).choose()

    def _move_dependency(self, step: int) -> bool:
        dependencies = self.query_one(DependencyList)
        if not dependencies.move(step):
            return False
        # Keep the highlighted line in view; the list scrolls with the pane, as one document.
        top, first = dependencies.virtual_region.y, dependencies.context_top()
        cursor = dependencies.cursor
        assert cursor is not None and first is not None  # move() just highlighted a line
        self.scroll_to_region(
            Region(0, top + first, 1, cursor - first + 1),
            animate=False,
            immediate=True,
        )
        return True

    def on_focus(self) -> None:
        self.query_one(DependencyList).refresh_cursor()

    def on_blur(self) -> None:
        self.query_one(DependencyList).refresh_cursor()

    def _render_detail(self) -> None:
        body = self.query_one("#detail-body", Static)
        if self.index is None or self.row is None:
            body.update(Text("Highlight a spec to see its details.", style="dim"))
        else:
            body.update(
                detail_text(
                    self.index,
                    self.row,
                    self.marks,
                    self.get_component_rich_style("spec-detail--match"),
                )
            )


KIND_TEXTS = {
    INSTALLED_KIND: "installed (a local install database lists it)",
    BINARY_KIND: "binary (in a build cache)",
}


def detail_text(
    index: Index, row: int, marks: SpecMarks = NO_MARKS, match: Style | str = "reverse"
) -> Text:
    """Every field of one spec; data goes in as plain text, never as markup. What the search
    matched (`marks`) is drawn in the `match` style."""
    spec = index.spec(row)
    text = Text()
    marked = marks.columns

    def line(label: str, value: str, style: Style | str = "") -> None:
        text.append(f"{label:<9}", style="bold")
        text.append(visible(value) + "\n", style=style)

    text.append(visible(spec.package), style="bold")
    text.append("@" + visible(spec.version) + "\n", style=match if "version" in marked else "bold")
    text.append(f"{'hash':<9}", style="bold")
    matched = marks.hash_length(spec.hash)
    text.append(spec.hash[:matched], style=match)
    text.append(spec.hash[matched:] + "\n", style="bold")
    # As Spack 1.x writes it: with the languages it provides (`c,cxx=gcc@10.2.1`), and each
    # compiler where the edges name several (`c=gcc@10.2.1 cxx=llvm@17.0.6`).
    compilers = (
        " ".join(written.lstrip("%") for written in compiler_texts(index, row)) or spec.compiler
    )
    line("compiler", compilers, match if "compiler" in marked else "")
    text.append(f"{'arch':<9}", style="bold")
    for i, column in enumerate(("platform", "os", "target")):
        text.append("-" if i else "")
        text.append(visible(getattr(spec, column)), style=match if column in marked else "")
    text.append("\n")
    line("tag", spec.tag, match if "tag" in marked else "")
    line("kind", KIND_TEXTS.get(spec.kind, spec.kind), match if "kind" in marked else "")
    line("size", size_text(spec.size))
    line("tarball", spec.tarball or "unknown")
    files = index.binary_files(row)  # where a build cache's mirror is known
    if files.spec_file:
        line("specfile", files.spec_file)
    if files.manifest:
        line("manifest", files.manifest)
    line("source", spec.source)
    line("install", spec.install_command, "bold")
    variants, flags = split_flags(ordered_variants(spec.variants))  # in the order Spack prints them
    text.append("variants\n", style="bold")
    for variant in variants or ["(none)"]:
        text.append("  ")
        text.append(visible(variant) + "\n", style=match if marks.variant_matches(variant) else "")
    if flags:  # compiler flags, where a build-cache index gives them
        text.append("flags\n", style="bold")
        for flag in flags:
            text.append("  " + visible(flag) + "\n")
    text.append("stacks\n", style="bold")
    for stack in spec.stacks or ("(none)",):
        text.append("  ")
        text.append(visible(stack) + "\n", style=match if stack in marks.stacks else "")
    text.rstrip()
    return text
