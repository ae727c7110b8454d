"""Speed of par and of vectorised scoring (single core), next to DDS's own par through endplay.

    python benchmarks/bench_par.py [--tables 5000] [--seed 0]

Tables are synthetic but shaped like real ones (East/West take about 13 minus North/South's
tricks): solving real deals with DDS costs far more than par itself and is not what is measured.
Reports the best of three runs, in items per CPU second:
  par            one (dealer, vul) per table, calls/s
  par_all        all 16 (dealer, vul) per table, tables/s (what the DD stage calls)
  endplay par    endplay.dds.par (DDS DealerParBin in C, ctypes call), calls/s and tables/s for 16
  contract_scores / imps_array   millions of results/s"""

from __future__ import annotations

import argparse
import time

import numpy as np
from endplay.dds import par as endplay_par
from endplay.dds.ddtable import DDTable
import endplay._dds as dds
from endplay.types import Player, Vul

from bridgeflow.dataset.scoring import contract_scores, imps_array, par, par_all

DDS_STRAINS = (3, 2, 1, 0, 4)  # DDS table order S,H,D,C,NT -> our strain index
OUR_VUL_TO_DDS = (0, 2, 3, 1)


def realistic_tables(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ns = rng.integers(0, 14, (count, 1, 5))
    jitter = rng.integers(-1, 2, (count, 4, 5))
    return (np.concatenate([ns, 13 - ns, ns, 13 - ns], axis=1) + jitter).clip(0, 13).astype(np.int8)


def to_endplay(t: np.ndarray) -> DDTable:
    results = dds.ddTableResults()
    for k, strain in enumerate(DDS_STRAINS):
        for seat in range(4):
            results.resTable[k][seat] = int(t[seat, strain])
    return DDTable(results)


def best_rate(function, count: int, repeats: int = 3) -> float:
    """Items per CPU second of the fastest of `repeats` runs. CPU time, not wall time, because
    other processes share the cores."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    tables = realistic_tables(args.tables, args.seed)
    boards = [(t, i % 4, (i // 4) % 4) for i, t in enumerate(tables)]
    endplay_boards = [(to_endplay(t), Vul(OUR_VUL_TO_DDS[vul]), Player(dealer)) for t, dealer, vul in boards]
    all_combos = [(Vul(OUR_VUL_TO_DDS[vul]), Player(dealer)) for dealer in range(4) for vul in range(4)]
    few = endplay_boards[: max(1, args.tables // 5)]

    rates = {
        "par (calls/s)": best_rate(lambda: [par(t, dealer, vul) for t, dealer, vul in boards], len(boards)),
        "par_all (tables/s)": best_rate(lambda: [par_all(t) for t in tables], len(tables)),
        "endplay par (calls/s)": best_rate(
            lambda: [list(endplay_par(t, vul, dealer)) for t, vul, dealer in endplay_boards], len(endplay_boards)),
        "endplay par x16 (tables/s)": best_rate(
            lambda: [[list(endplay_par(t, vul, dealer)) for vul, dealer in all_combos] for t, _, _ in few], len(few)),
    }

    rng = np.random.default_rng(args.seed)
    n = 1_000_000
    levels, strains = rng.integers(1, 8, n), rng.integers(0, 5, n)
    doubled, vulnerable, tricks = rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 14, n)
    differences = rng.integers(-4000, 4001, n) // 10 * 10
    rates["contract_scores (M/s)"] = best_rate(
        lambda: contract_scores(levels, strains, doubled, vulnerable, tricks), n) / 1e6
    rates["imps_array (M/s)"] = best_rate(lambda: imps_array(differences), n) / 1e6

    print(f"{args.tables} synthetic DD tables, seed {args.seed}, per CPU second, best of 3")
    for name, rate in rates.items():
        print(f"  {name:28s} {rate:12,.1f}")


if __name__ == "__main__":
    main()
