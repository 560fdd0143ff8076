"""IndexService: the plain-Python boundary between the data and any front end.

The Textual app calls `load` from a thread worker and `evaluate` from exclusive
workers; the CLI calls the same methods directly. Nothing here imports Textual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from cachetui.index.filter import Filter, Result, evaluate
from cachetui.index.store import Index, build_index
from cachetui.model import LoadProblem
from cachetui.resources import sample_data_dir
from cachetui.sources import Progress, discover, gc_paused, read_chunks


@dataclass
class LoadReport:
    index: Index
    problems: list[LoadProblem] = field(default_factory=list)
    files: int = 0

    @property
    def errors(self) -> list[LoadProblem]:
        return [p for p in self.problems if p.severity == "error"]


class IndexService:
    def __init__(self, sources: list[str] | None = None) -> None:
        # No source given: the sample data that ships with cachetui.
        self.sources: list[str] = list(sources) if sources else [str(sample_data_dir())]
        self.report: LoadReport | None = None
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def index(self) -> Index | None:
        return self.report.index if self.report else None

    def load(self, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> LoadReport:
        """Read every source and build the index (blocking: call it from a worker)."""
        files, problems = discover(self.sources)
        chunks = []
        for chunk in read_chunks(files, progress, cancelled):
            problems.extend(chunk.problems)
            chunks.append(chunk)
        with gc_paused():
            index, duplicates = build_index(chunks)
        problems.extend(duplicates)
        self.report = LoadReport(index, problems, len(files))
        return self.report

    # -- filtering, with stale results dropped ------------------------------------------

    def next_generation(self) -> int:
        """Claim a generation number for a new request; older ones become stale."""
        with self._lock:
            self._generation += 1
            return self._generation

    def is_current(self, generation: int) -> bool:
        return generation == self._generation

    def evaluate(self, flt: Filter, generation: int | None = None) -> Result | None:
        """The Result of `flt`, or None when a newer request has superseded this one."""
        index = self.index
        if index is None or (generation is not None and not self.is_current(generation)):
            return None
        result = evaluate(index, flt)
        if generation is not None and not self.is_current(generation):
            return None
        return result
