"""Bidding problems scored by Facit (BEN's Challenges): `bridgeflow challenge`.

    bridgeflow challenge --problems BW.pbn|FOLDER [--problems ...] --agent rule [--agent bsm@model.pt] \
        --out data/challenge [--bsm MODEL] [--nndda MODEL] [--params params.yaml] [--set search.KEY=VALUE] \
        [--compare RESULTS.pbn ...]

Each problem is bid by the agent for N and S (docs/conventions.md, "Bidding problems (Facit)"): along a
problem's script our side's scripted calls are forced and its `AC` places are the agent's; an
opponent's scripted call is made if legal, else Pass (BEN's rule); after the script (and on
uncontested problems, which have none) E/W pass and the agent bids N and S. Every call that is not
the script's is logged as a substitution. The final contract is scored with the problem's award
table (`facit.award_points`); percent = points / the sum of each board's top award.

Agents are named as for `evaluate` (rule | bsm | bsm-sample | search, optionally @CHECKPOINT, or
ben | ben-nosearch);
each is reseeded per board from (--seed, file, board), so a board's auction does not depend on
the others. Writes to --out:
  boards.parquet       one row per (file, board, agent): auction, contract, points, top points,
                       substitutions
  report.txt           the totals, what was read of each file (the problems skipped, with board
                       and reason, and repaired, with the typos named), then every board: N/S
                       hands, our auction, points, the top contract
  metrics.json         totals per file and agent (uncontested and scripted apart), time per decision
                       per agent, and, for every two agents, the paired bootstrap 95% interval of
                       the difference in percent; `read`: per file the problems read, skipped and
                       repaired and its warning, and their counts over all files; with --compare,
                       per Results file (its stem) and agent (`comparisons`, with its boards
                       skipped and repaired)
  STEM-AGENT.pbn       the agent's auctions shaped like BEN's Results files (Score Table and a
                       Facit Score line per board; `facit.read_results` reads them back)
  report.html          the boards as one offline HTML page (board_report.py)

`--compare RESULTS.pbn` sets each agent's auctions beside a robot's Results file of the same
problems (BEN's Challenges/Results; paired with the --problems file holding its deals): the share
of identical auctions, the first call where each board's auctions differ, and both Facit totals
(theirs as the file scored it).

A problem or Results board that cannot be read is skipped and listed, never the end of the run; a
file with no problem (empty, or without award tables) is a warning (`facit.read_problems`).

This module is the verb; the parts: problems.py (bidding the problems), problem_scores.py (the
totals and paired intervals), robot_comparison.py (--compare) and challenge_report.py (report.txt,
the lines printed and the Results-shaped PBN files)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import pyarrow as pa
import torch

from bridgeflow.dataset import facit
from bridgeflow.dataset.atomic import write_table
from bridgeflow.dataset.errors import InputError, existing
from bridgeflow.training.model_files import DEFAULT_HELP
from bridgeflow.training.params import ParamsArguments
from bridgeflow.training.search.monte_carlo import SearchConfig

from .agents import Agent, AgentFactory
from .ben import BenAgent
from .board_report import write_report
from .challenge_report import comparison_lines, file_lines, pbn_name, report_text, results_pbn, summary_lines
from .problem_scores import summarise
from .problems import LOG_SCHEMA, bid_problems, reading
from .robot_comparison import comparison, results_file_of
from .statistics import BOOTSTRAP_DRAWS, timing_summary


def make_agents(names: Sequence[str], factory: AgentFactory) -> dict[str, Agent]:
    if len(set(names)) != len(names):
        raise InputError(f"--agent names one agent twice: {' '.join(names)}")
    agents = {}
    for name in names:
        try:
            agents[name] = factory.make(name)
        except ValueError as error:
            raise InputError(f"--agent {error}") from None
    return agents


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow challenge",
                                     description="Bid BEN's Challenges problems and score them by Facit.")
    parser.add_argument("--problems", action="append", required=True, metavar="FILE.pbn|FOLDER",
                        help="a Challenges problem file, or a folder: its *.pbn files (repeatable)")
    parser.add_argument("--agent", action="append", required=True,
                        help="rule | bsm | bsm-sample | search, optionally @CHECKPOINT, or ben | ben-nosearch (repeatable)")
    parser.add_argument("--out", required=True, help="boards.parquet, report.txt, metrics.json, *.pbn go here")
    parser.add_argument("--bsm", help="BSM checkpoint: training folder or model.pt; " + DEFAULT_HELP["BSM"])
    parser.add_argument("--nndda", help="NN-DDA model for the search: folder or nndda.pt; default: models/nndda")
    params = ParamsArguments(parser, ["search"], bare=None)
    parser.add_argument("--seed", type=int, default=0, help="agents' per-board seeds and the bootstrap's")
    parser.add_argument("--compare", action="append", default=[], metavar="RESULTS.pbn",
                        help="a robot's Results file of the same problems: identical auctions, first "
                             "differences, Facit totals (repeatable)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # one decision at a time: one thread (see evaluate.run)
    paths = problem_paths(args.problems)
    names = [path.name for path in paths]
    if len(set(names)) != len(names):
        raise InputError(f"--problems names {next(name for name in names if names.count(name) > 1)} twice")
    problem_files = [facit.read_problems(path) for path in paths]
    problems = {read.path.name: read.problems for read in problem_files}
    search_config = params.parsed(args).load(SearchConfig, "search")
    compared = [facit.read_results(existing(path, "Results file (--compare)")) for path in args.compare]
    for results in compared:
        results_file_of(problems, results.boards, results.path)  # before any bidding
    factory = AgentFactory(args.bsm, args.nndda, search_config)
    seconds: dict[str, list[float]] = {}
    try:
        agents = make_agents(args.agent, factory)
        rows = bid_problems(problems, agents, args.seed, seconds)
    finally:
        factory.close()
    timings = {name: timing_summary(seconds[name]) for name in agents if seconds.get(name)}
    for name, agent in agents.items():
        if isinstance(agent, BenAgent) and agent.seconds:  # BEN's own time, without the protocol
            timings[name]["engine"] = timing_summary(agent.seconds)
    metrics = summarise(rows, list(agents), args.seed) | {
        "agents": list(agents), "problems": [str(path) for path in args.problems], "seed": args.seed,
        "checkpoints": factory.checkpoints, "search": asdict(search_config),
        "bootstrap_draws": BOOTSTRAP_DRAWS, "time_per_decision": timings, "read": reading(problem_files)}
    if compared:
        metrics["comparisons"] = {results.path.stem: comparison(rows, problems, results, list(agents))
                                  for results in compared}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_table(pa.Table.from_pylist(rows, schema=LOG_SCHEMA), out / "boards.parquet")
    by_board = {file: {problem.board: problem for problem in file_problems} for file, file_problems in problems.items()}
    (out / "report.txt").write_text(report_text(metrics, rows, by_board) + "\n")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    for file in problems:
        for agent in agents:
            chosen = [row for row in rows if row["file"] == file and row["agent"] == agent]
            (out / pbn_name(file, agent)).write_text(results_pbn(chosen, by_board[file], file, agent))
    write_report(out)
    for line in summary_lines(metrics) + comparison_lines(metrics.get("comparisons", {})):
        print(line)
    for line in file_lines(metrics["read"]):
        print(line)
    return metrics


def problem_paths(given: Sequence[str]) -> list[Path]:
    """The files --problems names: each file, and each folder's *.pbn files in name order;
    InputError for a missing path or a folder without one."""
    paths = []
    for text in given:
        path = existing(text, "problem file (--problems)")
        found = sorted(path.glob("*.pbn")) if path.is_dir() else [path]
        if not found:
            raise InputError(f"problem folder (--problems) {path}: no *.pbn file in it")
        paths += found
    return paths


