"""IndexService: the plain-Python boundary between the data and any front end.

The Textual app calls `load` from a thread worker and `evaluate` from exclusive
workers; the CLI calls the same methods directly. Nothing here imports Textual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cachetui.model import EnvironmentUnreadable, LoadProblem
from cachetui.resources import sample_data_dir
from cachetui.service.compare import TagComparisons

if TYPE_CHECKING:
    from cachetui.config.settings import ChosenSources
    from cachetui.index.filter import Filter, Result
    from cachetui.index.store import Index
    from cachetui.service.check import CheckReport
    from cachetui.sources import Progress
    from cachetui.sources.columns import ColumnChunk
    from cachetui.sources.resolve import DownloadProgress, Resolved


@dataclass
class LoadReport:
    index: Index
    problems: list[LoadProblem] = field(default_factory=list)
    files: int = 0
    from_snapshot: bool = False

    @property
    def errors(self) -> list[LoadProblem]:
        return [p for p in self.problems if p.severity == "error"]


def default_cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("cachetui", appauthor=False))


class IndexService:
    def __init__(
        self,
        sources: list[str] | None = None,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        environment: str | None = None,
        settle: Callable[[], ChosenSources] | None = None,
    ) -> None:
        # No source given: the sample data that ships with cachetui.
        self.sources: list[str] = list(sources) if sources else [str(sample_data_dir())]
        # Settles the sources at each load, in the worker (`spack` is Spack's mirrors, read
        # from its configuration then): what is read, what reading them said, where they came
        # from in a few words (for the status line).
        self._settle = settle
        self.notes: list[LoadProblem] = []
        self.sources_origin: str | None = None
        # Where the on-disk index lives; None: it is neither read nor written.
        self.cache_dir: Path | None = (
            (Path(cache_dir) if cache_dir else default_cache_dir()) if use_cache else None
        )
        self.report: LoadReport | None = None
        # A user's environment (`--env`): checked against each index loaded, its hits and
        # misses a facet of that index.
        self.environment = environment
        self.check: CheckReport | None = None
        self.comparisons = TagComparisons()  # tag diffs of the loaded index, each worked out once
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def index(self) -> Index | None:
        return self.report.index if self.report else None

    def load(
        self,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
        download: DownloadProgress | None = None,
    ) -> LoadReport:
        """Read every source and build the index (blocking: call it from a worker).

        `download(url, bytes done, bytes in all or None)` reports downloads under way."""
        if self._settle is not None:
            chosen = self._settle()
            sample = [str(sample_data_dir())] if chosen.sample else []
            self.sources = chosen.sources or sample
            self.notes, self.sources_origin = list(chosen.problems), chosen.summary
        report = self._load(progress, cancelled, download)
        report.problems[:0] = self.notes
        return report

    def _load(
        self,
        progress: Progress | None,
        cancelled: Callable[[], bool] | None,
        download: DownloadProgress | None,
    ) -> LoadReport:
        # numpy and the readers load here, in the worker, not before the app's first frame.
        from cachetui.index import snapshot
        from cachetui.sources.mirror import has_urls

        stored_at = (
            snapshot.snapshot_path(self.cache_dir, self.sources)
            if self.cache_dir is not None
            else None
        )
        notes: list[LoadProblem] = []
        resolved = None
        # Local sources: the snapshot first (a stat per file it was built from). Anything
        # fetched must be asked about first: the snapshot is good only if it did not change.
        if has_urls(self.sources):
            resolved = _resolve(self.sources, self.cache_dir, download)
        if stored_at is not None:
            stored, resolved = self._stored(stored_at, resolved, download, notes)
            if stored is not None:
                index, saved, files_read = stored
                return self._from_snapshot(
                    index, saved + _fetch_notes(resolved), files_read, progress
                )
        index, resolved, problems = self._build(resolved, progress, cancelled, download)
        if not (cancelled is not None and cancelled()):
            _find_spec_files(index)
            if stored_at is not None:
                notes.extend(self._save(stored_at, index, resolved, problems))
        self.report = self._with_environment(
            LoadReport(index, problems + notes, len(resolved.files))
        )
        return self.report

    def _with_environment(self, report: LoadReport) -> LoadReport:
        """The report with the environment checked against its index, and the index with the
        environment facet; an environment that cannot be read is a load problem."""
        if self.environment is None:
            return report
        from cachetui.service.check import check_environment, with_environment_facet
        from cachetui.sources.environment import read_environment

        try:
            environment = read_environment(self.environment)
        except EnvironmentUnreadable as why:
            self.check = None
            report.problems.append(LoadProblem(self.environment, str(why)))
            return report
        report.problems.extend(environment.problems)
        try:
            self.check = check_environment(report.index, environment)
        except Exception as error:  # a bug of ours must not cost the user the cache itself
            self.check = None
            message = f"could not check the environment: {type(error).__name__}: {error}"
            report.problems.append(LoadProblem(self.environment, message))
            return report
        report.index = with_environment_facet(report.index, self.check)
        return report

    def warm_up(self) -> None:
        """The work a first move in the dependency tree or a first `^` query would otherwise
        wait for: read the dependency graph, lay out its link/run edges (at a million specs,
        about 0.3 s). For a worker, once the data is shown."""
        index = self.index
        if index is not None and index.graph:
            from cachetui.index.dependency_match import link_run_layers

            link_run_layers(index.graph)

    def _stored(
        self,
        stored_at: Path,
        resolved: Resolved | None,
        download: DownloadProgress | None,
        notes: list[LoadProblem],
    ) -> tuple[tuple[Index, list[LoadProblem], int] | None, Resolved | None]:
        """The on-disk index if it is current (asking the sources again once if it must), and
        the sources as resolved meanwhile; why it was not used goes to `notes`."""
        from cachetui.index import snapshot

        try:
            return snapshot.load(stored_at, self.sources, **_checks(resolved)), resolved
        except snapshot.NeedsRevalidation:
            resolved = _resolve(self.sources, self.cache_dir, download)
            try:
                return snapshot.load(stored_at, self.sources, **_checks(resolved)), resolved
            except snapshot.SnapshotError:
                return None, resolved
        except (snapshot.NoSnapshotYet, snapshot.SourcesChanged):
            return None, resolved  # the usual reasons to rebuild: nothing to tell
        except snapshot.SnapshotError as why:
            notes.append(
                LoadProblem(
                    str(stored_at),
                    f"on-disk index not used: {why}; rebuilt from the sources",
                    "warning",
                )
            )
            return None, resolved

    def _build(
        self,
        resolved: Resolved | None,
        progress: Progress | None,
        cancelled: Callable[[], bool] | None,
        download: DownloadProgress | None,
    ) -> tuple[Index, Resolved, list[LoadProblem]]:
        """The index built from the sources (resolved here if not yet), and every problem."""
        from cachetui.index.store import build_index
        from cachetui.sources import LoaderPool, expect_many_files, gc_paused, read_chunks

        # A large tree: the loader processes start (a fresh interpreter each, importing the
        # readers) while it is listed.
        with LoaderPool() as pool:
            if resolved is None:
                if expect_many_files(self.sources):
                    pool.start()
                resolved = _resolve(self.sources, self.cache_dir, download)
            read_problems: list[LoadProblem] = []
            sizes = {s[0]: s[1] for s in resolved.stamps}

            def chunks() -> Iterator[ColumnChunk]:
                for chunk in read_chunks(
                    resolved.files, progress, cancelled, pool=pool, sizes=sizes
                ):
                    read_problems.extend(chunk.problems)
                    yield chunk

            with gc_paused():
                index, duplicates = build_index(chunks())
        return index, resolved, resolved.problems + read_problems + duplicates

    def _save(
        self, stored_at: Path, index: Index, resolved: Resolved, problems: list[LoadProblem]
    ) -> list[LoadProblem]:
        """Save the on-disk index; what went wrong, if anything."""
        from cachetui.index import snapshot
        from cachetui.sources.mirror import has_urls

        files = resolved.files
        fetched = any(f.shown_as is not None for f in files) or has_urls(self.sources)
        # Fetch notes (offline, using a copy) are about this start, not the snapshot's.
        kept = [p for p in problems if p not in _fetch_notes(resolved)]
        try:
            snapshot.save(
                stored_at,
                index,
                kept,
                self.sources,
                resolved.stamps,
                len(files),
                fetched=fetched,
                read=[f.path for f in files],
            )
        except OSError as error:
            reason = error.strerror or str(error)
            return [
                LoadProblem(
                    str(stored_at),
                    f"could not save the on-disk index ({reason}); working from the sources",
                    "warning",
                )
            ]
        return []

    def _from_snapshot(
        self, index: Index, problems: list[LoadProblem], files: int, progress: Progress | None
    ) -> LoadReport:
        if progress is not None:
            progress(files, files, index.n_specs)
        self.report = self._with_environment(LoadReport(index, problems, files, from_snapshot=True))
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
        from cachetui.index.evaluate import evaluate

        result = evaluate(index, flt)
        if generation is not None and not self.is_current(generation):
            return None
        return result


def _resolve(
    sources: list[str], cache_dir: Path | None, download: DownloadProgress | None
) -> Resolved:
    from cachetui.sources.resolve import resolve  # (urllib and ssl: not for a warm start)

    return resolve(sources, cache_dir, download)


def _checks(resolved: Resolved | None) -> dict:
    """What a snapshot must match besides its stamps, once the sources were resolved (fetched):
    the same files, and no problem resolving them that it does not already report."""
    if resolved is None:
        return {}
    notes = _fetch_notes(resolved)
    return {
        "revalidated": True,
        "files": [f.path for f in resolved.files],
        "problems": [p for p in resolved.problems if p not in notes],
    }


def _fetch_notes(resolved: Resolved | None) -> list[LoadProblem]:
    """What fetching said about this start (e.g. offline: a copy used)."""
    return resolved.notes if resolved else []


# A mirror's spec file is asked of it once a load, right after its index was fetched from
# the same server: a server that does not answer in this long keeps the signed name.
PROBE_TIMEOUT = 3.0


def _find_spec_files(index: Index) -> None:
    """Which spec file each v2 mirror holds for its binaries: signed (`.spec.json.sig`),
    unsigned (`.spec.json`) or Spack 0.16's (`.spec.yaml`). Asked of one binary a mirror, in
    the order Spack looks; a mirror that cannot be asked keeps the signed name."""
    import os

    from cachetui.sources.fetch import FetchError, exists, is_url
    from cachetui.sources.mirror import SPEC_FILE_SUFFIXES

    for source, origin in index.parts.origins.items():
        row = index.row_from(source) if origin[1] == 2 else None
        if row is None:
            continue
        for suffix in SPEC_FILE_SUFFIXES:
            path = index.binary_files(row, suffix).spec_file or ""
            try:
                if exists(path, timeout=PROBE_TIMEOUT) if is_url(path) else os.path.isfile(path):
                    origin[2] = suffix
                    break
            except FetchError:
                break  # offline: not known
