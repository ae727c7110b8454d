"""Progress of a Beam job as the driver sees it while the workers run: a thread that polls what the
workers have committed every `interval` seconds and logs the rate and the time left. Each job
says what "done" is (ddlabel: deals in committed parts; selfplay: boards in task markers)."""

from __future__ import annotations

import threading
import time


class JobMonitor(threading.Thread):
    """Calls `poll` every `interval` seconds until `finish`, and once more then (the final line)."""

    def __init__(self, interval: float):
        super().__init__(daemon=True)
        self.interval = interval
        self.stopping = threading.Event()

    def poll(self) -> None:
        raise NotImplementedError

    def run(self):
        while not self.stopping.wait(self.interval):
            self.poll()

    def finish(self) -> None:
        self.stopping.set()
        self.join()
        self.poll()


def rate_and_eta(done: int, total: int | None, started: float, initial: int = 0) -> tuple[float, str]:
    """Units per second since `started` (time.time(); `initial` units were done before it) and
    the time left at that rate ("unknown" without a total or a rate)."""
    elapsed = time.time() - started
    rate = (done - initial) / elapsed if elapsed > 0 else 0.0
    eta = f"{(total - done) / rate:.0f} s" if total is not None and rate > 0 else "unknown"
    return rate, eta
