"""An evaluation's boards as PBN (`matches.pbn` beside boards.parquet), for BEN, BridgeComposer or a
person to open, and for `bridgeflow ingest` to read back.

One game per table of every board, in match and board order: [Event] the match, [Board], the
agents in the seats ([North] ...), [Room] `Open` / `Closed` at a team match's two tables, at a
partner match's `Table 1` (four partners) to `Table 5` (the agent North, East, South, West),
[Dealer], [Vulnerable], [Deal], the contract ([Declarer], [Contract]), its double-dummy tricks as
[Result], the NS score ([Score "NS 420"]), [ScoreIMP] the IMPs to NS at this table against the
other table (team) or the four partners' table (partner; absent there), the [Auction] and the
deal's [DoubleDummyTricks]. Written with dataset/pbn.py's `format_pbn`, so `parse_pbn` reads every
game back to its auction and contract."""

from __future__ import annotations

import numpy as np

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.pbn_writer import format_pbn
from bridgeflow.dataset.record import BoardRecord
from bridgeflow.dataset.scoring import imps

from .boards import Boards


def table_rooms(tables: int) -> list[str]:
    return ["Open", "Closed"] if tables == 2 else [f"Table {number}" for number in range(1, tables + 1)]


def reference_imps(scores_ns: list[int]) -> list[int | None]:
    """IMPs to NS at each table against its reference table: the other of a team match's two, the
    first (four partners) of a partner match's five; None at that first table."""
    if len(scores_ns) == 2:
        return [imps(scores_ns[0] - scores_ns[1]), imps(scores_ns[1] - scores_ns[0])]
    return [None] + [imps(score - scores_ns[0]) for score in scores_ns[1:]]


def table_record(match: str, row: dict, table: int, seats: list[str], room: str, owner: np.ndarray,
                 dd_table: np.ndarray, gain: int | None) -> BoardRecord:
    """One table of one board as the record `format_pbn` writes."""
    auction = [int(call) for call in row["auctions"][table]]
    contract = replay(row["dealer"], auction).contract()
    record = BoardRecord(source_file="", source_format="pbn", source_position=0, source_line=0,
                         owner=np.asarray(owner, np.int8), dealer=row["dealer"], vulnerability=row["vul"],
                         board=row["board"], event=match, room=room, players=list(seats), auction=auction,
                         contract_level=0 if contract is None else contract.level,
                         source_score=f"NS {row['scores_ns'][table]}",
                         dd_tricks=[int(tricks) for tricks in np.asarray(dd_table).reshape(-1)])
    if contract is not None:
        record.contract_strain, record.contract_doubled = contract.strain, contract.doubled
        record.declarer, record.tricks = contract.declarer, int(row["tricks"][table])
    if gain is not None:
        record.tags["ScoreIMP"] = f"NS {gain}"
    return record


def match_pbn(rows: list[dict], boards: Boards, seats: dict[str, list[list[str]]]) -> str:
    """The PBN text of log rows (table.LOG_SCHEMA); `seats[match]` names the agents in the
    seats (N, E, S, W) of each of its tables."""
    position = {int(deal): index for index, deal in enumerate(boards.deal_ids)}
    games = []
    for row in rows:
        index = position[int(row["deal_id"])]
        tables = len(row["auctions"])
        for table, (room, gain) in enumerate(zip(table_rooms(tables), reference_imps(row["scores_ns"]))):
            games.append(format_pbn(table_record(row["match"], row, table, seats[row["match"]][table], room,
                                                 boards.owners[index], boards.tables[index], gain)))
    return "% PBN 2.1\n% EXPORT\n% bridgeflow evaluate\n\n" + "\n".join(games)
