"""Our auctions beside a robot's Results file of the same problems (`bridgeflow challenge --compare`):
identical auctions, the first call where they part, whether the robot kept the problem's script,
and both Facit totals."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from bridgeflow.dataset import facit
from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import PASS, SEATS, parse_call
from bridgeflow.dataset.errors import InputError


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
