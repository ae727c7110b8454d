"""One generation of a learning loop, measured: `bridgeflow generation`.

    bridgeflow generation --generation 2 --agent new=bsm@data/selfplay/gen2/bsm \
        --agent previous=bsm@data/selfplay/gen1/bsm --agent base=bsm@data/bsm \
        --dd datasets/dd_labels --boards benchmarks/boards/valid1000-9df77604a889b584.json \
        --history data/selfplay/gen1/eval --out data/selfplay/gen2/eval [--facit FILE.pbn ...]

Agents are labelled specs as `evaluate` and `challenge` name them (rule | bsm | bsm-sample |
search, optionally @CHECKPOINT; any kind the agent registry (agents.py) makes, e.g. BEN's, plugs in); `rule` is
always there. Matches (`--match A:B`, labels) are team matches on the boards, scored with their
exact DD tables (matches.team_match: IMP(S(abab) - S(baba)) for A). By default: new:previous
(when previous differs from base), new:base, new:rule and, for the first generation measured
(no --history), base:rule, which gives generation 0 its row; with new the same as base
(`--generation 0`), base:rule alone. An agent labelled `ben` (e.g. `ben=ben-nosearch`) is an
outside yardstick like rule: new:ben, and base:ben wherever base:rule is played, join them. With
`--facit` problem files (the development half of BEN's Challenges), every agent bids them
(problems.bid_problems) and each gets its percent of the top awards and the paired bootstrap interval of
its difference to `base`. With `--hours` (the training time behind the new network, e.g. a DMC
snapshot's), the row keeps it and the plot's x is training time wherever every row has one
(generation 0, the starting network, is at 0 hours).

The generation kept (`kept_generation`: the network the loop goes on from and would ship) is the
best against generation 0 on the boards among those that lose at most FACIT_DRIFT points of the
Facit problems to it: a network that wins at the table by forgetting how experts bid is not kept.

Writes to --out:
  results.json  the matches (mean IMPs/board, SE, 95% interval, boards), the Facit totals and
                paired intervals, the agents, checkpoints, boards and seed, and the generation kept
  history.json  --history's rows (the earlier generations) and this generation's row
  history.csv   the same rows, flat (DVC plots)
  history.png   IMPs/board against base and against the rule-based bidder with 95% intervals,
                and the Facit percent, by generation (or by training hours, above)
  report.html   the above as one offline HTML page (board_report.py)
Resumable as `evaluate` is: finished boards are committed under --out/_progress/KEY."""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import time
from dataclasses import asdict
from pathlib import Path

import torch

from bridgeflow.dataset import facit
from bridgeflow.dataset.digests import key_digest
from bridgeflow.dataset.errors import InputError, existing, output_folder
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.training.params import ParamsArguments
from bridgeflow.training.search.monte_carlo import SearchConfig

from .agents import AgentFactory
from .board_report import write_report
from .boards import Boards, boards_from
from .matches import summary, team_match
from .problem_scores import summarise
from .problems import bid_problems
from .resume import Progress

BASE, BEN, NEW, PREVIOUS, RULE = "base", "ben", "new", "previous", "rule"
CSV_COLUMNS = ["generation", "vs_base", "vs_base_low", "vs_base_high", "vs_rule", "vs_rule_low", "vs_rule_high",
               "vs_previous", "vs_previous_low", "vs_previous_high", "vs_ben", "vs_ben_low", "vs_ben_high",
               "facit_percent", "facit_vs_base", "facit_vs_base_low", "facit_vs_base_high", "hours", "network"]
FACIT_DRIFT = 2.0  # points of the Facit problems a kept generation may lose to generation 0 (paired)


def default_matches(agents: dict[str, str], first: bool) -> list[str]:
    """The loop's matches for a generation (module docstring)."""
    matches = []
    if PREVIOUS in agents and agents[PREVIOUS] != agents.get(BASE):
        matches.append(f"{NEW}:{PREVIOUS}")
    if BASE in agents and agents[BASE] != agents[NEW]:
        matches.append(f"{NEW}:{BASE}")
    yardsticks = [RULE] + ([BEN] if BEN in agents else [])
    matches += [f"{NEW}:{other}" for other in yardsticks]
    if first and BASE in agents and agents[BASE] != agents[NEW]:
        matches += [f"{BASE}:{other}" for other in yardsticks]
    if BASE in agents and agents[BASE] == agents[NEW]:  # generation 0 measured alone
        matches = [f"{BASE}:{other}" for other in yardsticks]
    return matches


def play_matches(agents: dict[str, str], matches: list[str], boards: Boards, factory: AgentFactory, seed: int,
                 progress_root: Path | None) -> dict[str, dict]:
    """Every match's summary (matches.summary); labels name the agents, `rule` the rule bidder."""
    labelled = {label: factory.make(spec) for label, spec in ({RULE: RULE} | agents).items()}
    for match in matches:
        first, sep, second = match.partition(":")
        if not sep or first not in labelled or second not in labelled:
            raise InputError(f"--match {match!r}: want A:B with A and B among {sorted(labelled)}")
    key = key_digest({"agents": agents, "matches": matches, "boards": boards.hash, "seed": seed,
                      "checkpoints": factory.checkpoints})
    progress = Progress(progress_root / key if progress_root else None)
    results = {}
    for match in matches:
        first, _, second = match.partition(":")
        played = team_match(match, labelled[first], labelled[second], boards, seed, progress)
        results[match] = summary([row["imps"] for row in played])
    return results


def facit_scores(agents: dict[str, str], files: list[str], factory: AgentFactory, seed: int) -> dict:
    """Every agent's Facit totals on the problem files, and each one's paired difference to base;
    `skipped`: per file, the problems that could not be read (`challenge`'s report lists them)."""
    read = [facit.read_problems(existing(path, "problem file (--facit)")) for path in files]
    problems = {problem_file.path.name: problem_file.problems for problem_file in read}
    labels = [label for label in agents if label != BASE and agents[label] != agents.get(BASE)]
    labels += [BASE] if BASE in agents else []  # the paired differences are label - base
    rows = bid_problems(problems, {label: factory.make(agents[label]) for label in labels}, seed)
    metrics = summarise(rows, labels, seed)
    return {"files": list(problems), "skipped": {problem_file.path.name: len(problem_file.skipped) for problem_file in read},
            "totals": metrics["all"],
            "vs_base": {label: metrics["paired"][f"{label} - {BASE}"]["all"]
                        for label in labels if label != BASE and BASE in agents}}


def history_row(generation: int, label: str, matches: dict[str, dict], scores: dict | None,
                hours: float | None = None, network: str | None = None) -> dict:
    """A generation's row: `label`'s IMPs/board against base, rule, previous and ben, its Facit, the
    training hours behind it (None: not given) and its agent spec (`network`)."""
    row = {"generation": generation}
    for column, match in (("vs_base", f"{label}:{BASE}"), ("vs_rule", f"{label}:{RULE}"),
                          ("vs_previous", f"{label}:{PREVIOUS}"), ("vs_ben", f"{label}:{BEN}")):
        result = matches.get(match)
        if result is None and column == "vs_base" and label == BASE:  # generation 0 itself
            result = {"mean_imps": 0.0, "ci95": [0.0, 0.0]}
        row[column] = result and result["mean_imps"]
        row[f"{column}_low"], row[f"{column}_high"] = result["ci95"] if result and result["ci95"] else (None, None)
    totals = scores["totals"].get(label) if scores else None
    row["facit_percent"] = totals and totals["percent"]
    paired = scores["vs_base"].get(label) if scores else None
    if label == BASE and scores:
        paired = {"difference": 0.0, "low": 0.0, "high": 0.0}
    row["facit_vs_base"] = paired and paired["difference"]
    row["facit_vs_base_low"], row["facit_vs_base_high"] = (paired["low"], paired["high"]) if paired else (None, None)
    row["hours"] = hours
    row["network"] = network
    return row


def kept_generation(rows: list[dict]) -> dict | None:
    """The row of the generation to keep: the best against generation 0 on the boards (vs_base)
    among the rows that lose at most FACIT_DRIFT points of the Facit problems to it (a row without
    Facit counts on the boards alone); ties go to the earlier generation. None: no row was
    measured against generation 0."""
    eligible = [row for row in rows if row.get("vs_base") is not None
                and (row.get("facit_vs_base") is None or row["facit_vs_base"] >= -FACIT_DRIFT)]
    return max(eligible, key=lambda row: row["vs_base"], default=None)


def training_hours(rows: list[dict]) -> list[float] | None:
    """Each row's training hours, generation 0 at 0; None unless every other row has them."""
    hours = [0.0 if row["generation"] == 0 else row.get("hours") for row in rows]
    return hours if all(value is not None for value in hours) and any(hours) else None


def error_bars(points: list[dict], column: str) -> list[list[float]]:
    """[below, above] each row's `column`: the reach of its 95% interval (COLUMN_low, COLUMN_high),
    0 where it has none (no paired interval without a base agent)."""
    return [[row[column] - row[f"{column}_low"] if row[f"{column}_low"] is not None else 0 for row in points],
            [row[f"{column}_high"] - row[column] if row[f"{column}_high"] is not None else 0 for row in points]]


def plot(rows: list[dict], path: Path) -> None:
    """IMPs/board (vs base, vs rule; 95% intervals) and the Facit percent, by generation or by
    training hours where every row has them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = training_hours(rows)
    generations = [row["generation"] for row in rows]
    x_of = dict(zip(generations, hours or generations))
    x_label = "generation" if hours is None else "training hours"
    figure, (imps_axis, facit_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for column, label in (("vs_base", "vs generation 0"), ("vs_rule", "vs rule-based bidder"),
                          ("vs_ben", "vs the agent labelled ben")):
        points = [row for row in rows if row.get(column) is not None]
        if not points:
            continue
        x = [x_of[row["generation"]] for row in points]
        y = [row[column] for row in points]
        imps_axis.errorbar(x, y, yerr=error_bars(points, column), marker="o", capsize=3, label=label)
    imps_axis.axhline(0, color="grey", linewidth=0.5)
    imps_axis.set(xlabel=x_label, ylabel="IMPs/board (95% interval)", title="raw network, team matches")
    if imps_axis.get_legend_handles_labels()[0]:  # none where no yardstick match was played
        imps_axis.legend()
    points = [row for row in rows if row["facit_percent"] is not None]
    facit_axis.errorbar([x_of[row["generation"]] for row in points], [row["facit_percent"] for row in points],
                        yerr=error_bars(points, "facit_vs_base") if points else None, marker="o", capsize=3)
    facit_axis.set(xlabel=x_label, ylabel="percent of top awards (paired 95% vs gen 0)",
                   title="Facit, development problems")
    if not points:
        facit_axis.text(0.5, 0.5, "not measured", ha="center", transform=facit_axis.transAxes)
    for axis in (imps_axis, facit_axis):
        if hours is None:
            axis.xaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_history(out: Path, rows: list[dict]) -> None:
    (out / "history.json").write_text(json.dumps(rows, indent=1) + "\n")
    with open(out / "history.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, out / "history.png")


def parse_agent(text: str) -> tuple[str, str]:
    label, sep, spec = text.partition("=")
    if not sep or not label or not spec or label == RULE:
        raise InputError(f"--agent {text!r}: want LABEL=SPEC, e.g. new=bsm@data/selfplay/gen1/bsm (label not 'rule')")
    return label, spec


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow generation",
                                     description="Measure one generation of a learning loop (raw networks).")
    parser.add_argument("--generation", type=int, required=True, help="this generation's number (the new agent's)")
    parser.add_argument("--agent", action="append", required=True, metavar="LABEL=SPEC",
                        help=f"an agent (repeatable); the loop's labels: {NEW}, {PREVIOUS}, {BASE}")
    parser.add_argument("--match", action="append", default=[], metavar="A:B",
                        help="a team match between labels (repeatable; default: the loop's, see --help text)")
    parser.add_argument("--dd", required=True, help="DD store with exact tables of the boards")
    parser.add_argument("--boards", default="100", help="board-list file, or N = the store's first N test-split deals")
    parser.add_argument("--facit", action="extend", nargs="+", default=[], metavar="FILE.pbn",
                        help="Challenges problem files (repeatable)")
    parser.add_argument("--history", help="the previous generation's --out (its history.json is continued)")
    parser.add_argument("--out", required=True, help="results.json, history.json/.csv/.png go here")
    parser.add_argument("--nndda", help="NN-DDA for search agents; default: models/nndda")
    params = ParamsArguments(parser, ["search"], bare=None)
    parser.add_argument("--seed", type=int, default=0, help="agents' per-table seeds and the bootstrap's")
    parser.add_argument("--hours", type=float, help="training hours behind the new network (the plot's x)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # one decision at a time (see evaluate.run)
    started = time.perf_counter()
    agents = dict(parse_agent(text) for text in args.agent)
    if NEW not in agents:
        raise InputError(f"--agent: the loop needs a {NEW}=SPEC agent")
    history = []
    if args.history:
        history = json.loads((existing(args.history, "--history") / "history.json").read_text())
    matches = args.match or default_matches(agents, first=not history)
    search_config = params.parsed(args).load(SearchConfig, "search")
    boards = boards_from(args.dd, args.boards)
    factory = AgentFactory(None, args.nndda, search_config)
    out = output_folder(args.out)  # checked before the work
    try:
        results = play_matches(agents, matches, boards, factory, args.seed, out / "_progress")
        scores = facit_scores(agents, args.facit, factory, args.seed) if args.facit else None
    except InputError:
        raise
    except ValueError as error:  # an unknown agent kind
        raise InputError(f"--agent {error}") from None
    finally:
        factory.close()
    out.mkdir(parents=True, exist_ok=True)
    rows = [row for row in history if row["generation"] < args.generation]
    if not history and args.generation > 0 and BASE in agents:
        rows.append(history_row(0, BASE, results, scores, 0.0 if args.hours is not None else None, agents[BASE]))
    measured = BASE if agents[NEW] == agents.get(BASE) else NEW
    rows.append(history_row(args.generation, measured, results, scores, args.hours, agents[measured]))
    kept = kept_generation(rows)
    metrics = {
        "schema_version": SCHEMA_VERSION, "generation": args.generation, "agents": agents, "matches": results,
        "facit": scores, "boards": {"count": len(boards.deal_ids), "hash": boards.hash, "source": args.boards,
                                    "dd": args.dd},
        "checkpoints": factory.checkpoints, "search": asdict(search_config), "seed": args.seed,
        "kept": None if kept is None else {key: kept.get(key) for key in ("generation", "network", "vs_base", "facit_vs_base")}
                                          | {"facit_drift": FACIT_DRIFT},
        "seconds": time.perf_counter() - started,
    }
    (out / "results.json").write_text(json.dumps(metrics, indent=2) + "\n")
    write_history(out, rows)
    shutil.rmtree(out / "_progress", ignore_errors=True)
    write_report(out)
    for match, result in results.items():
        print(f"{match:>16}: {result['mean_imps']:+.2f} IMPs/board, se {result['se'] or float('nan'):.2f},"
              f" {result['boards']} boards")
    for label, totals in (scores or {}).get("totals", {}).items():
        print(f"{'facit ' + label:>16}: {totals['percent']:.1f}% of top awards, {totals['boards']} problems")
    if kept:
        print(f"{'kept':>16}: generation {kept['generation']} ({kept.get('network') or 'its network'})")
    return metrics
