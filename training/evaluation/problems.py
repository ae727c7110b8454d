"""Bidding problems bid by an agent for N and S along their scripts (`bid_problem`; the rules are
`bridgeflow challenge`'s, challenge.py), every problem of every file by every agent (`bid_problems`, the
log rows of boards.parquet), and what was read of each problem file (`reading`)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Sequence

import pyarrow as pa
from tqdm import tqdm

from bridgeflow.dataset import facit
from bridgeflow.dataset.auction import AuctionState, Contract
from bridgeflow.dataset.digests import seed_of
from bridgeflow.dataset.encodings import PASS, SEATS, call_name, parse_call

from .agents import Agent


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
    """Bid `problem` with `agent` for N/S along its script (the rules: challenge.py's docstring); the
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


def bid_problems(problem_files: dict[str, list[facit.Problem]], agents: dict[str, Agent], seed: int,
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
