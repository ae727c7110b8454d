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
file with no problem (empty, or without award tables) is a warning (`facit.read_problems`)."""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
import torch
from tqdm import tqdm

from bridgeflow.dataset import facit
from bridgeflow.dataset.auction import AuctionState, Contract
from bridgeflow.dataset.digests import seed_of
from bridgeflow.dataset.encodings import PASS, SEATS, VUL_NAMES, call_name, hand_to_pbn, parse_call
from bridgeflow.dataset.errors import InputError, existing
from bridgeflow.training.params import ParamsArguments
from bridgeflow.training.search.monte_carlo import SearchConfig

from .agents import Agent, AgentFactory
from .ben import BenAgent
from .board_report import write_report
from .statistics import BOOTSTRAP_DRAWS, paired_bootstrap_percent, timing_summary

KINDS = ("uncontested", "scripted")

LOG_SCHEMA = pa.schema([
    pa.field("file", pa.string()), pa.field("board", pa.int32()), pa.field("agent", pa.string()),
    pa.field("kind", pa.string()), pa.field("dealer", pa.int8()), pa.field("vul", pa.int8()),
    pa.field("auction", pa.string()), pa.field("contract", pa.string()), pa.field("points", pa.int32()),
    pa.field("top_points", pa.int32()), pa.field("top_contract", pa.string()),
    pa.field("substitutions", pa.list_(pa.string())),
])


@dataclass
class Bidding:
    """One problem bid by one agent: the calls from the dealer's seat, the final contract (None:
    passed out), its Facit points and every call that is not the script's."""
    calls: list[int]
    contract: Contract | None
    points: int
    substitutions: list[str] = field(default_factory=list)


def bid_problem(problem: facit.Problem, agent: Agent, seconds: list[float] | None = None) -> Bidding:
    """Bid `problem` with `agent` for N/S along its script (module docstring: the rules); the
    seconds of each of the agent's decisions go to `seconds`."""
    hands = facit.seat_hands(problem.deal)
    state = AuctionState.start(problem.dealer)
    substitutions = []
    while not state.finished:
        number, seat = len(state.calls), state.to_call
        scripted = problem.script[number] if number < len(problem.script) else None
        where = f"call {number + 1} ({SEATS[seat]})"
        if seat % 2 == 0:
            call = None if scripted in (None, facit.OUR_CALL) else parse_call(scripted)
            if call is not None and not state.is_legal(call):
                substitutions.append(f"{where}: scripted {scripted} {state.why_illegal(call)}: the agent bid")
                call = None
            if call is None:
                started = time.perf_counter()
                call = agent.next_call(hands[seat], list(state.calls), problem.dealer, problem.vulnerability)
                if seconds is not None:
                    seconds.append(time.perf_counter() - started)
        else:
            call = PASS if scripted is None else parse_call(scripted)
            if not state.is_legal(call):
                substitutions.append(f"{where}: scripted {scripted} {state.why_illegal(call)}: Pass")
                call = PASS
        state.add(call)
    contract = state.contract()
    points = (facit.award_points(problem.table, contract.level, contract.strain, contract.doubled, contract.declarer)
              if contract else 0)
    return Bidding(list(state.calls), contract, points, substitutions)


def contract_text(contract: Contract | None) -> str:
    """A table's spelling, declarer first ('N4S', 'S3NX'); 'Pass' when passed out."""
    if contract is None:
        return "Pass"
    return f"{SEATS[contract.declarer]}{contract.level}{facit.STRAIN_LETTERS[contract.strain]}" \
           f"{facit.DOUBLED_SUFFIXES[contract.doubled]}"


def top_contracts(table: facit.Table) -> str:
    best = facit.top_points(table)
    return " ".join(award.contract for award in table if award.points == best)


def board_seed(seed: int, file: str, board: int) -> int:
    return seed_of(seed, file, board)


def play(problem_files: dict[str, list[facit.Problem]], agents: dict[str, Agent], seed: int,
         seconds: dict[str, list[float]] | None = None) -> list[dict]:
    """Every problem of every file bid by every agent: the log rows (LOG_SCHEMA); each agent's
    decision times go to `seconds[agent]`."""
    rows = []
    progress = tqdm(total=len(agents) * sum(map(len, problem_files.values())), unit="problem", desc="challenge")
    for file, problems in problem_files.items():
        for name, agent in agents.items():
            for problem in problems:
                agent.reseed(board_seed(seed, file, problem.board))
                bidding = bid_problem(problem, agent, None if seconds is None else seconds.setdefault(name, []))
                rows.append({
                    "file": file, "board": problem.board, "agent": name,
                    "kind": KINDS[bool(problem.script)], "dealer": problem.dealer, "vul": problem.vulnerability,
                    "auction": " ".join(call_name(call) for call in bidding.calls),
                    "contract": contract_text(bidding.contract), "points": bidding.points,
                    "top_points": facit.top_points(problem.table), "top_contract": top_contracts(problem.table),
                    "substitutions": bidding.substitutions,
                })
                progress.update()
    progress.close()
    return rows


def totals(rows: Sequence[dict]) -> dict:
    points, best = sum(row["points"] for row in rows), sum(row["top_points"] for row in rows)
    return {"points": points, "max": best, "percent": 100.0 * points / best if best else 0.0, "boards": len(rows)}


def paired_interval(first: Sequence[dict], second: Sequence[dict], seed: int) -> dict:
    """The difference in percent (first - second) on the same boards, with a paired bootstrap 95%
    interval over boards (BOOTSTRAP_DRAWS draws, a fixed seed), as metrics.json has it."""
    interval = paired_bootstrap_percent([a["points"] - b["points"] for a, b in zip(first, second)],
                                        [a["top_points"] for a in first], seed)
    return {"difference": interval.estimate, "low": interval.low, "high": interval.high, "boards": interval.boards}


def summarise(rows: list[dict], agents: Sequence[str], seed: int) -> dict:
    """Totals per file and agent (all, uncontested, scripted), and the agents' paired differences."""
    files = list(dict.fromkeys(row["file"] for row in rows))
    def chosen(file: str | None, agent: str, kind: str | None = None) -> list[dict]:
        return [row for row in rows if row["agent"] == agent and file in (None, row["file"])
                and kind in (None, row["kind"])]
    out = {"files": {file: {agent: {"all": totals(chosen(file, agent))}
                            | {kind: totals(chosen(file, agent, kind)) for kind in KINDS}
                            for agent in agents} for file in files},
           "all": {agent: totals(chosen(None, agent)) for agent in agents}, "paired": {}}
    for first, second in combinations(agents, 2):
        out["paired"][f"{first} - {second}"] = (
            {file: paired_interval(chosen(file, first), chosen(file, second), seed) for file in files}
            | {"all": paired_interval(chosen(None, first), chosen(None, second), seed)})
    return out


def results_file_of(problems: dict[str, list[facit.Problem]], theirs: Sequence[facit.RobotBoard], path: Path) -> str:
    """The --problems file whose problems have the deals of Results file `path`'s boards: no board
    of both with another deal, and the most boards of both (a board whose problem was skipped is
    in the Results file alone); InputError when no file has one of them."""
    deals = {board.board: facit.seat_hands(board.deal) for board in theirs}
    shared = {}
    for file, file_problems in problems.items():
        hands = {problem.board: facit.seat_hands(problem.deal) for problem in file_problems if problem.board in deals}
        if all(hands[number] == deals[number] for number in hands):
            shared[file] = len(hands)
    best = max(shared, key=shared.get, default=None)
    if best is None or not shared[best]:
        raise InputError(f"--compare {path}: no --problems file has its {len(deals)} boards' deals")
    return best


def first_difference(ours: Sequence[str], theirs: Sequence[str], dealer: int) -> dict | None:
    """Where two auctions (call names from the dealer) part: the 1-based call, its seat and both
    calls ('-' where one auction has ended); None when they are the same."""
    for number in range(max(len(ours), len(theirs))):
        mine = ours[number] if number < len(ours) else "-"
        other = theirs[number] if number < len(theirs) else "-"
        if mine != other:
            return {"call": number + 1, "seat": SEATS[(dealer + number) % 4], "ours": mine, "theirs": other}
    return None


def kept_script(problem: facit.Problem, auction: Sequence[str]) -> bool:
    """Whether a robot's auction has the problem's scripted E/W calls, each made if legal, else Pass
    (BEN's own runs bid CTC_mayjun20 boards 11 and 19, tagged `[ Auction "E"]`, as uncontested)."""
    state = AuctionState.start(problem.dealer)
    for index, call in enumerate(auction):
        scripted = problem.script[index] if index < len(problem.script) else facit.OUR_CALL
        if scripted != facit.OUR_CALL and (problem.dealer + index) % 2 == 1:
            made = parse_call(scripted) if state.is_legal(parse_call(scripted)) else PASS
            if parse_call(call) != made:
                return False
        state.add(parse_call(call))
    return True


def comparable(results: facit.ResultsFile, problems: dict[int, facit.Problem]
               ) -> tuple[list[tuple[facit.RobotBoard, bool]], list[dict]]:
    """The boards of a Results file that can be set beside their problems, each with whether it
    kept the problem's script, and the others (those it could not read among them), each with its
    board, line and reason."""
    pairs, skipped = [], [asdict(item) for item in results.skipped]
    for board in results.boards:
        problem = problems.get(board.board)
        if problem is None:
            skipped.append({"board": board.board, "line": None, "reason": "its problem was not read"})
            continue
        try:
            pairs.append((board, kept_script(problem, board.auction)))
        except ValueError as error:  # an illegal call in the file's auction
            skipped.append({"board": board.board, "line": None, "reason": f"Auction: {error}"})
    return pairs, skipped


def comparison(rows: Sequence[dict], problems: dict[str, list[facit.Problem]], results: facit.ResultsFile,
               agents: Sequence[str]) -> dict:
    """Per agent, its auctions beside those of a Results file (module docstring), also counted
    over the boards where the file kept the problem's script (`kept_script`); the boards that
    cannot be compared are listed (`skipped`)."""
    file = results_file_of(problems, results.boards, results.path)
    pairs, skipped = comparable(results, {problem.board: problem for problem in problems[file]})
    out = {}
    for agent in agents:
        ours = {row["board"]: row for row in rows if row["file"] == file and row["agent"] == agent}
        boards = []
        for board, script_kept in pairs:
            row = ours[board.board]
            boards.append({"board": board.board, "auction": row["auction"], "their_auction": " ".join(board.auction),
                           "first_difference": first_difference(row["auction"].split(), board.auction, row["dealer"]),
                           "their_script_kept": script_kept,
                           "points": row["points"], "their_points": board.facit_score, "top_points": row["top_points"]})
        identical = sum(board["first_difference"] is None for board in boards)
        kept = [board for board in boards if board["their_script_kept"]]
        out[agent] = {"problems": file, "boards": len(boards), "skipped": skipped,
                      "repaired": [{"board": board.board, "repairs": list(board.repairs)}
                                   for board in results.boards if board.repairs],
                      "identical_auctions": identical,
                      "share_identical": identical / len(boards) if boards else 0.0,
                      "boards_script_kept": len(kept),
                      "identical_where_script_kept": sum(board["first_difference"] is None for board in kept),
                      "points": sum(board["points"] for board in boards),
                      "their_points": sum(board["their_points"] for board in boards),
                      "max": sum(board["top_points"] for board in boards), "per_board": boards}
    return out


def comparison_lines(comparisons: dict) -> list[str]:
    lines = []
    for results, by_agent in comparisons.items():
        for agent, result in by_agent.items():
            lines.append(f"{agent} vs {results}: {result['identical_auctions']}/{result['boards']} identical auctions "
                         f"({100 * result['share_identical']:.0f}%; {result['identical_where_script_kept']}/"
                         f"{result['boards_script_kept']} where it kept the scripts); Facit {result['points']}/"
                         f"{result['max']} against their {result['their_points']}/{result['max']}"
                         + (f"; {len(result['skipped'])} of its boards skipped" if result["skipped"] else ""))
    return lines


def reading(files: Sequence[facit.ProblemFile]) -> dict:
    """What was read of each problem file (its name -> problems, the boards skipped and repaired,
    its warning), and the counts over all files."""
    out = {"files": {}}
    for read in files:
        out["files"][read.path.name] = {
            "problems": len(read.problems), "skipped": [asdict(item) for item in read.skipped],
            "repaired": [{"board": problem.board, "repairs": list(problem.repairs)}
                         for problem in read.problems if problem.repairs],
            "warning": read.warning}
    entries = out["files"].values()
    out["problems"] = sum(entry["problems"] for entry in entries)
    out["skipped"] = sum(len(entry["skipped"]) for entry in entries)
    out["repaired"] = sum(len(entry["repaired"]) for entry in entries)
    return out


def file_lines(read: dict) -> list[str]:
    """One line per problem file: its problems, those skipped and repaired, its warning."""
    return [f"{file}: {entry['problems']} problems read, {len(entry['skipped'])} skipped, "
            f"{len(entry['repaired'])} repaired" + (f"; warning: {entry['warning']}" if entry["warning"] else "")
            for file, entry in read["files"].items()]


def reading_lines(read: dict, comparisons: dict) -> list[str]:
    """`file_lines`, then one line per board skipped or repaired, of the problem files and of the
    compared Results files."""
    lines = file_lines(read)
    for file, entry in read["files"].items():
        lines += [f"{file} {_board_name(item)}: skipped: {item['reason']}" for item in entry["skipped"]]
        lines += [f"{file} board {item['board']}: repaired: {', '.join(item['repairs'])}" for item in entry["repaired"]]
    for results, by_agent in comparisons.items():
        result = next(iter(by_agent.values()), {})
        lines += [f"{results} {_board_name(item)}: not compared: {item['reason']}" for item in result.get("skipped", [])]
        lines += [f"{results} board {item['board']}: repaired: {', '.join(item['repairs'])}"
                  for item in result.get("repaired", [])]
    return lines


def _board_name(item: dict) -> str:
    """'board 7 (line 120)', 'board 7' or 'game at line 120'."""
    if item["board"] is None:
        return f"game at line {item['line']}"
    return f"board {item['board']}" + (f" (line {item['line']})" if item["line"] is not None else "")


def summary_lines(metrics: dict) -> list[str]:
    def cell(result: dict) -> str:
        return f"{result['points']:>4}/{result['max']:<4} {result['percent']:5.1f}%"
    lines = []
    for file, by_agent in metrics["files"].items():
        for agent, result in by_agent.items():
            lines.append(f"{file:<28} {agent:<12} all {cell(result['all'])}   uncontested "
                         f"{cell(result['uncontested'])} ({result['uncontested']['boards']})   scripted "
                         f"{cell(result['scripted'])} ({result['scripted']['boards']})")
    for pair, by_file in metrics["paired"].items():
        for file, result in by_file.items():
            if file == "all" and len(by_file) == 2:
                continue  # one file: its own line says it
            lines.append(f"{pair} on {file}: {result['difference']:+.1f} points of percent, 95% interval "
                         f"[{result['low']:+.1f}, {result['high']:+.1f}] over {result['boards']} boards")
    return lines


def hand_line(cards: Sequence[int]) -> str:
    """'S AK87  H A2  D Q94  C T432' (a void is '-')."""
    return "  ".join(f"{suit} {holding or '-'}" for suit, holding in zip("SHDC", hand_to_pbn(cards).split(".")))


def report_text(metrics: dict, rows: list[dict], problems: dict[str, dict[int, facit.Problem]]) -> str:
    """The totals, then each board: dealer, vulnerability, N and S hands, each agent's auction,
    contract and points against the top award, and where it parts from each compared Results file."""
    comparisons = metrics.get("comparisons", {})
    lines = ["Facit bidding challenge (our side N/S; points / sum of each board's top award)", "",
             *summary_lines(metrics), *comparison_lines(comparisons), "",
             *reading_lines(metrics["read"], comparisons), ""]
    for (file, board_number), board_rows in _by_board(rows).items():
        problem = problems[file][board_number]
        hands = facit.seat_hands(problem.deal)
        lines += [f"{file} board {board_number}: dealer {SEATS[problem.dealer]}, vulnerable {VUL_NAMES[problem.vulnerability]}, "
                  f"{board_rows[0]['kind']}" + (f" ({' '.join(problem.script)})" if problem.script else ""),
                  f"  N  {hand_line(hands[0])}", f"  S  {hand_line(hands[2])}",
                  f"  top {board_rows[0]['top_points']}: {board_rows[0]['top_contract']}"]
        for row in board_rows:
            lines.append(f"  {row['agent']:<12} {row['contract']:<6} {row['points']:>3}/{row['top_points']:<3} "
                         f"{SEATS[row['dealer']]}: {row['auction']}")
            lines += [f"  {'':<12} substituted {text}" for text in row["substitutions"]]
            for results, by_agent in comparisons.items():
                result = by_agent.get(row["agent"], {})
                if result.get("problems") != file:
                    continue
                theirs = next((board for board in result["per_board"] if board["board"] == board_number), None)
                if theirs is None:  # a Results file may hold only some of its problem file's boards
                    lines.append(f"  {'':<12} {results}: not on this board")
                    continue
                where = theirs["first_difference"]
                lines.append(f"  {'':<12} {results} ({theirs['their_points']}): " + (
                    "the same auction" if where is None else
                    f"differs at call {where['call']} ({where['seat']}): {where['ours']} against {where['theirs']}")
                    + ("" if theirs["their_script_kept"] else ", their auction leaves the script"))
        lines.append("")
    return "\n".join(lines)


def _by_board(rows: list[dict]) -> dict[tuple[str, int], list[dict]]:
    boards: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        boards.setdefault((row["file"], row["board"]), []).append(row)
    return boards


def results_pbn(rows: list[dict], problems: dict[int, facit.Problem], file: str, agent: str) -> str:
    """One agent's auctions of one problem file, shaped like BEN's Results files."""
    games, running = [f"% PBN 2.1\n% EXPORT\n% bridgeflow challenge: {file}, agent {agent}"], 0
    for row in rows:
        problem = problems[row["board"]]
        running += row["points"]
        contract = row["contract"]
        declarer, played = ("", "Pass") if contract == "Pass" else (contract[0], contract[1:])
        calls = [("PASS" if call == "P" else call) for call in row["auction"].split()]
        auction = "\n".join(" ".join(calls[start:start + 4]) for start in range(0, len(calls), 4))
        score_table = "".join(f" {_escape(award.contract):<5} {award.points:>4}\\n" for award in problem.table)
        games.append(
            f'[Event "{file}"]\n[Board "{row["board"]}"]\n[West "Facit"]\n[East "Facit"]\n'
            f'[North "{agent}"]\n[South "{agent}"]\n[Dealer "{SEATS[problem.dealer]}"]\n'
            f'[Vulnerable "{VUL_NAMES[problem.vulnerability]}"]\n[Deal "{problem.deal}"]\n'
            f'[Declarer "{declarer}"]\n[Contract "{played}"]\n[Scoring "Facit"]\n'
            f'[Auction "{SEATS[problem.dealer]}"]\n{auction}\n'
            f'{{\nScore Table:\n\n{score_table}\n\nFacit Score: {row["points"]:>4}\\nRunning Score: {running:>4}\n}}\n')
    return "\n".join(games)


def _escape(contract: str) -> str:
    """BEN's Score Table spelling: suit letters after the first character escaped (`4\\s`)."""
    return contract[0] + re.sub(r"([CDHS])", lambda match: "\\" + match.group(1).lower(), contract[1:])


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
    parser.add_argument("--bsm", help="BSM checkpoint: training folder or model.pt; default: the one in models/bsm")
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
        rows = play(problems, agents, args.seed, seconds)
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
    pq.write_table(pa.Table.from_pylist(rows, schema=LOG_SCHEMA), out / "boards.parquet")
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


def pbn_name(file: str, agent: str) -> str:
    """'BW.pbn', 'bsm@m/model.pt' -> 'BW-bsm_m_model.pt.pbn'."""
    return f"{Path(file).stem}-{re.sub(r'[^A-Za-z0-9.-]+', '_', agent)}.pbn"
