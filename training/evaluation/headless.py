"""Headless Chromium over the DevTools protocol's pipe (`--remote-debugging-pipe`): open a page,
evaluate JavaScript in it, save a screenshot. No driver binary and no Python dependency: Chromium
reads commands from its fd 3 and writes replies to fd 4, each a JSON message ended by a NUL.
Used by `bridgeflow report --screenshot`, the report's browser tests and benchmarks/bench_report.py."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from bridgeflow.dataset.errors import InputError

CHROMIUM = "/usr/bin/chromium"  # Debian's package; `.ci/run` installs it when it is missing
CHROMIUM_VARIABLE = "BRIDGEFLOW_CHROMIUM"  # another browser binary (Chrome, a Chromium elsewhere)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe")


def chromium_binary() -> str | None:
    """$BRIDGEFLOW_CHROMIUM when set (None when it names no file), else Debian's chromium, else one
    on PATH; None when there is none."""
    if os.environ.get(CHROMIUM_VARIABLE):
        return os.environ[CHROMIUM_VARIABLE] if Path(os.environ[CHROMIUM_VARIABLE]).is_file() else None
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """One headless browser with one page; a context manager (the browser and its fresh profile
    are gone after it)."""

    def __init__(self, width: int = 1400, height: int = 1000, timeout: float = 60.0):
        binary = chromium_binary()
        if binary is None:
            raise InputError(f"no Chromium (${CHROMIUM_VARIABLE}, {CHROMIUM} or PATH; Debian: apt-get install chromium)")
        self.timeout, self.next_id, self.events = timeout, 0, []
        self.profile = tempfile.TemporaryDirectory(prefix="bridgeflow-chromium-")
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def onto_fds_3_and_4():  # in the child, before exec: the pipe ends where Chromium looks for them
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_read, replies_write)]  # off 3 and 4 first
            for fd, target in zip(high, (3, 4)):
                os.dup2(fd, target)
                os.set_inheritable(target, True)

        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile.name}",
                                         f"--window-size={width},{height}", "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        close_fds=False, preexec_fn=onto_fds_3_and_4)
        os.close(commands_read)
        os.close(replies_write)
        self.buffer = b""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Runtime.enable", session=True)  # uncaught exceptions arrive as events: `errors`
        self.errors: list[str] = []
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, method: str, session: bool = False, **params) -> dict:
        """One command; its result (RuntimeError on a protocol error). Events read meanwhile are kept."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"Chromium {method}: {reply['error']}")
                return reply["result"]
            self.keep(reply)

    def keep(self, event: dict) -> None:
        if event.get("method") == "Runtime.exceptionThrown":
            details = event["params"]["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", ""))
        self.events.append(event)

    def read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError(f"Chromium sent nothing for {self.timeout} s")
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe (did it start?)")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def open(self, path: str | Path, fragment: str = "") -> float:
        """Load a file (at `#fragment`, if given) and wait for its load event; returns the seconds
        from navigation to it. The page's uncaught JavaScript exceptions go to `errors`."""
        self.events.clear()
        self.errors.clear()
        started = time.perf_counter()
        url = Path(path).resolve().as_uri() + (f"#{quote(fragment, safe='')}" if fragment else "")
        self.send("Page.navigate", session=True, url=url)
        document = url.split("#")[0]
        ready = "document.readyState === 'complete' ? location.href.split('#')[0] : ''"
        seen = 0
        while True:  # a load event may be the previous page's, arriving late: check it is this one's
            loads = sum(event.get("method") == "Page.loadEventFired" for event in self.events)
            if loads > seen:
                seen = loads
                if self.evaluate(ready) == document:
                    return time.perf_counter() - started
            else:
                self.keep(self.read())

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able values; awaits a promise)."""
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript error: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result["result"].get("value")

    def screenshot(self, full_page: bool = False) -> bytes:
        """The page as PNG bytes: the viewport, or the whole page."""
        return base64.b64decode(self.send("Page.captureScreenshot", session=True, format="png",
                                          captureBeyondViewport=full_page)["data"])

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send("Browser.close")
            except (OSError, RuntimeError, TimeoutError):
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self.commands, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        self.profile.cleanup()
