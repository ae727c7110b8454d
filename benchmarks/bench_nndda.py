"""NN-DDA batch inference speed against DDS (endplay calc_all_tables) on the same random deals.

    python benchmarks/bench_nndda.py [--model models/nndda/nndda.pt] [--deals 200000] [--threads 2]

Speed does not depend on the weights, so without --model it times an untrained model of the
default size (NNDDAConfig(); --arch/--hidden/--layers/--head to size another). Prints one JSON object: deals/s for a single pass, for each
symmetry-averaging set (on fewer deals), DDS deals/s on --dds-deals of the same deals, and the
ratio. Timings on a shared machine are noisy: the best of --repeats is reported with the median,
and deals per CPU-second (all threads), which other processes disturb much less."""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import numpy as np
import torch

from bridgeflow.dataset.dd import Solver
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig


def random_owners(n: int, seed: int) -> np.ndarray:
    """n random deals, vectorised: argsort of random keys gives a random permutation per row."""
    rng = np.random.default_rng(seed)
    order = rng.random((n, 52)).argsort(axis=1)
    return (order // 13).astype(np.int8)


def timed(fn, repeats: int) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds (all threads) of each repeat."""
    wall, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return wall, cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def dds_rates(owners: np.ndarray, threads: int) -> tuple[float, float]:
    """DDS (endplay calc_all_tables, 40 deals a call, in dataset/dd.py's solver process): deals per
    wall second, and per CPU second of the solver process (less its start-up, timed apart)."""
    before = _children_cpu()
    with Solver(threads=threads) as solver:
        solver.version
    startup = _children_cpu() - before
    before = _children_cpu()
    with Solver(threads=threads) as solver:
        solver.version
        started = time.perf_counter()
        solver.solve(list(owners))
        wall = time.perf_counter() - started
    return len(owners) / wall, len(owners) / max(1e-9, _children_cpu() - before - startup)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="nndda.pt; default: an untrained model of the size below")
    parser.add_argument("--hidden", type=int, default=NNDDAConfig.hidden)
    parser.add_argument("--layers", type=int, default=NNDDAConfig.layers)
    parser.add_argument("--head", default=NNDDAConfig.head)
    parser.add_argument("--arch", default=NNDDAConfig.arch)
    parser.add_argument("--deals", type=int, default=200_000)
    parser.add_argument("--sym-deals", type=int, default=20_000, help="deals for the symmetry-averaged timings")
    parser.add_argument("--dds-deals", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, help="deals per forward pass (default: DDEstimator's)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    if args.model:
        est = DDEstimator.load(args.model)
    else:
        est = DDEstimator(NNDDA(NNDDAConfig(args.hidden, args.layers, args.head, args.arch)))
    if args.batch:
        est.batch_size = args.batch
    owners = random_owners(args.deals, 0)
    est.tables(owners[:4096])  # warm up
    times, cpu = timed(lambda: est.tables(owners), args.repeats)
    result = {
        "model": args.model or "untrained",
        "config": vars(est.model.config),
        "params": est.model.num_params(),
        "threads": args.threads,
        "batch": est.batch_size,
        "deals": args.deals,
        "nn_deals_per_s": args.deals / min(times),
        "nn_deals_per_s_median": args.deals / statistics.median(times),
        # robust to other processes on the machine: divide by CPU time instead of wall time
        "nn_deals_per_cpu_s": args.deals / min(cpu),
        # CPU seconds per wall second of the best run: ~threads when every thread had a core
        "nn_cpu_per_wall": cpu[times.index(min(times))] / min(times),
    }
    for name in ("rot", "suits", "all"):
        sym_times, _ = timed(lambda: est.tables(owners[: args.sym_deals], symmetries=name), 1)
        result[f"nn_deals_per_s_{name}"] = args.sym_deals / sym_times[0]
    if args.dds_deals:
        result["dds_deals"] = args.dds_deals
        result["dds_deals_per_s"], result["dds_deals_per_cpu_s"] = dds_rates(owners[: args.dds_deals], args.threads)
        result["speedup_vs_dds"] = result["nn_deals_per_s"] / result["dds_deals_per_s"]
        result["speedup_vs_dds_cpu"] = result["nn_deals_per_cpu_s"] / result["dds_deals_per_cpu_s"]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
