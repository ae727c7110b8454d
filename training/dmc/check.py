"""Does a policy exploit NN-DDA's errors? `bridgeflow dmc check`.

A policy trained on NN-DDA's scores can learn to bid contracts NN-DDA misjudges. The check plays a
team match, the agent against a reference (e.g. the imitation BSM, whose calls owe nothing to
NN-DDA), on boards with exact DD tables, and scores the same auctions twice: with the exact tables
and with NN-DDA's. An agent that exploits NN-DDA gains more IMPs under NN-DDA than under exact DDS:
the paired difference (NN-DDA - exact) per board, with its 95% interval, is the measure."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import duplicate_dealer, duplicate_vulnerability
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.scoring import imps
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.evaluation.agents import Agent, AgentFactory
from bridgeflow.training.evaluation.boards import Boards, boards_from
from bridgeflow.training.evaluation.matches import summary, team_line_ups
from bridgeflow.training.evaluation.table import play
from bridgeflow.training.model_files import shipped_model
from bridgeflow.training.search.monte_carlo import SearchConfig

from .reward import ns_score


def nndda_check(agent: Agent, reference: Agent, boards: Boards, estimator: DDEstimator) -> dict:
    """IMPs/board of `agent` against `reference` (team match, as evaluate's) scored with the exact
    tables and with NN-DDA's on the same auctions, and their paired difference."""
    estimated = estimator.tables(boards.owners)
    exact_imps, nndda_imps, differing = [], [], 0
    for index in range(len(boards.deal_ids)):
        dealer, vul = duplicate_dealer(index + 1), duplicate_vulnerability(index + 1)
        states: list[AuctionState] = []
        for seats in team_line_ups(agent, reference):
            for member in {id(a): a for a in seats}.values():
                member.reseed(index)
            states.append(play(seats, boards.owners[index], dealer, vul, defaultdict(list)))
        for tables, out in ((boards.tables[index], exact_imps), (estimated[index], nndda_imps)):
            scores = [ns_score(state, tables, vul) for state in states]
            out.append(imps(scores[0] - scores[1]))
        differing += exact_imps[-1] != nndda_imps[-1]
    return {"exact": summary(exact_imps), "nndda": summary(nndda_imps),
            "nndda_minus_exact": summary(np.subtract(nndda_imps, exact_imps)),
            "boards_scored_differently": differing / len(boards.deal_ids), "boards": len(boards.deal_ids)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", required=True, help="the policy checked, an agent spec, e.g. dmc@data/dmc")
    parser.add_argument("--against", default="bsm", help="the reference agent (default: the shipped BSM)")
    parser.add_argument("--dd", required=True, help="DD store with exact tables of the boards")
    parser.add_argument("--boards", default="100", help="board-list file, or N = the store's first N test-split deals")
    parser.add_argument("--nndda", help="the NN-DDA the policy was trained with; default: models/nndda")
    parser.add_argument("--out", help="write the result as JSON here")


def run_check(args: argparse.Namespace) -> dict:
    if args.agent == args.against:
        raise InputError(f"--agent and --against are both {args.agent!r}: the check compares two policies")
    boards = boards_from(args.dd, args.boards)
    estimator = DDEstimator.load(args.nndda or shipped_model("NN-DDA", "--nndda"))
    factory = AgentFactory(None, None, SearchConfig())
    try:
        result = nndda_check(factory.make(args.agent), factory.make(args.against), boards, estimator)
    finally:
        factory.close()
    result |= {"agent": args.agent, "against": args.against, "checkpoints": factory.checkpoints,
               "boards_hash": boards.hash}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    for name in ("exact", "nndda", "nndda_minus_exact"):
        print(f"{name:>18}: {result[name]['mean_imps']:+.2f} IMPs/board, {result[name]['boards']} boards")
    return result
