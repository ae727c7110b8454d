"""Boards per second: bridgeflow's `parse_lin` against `endplay.parsers.lin` on the same BBO
vugraph files, on one core.

endplay has no vugraph support (its `loads` splits a file at `pn|`, so a whole vugraph file
becomes one board), so it is handed each board's text, cut at `qx|` (the cutting is timed with
it), and parses it with `LINDecoder.parse_line`; boards it raises on are counted, not retried.
Times are CPU seconds of this process (best of --repeat), which other load on the machine
disturbs less than wall time.

    python benchmarks/bench_parsers_lin.py [--data DIR] [--every 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

from endplay.parsers.lin import LINDecoder

from bridgeflow.dataset.lin import parse_lin
from bridgeflow.dataset.record import BoardRecord

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/real/bbo_vugraph_alphabridge"
BOARD_START = re.compile(r"(?=(?:^|(?<=\|))\s*qx\|)", re.M)


def run_bridgeflow(files: list[tuple[str, bytes]]) -> tuple[int, int]:
    """(boards read, boards rejected by the parser)."""
    boards = rejected = 0
    for name, data in files:
        for item in parse_lin(data, name):
            boards += 1
            rejected += not isinstance(item, BoardRecord)
    return boards, rejected


def run_endplay(files: list[tuple[str, bytes]]) -> tuple[int, int]:
    """(boards read, boards endplay raised on)."""
    decoder = LINDecoder()
    boards = failed = 0
    for _, data in files:
        text = data.decode("utf-8").replace("\r\n", "").replace("\n", "")
        for board_text in BOARD_START.split(text)[1:]:
            boards += 1
            try:
                decoder.parse_line(board_text)
            except Exception:  # endplay raises many kinds of error on real boards
                failed += 1
    return boards, failed


def best_cpu_seconds(function, files, repeat: int) -> tuple[float, tuple[int, int]]:
    best, result = float("inf"), (0, 0)
    for _ in range(repeat):
        start = time.process_time()
        result = function(files)
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder searched for *.lin")
    parser.add_argument("--every", type=int, default=10, help="take every n-th file (sorted by path)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    paths = sorted(args.data.glob("**/*.lin"))[:: args.every]
    files = [(str(path), path.read_bytes()) for path in paths]
    megabytes = sum(len(data) for _, data in files) / 1e6
    print(f"{len(files)} files, {megabytes:.1f} MB, from {args.data}")

    rows = []
    for name, function in (("bridgeflow parse_lin", run_bridgeflow), ("endplay parsers.lin", run_endplay)):
        seconds, (boards, failed) = best_cpu_seconds(function, files, args.repeat)
        rows.append((name, boards, failed, seconds, boards / seconds))
    reference = rows[1][4]
    print(f"{'parser':<22}{'boards':>8}{'rejected/raised':>17}{'cpu s':>8}{'boards/s':>11}{'ratio':>7}")
    for name, boards, failed, seconds, rate in rows:
        print(f"{name:<22}{boards:>8}{failed:>17}{seconds:>8.2f}{rate:>11.0f}{rate / reference:>7.2f}")


if __name__ == "__main__":
    main()
