"""The boundary to the double-dummy solver (DDS 2.9 through endplay): our `owner` in, our DD table
layout out (int8[20] = [declarer N,E,S,W][strain C,D,H,S,NT], docs/conventions.md).

DDS runs only inside a `Solver` child process, never in the caller: two Python threads calling
DDS crash it, DDS accepts some malformed deals and answers garbage (so every deal is checked to
be 4 x 13 distinct cards first), and a deal it rejects can end the process. The caller (a Beam
worker, a test, the benchmark) survives a dead solver: it restarts it and bisects the batch to
find the deal at fault, which is reported with a reason instead of a table."""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Callable, Sequence

import numpy as np

from .encodings import deal_to_pbn
from .record import Reason, RecordError

SOLVER_NAME = "dds"
MAX_DEALS_PER_CALL = 40  # DDS MAXNOOFTABLES: 40 deals x 5 strains = MAXNOOFBOARDS (200) per call

SOLVER_ERROR = "solver_error"  # DDS returned an error code for this deal
SOLVER_CRASHED = "solver_crashed"  # the solver process died on this deal

# Our strain C,D,H,S,NT -> DDS's (S=0, H=1, D=2, C=3, NT=4); seats are N,E,S,W in both.
DDS_STRAIN = (3, 2, 1, 0, 4)

Table = np.ndarray  # int8[20], [declarer][strain] flattened declarer-major
Failure = tuple[str, str]  # (reason, message)


def check_deal(owner: np.ndarray | Sequence[int]) -> np.ndarray:
    """Return `owner` as int8[52] if it is a full deal (each seat exactly 13 cards), else raise
    RecordError with NOT_A_DEAL (cards missing), BAD_CARD or WRONG_HAND_SIZE."""
    owner = np.asarray(owner)
    if owner.shape != (52,):
        raise RecordError(Reason.NOT_A_DEAL, f"owner has shape {owner.shape}, not (52,)", "owner")
    if ((owner < -1) | (owner > 3)).any():
        raise RecordError(Reason.BAD_CARD, f"owner holds seat values {sorted(set(owner.tolist()))}", "owner")
    missing = int((owner == -1).sum())
    if missing:
        raise RecordError(Reason.NOT_A_DEAL, f"{missing} of 52 cards have no holder", "owner")
    counts = np.bincount(owner, minlength=4)
    if (counts != 13).any():
        raise RecordError(Reason.WRONG_HAND_SIZE, f"hands N,E,S,W hold {counts.tolist()} cards", "owner")
    return owner.astype(np.int8)


def table_from_dds(cell: Callable[[int, int], int]) -> Table:
    """DDS result (cell(dds_strain, seat) = declarer's tricks) -> our int8[20] layout."""
    return np.array([cell(DDS_STRAIN[strain], seat) for seat in range(4) for strain in range(5)], dtype=np.int8)


def calc_tables(owners: np.ndarray) -> np.ndarray:
    """Solve up to 40 checked deals (int8[n, 52]) in one CalcAllTables call, in this process.
    Returns int8[n, 20]. Call it only inside a solver process (see module docstring)."""
    from endplay.dds import calc_all_tables
    from endplay.types import Deal, Denom, Player

    if not 0 < len(owners) <= MAX_DEALS_PER_CALL:
        raise ValueError(f"{len(owners)} deals in one call; DDS takes 1..{MAX_DEALS_PER_CALL}")
    results = calc_all_tables([Deal(deal_to_pbn(owner)) for owner in owners])
    return np.stack([
        table_from_dds(lambda strain, seat, table=results[i]: table[Denom(strain), Player(seat)])
        for i in range(len(owners))
    ])


class _DDSInfo(ctypes.Structure):
    """The head of DDS 2.9's DDSInfo (endplay's own declaration of it is too short)."""

    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("versionString", ctypes.c_char * 10)]


def solver_version() -> str:
    """'2.9.0 (endplay 0.5.12)': the DDS library version and its wrapper's."""
    import endplay
    import endplay._dds as _dds

    buffer = ctypes.create_string_buffer(4096)  # room for the whole DDSInfo, whatever its size
    _dds._dll.GetDDSInfo(buffer)
    info = _DDSInfo.from_buffer(buffer)
    return f"{info.major}.{info.minor}.{info.patch} (endplay {endplay.__version__})"


def _serve(fd: int, threads: int, solve_name: str) -> None:
    """The solver process: answer each batch of owners with ('ok', tables) or ('error', text)."""
    import importlib

    import endplay._dds as _dds

    module_name, _, function_name = solve_name.partition(":")
    solve = getattr(importlib.import_module(module_name), function_name)
    _dds.SetMaxThreads(threads)  # 0 = DDS's own choice (one thread per core)
    conn = Connection(fd)
    conn.send(solver_version())
    while True:
        try:
            owners = conn.recv()
        except EOFError:  # the caller is gone
            return
        if owners is None:
            return
        try:
            conn.send(("ok", solve(owners)))
        except _dds.DDSError as error:
            conn.send(("error", str(error)))


class Solver:
    """A DDS child process with a blocking, thread-safe `solve`.

    `threads` is DDS's own thread count inside the child (1 when there is one solver per core,
    0 for DDS's default of one per core). `solve` replaces `calc_tables` (tests inject faults);
    the child imports it by name, with the caller's sys.path."""

    def __init__(self, threads: int = 1, solve: Callable[[np.ndarray], np.ndarray] = calc_tables):
        self.threads = threads
        self._solve_name = f"{solve.__module__}:{solve.__qualname__}"
        if solve is calc_tables:
            self._solve_name = f"{__spec__.name}:calc_tables"  # the same module when run as __main__
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._conn = None
        self._version: str | None = None
        self.calls = 0  # batches sent to the solver process

    @property
    def version(self) -> str:
        with self._lock:
            self._ensure_started()
            return self._version

    def solve(self, owners: Sequence[np.ndarray]) -> list[Table | Failure]:
        """For each deal: its table, or (reason, message) when it is not a deal, DDS rejects it
        or the solver dies on it. Deals are sent in calls of at most 40."""
        results: list[Table | Failure | None] = [None] * len(owners)
        valid: list[int] = []
        for index, owner in enumerate(owners):
            try:
                check_deal(owner)
                valid.append(index)
            except RecordError as error:
                results[index] = (error.reason.value, error.message)
        for start in range(0, len(valid), MAX_DEALS_PER_CALL):
            chunk = valid[start:start + MAX_DEALS_PER_CALL]
            batch = np.stack([np.asarray(owners[i], dtype=np.int8) for i in chunk])
            for index, result in zip(chunk, self._solve_checked(batch)):
                results[index] = result
        return results

    def _solve_checked(self, owners: np.ndarray) -> list[Table | Failure]:
        """Solve checked deals; on failure split the batch in halves until the culprit is alone."""
        status, payload = self._call(owners)
        if status == "ok":
            return list(payload)
        if len(owners) == 1:
            return [(SOLVER_ERROR if status == "error" else SOLVER_CRASHED, payload)]
        middle = len(owners) // 2
        return self._solve_checked(owners[:middle]) + self._solve_checked(owners[middle:])

    def _call(self, owners: np.ndarray) -> tuple[str, object]:
        with self._lock:
            self._ensure_started()
            self.calls += 1
            try:
                self._conn.send(owners)
                return self._conn.recv()
            except (EOFError, OSError):
                code = self._process.wait()
                self._discard()
                return "crashed", f"solver process ended with exit code {code}"

    def _ensure_started(self) -> None:
        if self._process is not None:
            return
        ours, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        command = [sys.executable, "-m", __spec__.name, str(theirs.fileno()), str(self.threads), self._solve_name]
        self._process = subprocess.Popen(command, pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL)
        theirs.close()
        self._conn = Connection(ours.detach())
        try:
            self._version = self._conn.recv()
        except EOFError:
            code = self._process.wait()
            self._discard()
            raise RuntimeError(f"the DDS solver process did not start (exit code {code})") from None

    def _discard(self) -> None:
        self._conn.close()
        self._process = self._conn = None

    def close(self) -> None:
        with self._lock:
            if self._process is None:
                return
            try:
                self._conn.send(None)
                self._process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
            self._discard()

    def __enter__(self) -> "Solver":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = [
    "SOLVER_NAME", "MAX_DEALS_PER_CALL", "SOLVER_ERROR", "SOLVER_CRASHED", "DDS_STRAIN",
    "check_deal", "table_from_dds", "calc_tables", "solver_version", "Solver",
]


if __name__ == "__main__":  # the solver process started by Solver
    _serve(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
