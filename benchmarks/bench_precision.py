"""The search in fp32 and in bf16 on the same positions: CPU time per decision, and the calls that change.

    python benchmarks/bench_precision.py --bsm models/bsm_pi --nndda models/nndda [--boards 10] \
        [--set search.KEY=VALUE ...] [--json out.json]

The searched decisions of `search:rule` (fp32, the default params) on the first --boards boards of
the validation list are replayed at both precisions (`search.precision`), one after the other on
the same seed, on one torch thread: the times are paired by position, where two played matches
would compare different auctions once one call differs. bf16 needs a CPU with native bfloat16
(AVX512-BF16 or AMX); elsewhere the search refuses it."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search import REPO, VALID_LIST, RecordingFactory, tiny_setup  # noqa: E402
from bridgeflow.training.bidding.bsm_model import PRECISIONS
from bridgeflow.training.evaluation import evaluate as ev
from bridgeflow.training.params import load_section
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, SearchConfig, load_bidder, load_scorer

def replay(dd: Path, bsm: Path, nndda: Path, boards: int, overrides: list[str], seed: int,
           board_list: Path | None = VALID_LIST) -> dict:
    board_set = ev.load_boards(dd, boards, board_list)
    board_set = ev.Boards(board_set.deal_ids[:boards], board_set.owners[:boards], board_set.tables[:boards])
    config = load_section(SearchConfig, None, "search", overrides)
    factory = RecordingFactory(bsm, nndda, dataclasses.replace(config, precision="fp32"))
    ev.evaluate(ev.EvalConfig(seed=seed, matches=["search:rule"]), board_set, factory)
    factory.close()
    scorer = load_scorer(config.dd, nndda)
    searches = {p: MonteCarloSearch(load_bidder(bsm, dataclasses.replace(config, precision=p)), scorer,
                                    dataclasses.replace(config, precision=p)) for p in PRECISIONS}
    seconds = {p: [] for p in PRECISIONS}
    calls = {p: [] for p in PRECISIONS}
    for index, position in enumerate(factory.positions):
        for precision, search in searches.items():
            search.reseed(seed + index)
            started = time.process_time()
            calls[precision].append(search.search(*position).call)
            seconds[precision].append(time.process_time() - started)
    ms = {p: np.array(seconds[p]) * 1000 for p in PRECISIONS}
    out = {"positions": len(factory.positions), "boards": boards,
           **{f"{p}_{stat}": float(f(ms[p])) for p in PRECISIONS
              for stat, f in (("mean_ms", np.mean), ("p95_ms", lambda x: np.percentile(x, 95)))},
           "speedup_mean": float(ms["fp32"].mean() / ms["bf16"].mean()),
           "speedup_median_paired": float(np.median(ms["fp32"] / ms["bf16"])),
           "calls_changed": int(np.sum(np.array(calls["fp32"]) != np.array(calls["bf16"])))}
    print(f"{out['positions']} positions: fp32 {out['fp32_mean_ms']:.0f} ms mean (p95 {out['fp32_p95_ms']:.0f}), "
          f"bf16 {out['bf16_mean_ms']:.0f} ms (p95 {out['bf16_p95_ms']:.0f}) CPU per decision; "
          f"{out['speedup_mean']:.2f}x on the mean, {out['speedup_median_paired']:.2f}x median per position; "
          f"{out['calls_changed']} calls changed", flush=True)
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dd", type=Path, default=REPO / "datasets" / "dd_labels")
    parser.add_argument("--bsm", type=Path, default=REPO / "models" / "bsm_pi")
    parser.add_argument("--nndda", type=Path, default=REPO / "models" / "nndda")
    parser.add_argument("--boards", type=int, default=10)
    parser.add_argument("--set", action="append", default=[], metavar="search.KEY=VALUE", help="other search params")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument("--tiny", action="store_true", help="untrained models on 4 boards, K = 2 (smoke run)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    overrides = [s.removeprefix("search.") for s in args.set]
    with tempfile.TemporaryDirectory() as tmp:
        board_list = VALID_LIST
        if args.tiny:
            args.boards, board_list, overrides = 4, None, [*overrides, "samples=2"]
            args.dd, args.bsm, args.nndda = tiny_setup(Path(tmp), args.boards)
        out = replay(args.dd, args.bsm, args.nndda, args.boards, overrides, args.seed, board_list)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
