"""Workers end with their parent: a killed run leaves no process behind."""

import subprocess
import sys
import time
from pathlib import Path

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


def test_a_killed_parent_leaves_no_worker_behind(tmp_path):
    script, pid_file = tmp_path / "run.py", tmp_path / "workers.pid"
    script.write_text(SCRIPT)
    subprocess.run([sys.executable, str(script), str(pid_file)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    pids = [int(pid) for pid in pid_file.read_text().split()]
    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in pids if alive(pid)] == []
