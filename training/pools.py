"""Worker processes that end with their parent: `spawn_pool` for a pool of them, and
`end_with_parent` for a process started another way (dmc's actors).

Spawned, not forked: a worker starts without the parent's torch threads or DDS state. A killed
parent (SIGKILL: no cleanup of its own runs) would otherwise leave its workers behind, playing on
through their boards or waiting on their queue for good, holding the cores of the run that
resumes it."""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Callable, Iterator


def end_with_parent() -> None:
    """From now on this process exits (code 1) as soon as the process that started it is gone; a
    no-op in a process that nothing of ours started."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_after, args=(parent,), daemon=True).start()


def _exit_after(parent) -> None:
    parent.join()
    os._exit(1)


def _start_worker(initializer: Callable | None, initargs: tuple) -> None:
    end_with_parent()
    if initializer is not None:
        initializer(*initargs)


def spawn_pool(workers: int, initializer: Callable | None = None, initargs: tuple = ()) -> ProcessPoolExecutor:
    """A pool of `workers` spawned processes, each running `initializer(*initargs)` first (a
    module-level function: it is pickled) and each ending when this process does."""
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(initializer, initargs))


@contextmanager
def spawned_workers(workers: int, initializer: Callable | None = None, initargs: tuple = ()) -> Iterator[ProcessPoolExecutor]:
    """`spawn_pool` as a `with` block that, left by an exception (Ctrl-C and SIGTERM included),
    cancels the queued tasks and ends the workers mid-task. ProcessPoolExecutor's own exit waits
    for every queued task first: an interrupted run would play on through all its boards."""
    pool = spawn_pool(workers, initializer, initargs)
    try:
        yield pool
    except BaseException:
        processes = list((pool._processes or {}).values())  # shutdown forgets them
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown()
