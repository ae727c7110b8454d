"""Synthetic corpus at scale: synth then ingest N boards, wall time and peak memory of each.

    python benchmarks/bench_synth_ingest.py --deals 1000000 --deals 100000

Memory is the peak summed RSS of the command's whole process tree (Beam workers included),
sampled every 0.2 s. Flat memory means the peak barely moves when N grows tenfold."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def measure(command: list[str]) -> tuple[float, float]:
    """Run `command`; return (seconds, peak MiB of its process tree)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = psutil.Process(process.pid)
    peak = 0
    while process.poll() is None:
        try:
            tree = [root] + root.children(recursive=True)
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.2)
    if process.returncode:
        raise SystemExit(f"{command} failed with {process.returncode}")
    return time.perf_counter() - started, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, action="append", help="corpus sizes (repeatable)")
    parser.add_argument("--format", default="pbn", choices=("pbn", "lin"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "bridgeflow.cli"]
    results = []
    for deals in args.deals or [20_000]:
        with tempfile.TemporaryDirectory() as work:
            corpus, out = Path(work) / "corpus", Path(work) / "ingest"
            synth_s, synth_mb = measure(cli + ["synth", "--deals", str(deals), "--seed", "1", "--out", str(corpus),
                                               "--format", args.format, "--workers", str(args.workers)])
            ingest_s, ingest_mb = measure(cli + ["ingest", "--input", str(corpus), "--out", str(out),
                                                 "--workers", str(args.workers)])
            manifest = json.loads((out / "manifest.json").read_text())
            shards = len(list((out / "records").glob("*.parquet")))
        results.append({
            "deals": deals, "format": args.format, "workers": args.workers,
            "synth_s": round(synth_s, 1), "synth_boards_per_s_per_core": round(deals / synth_s / args.workers),
            "synth_peak_mib": round(synth_mb), "ingest_s": round(ingest_s, 1),
            "ingest_boards_per_s_per_core": round(deals / ingest_s / args.workers),
            "ingest_peak_mib": round(ingest_mb), "accepted": manifest["accepted"],
            "quarantined": manifest["quarantined"], "record_shards": shards,
        })
        print(json.dumps(results[-1]))


if __name__ == "__main__":
    main()
