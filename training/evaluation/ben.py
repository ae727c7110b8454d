"""BEN (lorserker/ben) at the table: the `ben` and `ben-nosearch` agents.

BEN is GPL-3.0, bridgeflow Apache-2.0: bridgeflow never imports BEN. The checkout's
contrib/ben_server/ (GPL-3.0, not in the wheel) holds a small server that does, run in its own
virtualenv (.ben-venv/, built from contrib/ben_server/requirements.txt by `make ben-venv` or on
first use); this module spawns it and speaks its JSON-lines protocol (docs/ben.md).

- `ben-nosearch`: BEN's GIB-BBO network alone (onnx.conf, BBA off, search_threshold = -1,
  check_final_contract = False); `ben`: the same with BEN's own bidding search (sampling and double
  dummy, DDS 2.9 through the server's dds3 shim). Both are deterministic: BEN seeds from the hand.
- One server per process, started when the first BEN agent is made (so start-up is never timed as
  a decision) and shared by every BEN agent of the process; it ends when its stdin closes, with us.
- Every call has a timeout; a server that dies, times out or garbles a reply is restarted and the
  call sent again (a request holds the whole situation, so the replay gives the call an unbroken
  run would have); after ATTEMPTS failures on one call BenFailed is raised: a board is never
  scored without BEN. Where BEN's search itself raises on a position, `ben` makes the call of
  BEN's network alone (with a warning).

Where things are: BEN's folder is BRIDGEFLOW_BEN or ../shared/third_party/ben next to the
checkout; the virtualenv BRIDGEFLOW_BEN_VENV or .ben-venv in the checkout."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

from bridgeflow.dataset.digests import file_digest
from bridgeflow.dataset.encodings import NUM_CALLS, VUL_BOTH, VUL_EW, VUL_NS, hand_to_pbn, hands_from_owner
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.home import HOME, hint

log = logging.getLogger(__name__)

SERVER_FOLDER = HOME / "contrib" / "ben_server"  # not in the wheel (GPL-3.0, like BEN)
REQUIREMENTS = SERVER_FOLDER / "requirements.txt"
AGENTS = {"ben": True, "ben-nosearch": False}  # agent name -> BEN's bidding search on
# Seconds one call may take. BEN's search measured 0.84 s median, 19.7 s p95 on 2 loaded cores.
CALL_TIMEOUT = {True: 600.0, False: 60.0}
AUCTION_TIMEOUT = {True: 3600.0, False: 120.0}  # seconds a whole auction (`BenAgent.bid_deal`) may take
STARTUP_TIMEOUT = 300.0
ATTEMPTS = 3  # tries of one call, each on a fresh server after the first fails
STDERR_TAIL = 2000  # characters of the server's stderr quoted in a failure

# Call index (dataset/auction.py: Pass, X, XX, 1C..7NT) -> BEN's spelling; BEN's ids are ours + 2.
BEN_CALLS = ("PASS", "X", "XX", *(f"{level}{strain}" for level in range(1, 8) for strain in "CDHSN"))
assert len(BEN_CALLS) == NUM_CALLS
CALL_OF = {name: call for call, name in enumerate(BEN_CALLS)}


class BenFailed(RuntimeError):
    """BEN's server gave no call: it kept dying or timing out, or it answered with an error."""


class BenRefused(BenFailed):
    """BEN's server answered the call with an error: BEN itself raised on this request."""


def ben_home() -> Path:
    """BEN's folder (src/, models/, bin/), or InputError saying where it was looked for."""
    home = Path(os.environ.get("BRIDGEFLOW_BEN") or HOME.parent / "shared" / "third_party" / "ben")
    if not (home / "src" / "botbidder.py").is_file():
        raise InputError(f"BEN not found at {home} (no src/botbidder.py): set BRIDGEFLOW_BEN to BEN's folder")
    return home


def venv_folder() -> Path:
    return Path(os.environ.get("BRIDGEFLOW_BEN_VENV") or HOME / ".ben-venv")


def requirements_hash() -> str:
    return file_digest(REQUIREMENTS)


def ensure_venv(folder: Path | None = None) -> Path:
    """The BEN server's Python, building its virtualenv first if it is missing, half built or was
    built from another requirements file. Under a lock, so that parallel workers wait for one
    build; the marker naming the requirements is written last, so a killed build is redone."""
    folder = folder or venv_folder()
    if not REQUIREMENTS.is_file():
        raise InputError(f"the BEN server is not here ({SERVER_FOLDER}): the `ben` agents need a bridgeflow checkout{hint()}")
    marker, wanted = folder / ".requirements", requirements_hash()
    python = folder / "bin" / "python"
    if marker.is_file() and marker.read_text().strip() == wanted:
        return python
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file() and marker.read_text().strip() == wanted:
            return python  # another process built it while we waited
        started = time.perf_counter()
        log.info("building BEN's virtualenv %s from %s", folder, REQUIREMENTS)
        shutil.rmtree(folder, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(folder)], "create the virtualenv")
        _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(REQUIREMENTS)],
             f"pip install -r {REQUIREMENTS}")
        marker.write_text(wanted + "\n")
        log.info("BEN's virtualenv built in %.0f s", time.perf_counter() - started)
    return python


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise InputError(f"BEN's virtualenv: cannot {what} (exit {done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()[-STDERR_TAIL:]}")


class _Lost(Exception):
    """The server went away or did not answer in time."""


class BenServer:
    """One BEN server process: `bid` sends a request and returns its reply, restarting the server
    and sending the request again when it dies or times out (module docstring)."""

    def __init__(self, call_timeout: dict[bool, float] | None = None):
        self.call_timeout = dict(call_timeout or CALL_TIMEOUT)
        self.home = ben_home()
        self.python = ensure_venv()
        self.process: subprocess.Popen | None = None
        self.restarts = 0  # servers started again after one was lost
        self.startup_seconds: list[float] = []
        self._buffer = b""
        self._stderr = None
        self.start()

    def start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        self._buffer = b""
        started = time.perf_counter()
        self.process = subprocess.Popen([str(self.python), str(SERVER_FOLDER / "ben_server.py"), "--ben", str(self.home)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0)
        try:
            ready = self._read(time.monotonic() + STARTUP_TIMEOUT)
        except _Lost as why:
            self.stop()
            raise BenFailed(f"BEN's server did not start: {why}") from None
        if not ready.get("ready"):
            self.stop()
            raise BenFailed(f"BEN's server did not start: it said {ready}")
        self.startup_seconds.append(time.perf_counter() - started)

    def bid(self, request: dict, timeout: float | None = None) -> dict:
        """The reply {"call", "seconds"} to `request` (see contrib/ben_server/ben_server.py), within
        `timeout` seconds (default: the call timeout of its search setting)."""
        if timeout is None:
            timeout = self.call_timeout[bool(request.get("search"))]
        failures = []
        for attempt in range(ATTEMPTS):
            if self.process is None:
                self.restarts += 1
                log.warning("restarting BEN's server (%s) and sending the call again", failures[-1])
                self.start()
            try:
                self._send(request)
                reply = self._read(time.monotonic() + timeout)
            except _Lost as why:
                failures.append(str(why))
                self.stop()
                continue
            if "error" in reply:
                raise BenRefused(f"BEN's server: {reply['error']} (request {json.dumps(request)})")
            return reply
        raise BenFailed(f"BEN's server failed {ATTEMPTS} times on one call ({'; '.join(failures)}); "
                        f"request {json.dumps(request)}")

    def _send(self, request: dict) -> None:
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise _Lost(self._death()) from None

    def _read(self, deadline: float) -> dict:
        """The next reply line, or _Lost when the server ends or `deadline` (monotonic) passes."""
        out = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([out], [], [], left)[0]:
                raise _Lost(f"no reply within its timeout (pid {self.process.pid})")
            chunk = os.read(out, 1 << 16)
            if not chunk:
                raise _Lost(self._death())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            raise _Lost(f"an unreadable reply {line[:200]!r}") from None

    def _death(self) -> str:
        code = self.process.wait(timeout=10)
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace").strip()[-STDERR_TAIL:]
        return f"the server (pid {self.process.pid}) exited with code {code}" + (f": {tail}" if tail else "")

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            for pipe in (self.process.stdin, self.process.stdout):
                pipe.close()
            self._stderr.close()
        self.process = None


_server: BenServer | None = None  # this process's server, shared by its BEN agents


def shared_server() -> BenServer:
    """This process's BEN server, started on first use."""
    global _server
    if _server is None:
        _server = BenServer()
    return _server


def close_server() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None


def vulnerability_pair(vul: int) -> list[bool]:
    """Our vulnerability (0 none, 1 NS, 2 EW, 3 both) -> BEN's [ns, ew]."""
    return [vul in (VUL_NS, VUL_BOTH), vul in (VUL_EW, VUL_BOTH)]


def ben_request(hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int, search: bool) -> dict:
    return {"hand": hand_to_pbn(hand), "dealer": int(dealer), "vulnerability": vulnerability_pair(vul),
            "auction": [BEN_CALLS[call] for call in auction], "search": search}


class BenAgent:
    """BEN's bidder as an `Agent`. BEN seeds itself from the hand, so `reseed` has nothing to do.
    `seconds` keeps BEN's own time per call (the server's), next to the evaluation's wall time."""

    def __init__(self, name: str, server: BenServer | None = None):
        if name not in AGENTS:
            raise ValueError(f"unknown BEN agent {name!r}: one of {tuple(AGENTS)}")
        self.name, self.search = name, AGENTS[name]
        self._server = server
        if server is None:  # a missing BEN or server is an error now, not at the first call
            ben_home()
            ensure_venv()
        self.seconds: list[float] = []

    @property
    def server(self) -> BenServer:
        """Started on the first call, not when the agent is made: a parallel evaluation makes its
        agents in the parent too, which plays nothing and would hold an idle server."""
        if self._server is None:
            self._server = shared_server()
        return self._server

    def next_call(self, hand, auction, dealer, vul) -> int:
        """BEN's call; where BEN's search raises on the position (its code has such holes, e.g.
        1S P 4H P 4NT 5NT), the call of BEN's network alone, with a warning: still BEN's call."""
        request = ben_request(hand, auction, dealer, vul, self.search)
        try:
            reply = self.server.bid(request)
        except BenRefused as error:
            if not self.search:
                raise
            log.warning("%s: BEN's network alone makes this call", error)
            reply = self.server.bid(request | {"search": False})
        if reply.get("call") not in CALL_OF:
            raise BenFailed(f"BEN's server answered {reply!r}, not a call")
        self.seconds.append(float(reply["seconds"]))
        return CALL_OF[reply["call"]]

    def bid_deal(self, owner: Sequence[int], dealer: int, vul: int) -> list[int]:
        """All four seats' calls to the end of the auction, BEN in every seat: one request, each
        call as `next_call` would give it (a corpus pays one round trip per auction)."""
        request = {"hands": [hand_to_pbn(hand) for hand in hands_from_owner(owner)], "dealer": int(dealer),
                   "vulnerability": vulnerability_pair(vul), "search": self.search}
        reply = self.server.bid(request, AUCTION_TIMEOUT[self.search])
        calls = reply.get("auction")
        if not isinstance(calls, list) or not all(call in CALL_OF for call in calls):
            raise BenFailed(f"BEN's server answered {reply!r}, not an auction")
        return [CALL_OF[call] for call in calls]

    def reseed(self, seed: int) -> None:
        pass


def ben_files() -> dict[str, Path]:
    """What decides BEN's calls besides our code: its config and bidding network (hashed into an
    evaluation's run key, like our checkpoints)."""
    home = ben_home()
    return {"config": home / "src" / "config" / "onnx.conf", "bidder": home / "models" / "onnx" / "bidder.onnx"}


if __name__ == "__main__":  # `make ben-venv`
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        print(ensure_venv())
    except InputError as error:
        sys.exit(f"ben-venv: error: {error}")
