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
from typing import Callable


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
