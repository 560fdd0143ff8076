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
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType

from cachetui.sources.columns import ColumnChunk

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
                self.executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
                for _ in range(self.workers):  # one task a process: each starts now (they start on demand)
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

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
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


def read_chunks(files: list, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
                workers: int | None = None, pool: LoaderPool | None = None) -> Iterator[ColumnChunk]:
    """Chunks of `files` (paths or SourceFiles) in order. Large inputs are read by loader
    processes (`pool`'s, else a pool of `workers` started here); small ones in-process,
    where starting processes would cost more than it saves. Batches a pool did not deliver
    (it broke) are read in-process."""
    from cachetui.sources import read_batch

    own = None
    if len(files) >= PARALLEL_MIN_FILES:
        if pool is None or pool.executor is None:
            own = pool = LoaderPool(workers).start()
    else:
        pool = None
    count = pool.workers if pool is not None and pool.executor is not None else 1
    # Many small batches: when one process takes the last, the others wait for it to finish.
    size = max(1, min(BATCH_FILES, -(-len(files) // (count * 16))))
    batches = [files[i : i + size] for i in range(0, len(files), size)]
    done = specs = 0

    def report(chunk: ColumnChunk) -> ColumnChunk:
        nonlocal done, specs
        done += chunk.files
        specs += chunk.rows
        if progress is not None:
            progress(done, len(files), specs)
        return chunk

    def stopped() -> bool:
        return cancelled is not None and cancelled()

    delivered = 0
    try:
        if pool is not None and pool.executor is not None:
            try:
                futures = [pool.executor.submit(read_batch, batch) for batch in batches]
                try:
                    for future in futures:
                        if stopped():
                            return
                        chunk = future.result()
                        delivered += 1
                        yield report(chunk)
                finally:
                    for future in futures:
                        future.cancel()
            except _POOL_FAULTS:
                pass
        for batch in batches[delivered:]:  # everything, when reading in-process
            if stopped():
                return
            yield report(read_batch(batch))
    finally:
        if own is not None:
            own.close()


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
