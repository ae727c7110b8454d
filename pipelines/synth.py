"""The project's own default data: random deals, dealer and vulnerability rotating as in
duplicate, bid by the rule-based bidder, written as PBN (or LIN) files that the ingest job reads
back unchanged.

Board i (0-based) is a pure function of (seed, i): its cards come from a generator seeded with
both and the bidder is deterministic, so any board can be regenerated alone and files can be
written in any order. `--no-auction` writes plain hand records (e.g. DD training data);
`--explain` attaches each call's rule meaning as an alert explanation."""

from __future__ import annotations

import argparse
import multiprocessing
import os
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import duplicate_dealer, duplicate_vulnerability, random_owner
from bridgeflow.dataset.lin import format_lin
from bridgeflow.dataset.pbn import format_pbn
from bridgeflow.dataset.record import BoardRecord
from bridgeflow.training.bidding.rule_bidder import RuleBidder

FORMATTERS = {"pbn": format_pbn, "lin": format_lin}


def synth_board(seed: int, index: int, bidder=None, explain: bool = False) -> BoardRecord:
    """Board `index` of the corpus: deal, board number, dealer, vulnerability, and the auction
    and contract when a bidder (training.bidding.rule_bidder.RuleBidder) is given."""
    number = index + 1
    board = BoardRecord(
        source_file="",
        source_format="synth",
        source_position=index,
        source_line=0,
        owner=random_owner(seed, index),
        dealer=duplicate_dealer(number),
        vulnerability=duplicate_vulnerability(number),
        board=number,
        event=f"bridgeflow synth seed {seed}",
    )
    if bidder is not None:
        decisions = bidder.bid_deal(board.owner, board.dealer, board.vulnerability)
        board.auction = [decision.call for decision in decisions]
        if explain:
            board.alerts = [False] * len(decisions)
            board.explanations = [decision.meaning for decision in decisions]
        contract = replay(board.dealer, board.auction).contract()
        if contract is None:
            board.contract_level = 0
        else:
            board.contract_level, board.contract_strain = contract.level, contract.strain
            board.contract_doubled, board.declarer = contract.doubled, contract.declarer
    return board


def synth_boards(seed: int, start: int, stop: int, auction: bool = True, explain: bool = False) -> Iterator[BoardRecord]:
    bidder = RuleBidder() if auction else None
    for index in range(start, stop):
        yield synth_board(seed, index, bidder, explain)


def _write_file(job: tuple) -> tuple[str, int]:
    """Write one corpus file (a worker process's unit of work); returns (path, boards)."""
    path, seed, first, last, format_name, auction, explain = job
    format_board = FORMATTERS[format_name]
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        for board in synth_boards(seed, first, last, auction, explain):
            handle.write(format_board(board))
            handle.write("\n")
    temporary.replace(path)
    return str(path), last - first


def write_corpus(out: Path, deals: int, seed: int, format_name: str, boards_per_file: int,
                 auction: bool = True, explain: bool = False, workers: int = 1) -> list[Path]:
    """Write `deals` boards into files of `boards_per_file` boards each, `workers` files at a
    time; returns the paths. Files already there from an earlier run are replaced."""
    if format_name not in FORMATTERS:
        raise ValueError(f"--format must be pbn or lin, not {format_name!r}")
    out.mkdir(parents=True, exist_ok=True)
    for stale in list(out.glob("synth-*.pbn")) + list(out.glob("synth-*.lin")):
        stale.unlink()
    jobs = [
        (str(out / f"synth-{first // boards_per_file:05d}.{format_name}"), seed, first,
         min(first + boards_per_file, deals), format_name, auction, explain)
        for first in range(0, deals, boards_per_file)
    ]
    with tqdm(total=deals, unit="board", desc="synth", mininterval=1.0) as progress:
        if workers > 1:
            with multiprocessing.get_context("spawn").Pool(workers) as pool:
                for _, count in pool.imap(_write_file, jobs):
                    progress.update(count)
        else:
            for job in jobs:
                progress.update(_write_file(job)[1])
    return [Path(job[0]) for job in jobs]


def run(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(prog="bridgeflow synth", description="Generate the synthetic corpus.")
    parser.add_argument("--deals", type=int, required=True, help="number of boards")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--format", default="pbn", choices=("pbn", "lin"))
    parser.add_argument("--boards-per-file", type=int, default=10_000)
    parser.add_argument("--no-auction", action="store_true", help="plain hand records: deals only")
    parser.add_argument("--explain", action="store_true", help="attach each call's rule meaning")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes writing files")
    args = parser.parse_args(argv)
    return write_corpus(Path(args.out), args.deals, args.seed, args.format, args.boards_per_file,
                        auction=not args.no_auction, explain=args.explain, workers=args.workers)
