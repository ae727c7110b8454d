"""`bridgeflow report` pages: build time, file size and page load in headless Chromium.

    .venv/bin/python benchmarks/bench_report.py RUN_DIR [RUN_DIR ...] [--repeats 5]

For each run folder (an evaluate, challenge, generation or selfplay --out): the seconds to build
report.html from the run's files (the verbs' modules, and with them torch, imported beforehand,
as they are when a verb writes its report; `bridgeflow report` itself takes ~4 s more to import
them), its size, then `--repeats` loads of it from disk in one headless
Chromium (the first one cold): the wall seconds from navigation to the load event, and the page's
own milliseconds from navigation to the end of its script (data parsed, summary, the first page of
the board list and the first board drawn: `data-ready-ms`). Prints one JSON object per run.
The target (issue 35): under 2 s load for a 1,000-board evaluate run and a 140-problem challenge run."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bridgeflow.training.evaluation import board_report, challenge, evaluate  # noqa: F401 (imported before timing)
from bridgeflow.training.evaluation.headless import Chromium


def measure(run: Path, repeats: int, browser: Chromium, folder: Path) -> dict:
    started = time.perf_counter()
    page = board_report.write_report(run, folder / f"{run.resolve().name}.html")
    built = time.perf_counter() - started
    loads, ready = [], []
    for _ in range(repeats):
        loads.append(browser.open(page))
        if browser.errors:
            raise RuntimeError(f"{page}: JavaScript errors {browser.errors}")
        ready.append(float(browser.evaluate("document.documentElement.dataset.readyMs")))
    data = board_report.read_run(run)
    return {"run": str(run), "kind": data["kind"], "boards": len(data["boards"]),
            "rows_on_first_page": browser.evaluate("document.querySelectorAll('#board-list tbody tr').length"),
            "build_s": round(built, 3), "bytes": page.stat().st_size,
            "load_s": {"first": round(loads[0], 3), "median": round(statistics.median(loads), 3), "max": round(max(loads), 3)},
            "ready_ms": {"first": ready[0], "median": statistics.median(ready), "max": max(ready)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--repeats", type=int, default=5, help="loads per page (the first is cold)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Chromium() as browser:
        for run in args.runs:
            print(json.dumps(measure(run, args.repeats, browser, Path(folder))))


if __name__ == "__main__":
    main()
