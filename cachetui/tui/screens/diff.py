"""The diff screen (`c`): what changed from one cache tag to another, navigable like the
main screen. On the left the changed packages with their counts (+added -removed ~rebuilt),
on the right the changes of the highlighted one as spec lines; enter on a change goes to
that spec on the main screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from cachetui.spack_format import short_spec
from cachetui.textsafe import visible
from cachetui.tui.screens.once import DismissOnce
from cachetui.tui.widgets.line_list import LineList, Piece, fit

if TYPE_CHECKING:
    from cachetui.index.diff import TagDiff

MARKS = {
    "added": ("+", "line-list--match"),
    "removed": ("-", "line-list--accent"),
    "rebuilt": ("~", "line-list--header"),
}


class DiffPackageList(LineList):
    empty_text = "no package changed"

    def __init__(self, changes: TagDiff, **kwargs) -> None:
        super().__init__(**kwargs)
        self.names = list(changes.packages)
        self._changes = changes

    def on_mount(self) -> None:
        self.set_count(len(self.names))

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        change = self._changes.packages[self.names[index]]
        counts = f" +{len(change.added)} -{len(change.removed)} ~{len(change.rebuilt)}"
        return [
            (
                " "
                + fit(self.names[index], max(1, width - len(counts) - 1)).ljust(
                    max(1, width - len(counts) - 1)
                ),
                None,
            ),
            (counts, "line-list--dim"),
        ]


class ChangeList(LineList):
    """One line a change: `+ /hash spec`, `- /hash spec`, `~ /new (was /old) spec`. `rows`
    gives, for each line, the index row to go to (the new spec; the old one for a removal)."""

    empty_text = "highlight a package"

    def __init__(self, changes: TagDiff, **kwargs) -> None:
        super().__init__(**kwargs)
        self._changes = changes
        self._lines: list[tuple[str, int, str]] = []  # (kind, row, suffix)

    @property
    def rows(self) -> list[int]:
        return [row for _, row, _ in self._lines]

    def show(self, name: str | None) -> None:
        old_rows, new_rows = (
            self._changes.old_rows,
            self._changes.new_rows,
        )  # (a dict: fast at any size)
        lines: list[tuple[str, int, str]] = []
        if name is not None:
            change = self._changes.packages[name]
            lines += [("added", new_rows[digest], "") for digest in change.added]
            lines += [("removed", old_rows[digest], "") for digest in change.removed]
            lines += [
                ("rebuilt", new_rows[new_hash], f"(was /{old_hash[:7]}) ")
                for old_hash, new_hash in change.rebuilt
            ]
        self._lines = lines
        self.set_count(len(lines))

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        kind, row, suffix = self._lines[index]
        mark, style = MARKS[kind]
        side = self._changes.old if kind == "removed" else self._changes.new
        digest = side.index.hashes[row]
        spec = short_spec(side.index, row)  # the hash leads: it is what changed
        return [
            (f" {mark} ", style),
            (f"/{digest[:7]} ", "line-list--accent"),
            (fit(suffix + spec, max(1, width - 12)), None),
        ]


class DiffScreen(DismissOnce, Screen["int | None"]):
    """Dismissed with the index row to go to, or None."""

    HELP_GROUP = "tag diff"
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="close-diff", tooltip="Back to the main screen"),
        Binding(
            "tab",
            "app.focus_next",
            "Next pane",
            show=False,
            id="diff-focus-next",
            tooltip="Move between the packages and their changes",
        ),
        Binding(
            "shift+tab",
            "app.focus_previous",
            "Previous pane",
            show=False,
            id="diff-focus-previous",
            tooltip="Move between the packages and their changes",
        ),
    ]

    def __init__(self, changes: TagDiff) -> None:
        super().__init__()
        self.changes = changes

    def compose(self) -> ComposeResult:
        summary = f"{self.changes.old.label} -> {self.changes.new.label}: {self.changes.summary()}"
        yield Static(visible(summary), id="diff-summary", markup=False)
        with Horizontal(id="diff-body"):
            yield DiffPackageList(self.changes, id="diff-packages")
            yield ChangeList(self.changes, id="diff-changes")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#diff-packages").border_title = "Changed packages"
        self.query_one("#diff-changes").border_title = "Changes (+ added, - removed, ~ rebuilt)"
        self.query_one(DiffPackageList).focus()

    def on_line_list_highlighted(self, event: LineList.Highlighted) -> None:
        if isinstance(event.line_list, DiffPackageList) and not event.stale:
            names = event.line_list.names
            self.query_one(ChangeList).show(names[event.index] if names else None)

    def on_line_list_selected(self, event: LineList.Selected) -> None:
        if event.stale:
            return
        if isinstance(event.line_list, DiffPackageList):
            self.query_one(ChangeList).focus()
        elif isinstance(event.line_list, ChangeList) and event.line_list.rows:
            self.dismiss_once(event.line_list.rows[event.index])

    def action_close(self) -> None:
        self.dismiss_once(None)
