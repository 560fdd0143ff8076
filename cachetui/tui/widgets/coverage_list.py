"""The environment's specs, each a hit, a miss or an external; a miss unfolds into its nearest
cached specs and what differs. Marked in words and signs as well as colour, so that it reads
the same with `--color none`: `✓ hit`, `✗ miss`, `- ext`, `≈` a nearest spec, `≠` a
difference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cachetui.output import counted, difference_text
from cachetui.tui.widgets.line_list import LineList, Piece, fit

if TYPE_CHECKING:
    from cachetui.index.store import Index
    from cachetui.service.check import CheckReport, SpecCheck

STATUS_MARKS = {
    "hit": ("✓ hit  ", "coverage-list--hit"),
    "miss": ("✗ miss ", "coverage-list--miss"),
    "external": ("- ext  ", "line-list--dim"),
}


@dataclass(frozen=True)
class CoverageLine:
    """A spec of the environment (`nearest` None), one of a miss's nearest cached specs, or
    one of that spec's differences."""

    check: int
    nearest: int | None = None
    difference: int | None = None


class CoverageList(LineList):
    COMPONENT_CLASSES: ClassVar[set[str]] = LineList.COMPONENT_CLASSES | {
        "coverage-list--hit",
        "coverage-list--miss",
        "coverage-list--difference",
    }
    empty_text = "the environment holds no spec"

    def __init__(self, index: Index, report: CheckReport, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.report = report
        self.unfolded: set[int] = set()  # the misses shown with their nearest specs
        self.lines: list[CoverageLine] = []

    def on_mount(self) -> None:
        self._relayout()

    def check_of(self, line: CoverageLine) -> SpecCheck:
        return self.report.checks[line.check]

    def row_of(self, line: CoverageLine) -> int | None:
        """The cached spec a line stands for: a hit's binary, a nearest spec; else None."""
        check = self.check_of(line)
        if line.nearest is not None:
            return check.nearest[line.nearest].row
        return check.rows[0] if check.rows else None

    def toggle(self, position: int) -> None:
        """Unfold or fold the miss on line `position` (or the one a nearest line is under)."""
        line = self.lines[position]
        if self.check_of(line).status != "miss":
            return
        self.unfolded.symmetric_difference_update({line.check})
        self._relayout(keep=CoverageLine(line.check))

    def _relayout(self, keep: CoverageLine | None = None) -> None:
        lines: list[CoverageLine] = []
        for at in self.report.worst_first():
            check = self.report.checks[at]
            lines.append(CoverageLine(at))
            if at in self.unfolded:
                for near_at, near in enumerate(check.nearest):
                    lines.append(CoverageLine(at, near_at))
                    lines.extend(CoverageLine(at, near_at, d) for d in range(len(near.differences)))
        self.lines = lines
        cursor = lines.index(keep) if keep in lines else self.cursor
        self.set_count(len(lines), cursor)

    def row_pieces(self, index: int, width: int) -> list[Piece]:
        line = self.lines[index]
        check = self.check_of(line)
        if line.nearest is None:
            return self._spec_pieces(line, check, width)
        near = check.nearest[line.nearest]
        if line.difference is None:
            tag = self.index.field("tag", near.row)
            text = f"{near.name}@{near.version} ({tag}): " + (
                counted(len(near.differences), "difference")
                if near.differences
                else f"no difference seen: {near.note}"
            )
            return [
                ("     ≈ ", "line-list--dim"),
                (f"/{near.hash[:7]} ", "line-list--accent"),
                (fit(text, max(1, width - 16)), None),
            ]
        difference = near.differences[line.difference]
        return [
            ("         ≠ ", "coverage-list--difference"),
            (fit(difference_text(difference), max(1, width - 11)), "coverage-list--difference"),
        ]

    def _spec_pieces(self, line: CoverageLine, check: SpecCheck, width: int) -> list[Piece]:
        spec = check.spec
        mark, style = STATUS_MARKS[check.status]
        fold = ""
        if check.status == "miss":
            fold = "▾ " if line.check in self.unfolded else "▸ "
        where = ""
        if check.rows:
            where = "  " + ", ".join(dict.fromkeys(self.index.field("tag", r) for r in check.rows))
        root = "  root" if spec.root else ""
        text = f"{fold}{spec.name}@{spec.version}{root}{where}"
        return [
            (f" {mark}", style),
            (f"/{spec.hash[:7]} ", "line-list--accent"),
            (fit(text, max(1, width - 17)), None),
        ]
