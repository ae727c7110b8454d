"""The boards of a match: deal_ids with their hands and exact DD tables (`load_boards`), chosen from
a DD store's test split or read from a board-list file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bridgeflow.dataset.dd import SOLVER_NAME
from bridgeflow.dataset.digests import digest
from bridgeflow.dataset.errors import InputError, existing
from bridgeflow.dataset.labels import read_labels
from bridgeflow.dataset.splits import in_split


@dataclass
class Boards:
    deal_ids: np.ndarray  # uint64[n], board i + 1 is deal_ids[i]
    owners: np.ndarray  # int8[n, 52]
    tables: np.ndarray  # int8[n, 4, 5] exact DD tricks

    @property
    def hash(self) -> str:
        return digest(self.deal_ids.astype("<u8").tobytes())


def load_boards(dd_store: str | Path, count: int, board_file: str | Path | None = None) -> Boards:
    """The boards of the match: a fixed list from `board_file`, else the first `count` test-split
    deal_ids of the DD store in ascending order. Only deals with an exact (DDS) table qualify."""
    wanted = None if board_file is None else read_board_list(board_file)
    labels = read_labels(existing(dd_store, "DD store (--dd)"))
    labels = labels.filter(pc.equal(labels.column("solver"), SOLVER_NAME))  # exact tables only, not NN-DDA estimates
    ids = labels.column("deal_id").to_numpy()
    if wanted is None:
        wanted = np.sort(ids[in_split(ids, "test")])[:count]
    position = {int(deal): row for row, deal in enumerate(ids)}
    missing = [int(d) for d in wanted if int(d) not in position]
    if missing:
        raise InputError(f"{len(missing)} boards have no exact DD table in {dd_store}, e.g. deal_id {missing[0]}")
    if not len(wanted):
        raise InputError(f"DD store {dd_store}: no test-split deal with an exact table in it")
    rows = pa.array([position[int(d)] for d in wanted])
    chosen = labels.take(rows)
    owners = np.array(chosen.column("owner").to_pylist(), np.int8)
    tables = np.array(chosen.column("dd_tricks").to_pylist(), np.int8).reshape(-1, 4, 5)
    return Boards(wanted, owners, tables)


def read_board_list(path: str | Path) -> np.ndarray:
    """The deal_ids of a board-list file: a JSON list of deal_ids, or an object whose "deal_ids" is
    one (a boards.json); InputError naming the file unless it is a non-empty list of integers in
    0..2**64-1 (1.5 or "1" is no deal_id)."""
    path = existing(path, "board list (--boards)")
    where = f"board list (--boards) {path}"
    try:
        listed = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{where}: not JSON ({error})") from None
    deal_ids = listed.get("deal_ids") if isinstance(listed, dict) else listed
    if not isinstance(deal_ids, list):
        raise InputError(f"{where}: want a JSON list of deal_ids or an object with one as \"deal_ids\"")
    if not deal_ids:
        raise InputError(f"{where}: lists no deal_id")
    for position, deal in enumerate(deal_ids):
        if isinstance(deal, bool) or not isinstance(deal, int) or not 0 <= deal < 1 << 64:
            raise InputError(f"{where}: item {position} is {json.dumps(deal)}, not a deal_id (an integer in 0..2**64-1)")
    return np.array(deal_ids, np.uint64)


def boards_from(dd: str, boards: str) -> Boards:
    """--boards: a board-list file, or N for the DD store's first N test-split deals."""
    return load_boards(dd, int(boards), None) if boards.isascii() and boards.isdigit() else load_boards(dd, 0, boards)
