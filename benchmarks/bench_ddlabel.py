"""Deals per second per core: the ddlabel pipeline against a bare loop over
`endplay.dds.calc_all_tables`, on the same random deals, in one run.

    python benchmarks/bench_ddlabel.py --deals 2000 [--seed 1] [--json results.json] [--keep DIR]

Variants (each in fresh processes, solving the same deals):
  bare-threads    one process, DDS's own threads (one per core), calc_all_tables on 40 deals a call:
                  the baseline.
  bare-processes  one process per core, DDS limited to one thread each, 40 deals a call, handed
                  out dynamically (a process pool).
  pipeline        `bridgeflow ddlabel`: one lane per core, one single-threaded DDS process each.
  pipeline-dds-threads  the same job with one lane and DDS's own threads.
The first variant named in --variants is the baseline of the ratios (bare-threads by default; with
--cores 1 use bare-processes, since bare-threads lets DDS take every core). Steady-state rates count from the first solver call to the last answer; start-up (Beam, worker
and solver processes) is reported on its own."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

MAX_DEALS_PER_CALL = 40


def random_deals(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4, dtype=np.int8), 13)
    return np.stack([base[rng.permutation(52)] for _ in range(count)])


def _solve_batch(owners: np.ndarray) -> float:
    """One calc_all_tables call on endplay Deals; returns when it finished."""
    from endplay.dds import calc_all_tables
    from endplay.types import Deal

    from bridgeflow.dataset.encodings import deal_to_pbn

    calc_all_tables([Deal(deal_to_pbn(owner)) for owner in owners])
    return time.time()


def _bare_threads(owners: np.ndarray, answer) -> None:
    import endplay.dds  # noqa: F401  (load DDS before the clock starts)

    started = time.time()
    for start in range(0, len(owners), MAX_DEALS_PER_CALL):
        finished = _solve_batch(owners[start:start + MAX_DEALS_PER_CALL])
    answer.put((started, finished))


def _one_dds_thread() -> None:
    import endplay._dds as _dds

    _dds.SetMaxThreads(1)


def _warm(_) -> float:
    return time.time()


def bare_threads(owners: np.ndarray) -> dict:
    context = multiprocessing.get_context("spawn")
    answer = context.Queue()
    launched = time.time()
    process = context.Process(target=_bare_threads, args=(owners, answer))
    process.start()
    started, finished = answer.get()
    process.join()
    return {"startup_seconds": started - launched, "solve_seconds": finished - started, "solved": len(owners)}


def bare_processes(owners: np.ndarray, cores: int) -> dict:
    context = multiprocessing.get_context("spawn")
    launched = time.time()
    with context.Pool(cores, initializer=_one_dds_thread) as pool:
        pool.map(_warm, range(cores), chunksize=1)  # every process up before the clock starts
        started = time.time()
        batches = [owners[start:start + MAX_DEALS_PER_CALL] for start in range(0, len(owners), MAX_DEALS_PER_CALL)]
        finished = max(pool.imap_unordered(_solve_batch, batches))
    return {"startup_seconds": started - launched, "solve_seconds": finished - started, "solved": len(owners)}


def pipeline(owners: np.ndarray, workers: int, dds_threads: int, folder: Path) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bridgeflow.dataset.encodings import deal_id
    from bridgeflow.dataset.schema import RECORDS
    from bridgeflow.pipelines import ddlabel

    rows = [{"record_id": index, "deal_id": deal_id(owner), "owner": owner.tolist(), "source_file": "bench",
             "source_format": "synth", "source_position": index, "source_line": index + 1}
            for index, owner in enumerate(owners)]
    (folder / "records").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORDS), folder / "records" / "part-00000.parquet")
    summary = ddlabel.run(["--records", str(folder / "records"), "--out", str(folder / "dd"),
                           "--workers", str(workers), "--dds-threads", str(dds_threads)])
    return {"startup_seconds": summary["startup_seconds"], "solve_seconds": summary["solve_seconds"],
            "solved": summary["solved"], "total_seconds": summary["seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--variants", default="bare-threads,bare-processes,pipeline,pipeline-dds-threads")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--keep", help="keep the pipeline's DD store here (its labels are reusable: ddlabel --store)")
    args = parser.parse_args()
    owners = random_deals(args.deals, args.seed)
    results = {}
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench_ddlabel_", dir=args.keep) as temporary:
        for variant in args.variants.split(","):
            print(f"{variant}: solving {args.deals} deals ...", flush=True)
            if variant == "bare-threads":
                results[variant] = bare_threads(owners)
            elif variant == "bare-processes":
                results[variant] = bare_processes(owners, args.cores)
            elif variant == "pipeline":
                results[variant] = pipeline(owners, args.cores, 1, Path(temporary) / variant)
            elif variant == "pipeline-dds-threads":
                results[variant] = pipeline(owners, 1, 0, Path(temporary) / variant)
            else:
                parser.error(f"unknown variant {variant!r}")
            if args.keep and variant.startswith("pipeline"):
                shutil.copytree(Path(temporary) / variant / "dd", Path(args.keep) / variant)
    baseline_name = next(iter(results))  # the first variant is the baseline of the ratios
    baseline = results[baseline_name]
    print(f"\n{args.deals} random deals, {args.cores} cores (seed {args.seed})")
    print(f"{'variant':<22}{'deals/s/core':>14}{'vs ' + baseline_name:>20}{'start-up s':>12}{'solve s':>9}")
    for variant, result in results.items():
        result["deals_per_second_per_core"] = result["solved"] / result["solve_seconds"] / args.cores
        ratio = result["deals_per_second_per_core"] / baseline["deals_per_second_per_core"]
        result["ratio_to_baseline"] = ratio
        print(f"{variant:<22}{result['deals_per_second_per_core']:>14.3f}{ratio:>20.3f}"
              f"{result['startup_seconds']:>12.1f}{result['solve_seconds']:>9.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"deals": args.deals, "cores": args.cores, "seed": args.seed,
                                               "baseline": baseline_name,
                                               "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
