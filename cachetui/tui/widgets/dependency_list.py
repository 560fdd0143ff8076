"""DependencyList: the dependency sections of the detail pane, one line per dependency.

Three sections follow the spec's fields: what it depends on at link/run time (a tree, each
node once, repeats marked), its build-only dependencies, and what uses it. A line is one
edge; the cursor moves over dependency lines only (headers and notes are skipped), and
enter posts `Chosen` for the screen to go there.

The widget is as tall as its lines and sits in the detail pane's scroll, so the fields and
the sections scroll as one document. It is a Line API widget: Textual asks `render_line` only
for the lines in view, so a spec used by thousands renders a screenful, and a cursor move
repaints two lines. It takes no focus of its own: the detail pane (its parent) holds the
focus and moves the cursor, so the panes stay one tab stop each.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip
from textual.widget import Widget

from cachetui.model import NodeKind
from cachetui.textsafe import visible

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.deps import Dependencies
    from cachetui.index.graph import Dependency, Graph

NO_SOURCE_TEXT = "dependencies: not in this source (a cache.spack.io summary)"
SECTION_TREE = "depends on (link/run)"
SECTION_BUILD = "build dependencies"
SECTION_USED_BY = "used by"


class _Line(NamedTuple):
    prefix: str  # indentation and tree glyphs
    dependency: Dependency | None  # None: a header or a note, which the cursor skips
    text: str = ""  # a header's or a note's text
    component: str | None = None  # and its component class
    repeated: bool = False  # shown above already (the tree's repeats)


class _Lines:
    """The lines of the sections: `head` made up front (headers, the tree of at most
    deps.MOST_LINES lines, build deps), then one line per dependent, made when drawn: a spec
    used by 100,000 others costs no line objects until they scroll into view."""

    def __init__(self, head: list[_Line], tail: Sequence[Dependency] = ()) -> None:
        self._head, self._tail = head, tail

    def __len__(self) -> int:
        return len(self._head) + len(self._tail)

    def __getitem__(self, at: int) -> _Line:
        if at < 0:
            raise IndexError(at)
        head = self._head
        return head[at] if at < len(head) else _Line("  ", self._tail[at - len(head)])

    def __iter__(self) -> Iterator[_Line]:
        return (self[at] for at in range(len(self)))


_NO_SOURCE = _Lines([_Line("", None, NO_SOURCE_TEXT, "dependency-list--dim")])


class DependencyList(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "dependency-list--cursor",  # the highlighted line, while the detail pane has focus
        "dependency-list--cursor-unfocused",  # the highlighted line, otherwise
        "dependency-list--header",
        "dependency-list--hash",
        "dependency-list--tree",  # glyphs
        "dependency-list--dim",  # edge types, virtuals, repeats, notes
        "dependency-list--kind",  # not a binary: external, not in the cache, ...
    }

    cursor: var[int | None] = var(None, always_update=False)  # a line index; None: none highlighted

    class Chosen(Message):
        """The user chose a dependency line (enter on it, or a double click)."""

        def __init__(self, dependency_list: DependencyList, dependency: Dependency) -> None:
            super().__init__()
            self.dependency_list = dependency_list
            self.dependency = dependency

        @property
        def control(self) -> DependencyList:
            return self.dependency_list

        @property
        def hash(self) -> str:
            return self.dependency.hash

        @property
        def name(self) -> str:
            return self.dependency.name

        @property
        def version(self) -> str:
            return self.dependency.version

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: _Lines = _Lines([])
        self._graph: Graph | None = None
        self._has_dependencies = False

    # -- content --------------------------------------------------------------------------

    def show(
        self, dependencies: Dependencies | None, graph: Graph | None, problem: str | None = None
    ) -> None:
        """Show a spec's dependencies; None: its source has no dependency information (or,
        with `problem`, the on-disk index could not give it)."""
        self._graph = graph
        self.set_reactive(DependencyList.cursor, None)
        if dependencies is None and problem:
            self._lines = _Lines(
                [_Line("", None, f"dependencies: {problem}", "dependency-list--dim")]
            )
        elif dependencies is None:
            if self._lines is _NO_SOURCE:
                return  # the same line as for the last spec: nothing to lay out or paint
            self._lines = _NO_SOURCE
        else:
            self._lines = _lines_of(dependencies)
        self._has_dependencies = dependencies is not None and not dependencies.empty
        self.refresh(layout=True)

    def clear(self) -> None:
        self._graph, self._lines, self._has_dependencies = None, _Lines([]), False
        self.set_reactive(DependencyList.cursor, None)
        self.refresh(layout=True)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    @property
    def has_dependencies(self) -> bool:
        return self._has_dependencies

    @property
    def highlighted(self) -> Dependency | None:
        return None if self.cursor is None else self._lines[self.cursor].dependency

    def plain_lines(self) -> list[str]:
        """Every line as text, as drawn at any width that fits it (for scripts and tests)."""
        return [self._text_of(line) for line in self._lines]

    # -- the cursor (moved by the detail pane) --------------------------------------------

    def move(self, step: int) -> bool:
        """Highlight the next dependency line down (step 1) or up (-1); False if there is none."""
        at = self.cursor
        if at is None:  # down starts at the first line; up has nowhere to go (the pane scrolls)
            if step < 0:
                return False
            at = -1
        at += step
        while 0 <= at < len(self._lines):
            if self._lines[at].dependency is not None:
                self.cursor = at
                return True
            at += step
        return False

    def context_top(self) -> int | None:
        """The line to keep in view above the cursor: its section's header, when right above it."""
        at = self.cursor
        if at is None:
            return None
        return (
            at - 1 if at > 0 and self._lines[at - 1].component == "dependency-list--header" else at
        )

    def choose(self) -> bool:
        """Post `Chosen` for the highlighted line; False when none is highlighted."""
        dependency = self.highlighted
        if dependency is None:
            return False
        self.post_message(self.Chosen(self, dependency))
        return True

    def validate_cursor(self, cursor: int | None) -> int | None:
        if (
            cursor is None
            or not 0 <= cursor < len(self._lines)
            or self._lines[cursor].dependency is None
        ):
            return None
        return cursor

    def watch_cursor(self, old: int | None, new: int | None) -> None:
        for y in (old, new):
            if y is not None:
                self.refresh(Region(0, y, self.size.width, 1))

    def refresh_cursor(self) -> None:
        """The pane's focus changed: the highlighted line changes its look."""
        if self.cursor is not None:
            self.refresh(Region(0, self.cursor, self.size.width, 1))

    def _pane_has_focus(self) -> bool:
        parent = self.parent
        return isinstance(parent, Widget) and parent.has_focus

    # -- mouse --------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        """A click highlights a dependency line, a double click goes there; headers do nothing."""
        offset = event.get_content_offset(self)
        if (
            offset is None
            or not 0 <= offset.y < len(self._lines)
            or self._lines[offset.y].dependency is None
        ):
            return
        self.cursor = offset.y
        if event.chain >= 2:
            self.choose()

    # -- rendering ----------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if not 0 <= y < len(self._lines):
            return Strip.blank(width, base)
        cursor = None
        if y == self.cursor:  # (full styles: a partial one would not blend `$accent 40%`)
            cursor = self.get_component_rich_style(
                "dependency-list--cursor"
                if self._pane_has_focus()
                else "dependency-list--cursor-unfocused"
            )
            base = base + cursor
        segments = []
        for text, component in self._pieces(self._lines[y]):
            style = (
                base
                if component is None
                else self.rich_style + self.get_component_rich_style(component)
            )
            if cursor is not None:  # the cursor's background (and weight) win over the piece's own
                style = style + Style(bgcolor=cursor.bgcolor, bold=cursor.bold)
            segments.append(Segment(visible(text), style))
        return Strip(segments).crop(0, width).adjust_cell_length(width, base)

    def _pieces(self, line: _Line) -> list[tuple[str, str | None]]:
        """The pieces of a line: (text, component class or None). Text is data: never markup."""
        dependency = line.dependency
        if dependency is None:
            return [(line.prefix, None), (line.text, line.component)]
        pieces: list[tuple[str, str | None]] = [(line.prefix, "dependency-list--tree")]
        pieces.append(
            (
                f"{dependency.name}@{dependency.version}"
                if dependency.version
                else dependency.name,
                None,
            )
        )
        pieces.append((f" /{dependency.hash[:7]}", "dependency-list--hash"))
        pieces.append((f" [{','.join(dependency.deptype_names)}]", "dependency-list--dim"))
        if dependency.virtuals:
            pieces.append((f" %{','.join(dependency.virtuals)}", "dependency-list--dim"))
        if dependency.kind != NodeKind.BINARY:
            pieces.append((f" ({self._kind_text(dependency)})", "dependency-list--kind"))
        if line.repeated:
            pieces.append((" (see above)", "dependency-list--dim"))
        return pieces

    def _kind_text(self, dependency: Dependency) -> str:
        path = (
            self._graph.external_path(dependency.node)
            if self._graph is not None and dependency.kind == NodeKind.EXTERNAL
            else None
        )
        return f"external: {path}" if path else dependency.kind_name

    def _text_of(self, line: _Line) -> str:
        return "".join(visible(text) for text, _ in self._pieces(line))


def _lines_of(dependencies: Dependencies) -> _Lines:
    """The three sections as lines: the tree with its glyphs, then build deps, then used by."""
    lines = [_Line("", None, SECTION_TREE, "dependency-list--header")]
    lines.extend(_tree_lines(dependencies.tree) or [_none()])
    if dependencies.cut:
        lines.append(
            _Line(
                "  ",
                None,
                f"(the tree is cut at {len(dependencies.tree):,} lines)",
                "dependency-list--dim",
            )
        )
    lines.append(_Line("", None, SECTION_BUILD, "dependency-list--header"))
    lines.extend([_Line("  ", d) for d in dependencies.build] or [_none()])
    used_by = dependencies.used_by
    lines.append(
        _Line(
            "",
            None,
            f"{SECTION_USED_BY} ({len(used_by):,})" if used_by else SECTION_USED_BY,
            "dependency-list--header",
        )
    )
    if not used_by:
        lines.append(_none())
    return _Lines(lines, used_by)


def _none() -> _Line:
    return _Line("  ", None, "(none)", "dependency-list--dim")


def _tree_lines(tree) -> list[_Line]:
    """Tree lines with glyphs: "├ " before a node with a later sibling, "└ " before the last,
    and under each ancestor "│ " while that ancestor has a later sibling (2 cells a level)."""
    n = len(tree)
    last = [False] * n
    later: list[bool] = []  # going up from the end: a later line at this depth, same parent
    for i in range(n - 1, -1, -1):
        depth = tree[i].depth
        if len(later) < depth + 1:
            later.extend([False] * (depth + 1 - len(later)))
        last[i] = not later[depth]
        later[depth] = True
        for deeper in range(depth + 1, len(later)):  # lines above belong to another parent
            later[deeper] = False
    lines = []
    ancestors_last: list[bool] = []  # for each depth: was the latest node there its parent's last
    for i, line in enumerate(tree):
        depth = line.depth
        del ancestors_last[depth - 1 :]
        bars = "".join("  " if done else "│ " for done in ancestors_last)
        lines.append(
            _Line(
                "  " + bars + ("└ " if last[i] else "├ "), line.dependency, repeated=line.repeated
            )
        )
        ancestors_last.append(last[i])
    return lines
