"""Loader processes: files read into column chunks by a pool of processes, in order.

A pool can be started before the files are known, while the sources are still being
listed: starting a process (a fresh interpreter that imports the readers) takes about as
long as listing a tree of ten thousand packages, and the two then overlap.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from types import TracebackType

from cachetui.sources import split
from cachetui.sources.chunks import SourceFile, large_database, read_batch, read_large
from cachetui.sources.columns import ColumnChunk
from cachetui.sources.split import Plan

# Below this many files, reading in-process beats starting loader processes.
PARALLEL_MIN_FILES = 400
BATCH_FILES = 500

# Progress callback: (files done, files in all, specs loaded so far).
Progress = Callable[[int, int, int], None]

_POOL_FAULTS = (BrokenProcessPool, OSError, RuntimeError, ValueError)


def default_workers() -> int:
    """One loader process per core, at most 4."""
    return min(4, os.cpu_count() or 1)


class LoaderPool:
    """Loader processes, started (and their readers imported) as soon as `start` is called.
    If processes cannot be had here (no semaphores, a main module that cannot be imported
    again, a killed worker), it holds none, and reading happens in-process."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else default_workers()
        self.executor: ProcessPoolExecutor | None = None

    def start(self) -> LoaderPool:
        if self.workers > 1 and self.executor is None:
            try:
                _start_resource_tracker()
                # spawn, not fork: the app loads from a thread, and forking a threaded
                # process is unsafe.
                self.executor = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn")
                )
                for _ in range(
                    self.workers
                ):  # one task a process: each starts now (they start on demand)
                    self.executor.submit(_ready)
            except _POOL_FAULTS:
                self.close()
        return self

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None

    def __enter__(self) -> LoaderPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _ready() -> int:
    """A loader process's first task: by the time it runs, the readers are imported."""
    return os.getpid()


def expect_many_files(sources: list[str]) -> bool:
    """Whether local sources seem to hold enough files for loader processes: a directory
    with that many entries within two levels (a tag directory of package directories).
    Counted in a few milliseconds, and only that far."""
    seen = 0
    for source in sources:
        pending = [(os.path.expanduser(source), 2)]
        while pending:
            path, depth = pending.pop()
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        seen += 1
                        if seen >= PARALLEL_MIN_FILES:
                            return True
                        if depth > 1 and not entry.name.startswith(".") and entry.is_dir():
                            pending.append((entry.path, depth - 1))
            except OSError:  # a file, a URL, something missing: the walk says so later
                continue
    return False


def read_chunks(
    files: list,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    workers: int | None = None,
    pool: LoaderPool | None = None,
    sizes: dict[str, int] | None = None,
) -> Iterator[ColumnChunk]:
    """Chunks of `files` (paths or SourceFiles) in order. Many files are read by loader
    processes (`pool`'s, else a pool of `workers` started here), a batch a process; a large
    build-cache index in parts, by all of them (sources/split.py); a few small files
    in-process, where starting processes would cost more than it saves. What a pool did
    not deliver (it broke) is read in-process. `sizes` (path -> bytes, from the walk's
    stamps) spares a stat a file when looking for large ones."""
    units = _units(
        files, lambda f: _maybe_large(f, sizes) and large_database(f) or None, workers, pool
    )
    own = None
    if (
        any(unit.plan for unit in units)
        or sum(len(unit.files) for unit in units) >= PARALLEL_MIN_FILES
    ):
        if pool is None or pool.executor is None:
            own = pool = LoaderPool(workers).start()
    else:
        pool = None
    done = specs = 0
    try:
        submitted = [_submit(pool, unit) for unit in units]
        for unit, futures in zip(units, submitted):
            if cancelled is not None and cancelled():
                return

            # A large file's parts, as they come: the count moves. Called only within
            # _collect below, in this iteration: the counts bound here are the current ones.
            def part_done(rows: int, done: int = done, specs: int = specs) -> None:
                if progress is not None:
                    progress(done, len(files), specs + rows)

            chunk = _collect(unit, futures, part_done)
            done += chunk.files
            specs += chunk.rows
            if progress is not None:
                progress(done, len(files), specs)
            yield chunk
    finally:
        for futures in locals().get("submitted", []):
            for future in futures or ():
                future.cancel()
        if own is not None:
            own.close()


@dataclass
class _Unit:
    """What becomes one chunk: a batch of files, or one large file read in parts."""

    files: list
    plan: Plan | None = None


def _maybe_large(file: str | SourceFile, sizes: dict[str, int] | None) -> bool:
    path = file if isinstance(file, str) else file.path
    if path.endswith("index.manifest.json"):  # small, but its blob may not be
        return True
    size = sizes.get(path) if sizes is not None else None
    return size is None or size > split.SPLIT_BYTES


def _units(
    files: list,
    large: Callable[[str | SourceFile], Plan | None],
    workers: int | None,
    pool: LoaderPool | None,
) -> list[_Unit]:
    plans = {at: plan for at, file in enumerate(files) if (plan := large(file)) is not None}
    small = len(files) - len(plans)
    count = (
        pool.workers
        if pool is not None and pool.executor is not None
        else workers or default_workers()
    )
    if small < PARALLEL_MIN_FILES and not plans:
        count = 1
    # Many small batches: when one process takes the last, the others wait for it to finish.
    size = max(1, min(BATCH_FILES, -(-small // (count * 16))))
    units: list[_Unit] = []
    batch: list = []
    for at, file in enumerate(files):
        if at in plans:
            if batch:
                units.append(_Unit(batch))
                batch = []
            units.append(_Unit([file], plans[at]))
            continue
        batch.append(file)
        if len(batch) >= size:
            units.append(_Unit(batch))
            batch = []
    if batch:
        units.append(_Unit(batch))
    return units


def _submit(pool: LoaderPool | None, unit: _Unit) -> list[Future] | None:
    """The unit's tasks, submitted to the pool; None to read it in-process."""
    from cachetui.sources.split import read_part

    if pool is None or pool.executor is None:
        return None
    try:
        if unit.plan is None:
            return [pool.executor.submit(read_batch, unit.files)]
        plan = unit.plan
        return [
            pool.executor.submit(read_part, plan.path, start, end, plan.version, plan.name)
            for start, end in plan.ranges
        ]
    except _POOL_FAULTS:
        return None


def _collect(
    unit: _Unit, futures: list[Future] | None, part_done: Callable[[int], None]
) -> ColumnChunk:
    """The unit's chunk: from its tasks' results, else read here. `part_done(rows)` hears of
    a large file's binaries read so far, part by part."""
    from cachetui.sources.split import PartUnreadable, binaries, read_parts_in_process

    if unit.plan is None:
        if futures:
            try:
                return futures[0].result()
            except _POOL_FAULTS:
                pass
        return read_batch(unit.files)
    file = unit.files[0]
    source, origin = (file, None) if isinstance(file, str) else (file.name, file.origin)
    try:
        if futures:
            results: list = []
            rows = 0
            try:
                for future in futures:
                    results.append(future.result())
                    rows += binaries(results[-1][0])
                    part_done(rows)
            except _POOL_FAULTS:
                pass  # read in-process, below
            else:
                parts = [nodes for nodes, _ in results]
                return read_large(
                    unit.plan, source, origin, parts, [p for _, said in results for p in said]
                )
        parts, problems = read_parts_in_process(unit.plan)
        return read_large(unit.plan, source, origin, parts, problems)
    except PartUnreadable:  # cut in a wrong place: read whole, as a small file is
        return read_batch(unit.files)


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with the real stderr.

    Textual replaces sys.stderr with an object whose fileno() is not a descriptor, and
    the tracker hands sys.stderr.fileno() to its child: "bad value(s) in fds_to_keep".
    """
    from multiprocessing import resource_tracker

    saved = sys.stderr
    try:
        usable = saved is not None and saved.fileno() >= 0
    except Exception:
        usable = False
    if not usable and sys.__stderr__ is not None:
        sys.stderr = sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = saved
