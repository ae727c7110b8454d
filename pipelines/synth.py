"""The project's own default data: random deals, dealer and vulnerability rotating as in
duplicate, bid by one bidder at all four seats (the rule-based bidder, or BEN: `--bidder
ben-nosearch|ben`), written as PBN (or LIN) files that the ingest job reads back unchanged.

Board i (0-based) is a pure function of (seed, i): its cards come from a generator seeded with
both and every bidder is deterministic, so any board can be regenerated alone, files can be
written in any order, and corpora of one seed bid by different bidders hold the same deals board
by board. Every record names its bidder: the four players are the bidder's name ("rule",
"ben-nosearch", "ben"; the `players` column after ingest) and the event ends with the name and
version, a hash of what decides its calls ("bridgeflow synth seed 7; bidder ben-nosearch
1f0c..."). `--no-auction` writes plain hand records (e.g. DD training data), no bidder;
`--explain` attaches each call's rule meaning as an alert explanation (rule bidder only).

Resumable: files are written whole (to a temporary name, then renamed), and `.synth.json` in
the output folder holds the run's settings; a rerun with the same settings keeps the files
already written and writes the rest, any other run replaces them all. Workers are processes,
one file at a time each; a BEN bidder starts one BEN server per worker, on its first file."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import multiprocessing
import os
import time
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from bridgeflow.dataset.atomic import atomic_path, write_json
from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import duplicate_dealer, duplicate_vulnerability, random_owner
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.lin import format_lin
from bridgeflow.dataset.pbn_writer import format_pbn
from bridgeflow.dataset.record import BoardRecord
from bridgeflow.training.bidding import rule_bidder
from bridgeflow.training.evaluation import ben
from bridgeflow.training.pools import end_with_parent

LOG = logging.getLogger("bridgeflow.synth")
FORMATTERS = {"pbn": format_pbn, "lin": format_lin}
BIDDERS = ("rule", *ben.AGENTS)  # rule, ben, ben-nosearch
PLAN = ".synth.json"  # the settings of the run that wrote the folder (hidden: ingest skips it)


def files_hash(files: dict[str, Path]) -> str:
    """One hash of the files' names (the keys) and contents."""
    digest = hashlib.blake2b(digest_size=8)
    for name in sorted(files):
        digest.update(f"\0{name}\0".encode())
        digest.update(files[name].read_bytes())
    return digest.hexdigest()


def bidder_version(name: str) -> str:
    """A hash of what decides the bidder's calls: the rule bidder's source (rule_bidder.py and its
    rule_system/); for BEN, its code, config and networks and our server (which sets the config's
    overrides). InputError when BEN is not there."""
    if name == "rule":
        bidding = Path(rule_bidder.__file__).parent
        files = [bidding / "rule_bidder.py", *(bidding / "rule_system").glob("*.py")]
        return files_hash({str(path.relative_to(bidding)): path for path in files})
    if name not in ben.AGENTS:
        raise InputError(f"--bidder must be one of {', '.join(BIDDERS)}, not {name!r}")
    home = ben.ben_home()
    files = [*(home / "src").rglob("*.py"), home / "src" / "config" / "onnx.conf", *(home / "models" / "onnx").glob("*.onnx")]
    return files_hash({str(path.relative_to(home)): path for path in files}
                      | {"ben_server.py": ben.SERVER_FOLDER / "ben_server.py"})


class CorpusBidder:
    """One bidder at all four seats of every board: `bid` gives a deal's calls and, for the rule
    bidder, their meanings. A BEN bidder starts this process's BEN server."""

    def __init__(self, name: str):
        self.name, self.version = name, bidder_version(name)
        self.rule = rule_bidder.RuleBidder() if name == "rule" else None
        self.ben = None if name == "rule" else ben.BenAgent(name)

    def bid(self, board: BoardRecord) -> tuple[list[int], list[str | None] | None]:
        if self.ben is not None:
            return self.ben.bid_deal(board.owner, board.dealer, board.vulnerability), None
        decisions = self.rule.bid_deal(board.owner, board.dealer, board.vulnerability)
        return [decision.call for decision in decisions], [decision.meaning for decision in decisions]


def synth_board(seed: int, index: int, bidder: CorpusBidder | None = None, explain: bool = False) -> BoardRecord:
    """Board `index` of the corpus: deal, board number, dealer, vulnerability, and, when a
    bidder is given, its name as the players, the auction and the contract."""
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
        board.event += f"; bidder {bidder.name} {bidder.version}"
        board.players = [bidder.name] * 4
        board.auction, meanings = bidder.bid(board)
        if explain:
            board.alerts = [False] * len(board.auction)
            board.explanations = meanings
        contract = replay(board.dealer, board.auction).contract()  # an illegal call raises IllegalCall
        if contract is None:
            board.contract_level = 0
        else:
            board.contract_level, board.contract_strain = contract.level, contract.strain
            board.contract_doubled, board.declarer = contract.doubled, contract.declarer
    return board


def synth_boards(seed: int, start: int, stop: int, bidder: str | None = "rule", explain: bool = False) -> Iterator[BoardRecord]:
    """Boards start..stop-1 bid by the bidder named (None: plain hand records)."""
    corpus_bidder = CorpusBidder(bidder) if bidder else None
    for index in range(start, stop):
        yield synth_board(seed, index, corpus_bidder, explain)


def _write_file(job: tuple, bidder: CorpusBidder | None, board_done) -> int:
    """Write one corpus file, calling `board_done()` after each board; returns the calls made."""
    path, seed, first, last, format_name, explain = job
    format_board = FORMATTERS[format_name]
    calls = 0
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        for index in range(first, last):
            board = synth_board(seed, index, bidder, explain)
            handle.write(format_board(board))
            handle.write("\n")
            calls += len(board.auction or ())
            board_done()
    return calls


_worker: dict = {}  # a writing process's bidder name, its bidder (made on its first file) and the shared board count


def _start_worker(bidder_name: str | None, boards_done) -> None:
    end_with_parent()  # a killed run's workers stop instead of writing on through their files
    _worker.update(name=bidder_name, boards_done=boards_done)


def _count_board() -> None:
    with _worker["boards_done"].get_lock():
        _worker["boards_done"].value += 1


def _write_in_worker(job: tuple) -> int:
    if "bidder" not in _worker:
        _worker["bidder"] = CorpusBidder(_worker["name"]) if _worker["name"] else None
    return _write_file(job, _worker["bidder"], _count_board)


def _plan_folder(out: Path, plan: dict) -> None:
    """Keep `out`'s files when an earlier run had the same settings (`plan`), else empty it of
    corpus files and record the new settings."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        earlier = json.loads((out / PLAN).read_text())
    except (OSError, ValueError):
        earlier = None
    for stale in out.glob(".synth-*.tmp-*"):  # files a killed run left half-written
        stale.unlink()
    if earlier == plan:
        return
    for stale in [*out.glob("synth-*.pbn"), *out.glob("synth-*.lin")]:
        stale.unlink()
    write_json(out / PLAN, plan)


def write_corpus(out: Path, deals: int, seed: int, format_name: str, boards_per_file: int,
                 auction: bool = True, explain: bool = False, workers: int = 1, bidder: str = "rule") -> list[Path]:
    """Write `deals` boards bid by `bidder` into files of `boards_per_file` boards each, `workers`
    files at a time; returns the paths. Files of an earlier run with the same settings are kept
    (a killed run resumes), those of any other run replaced."""
    if format_name not in FORMATTERS:
        raise ValueError(f"--format must be pbn or lin, not {format_name!r}")
    if explain and bidder != "rule":
        raise InputError(f"--explain needs the rule bidder: {bidder} gives no meanings for its calls")
    bidder_name = bidder if auction else None
    version = bidder_version(bidder_name) if bidder_name else None
    if bidder_name in ben.AGENTS:
        ben.ensure_venv()  # built once here, not raced for by the workers
    _plan_folder(out, {"deals": deals, "seed": seed, "format": format_name, "boards_per_file": boards_per_file,
                       "explain": explain, "bidder": bidder_name, "bidder_version": version})
    jobs = [
        (str(out / f"synth-{first // boards_per_file:05d}.{format_name}"), seed, first,
         min(first + boards_per_file, deals), format_name, explain)
        for first in range(0, deals, boards_per_file)
    ]
    todo = [job for job in jobs if not Path(job[0]).exists()]
    done = deals - sum(job[3] - job[2] for job in todo)
    if not todo:
        LOG.info("synth %s: all %d boards were written by an earlier run", out, deals)
        return [Path(job[0]) for job in jobs]
    lanes = min(workers, len(todo))
    started = time.perf_counter()
    with tqdm(total=deals, initial=done, unit="board", desc=f"synth ({bidder_name or 'no auction'})",
              mininterval=1.0, smoothing=0.05) as progress:
        if lanes > 1:
            context = multiprocessing.get_context("spawn")
            boards_done = context.Value("q", 0)
            with context.Pool(lanes, initializer=_start_worker, initargs=(bidder_name, boards_done)) as pool:
                written = pool.map_async(_write_in_worker, todo, chunksize=1)
                while not written.ready():
                    written.wait(1.0)
                    progress.update(done + boards_done.value - progress.n)
                calls = sum(written.get())  # a worker's exception is raised here
        else:
            corpus_bidder = CorpusBidder(bidder_name) if bidder_name else None
            calls = sum(_write_file(job, corpus_bidder, lambda: progress.update(1)) for job in todo)
    seconds = time.perf_counter() - started
    LOG.info("synth %s: wrote %d of %d boards (%d calls) in %.1f s with %d workers: %s boards/s, %s calls/s", out,
             deals - done, deals, calls, seconds, lanes, _rate((deals - done) / seconds), _rate(calls / seconds))
    return [Path(job[0]) for job in jobs]


def _rate(per_second: float) -> str:
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bridgeflow synth", description="Generate the synthetic corpus.", allow_abbrev=False)
    parser.add_argument("--deals", type=int, required=True, help="number of boards")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output folder (a rerun with the same settings resumes)")
    parser.add_argument("--format", default="pbn", choices=("pbn", "lin"))
    parser.add_argument("--boards-per-file", type=int, default=10_000, help="boards per file, the unit of work and of resumption")
    parser.add_argument("--bidder", default="rule", choices=BIDDERS, help="who bids all four seats (docs/ben.md for BEN)")
    parser.add_argument("--no-auction", action="store_true", help="plain hand records: deals only")
    parser.add_argument("--explain", action="store_true", help="attach each call's rule meaning (rule bidder)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes writing files (one BEN server each)")
    return parser.parse_args(argv)


def run(argv: list[str] | None = None) -> list[Path]:
    args = parse_args(argv)
    return write_corpus(Path(args.out), args.deals, args.seed, args.format, args.boards_per_file,
                        auction=not args.no_auction, explain=args.explain, workers=args.workers, bidder=args.bidder)
