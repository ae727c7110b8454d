"""Workers end with their parent: a killed run leaves no process behind, an interrupted one
ends its workers at once, and BEN's server ends with the process that started it."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridgeflow.training.pools import spawned_workers

REPO = Path(__file__).resolve().parents[1]

SCRIPT = """
import multiprocessing, os, signal, sys, time
from bridgeflow.training.pools import end_with_parent, spawn_pool

def actor(ready):  # a process started on its own, as dmc starts its actors
    end_with_parent()
    ready.set()
    time.sleep(60)

if __name__ == '__main__':
    pool = spawn_pool(1)
    busy = pool.submit(os.getpid).result()
    pool.submit(time.sleep, 60)  # a long board
    context = multiprocessing.get_context('spawn')
    ready = context.Event()
    process = context.Process(target=actor, args=(ready,))
    process.start()
    assert ready.wait(60)
    time.sleep(0.5)  # the pool's worker is asleep in its task
    open(sys.argv[1], 'w').write(f'{busy} {process.pid}')
    os.kill(os.getpid(), signal.SIGKILL)  # the run is killed
"""


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended; its new parent may not reap it at once


def wait_ended(pids: list[int], seconds: float = 10) -> list[int]:
    """The pids still alive after up to `seconds`."""
    deadline = time.monotonic() + seconds
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [pid for pid in pids if alive(pid)]


def test_a_killed_parent_leaves_no_worker_behind(tmp_path):
    script, pid_file = tmp_path / "run.py", tmp_path / "workers.pid"
    script.write_text(SCRIPT)
    subprocess.run([sys.executable, str(script), str(pid_file)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    assert wait_ended([int(pid) for pid in pid_file.read_text().split()]) == []


def test_an_interrupt_ends_the_workers_mid_task_and_drops_the_queue():
    """Ctrl-C in a busy pool's `with` block: the block is left at once, not after every queued
    task (ProcessPoolExecutor's own exit would sleep through all four minutes here)."""
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with spawned_workers(1) as pool:
            worker = pool.submit(os.getpid).result()
            queued = [pool.submit(time.sleep, 60) for _ in range(4)]  # the first two already handed to the worker
            time.sleep(0.5)  # the worker is asleep in its task
            raise KeyboardInterrupt
    deadline = time.monotonic() + 10
    while not all(task.done() for task in queued) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(task.cancelled() or task.exception(timeout=0) is not None for task in queued)  # none played on
    assert wait_ended([worker]) == []
    assert time.monotonic() - started < 30


SERVER_PARENT = """
import subprocess, sys, os, signal
busy_server = ("import sys, time; sys.path.insert(0, sys.argv[1]); import ben_server; "
               "ben_server.exit_with_parent(); print('watching', flush=True); time.sleep(60)")
server = subprocess.Popen([sys.executable, '-c', busy_server, sys.argv[2]], stdout=subprocess.PIPE)
assert server.stdout.readline().strip() == b'watching'
open(sys.argv[1], 'w').write(str(server.pid))
os.kill(os.getpid(), signal.SIGKILL)  # the evaluate worker is killed while BEN searches
"""


def test_bens_server_exits_when_the_process_that_started_it_is_killed(tmp_path):
    """Mid-search the server reads no stdin, so the pipe's end would not stop it: it watches its parent."""
    script, pid_file = tmp_path / "worker.py", tmp_path / "server.pid"
    script.write_text(SERVER_PARENT)
    subprocess.run([sys.executable, str(script), str(pid_file), str(REPO / "contrib" / "ben_server")],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    assert wait_ended([int(pid_file.read_text())]) == []
