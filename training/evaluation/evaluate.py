"""A reproducible duplicate evaluation in IMPs: `bridgeflow evaluate`.

    bridgeflow evaluate --dd data/dd --bsm data/bsm --nndda data/nndda --out data/eval \
        [--params params.yaml] [--set boards=50] [--set search.samples=8] [--boards FILE]

Boards: the first `boards` deal_ids, in ascending order, of the DD store's test split (deal_id % 100
>= 90), or a fixed list (`--boards`: a JSON list of deal_ids, or the boards.json this command
writes). Board i (1-based) gets duplicate dealer and vulnerability rotation. Every contract is
scored with the exact DD tricks of the store.

Matches (`evaluate.matches`), agents named rule | bsm | bsm-sample | search, each optionally
`@CHECKPOINT` (another BSM, e.g. `bsm@old/model.pt:bsm`), dmc@CHECKPOINT (a DMC Q network, greedy:
training/dmc), or BEN: ben | ben-nosearch (ben.py; one BEN server per process, workers included):
- `A:B`, a team match: A sits NS at table 1 and EW at table 2, B in the other seats; the board
  scores IMP(NS score at table 1 - NS score at table 2) for A (DeepMind's IMP(S(abab) - S(baba))).
- `partner:A+B`, the partnership setting: A replaces one of four B's, in each seat in turn, so it
  sits with B as partner against two B's; the board scores the mean over the four seats of the
  IMPs A's side gains over the table of four B's (how good a partner for B A is). `partner:A` is
  `partner:A+rule`. B is what follows the last `+`.
For every two team matches against the same opponent or of the same agent (and every two partner
matches with the same B) the report also gives the paired difference on the same boards, named
in the order of evaluate.matches; `search:rule - bsm:rule` is the headline, and
`search:ben - search:ben-nosearch` is what BEN's search changes for ours.

Reproducible: every agent is reseeded before every table from (evaluate.seed, match, deal_id,
table), so the same seed gives the same per-board results, whatever the board order (search.seed
only seeds `bridgeflow bid`); `evaluate.workers` processes (one core each) play boards in parallel
with the same results. Writes to --out:
  boards.parquet  one row per (match, board): auctions, contracts, DD tricks, NS scores, IMPs
  boards.json     the deal_ids played and their hash (a valid --boards file)
  metrics.json    per match: mean IMPs/board, SE, 95% interval, boards, time per decision (mean,
                  p95) per agent, and per search agent how often its sampler fell back (`sampler`);
                  the paired differences; the config, checkpoint hashes and seed.
  matches.pbn     every table of every board as a PBN game (match_pbn.py): seats, auction,
                  contract, its DD tricks as the result, NS score, IMPs, the DD table.
  report.html     the boards as one offline HTML page (board_report.py)

Resumable: finished boards are committed every COMMIT_SECONDS to --out/_progress/KEY/part-*.parquet,
KEY a hash of everything that decides the per-board results (see `run_key`). A rerun with the same
KEY plays only the boards not yet committed and writes the same boards.parquet and metrics.json
(timings aside) as an uninterrupted run; a complete run removes _progress.

This module is the verb: its config, the worker pool and the files. The parts it puts together:
boards.py (which boards), table.py (one board at its tables), matches.py (the match kinds, their
IMPs and summaries), resume.py (the committed parts), agents.py (agents made from their specs) and
statistics.py (the intervals)."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from collections import defaultdict
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import torch
from tqdm import tqdm

from bridgeflow.dataset.atomic import write_table
from bridgeflow.dataset.digests import key_digest
from bridgeflow.dataset.errors import output_folder
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.training.model_files import DEFAULT_HELP
from bridgeflow.training.params import ParamsArguments
from bridgeflow.training.pools import spawned_workers
from bridgeflow.training.search.monte_carlo import SearchConfig

from .agents import AgentFactory
from .board_report import write_report
from .boards import Boards, load_boards
from .match_pbn import match_pbn
from .matches import line_up, paired, play_match, seat_names, summary
from .resume import PROGRESS_SCHEMA, Progress
from .statistics import timing_summary
from .table import LOG_SCHEMA, SAMPLER_COUNTS, play_board, sampler_summary

log = logging.getLogger(__name__)


@dataclass
class EvalConfig:
    """The `evaluate:` section of params.yaml."""

    boards: int = 100  # deals from the test split (ignored with --boards)
    seed: int = 0
    matches: list = field(default_factory=lambda: ["search:rule", "bsm:rule", "partner:bsm"])
    workers: int = 1  # processes playing boards, one core each; the results do not depend on it

    def __post_init__(self):
        if self.boards < 1 or self.workers < 1:
            raise ValueError(f"evaluate: boards and workers >= 1, not boards={self.boards}, workers={self.workers}")


# One board-playing process of a parallel run: its own models, agents and DDS child.
_worker: dict = {}


def _start_worker(bsm, nndda, search_config: SearchConfig, matches: list[str], boards: Boards, seed: int) -> None:
    torch.set_num_threads(1)
    factory = AgentFactory(bsm, nndda, search_config)
    _worker.update(line_ups={match: line_up(match, factory) for match in matches}, boards=boards, seed=seed)


def _play_in_worker(task: tuple[str, int]) -> dict:
    match, index = task
    line_ups, gain = _worker["line_ups"][match]
    row = play_board(match, line_ups, _worker["boards"], index, _worker["seed"])
    return row | {"imps": float(gain(row["scores_ns"]))}


def play_in_parallel(config: EvalConfig, boards: Boards, factory: AgentFactory, progress: Progress) -> None:
    """Every board not yet in `progress`, of every match, played by `config.workers` processes
    and added to `progress` as it finishes. Each table reseeds its agents, so a board's result is
    the same in any process and any order: the serial loop then finds every board played."""
    todo = [(match, index) for match in config.matches for index in range(len(boards.deal_ids))
            if index + 1 not in progress.rows[match]]
    if not todo:
        return
    start = (factory.bsm, factory.nndda, factory.search_config, config.matches, boards, config.seed)
    # An interrupt ends the workers mid-board; a killed run's workers end with it.
    with spawned_workers(config.workers, _start_worker, start) as pool:
        # As they finish, not in order: a slow board (BEN's search) holds back neither the boards
        # after it nor their commit, so a kill loses only the boards in play.
        finished = as_completed([pool.submit(_play_in_worker, task) for task in todo])
        for future in tqdm(finished, total=len(todo), unit="board",
                           desc=f"{len(config.matches)} matches, {config.workers} workers", mininterval=2.0):
            progress.add(future.result())


def run_key(config: EvalConfig, boards: Boards, factory: AgentFactory) -> str:
    """Names a run's progress by everything that decides its per-board results: both configs (with
    the seed), the board list, the hash of every checkpoint loaded and which ones are the defaults
    (so call it once every agent is made)."""
    decisive = {"evaluate": asdict(config) | {"workers": None}, "search": asdict(factory.search_config), "boards": boards.hash,
                "checkpoints": factory.checkpoints, "defaults": [str(factory.bsm), str(factory.nndda)],
                "progress": str(PROGRESS_SCHEMA)}  # parts of another layout are not resumed
    return key_digest(decisive)


def evaluate(config: EvalConfig, boards: Boards, factory: AgentFactory,
             progress_root: Path | None = None) -> tuple[dict, list[dict]]:
    """Play every configured match; returns (metrics, log rows). With `progress_root`, finished
    boards are committed under progress_root/KEY and a rerun with the same KEY resumes from them."""
    lined_up = {match: line_up(match, factory) for match in config.matches}  # every checkpoint, before the key
    progress = Progress(progress_root / run_key(config, boards, factory) if progress_root else None)
    resumed = sum(map(len, progress.rows.values()))
    if resumed:
        log.info("resuming from %s: %d boards already played", progress.folder, resumed)
    try:
        if config.workers > 1:
            play_in_parallel(config, boards, factory, progress)
        played_by_match = {}
        for match, (line_ups, gain) in lined_up.items():
            started = time.perf_counter()
            played_by_match[match] = play_match(match, line_ups, gain, boards, config.seed, progress)
            log.info("%s: %.2f IMPs/board over %d boards in %.0f s", match,
                     np.mean([r["imps"] for r in played_by_match[match]]), len(played_by_match[match]),
                     time.perf_counter() - started)
    finally:  # whatever stops the run (Ctrl-C, SIGTERM, a failed agent), the boards finished are kept
        progress.commit()
    results, timings, sampler, rows = {}, {}, {}, []
    for match, played in played_by_match.items():
        timings[match], sampler[match] = defaultdict(list), defaultdict(lambda: dict.fromkeys(SAMPLER_COUNTS, 0))
        for row in played:
            for name, seconds in row["seconds"].items():
                timings[match][name] += seconds
            for name, counts in row["sampler"].items():
                for key in SAMPLER_COUNTS:
                    sampler[match][name][key] += counts[key]
        results[match] = played
        rows += [{name: row[name] for name in LOG_SCHEMA.names} for row in played]
    metrics = {
        "matches": {match: summary([r["imps"] for r in played])
                    | {"time_per_decision": {name: timing_summary(t) for name, t in timings[match].items()}}
                    | ({"sampler": {name: sampler_summary(c) for name, c in sampler[match].items()}}
                       if sampler[match] else {})
                    for match, played in results.items()},
        "paired": paired(results),
    }
    if "search:rule - bsm:rule" in metrics["paired"]:
        metrics["headline"] = ({"comparison": "(search vs rule) - (bsm vs rule)"}
                               | metrics["paired"]["search:rule - bsm:rule"])
    return metrics, rows


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow evaluate",
                                     description="Duplicate match in IMPs over DD-scored test boards.")
    parser.add_argument("--dd", default="data/dd", help="DD store (ddlabel --out)")
    parser.add_argument("--bsm", help="BSM checkpoint: training folder or model.pt; " + DEFAULT_HELP["BSM"])
    parser.add_argument("--nndda", help="NN-DDA model for the search: folder or nndda.pt; default: models/nndda")
    parser.add_argument("--out", default="data/eval", help="boards.parquet, boards.json, metrics.json go here")
    params_arguments = ParamsArguments(parser, ["evaluate", "search"], bare="evaluate")
    parser.add_argument("--boards", help="fixed board list: JSON list of deal_ids or a boards.json")
    args = parser.parse_args(argv)
    # Decisions run small batches one after another: one thread is faster than two fighting
    # over a busy machine's cores (measured: up to 12x on 2 loaded cores).
    torch.set_num_threads(1)
    params = params_arguments.parsed(args)
    config = params.load(EvalConfig, "evaluate")
    search_config = params.load(SearchConfig, "search")
    boards = load_boards(args.dd, config.boards, args.boards)
    factory = AgentFactory(args.bsm, args.nndda, search_config)
    out = output_folder(args.out)  # checked before the work
    started = time.perf_counter()
    try:
        metrics, rows = evaluate(config, boards, factory, out / "_progress")
    finally:
        factory.close()
    out.mkdir(parents=True, exist_ok=True)
    write_table(pa.Table.from_pylist(rows, schema=LOG_SCHEMA), out / "boards.parquet")
    (out / "matches.pbn").write_text(match_pbn(rows, boards, {match: seat_names(match) for match in config.matches}))
    board_list = {"deal_ids": [int(d) for d in boards.deal_ids], "hash": boards.hash}
    (out / "boards.json").write_text(json.dumps(board_list) + "\n")
    metrics |= {
        "schema_version": SCHEMA_VERSION,
        "boards": {"count": len(boards.deal_ids), "hash": boards.hash, "source": args.boards or f"{args.dd} test split",
                   "deal_ids": board_list["deal_ids"]},
        "config": {"evaluate": asdict(config), "search": asdict(search_config)},
        "checkpoints": factory.checkpoints,
        "seed": config.seed,
        "seconds": time.perf_counter() - started,
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    if (out / "_progress").exists():
        shutil.rmtree(out / "_progress")  # this run's parts and any stale ones of other keys
    write_report(out)
    for name, result in [*metrics["matches"].items(), *metrics["paired"].items()]:
        print(f"{name:>28}: {result['mean_imps']:+.2f} IMPs/board, se {float('nan') if result['se'] is None else result['se']:.2f},"
              f" {result['boards']} boards")
    return metrics
