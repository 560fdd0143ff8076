"""LineList: a keyboard-driven list that renders only the rows on screen.

The model is toolong's LogLines: a ScrollView whose virtual height is the row count,
`render_line` draws one row from the data the subclass holds (row ids, never widgets),
rendered strips are kept in an LRU cache, and a cursor move repaints two lines.

The list draws its own one-column scroll bar inside its rows. Textual's ScrollBar widget
repaints line by line through Rich on every change of the list, which cost about 7 ms of
a 20 ms frame at a million specs; a bar cell appended to a cached row strip costs nothing.

A row's border cells come from `_RowFrame`: Textual's styles cache works out border,
padding and effects afresh for every repainted line, about twice the cost of the row itself;
the frame of a plain row is the same on every row, so it is worked out once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual._styles_cache import StylesCache
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from cachetui.textsafe import visible

# One piece of a row: text (data, never markup) and a component class or None.
Piece = tuple[str, str | None]


class LineList(ScrollView, can_focus=True):
    ALLOW_SELECT = False  # a drag on the bar must not start a text selection of the rows
    HELP_GROUP = "lists"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="cursor-up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="cursor-down"),
        Binding("pageup,ctrl+b", "page_up", "Page up", show=False, id="page-up"),
        Binding("pagedown,ctrl+f", "page_down", "Page down", show=False, id="page-down"),
        Binding("home,g", "first", "First row", show=False, id="first-row"),
        Binding("end,G", "last", "Last row", show=False, id="last-row"),
        Binding("enter", "select", "Choose", show=False, id="choose-row"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "line-list--cursor",
        "line-list--dim",
        "line-list--accent",
        "line-list--header",
        "line-list--empty",
        "line-list--bar",
        "line-list--match",
    }

    cursor: var[int] = var(0, always_update=False)

    class _RowMessage(Message):
        def __init__(self, line_list: LineList, index: int) -> None:
            super().__init__()
            self.line_list = line_list
            self.index = index
            self._rows_shown = line_list._rows_shown

        @property
        def control(self) -> LineList:
            return self.line_list

        @property
        def stale(self) -> bool:
            """The list's rows were replaced after this was sent: `index` is a position in
            rows no longer shown (keys that arrive in a burst can choose, then retype)."""
            return self._rows_shown != self.line_list._rows_shown

    class Highlighted(_RowMessage):
        """The cursor moved to `index`."""

    class Selected(_RowMessage):
        """The user chose the row at `index` (enter, space or a click)."""

    empty_text = "nothing to show"

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._styles_cache = _RowFrame()
        self._count = 0
        self._rows_shown = 0  # counts set_count calls: messages about older rows are stale
        self._strips: LRUCache[tuple, Strip] = LRUCache(1024)  # line key -> strip
        self._painted: dict[int, tuple] = {}  # view line -> the key Textual last painted there
        self._styles: dict[tuple[bool, bool], _PieceStyles] = {}
        self._dragging = False
        self._press_on_bar = False  # the press behind the next Click was on the bar

    # -- for subclasses -----------------------------------------------------------------

    @property
    def count(self) -> int:
        return self._count

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        """The pieces of row `index`, laid out for `width` cells."""
        raise NotImplementedError

    def set_count(self, count: int, cursor: int = 0) -> None:
        """Replace the rows: the subclass has swapped its data; repaint what changed."""
        self._count = count
        self._rows_shown += 1
        # The list's own size never depends on its rows, so skip the screen-wide layout that
        # assigning virtual_size asks for (2-5 ms a keystroke at a million specs).
        self.set_reactive(LineList.virtual_size, Size(self.size.width, max(count, 1)))
        self.set_reactive(LineList.cursor, self._clamp(cursor))
        self._scroll_cursor_into_view()
        self._repaint_changed()
        self.post_message(self.Highlighted(self, self.cursor))

    @property
    def view(self) -> Size:
        """Columns and rows for the list's rows (and its bar)."""
        # A ScrollView's container_size is its own inner area, kept by Textual as a plain
        # attribute; scrollable_content_region asks the compositor, 30 µs a call per line.
        return self.container_size

    @property
    def allow_vertical_scroll(self) -> bool:
        # Textual derives this from scroll bar visibility, which only a layout updates.
        return self._count > self.view.height and not self.disabled

    def refresh_rows(self) -> None:
        """The text of rows changed (counts, marks) but not their number."""
        self._repaint_changed()

    # -- rendering ----------------------------------------------------------------------

    def _line_key(self, y: int) -> tuple:
        """All that line `y` of the view shows: equal keys paint equal strips."""
        width, focus = self.view.width, self.has_focus
        if self._count == 0:
            pieces = ((self.empty_text, "line-list--empty"),) if y == 0 else ()
            return (pieces, False, width, focus, None)
        thumb = self._thumb()
        bar = None if thumb is None else thumb[0] <= y < thumb[1]
        inner = width - (bar is not None)
        index = self.scroll_offset.y + y
        if index >= self._count:
            return ((), False, inner, focus, bar)
        return (tuple(self.row_pieces(index, inner)), index == self.cursor, inner, focus, bar)

    def render_line(self, y: int) -> Strip:
        key = self._line_key(y)
        strip = self._strips.get(key)
        if strip is None:
            pieces, is_cursor, width, _, bar = key
            strip = self._strips[key] = self._with_bar(
                self._render_row(pieces, width, is_cursor), bar
            )
        self._painted[y] = key
        return strip

    def _repaint_changed(self) -> None:
        """Repaint only the lines of the view whose content changed.

        Textual keeps each painted line until it is marked dirty: a new result that leaves
        half the lines as they were (a count that did not move, a row that stayed on top)
        costs half the repaint, and half the bytes sent over SSH.
        """
        top, changed_from = self.scroll_offset.y, None
        for y in range(self.view.height + 1):
            changed = y < self.view.height and self._painted.get(y) != self._line_key(y)
            if changed and changed_from is None:
                changed_from = y
            elif not changed and changed_from is not None:
                self.refresh_lines(top + changed_from, y - changed_from)
                changed_from = None

    def _piece_styles(self, is_cursor: bool) -> _PieceStyles:
        key = (is_cursor, self.has_focus)
        styles = self._styles.get(key)
        if styles is None:  # resolving CSS per row was most of the cost of a repaint
            styles = self._styles[key] = _PieceStyles(self, is_cursor)
        return styles

    def _render_row(self, pieces: tuple[Piece, ...], width: int, is_cursor: bool) -> Strip:
        styles = self._piece_styles(is_cursor)
        segments = [Segment(visible(text), styles[component]) for text, component in pieces]
        return Strip(segments).adjust_cell_length(width, styles[None])

    # -- the scroll bar -----------------------------------------------------------------

    def _thumb(self) -> tuple[int, int] | None:
        """Screen rows [start, end) of the scroll bar's thumb; None when every row fits."""
        height = self.view.height
        if self._count <= height or height <= 0:
            return None
        size = max(1, round(height * height / self._count))
        start = round(self.scroll_offset.y * (height - size) / (self._count - height))
        return start, start + size

    def _with_bar(self, strip: Strip, thumb: bool | None) -> Strip:
        if thumb is None:
            return strip
        style = self._piece_styles(False)["line-list--bar"]
        return Strip([*strip, Segment("▐" if thumb else " ", style)], strip.cell_length + 1)

    def _on_bar(self, event: events.MouseEvent) -> bool:
        offset = event.get_content_offset(self)
        return offset is not None and self._thumb() is not None and offset.x == self.view.width - 1

    def _scroll_to_pointer(self, event: events.MouseEvent) -> None:
        height = self.view.height
        y = event.get_content_offset_capture(self).y  # may lie outside while dragging
        fraction = min(max(y / max(height - 1, 1), 0.0), 1.0)
        self.scroll_to(y=round(fraction * (self._count - height)), animate=False)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        # A press on the bar jumps there and follows the pointer while held. Textual makes
        # the release a Click on this list, wherever it lands: that click must not choose a row.
        self._press_on_bar = event.button == 1 and self._on_bar(event)
        if self._press_on_bar:
            self._dragging = True
            self.capture_mouse()
            self._scroll_to_pointer(event)
            event.stop()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            self._scroll_to_pointer(event)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()

    def on_mouse_release(self, event: events.MouseRelease) -> None:
        self._dragging = False  # capture taken away (another screen opened mid-drag)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}
        self._strips.clear()

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, max(self._count, 1))

    def on_focus(self) -> None:
        self.refresh_rows()

    def on_blur(self) -> None:
        self.refresh_rows()

    # -- the cursor ---------------------------------------------------------------------

    def _clamp(self, index: int) -> int:
        return max(0, min(index, self._count - 1)) if self._count else 0

    def validate_cursor(self, index: int) -> int:
        return self._clamp(index)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line(old)  # virtual row numbers: ScrollView subtracts the scroll offset
        self.refresh_line(new)
        self._scroll_cursor_into_view()
        if self._count:
            self.post_message(self.Highlighted(self, new))

    def _scroll_cursor_into_view(self) -> None:
        if self._count:
            self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, force=True)

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_page_up(self) -> None:
        self.cursor -= max(1, self.view.height - 1)

    def action_page_down(self) -> None:
        self.cursor += max(1, self.view.height - 1)

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self._count - 1

    def action_select(self) -> None:
        if self._count:
            self.post_message(self.Selected(self, self.cursor))

    async def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self._press_on_bar:
            return
        index = self.scroll_offset.y + offset.y
        if 0 <= index < self._count:
            self.cursor = index
            self.post_message(self.Selected(self, index))


class _RowFrame(StylesCache):
    """Textual's styles cache, with each content row framed by cells cut from one template row.

    Textual draws a row's gutter (border and padding) afresh for every repainted line. For a
    row without per-line effects (tint, opacity, hatch, outline) the gutter is the same on
    every content row: render one blank row the full way, keep its gutter cells, and frame
    each row with them. Border rows and styled rows still take Textual's own path.
    """

    def __init__(self) -> None:
        super().__init__()
        self._frames: dict[tuple, tuple[list[Segment], list[Segment]] | None] = {}

    def clear(self) -> None:
        super().clear()
        self._frames = {}

    def render_line(
        self,
        styles,
        y,
        size,
        content_size,
        padding,
        base_background,
        background,
        render_content_line,
        *rest,
    ) -> Strip:
        gutter = styles.gutter
        if gutter.top <= y < size.height - gutter.bottom and y - gutter.top < content_size.height:
            key = (
                size.width,
                styles.border,
                padding,
                base_background,
                background,
                rest[2],
            )  # rest[2]: opacity
            frame = self._frames.get(key, ())
            if frame == ():
                frame = self._frames[key] = self._frame(
                    styles, y, size, content_size, padding, base_background, background, rest
                )
            if frame is not None:
                # a frame: the () of a key not seen yet was replaced just above
                left, right = cast("tuple[list[Segment], list[Segment]]", frame)
                row = render_content_line(y - gutter.top).adjust_cell_length(content_size.width)
                return Strip([*left, *row, *right], size.width)
        return super().render_line(
            styles,
            y,
            size,
            content_size,
            padding,
            base_background,
            background,
            render_content_line,
            *rest,
        )

    def _frame(
        self, styles, y, size, content_size, padding, base_background, background, rest
    ) -> tuple[list[Segment], list[Segment]] | None:
        """The gutter cells left and right of a content row; None if rows need the full path."""
        opacity = rest[2]
        plain = (
            not styles.tint.a
            and opacity == 1.0
            and styles.text_opacity == 1.0
            and not (styles.has_rule("hatch") and styles.hatch != "none")
            and not any(edge for edge, _ in styles.outline)
        )
        if not plain:
            return None
        gutter = styles.gutter
        blank = Strip.blank(content_size.width)
        template = super().render_line(
            styles,
            y,
            size,
            content_size,
            padding,
            base_background,
            background,
            lambda _: blank,
            *rest,
        )
        return list(template.crop(0, gutter.left)), list(
            template.crop(size.width - gutter.right, size.width)
        )


class _PieceStyles(dict):
    """Rich style of each component class for one kind of row (cursor or not, focused or not)."""

    def __init__(self, line_list: LineList, is_cursor: bool) -> None:
        super().__init__()
        base = line_list.rich_style
        if is_cursor:
            base = base + line_list.get_component_rich_style(
                "line-list--cursor" if line_list.has_focus else "line-list--dim"
            )
        self[None] = base
        self._line_list, self._base, self._is_cursor = line_list, base, is_cursor

    def __missing__(self, component: str) -> Style:
        style = self._base + self._line_list.get_component_rich_style(component, partial=True)
        if self._is_cursor:  # the cursor's background wins over the piece's own
            style = style + Style(bgcolor=self._base.bgcolor)
        self[component] = style
        return style


def marked(
    text: str, spans: Sequence[tuple[int, int]], component: str | None = None
) -> list[Piece]:
    """`text` as pieces in `component`, the characters within `spans` marked as matching.

    `text` is already fitted: spans past its end (or under a closing ellipsis) are cut.
    """
    end_of_text = len(text) - 1 if text.endswith("…") else len(text)
    pieces: list[Piece] = []
    at = 0
    for start, end in spans:
        start, end = max(start, at), min(end, end_of_text)
        if start >= end:
            continue
        if start > at:
            pieces.append((text[at:start], component))
        pieces.append((text[start:end], "line-list--match"))
        at = end
    if at < len(text):
        pieces.append((text[at:], component))
    return pieces


def fit(text: str, width: int) -> str:
    """`text` made visible, then cut to `width` cells with an ellipsis, or padded to it."""
    if width <= 0:
        return ""
    text = visible(text)
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)
