"""The stats view's charts: plain functions that turn a Summary (index/stats.py) into Text.

Every chart is a `rich.text.Text`, each line cut to the width it is given. Data (stack,
target, package names) is never parsed as markup and goes through `visible()`: a hostile
name shows as what it is. Bars and shades are glyphs, so the charts read without colour;
`style_of` (the widget's component classes) adds colour on top.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import ceil
from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text

from cachetui.textsafe import visible
from cachetui.tui.widgets.line_list import fit

if TYPE_CHECKING:  # the index brings numpy: not before the first frame
    from cachetui.index.stats import Summary

# A bar's end in eighths of a cell, so that bars of near counts still differ.
_EIGHTHS = ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")
# Matrix cells: none, up to a quarter, a half, three quarters, all of the largest cell.
SHADES = " ░▒▓█"

# A style by component class name (None: no style of its own).
StyleOf = Callable[[str | None], Style | str]


def _no_style(component: str | None) -> str:
    return ""


def _number(n: int) -> str:
    return f"{n:,}"


def compact(n: int) -> str:
    """A count in at most 5 cells, for the matrix's narrow cells: 9,999, 25.6k, 304k, 1.2M."""
    if n < 10_000:
        return f"{n:,}"
    for scale, suffix in ((1_000, "k"), (1_000_000, "M"), (1_000_000_000, "G")):
        if round(n / scale, 1) < 100:
            return f"{n / scale:.1f}{suffix}"
        if round(n / scale) < 1000:
            return f"{n / scale:.0f}{suffix}"
    return f"{n:.0e}"


def bar(count: int, largest: int, width: int) -> str:
    """A bar of `count` against `largest` filling at most `width` cells (padded to it).

    Any count above zero shows at least an eighth of a cell."""
    if width <= 0:
        return ""
    eighths = 0 if largest <= 0 or count <= 0 else max(1, round(count * width * 8 / largest))
    full, part = divmod(min(eighths, width * 8), 8)
    return ("█" * full + _EIGHTHS[part]).ljust(width)


def shade(count: int, largest: int) -> str:
    """The shade glyph of a matrix cell: its count against the largest cell, in quarters."""
    if count <= 0 or largest <= 0:
        return SHADES[0]
    return SHADES[min(4, max(1, ceil(4 * count / largest)))]


class _Lines:
    """Lines of (piece, component class) pieces, joined into one Text at the end."""

    def __init__(self, style_of: StyleOf) -> None:
        self.style_of = style_of
        self.text = Text(no_wrap=True, overflow="crop", end="")
        self.count = 0

    def add(self, *pieces: tuple[str, str | None]) -> None:
        if self.count:
            self.text.append("\n")
        self.count += 1
        for piece, component in pieces:
            self.text.append(piece, (self.style_of(component) or None) if component else None)


def fit_middle(text: str, width: int) -> str:
    """`text` made visible, then cut to `width` cells in its middle with an ellipsis (names
    such as ml-linux-x86_64-cpu and ml-linux-x86_64-cuda differ at their ends), or padded."""
    if width <= 0:
        return ""
    text = visible(text)
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    keep = width - 1
    head = set_cell_size(text, (keep + 1) // 2)
    tail, cells = "", 0
    for char in reversed(text):
        if cells + cell_len(char) > keep // 2:
            break
        tail, cells = char + tail, cells + cell_len(char)
    return set_cell_size(head + "…" + tail, width)


def _words(text: str, width: int) -> list[str]:
    """Plain prose wrapped at spaces to lines of at most `width` cells."""
    return _wrap(text.split(" "), width, gap=" ")


def _rjust(text: str, width: int) -> str:
    """`text` (no wider than `width`) right-aligned in `width` cells."""
    return " " * max(0, width - cell_len(text)) + text


def _wrap(items: Sequence[str], width: int, gap: str = "  ") -> list[str]:
    """Items (already visible) laid out on lines of at most `width` cells."""
    lines: list[str] = []
    current = ""
    for item in items:
        item = fit(item, width) if cell_len(item) > width else item
        if current and cell_len(current) + cell_len(gap) + cell_len(item) <= width:
            current += gap + item
        else:
            if current:
                lines.append(current)
            current = item
    if current:
        lines.append(current)
    return lines


def bar_chart(
    title: str,
    rows: Sequence[tuple[str, int]],
    width: int,
    *,
    total: int | None = None,
    max_rows: int = 12,
    more: int = 0,
    note: str = "",
    style_of: StyleOf = _no_style,
) -> Text:
    """A titled horizontal bar chart of (label, count), `width` cells wide at most.

    Bars are scaled to the largest count shown; with `total`, each row also gives its share
    of it. Past `max_rows` rows (or with `more` rows not given), a last line says how many
    more there are."""
    lines = _Lines(style_of)
    lines.add((fit(title, width).rstrip(), "stats-view--heading"))
    shown = list(rows[:max_rows]) if max_rows > 0 else []
    hidden = len(rows) - len(shown) + more
    if not shown:
        lines.add((fit("none", width).rstrip(), "stats-view--muted"))
    if shown:
        largest = max(count for _, count in shown)
        count_width = max(cell_len(_number(count)) for _, count in shown)
        share_width = 5 if total else 0  # " 100%"
        label_width = min(
            max(cell_len(visible(label)) for label, _ in shown), max(6, width * 2 // 5)
        )
        bar_width = width - label_width - count_width - share_width - 2
        if bar_width < 4 and share_width:  # narrow: the shares go first
            share_width = 0
            bar_width = width - label_width - count_width - 2
        if bar_width < 4:  # then the labels give way, down to a cell
            label_width = max(1, label_width - (4 - bar_width))
            bar_width = max(1, width - label_width - count_width - 2)
        for label, count in shown:
            pieces = [
                (fit_middle(label, label_width), "stats-view--label"),
                (" ", None),
                (bar(count, largest, bar_width), "stats-view--bar"),
                (" ", None),
                (_number(count).rjust(count_width), "stats-view--count"),
            ]
            if share_width:
                pieces.append(
                    (f"{100 * count / total:4.0f}%" if total else "", "stats-view--muted")
                )
            lines.add(*pieces)
    if hidden > 0:
        lines.add((fit(f"… and {_number(hidden)} more", width).rstrip(), "stats-view--muted"))
    if note:
        for line in _words(note, width):
            lines.add((line, "stats-view--muted"))
    return lines.text


# -- The stack x target matrix ---------------------------------------------------------------


@dataclass
class _MatrixLayout:
    """How the matrix fits in its width."""

    names: list[str]  # the targets' names, made visible
    digits: int  # the cells of the widest count
    label_width: int  # the stacks' names
    cell_width: int
    columns: int  # the targets shown, from the first
    numbered: bool  # columns headed by numbers, with a legend below


def _matrix_layout(
    stacks: Sequence[str], targets: Sequence[str], matrix: Sequence[Sequence[int]], width: int
) -> _MatrixLayout:
    digits = max((len(compact(n)) for row in matrix for n in row), default=1)
    longest_label = max(cell_len(visible(s)) for s in stacks)
    # Columns first, beside labels of a few cells; then the labels take what the columns
    # leave, up to half the width.
    label_width = min(longest_label, max(6, min(16, width // 4)))
    names = [visible(t) for t in targets]
    # A cell: shade glyphs (two at least), a space and the count; a space between cells.
    cell_width = digits + 3
    widest_name = max(cell_len(n) for n in names)
    room = width - label_width - 2  # "label │"
    numbered = False
    if widest_name > cell_width:
        if (widest_name + 1) * len(names) <= room:
            cell_width = widest_name
        else:
            numbered = True
            cell_width = max(cell_width, len(str(len(names))))
    columns = max(1, min(len(names), room // (cell_width + 1)))
    label_width = max(
        label_width, min(longest_label, width // 2, width - 2 - columns * (cell_width + 1))
    )
    if width - label_width - 2 < cell_width + 1:  # very narrow: the labels give way for one column,
        label_width = max(3, width - cell_width - 3)
        columns = 1
        if width - label_width - 3 < cell_width:  # and then its shades
            label_width = max(1, width - digits - 3)
            cell_width = max(digits, width - label_width - 3)
    return _MatrixLayout(names, digits, label_width, cell_width, columns, numbered)


def _matrix_header(layout: _MatrixLayout) -> list[tuple[str, str | None]]:
    """The line of column heads: the targets' names, or their numbers."""
    cell_width = layout.cell_width
    header = [(" " * layout.label_width, None), (" │", "stats-view--muted")]
    for j in range(layout.columns):
        head = str(j + 1) if layout.numbered else layout.names[j]
        header += [
            (" ", None),
            (_rjust(fit(head, cell_width).rstrip(), cell_width), "stats-view--label"),
        ]
    return header


def _matrix_row(
    stack: str, row: Sequence[int], layout: _MatrixLayout, largest: int
) -> list[tuple[str, str | None]]:
    """A stack's line: its name, then each shown target's shade and count."""
    cell_width, digits = layout.cell_width, layout.digits
    pieces: list[tuple[str, str | None]] = [
        (fit_middle(stack, layout.label_width), "stats-view--label"),
        (" │", "stats-view--muted"),
    ]
    for j in range(layout.columns):
        count = row[j]
        glyph = shade(count, largest)
        pieces += [
            (" ", None),
            (
                (glyph * (cell_width - digits - 1) + " ")[: cell_width - digits],
                "stats-view--shade",
            ),
            (compact(count).rjust(digits), "stats-view--count")
            if count
            else ("·".rjust(digits), "stats-view--muted"),
        ]
    return pieces


def _matrix_notes(
    layout: _MatrixLayout, width: int, hidden_targets: int, more_stacks: int, scale: str
) -> list[str]:
    """The lines under the matrix: the numbered columns' legend, what was left out, and
    what the shades mean (`scale`: against what)."""
    names = layout.names
    notes: list[str] = []
    if layout.numbered:
        notes += _wrap([f"{j + 1} {names[j]}" for j in range(layout.columns)], width)
    if hidden_targets > 0 or more_stacks > 0:
        left = []
        if more_stacks > 0:
            left.append(f"{_number(more_stacks)} stack{'s' if more_stacks != 1 else ''}")
        if hidden_targets > 0:
            left.append(f"{_number(hidden_targets)} target{'s' if hidden_targets != 1 else ''}")
        notes += _words("Not shown: " + ", ".join(left) + ".", width)
    notes += _wrap(
        [f"{SHADES[k]} ≤{25 * k}%" for k in range(1, 5)] + [scale],
        width,
        gap=" ",
    )
    return notes


def matrix_chart(
    title: str,
    stacks: Sequence[str],
    targets: Sequence[str],
    matrix: Sequence[Sequence[int]],
    width: int,
    *,
    more_stacks: int = 0,
    more_targets: int = 0,
    style_of: StyleOf = _no_style,
    largest: int | None = None,
) -> Text:
    """The stack x target matrix: a row per stack, a column per target, each cell its count
    with a shade glyph for its size against the largest cell.

    Counts of 10,000 and more are cut to 3 figures (25.6k). Columns are headed by the
    targets' names where they fit, else by numbers with a legend below; the columns that do
    not fit in `width` are left out and counted."""
    lines = _Lines(style_of)
    lines.add((fit(title, width).rstrip(), "stats-view--heading"))
    if not stacks or not targets:
        lines.add((fit("none", width).rstrip(), "stats-view--muted"))
        return lines.text
    of_what = "of the largest cell"
    if largest is None:
        largest = max((max(row, default=0) for row in matrix), default=0)
    else:
        of_what = "of the largest cell outside stacks that hold every spec"
    layout = _matrix_layout(stacks, targets, matrix, width)
    hidden_targets = len(layout.names) - layout.columns + more_targets

    lines.add(*_matrix_header(layout))
    for i, stack in enumerate(stacks):
        lines.add(*_matrix_row(stack, matrix[i], layout, largest))

    scale = f"{of_what} ({_number(largest)})"
    for line in _matrix_notes(layout, width, hidden_targets, more_stacks, scale):
        lines.add((line, "stats-view--muted"))
    return lines.text


# -- A Summary's sections ---------------------------------------------------------------------


def summary_header(title: str, summary: Summary | None, width: int, style_of: StyleOf) -> Text:
    """The view's title and what it charts: how many specs in how many packages."""
    header = _Lines(style_of)
    header.add((fit(title, width).rstrip(), "stats-view--title"))
    if summary is None:
        header.add(
            (
                fit("Nothing to show yet: the index is loading.", width).rstrip(),
                "stats-view--muted",
            )
        )
    elif summary.specs == 0:
        header.add(
            (fit("No specs match the current filters.", width).rstrip(), "stats-view--muted")
        )
    else:
        packages = f"{_number(summary.packages)} package{'s' if summary.packages != 1 else ''}"
        header.add(
            (
                fit(
                    f"{_number(summary.specs)} spec{'s' if summary.specs != 1 else ''} "
                    f"in {packages}",
                    width,
                ).rstrip(),
                "stats-view--muted",
            )
        )
    return header.text


def facet_chart(
    summary: Summary, facet: str, title: str, width: int, max_rows: int, style_of: StyleOf
) -> Text:
    """The bar chart of one facet's values (stacks, OS, targets, compilers)."""
    rows = summary.facets.get(facet, [])
    note = ""
    if facet == "stack" and sum(n for _, n in rows) > summary.specs:
        note = "A spec can be in several stacks: the counts add up to more than the specs."
    return bar_chart(
        f"{title} ({_number(len(rows))})",
        rows,
        width,
        total=summary.specs,
        max_rows=max_rows,
        note=note,
        style_of=style_of,
    )


def stack_target_chart(summary: Summary, width: int, style_of: StyleOf) -> Text:
    """The summary's stack x target matrix, with the stacks and targets it leaves out."""
    stacks_in_all = len(summary.facets.get("stack", []))
    targets_in_all = len(summary.facets.get("target", []))
    # Shades scale to the largest cell outside stacks that hold every spec (`root`): else
    # that one row sets the scale and every other cell comes out the palest shade.
    whole = {stack for stack, n in summary.facets.get("stack", []) if n == summary.specs}
    partial = [
        row for stack, row in zip(summary.matrix_stacks, summary.matrix) if stack not in whole
    ]
    scale = max((max(row, default=0) for row in partial), default=0) or None
    return matrix_chart(
        "Stack × target",
        summary.matrix_stacks,
        summary.matrix_targets,
        summary.matrix,
        width,
        more_stacks=max(0, stacks_in_all - len(summary.matrix_stacks)),
        more_targets=max(0, targets_in_all - len(summary.matrix_targets)),
        style_of=style_of,
        largest=scale,
    )


def top_packages_chart(summary: Summary, width: int, max_rows: int, style_of: StyleOf) -> Text:
    """The bar chart of the packages with the most specs."""
    shown = len(summary.top_packages)
    return bar_chart(
        f"Top packages ({_number(shown)} of {_number(summary.packages)})",
        summary.top_packages,
        width,
        total=summary.specs,
        max_rows=max(max_rows, shown),
        style_of=style_of,
    )
