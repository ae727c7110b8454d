"""The project's own default data: random deals, dealer and vulnerability rotating as in
duplicate, written as PBN (or LIN) files that the ingest job reads back unchanged.

Board i (0-based) is a pure function of (seed, i): its cards come from a generator seeded with
both, so any board can be regenerated alone and files can be written in any order."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterator

import numpy as np
from tqdm import tqdm

from .encodings import duplicate_dealer, duplicate_vulnerability
from .record import BoardRecord

SEATS_PER_CARD = np.repeat(np.arange(4, dtype=np.int8), 13)


def random_owner(seed: int, index: int) -> np.ndarray:
    """int8[52]: the seat of each card of synthetic board `index`."""
    rng = np.random.default_rng([seed, index])
    return SEATS_PER_CARD[rng.permutation(52)]


def synth_board(seed: int, index: int, source_file: str = "") -> BoardRecord:
    """Board `index` of the corpus: deal, board number, dealer and vulnerability (no auction)."""
    number = index + 1
    return BoardRecord(
        source_file=source_file,
        source_format="synth",
        source_position=index,
        source_line=0,
        owner=random_owner(seed, index),
        dealer=duplicate_dealer(number),
        vulnerability=duplicate_vulnerability(number),
        board=number,
        event=f"bridgeflow synth seed {seed}",
    )


def synth_boards(seed: int, start: int, stop: int) -> Iterator[BoardRecord]:
    for index in range(start, stop):
        yield synth_board(seed, index)


def write_corpus(out: Path, deals: int, seed: int, format_name: str, boards_per_file: int) -> list[Path]:
    """Write `deals` boards into files of `boards_per_file` boards each; returns the paths."""
    if format_name == "pbn":
        from .pbn import format_pbn as format_board
    elif format_name == "lin":
        from .lin import format_lin as format_board
    else:
        raise ValueError(f"--format must be pbn or lin, not {format_name!r}")
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob(f"synth-*.{format_name}"):
        stale.unlink()
    paths = []
    with tqdm(total=deals, unit="board", desc="synth", mininterval=1.0) as progress:
        for first in range(0, deals, boards_per_file):
            last = min(first + boards_per_file, deals)
            path = out / f"synth-{first // boards_per_file:05d}.{format_name}"
            temporary = path.with_suffix(".tmp")
            with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
                for board in synth_boards(seed, first, last):
                    handle.write(format_board(board))
                    handle.write("\n")
            temporary.replace(path)
            paths.append(path)
            progress.update(last - first)
    return paths


def run(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(prog="bridgeflow synth", description="Generate the synthetic corpus.")
    parser.add_argument("--deals", type=int, required=True, help="number of boards")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--format", default="pbn", choices=("pbn", "lin"))
    parser.add_argument("--boards-per-file", type=int, default=10_000)
    args = parser.parse_args(argv)
    return write_corpus(Path(args.out), args.deals, args.seed, args.format, args.boards_per_file)
