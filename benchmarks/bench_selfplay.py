"""Cost of policy iteration's generate step: self-play decisions per CPU second on one core.

    python benchmarks/bench_selfplay.py [--bsm models/bsm] [--nndda models/nndda] [--deals 40] \
        [--params params.yaml] [--set KEY=VALUE | --set search.KEY=VALUE ...]
    python benchmarks/bench_selfplay.py --nndda-size 128x3   # an untrained NN-DDA of that size (same cost)
    python benchmarks/bench_selfplay.py --tiny                # untrained toy models, 3 deals: a smoke run

Plays `--deals` boards of generation 1 with training.selfplay.actor in this process (one torch
thread), the `selfplay:` and `search:` params of --params as the selfplay stage reads them, and
times every decision in CPU time (robust to other jobs on the machine): searched and skipped
decisions apart, the share searched, how often argmax pi' differs from argmax pi, calls per
auction. Prints one JSON object."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from bridgeflow.pipelines.selfplay import SECTIONS, load_configs
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig
from bridgeflow.training.params import Params
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, load_bidder, load_scorer
from bridgeflow.training.selfplay.actor import Actor, train_deals

REPO = Path(__file__).resolve().parents[1]


def untrained_nndda(folder: Path, hidden: int, layers: int) -> Path:
    torch.manual_seed(0)
    model = NNDDA(NNDDAConfig(hidden=hidden, layers=layers))
    torch.save({"model_config": vars(model.config), "model": model.state_dict()}, folder / "nndda.pt")
    return folder / "nndda.pt"


def untrained_bsm(folder: Path) -> Path:
    torch.manual_seed(0)
    model = BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0))
    torch.save({"model_config": vars(model.config), "model": model.state_dict()}, folder / "model.pt")
    return folder / "model.pt"


class TimedActor(Actor):
    """The actor, with the CPU seconds of every decision kept by whether it was searched."""

    seconds: dict[bool, list[float]]

    def decide(self, hand, auction, dealer, vul, rng):
        started = time.process_time()
        row = super().decide(hand, auction, dealer, vul, rng)
        self.seconds[row["searched"]].append(time.process_time() - started)
        return row


def measure(bsm: Path, nndda: Path, deals: int, params: str, sets: list[str]) -> dict:
    config, search_config = load_configs(Params(params, sets, SECTIONS, bare="selfplay"))
    network = load_bidder(bsm, search_config)
    partner = load_bidder(config.base, search_config) if config.partner == "rule" else None
    opponents = load_bidder(search_config.opponents, search_config) if search_config.opponents else None
    scorer = load_scorer(search_config.dd, nndda)
    actor = TimedActor(network, MonteCarloSearch(network, scorer, search_config, partner, opponents=opponents), config)
    actor.seconds = {True: [], False: []}
    rows = [row for board, (_, owner) in enumerate(train_deals(config.seed + 1, deals), start=1)
            for row in actor.play(1, board, owner)]
    searched, skipped = actor.seconds[True], actor.seconds[False]
    decisions = len(searched) + len(skipped)
    total = sum(searched) + sum(skipped)
    network_rows = [row for row in rows if row["actor"] == "bsm"]
    return {
        "bsm": str(bsm), "nndda": str(nndda), "boards": deals, "calls_per_auction": len(rows) / deals,
        "decisions": decisions, "searched_share": len(searched) / decisions,
        "best_changed_share_of_searched": (sum(row["prior_best"] != row["policy_best"] for row in network_rows)
                                           / max(len(searched), 1)),
        "ms_per_searched_decision": 1000 * float(np.mean(searched)) if searched else None,
        "ms_per_skipped_decision": 1000 * float(np.mean(skipped)) if skipped else None,
        "decisions_per_cpu_second": decisions / total if total else None,
        "selfplay": {k: getattr(config, k) for k in ("partner", "tempering", "floor", "skip_above")},
        "search": {k: getattr(search_config, k) for k in ("samples", "oversample", "topk", "selection", "rollout", "dd")},
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bsm", type=Path, default=REPO / "models" / "bsm")
    parser.add_argument("--nndda", type=Path, default=REPO / "models" / "nndda")
    parser.add_argument("--nndda-size", help="HIDDENxLAYERS: an untrained NN-DDA of that size instead of --nndda")
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--params", default=str(REPO / "params.yaml"))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a selfplay or search.KEY param")
    parser.add_argument("--tiny", action="store_true", help="untrained toy models, 3 deals (smoke run)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        if args.tiny:
            args.bsm, args.deals, args.nndda_size = untrained_bsm(Path(tmp)), 3, "16x1"
            args.set += ["search.samples=2", "search.oversample=1"]
        if args.nndda_size:
            hidden, layers = (int(part) for part in args.nndda_size.split("x"))
            args.nndda = untrained_nndda(Path(tmp), hidden, layers)
        result = measure(args.bsm, args.nndda, args.deals, args.params, args.set)
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
