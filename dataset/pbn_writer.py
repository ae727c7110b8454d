"""PBN writer: `format_pbn` writes one record as a game that `pbn.parse_pbn` reads back to an equal
record (tests/test_pbn.py checks the round trip on generated records)."""

from __future__ import annotations

import numpy as np

from . import facit
from .encodings import PASS, RANKS, SEATS, STRAINS, VUL_NAMES, call_name
from .pbn import DDT_CELLS, trump_of
from .record import NOT_PLAYED, BoardRecord, trick_winner

__all__ = ["format_pbn"]

_CALL_TEXT = tuple("Pass" if call == PASS else call_name(call) for call in range(38))
_CARD_TEXT = tuple("CDHS"[card // 13] + RANKS[card % 13] for card in range(52))


def _pbn_hand_order() -> np.ndarray:
    """The card at each letter of "AKQJT98765432.AKQJT98765432.(...)" (S,H,D,C); 0 under a dot."""
    order: list[int] = []
    for suit in (3, 2, 1, 0):
        order.extend(suit * 13 + rank for rank in range(12, -1, -1))
        order.append(0)
    return np.array(order[:-1])


# A hand is written by keeping, from all 52 rank letters and the 3 dots, the letters it holds.
_PBN_LETTERS = np.frombuffer(b".".join([b"AKQJT98765432"] * 4), dtype=np.uint8)
_PBN_DOTS = _PBN_LETTERS == ord(".")
_PBN_ORDER = _pbn_hand_order()


def format_pbn(record: BoardRecord) -> str:
    """One PBN game (ending in a newline, no blank line) that parse_pbn reads back to `record`.

    A text value starting with '#' would be read as a tag copy; no such record is expected."""
    lines: list[str] = []
    tag = lines.append
    for name, value in (("Event", record.event), ("Site", record.site), ("Date", record.date)):
        if value is not None:
            tag(f'[{name} "{_escape(value)}"]')
    if record.board is not None:
        tag(f'[Board "{record.board}"]')
    if record.players is not None:
        for name, seat in (("West", 3), ("North", 0), ("East", 1), ("South", 2)):
            if record.players[seat] is not None:
                tag(f'[{name} "{_escape(record.players[seat])}"]')
    if record.dealer is not None:
        tag(f'[Dealer "{SEATS[record.dealer]}"]')
    if record.vulnerability is not None:
        tag(f'[Vulnerable "{VUL_NAMES[record.vulnerability]}"]')
    # Written even when unknown: a game without Deal and Board would inherit the previous deal.
    tag(f'[Deal "{_deal_text(record.owner, record.dealer or 0)}"]' if record.owner is not None else '[Deal ""]')
    if record.scoring is not None:
        tag(f'[Scoring "{_escape(record.scoring)}"]')
    if record.award_table is not None:
        if record.scoring != facit.FACIT:
            raise ValueError(f'an award table needs [Scoring "{facit.FACIT}"]')
        tag("{" + " ".join(f"{contract} {points}" for contract, points in record.award_table) + "}")
    if record.declarer is not None:
        tag(f'[Declarer "{SEATS[record.declarer]}"]')
    if record.contract_level is not None:
        tag(f'[Contract "{_contract_text(record)}"]')
    if record.tricks is not None:
        tag(f'[Result "{record.tricks}"]')
    if record.room is not None:
        tag(f'[Room "{_escape(record.room.capitalize() if record.room in ("open", "closed") else record.room)}"]')
    if record.source_score is not None:
        tag(f'[Score "{_escape(record.source_score)}"]')
    if record.auction is not None:
        _write_auction(record, lines)
    if record.problem_script is not None:
        if record.dealer is None or record.award_table is None or record.auction is not None:
            raise ValueError("a problem's script needs a dealer and an award table, and no auction")
        tag(f'[Auction "{SEATS[record.dealer]}"]')
        tag(" ".join(facit.OUR_CALL if call == facit.OUR_CALL_INDEX else _CALL_TEXT[call]
                     for call in record.problem_script))
    if record.play:
        _write_play(record, lines)
    if record.dd_tricks is not None:
        _write_dd(record.dd_tricks, lines)
    for name, value in record.tags.items():
        first, newline, section = value.partition("\n")
        tag(f'[{name} "{_escape(first)}"]')
        if newline:
            tag(section)
    lines.append("")
    return "\n".join(lines)


def _escape(value: str) -> str:
    if "\\" in value or '"' in value:
        return value.replace("\\", "\\\\").replace('"', '\\"')
    return value


def _deal_text(owner: np.ndarray, first: int) -> str:
    """'N:AK5.QT2..J9876 ...' with '-' for an unknown hand, starting with `first`."""
    in_pbn_order = np.asarray(owner)[_PBN_ORDER]
    hands = []
    for offset in range(4):
        held = in_pbn_order == (first + offset) % 4
        hands.append(_PBN_LETTERS[held | _PBN_DOTS].tobytes().decode("ascii") if held.any() else "-")
    return f"{SEATS[first]}:" + " ".join(hands)


def _contract_text(record: BoardRecord) -> str:
    if record.contract_level == 0:
        return "Pass"
    return f"{record.contract_level}{STRAINS[record.contract_strain]}{'X' * (record.contract_doubled or 0)}"


def _write_auction(record: BoardRecord, lines: list[str]) -> None:
    if record.dealer is None:
        raise ValueError("an auction needs a dealer")
    tokens: list[str] = []
    notes: list[str] = []
    for index, call in enumerate(record.auction):
        token = _CALL_TEXT[call]
        if record.alerts and record.alerts[index]:
            token += " !"
        if record.explanations and record.explanations[index]:
            notes.append(record.explanations[index])
            token += f" ={len(notes)}="
        tokens.append(token)
    lines.append(f'[Auction "{SEATS[record.dealer]}"]')
    lines.extend(" ".join(tokens[start:start + 4]) for start in range(0, len(tokens), 4))
    lines.extend(f'[Note "{number}:{_escape(text)}"]' for number, text in enumerate(notes, 1))


def _write_play(record: BoardRecord, lines: list[str]) -> None:
    """The play as a table of tricks by columns from the opening leader, the inverse of _played_order."""
    first_column = (record.declarer + 1) % 4 if record.declarer is not None else 0
    trump = trump_of(record)
    play = record.play
    lines.append(f'[Play "{SEATS[first_column]}"]')
    leader = first_column
    for start in range(0, len(play), 4):
        trick = play[start:start + 4]
        if trump is None:
            row = ["-" if card == NOT_PLAYED else _CARD_TEXT[card] for card in trick]
        else:
            row = ["-"] * 4
            for offset, card in enumerate(trick):
                if card != NOT_PLAYED:
                    row[(leader - first_column + offset) % 4] = _CARD_TEXT[card]
            if len(trick) == 4:
                leader = (leader + trick_winner(trick, trump)) % 4
        lines.append(" ".join(row))
    lines.append("*")


def _write_dd(cells: list[int | None], lines: list[str]) -> None:
    if all(value is not None and 0 <= value < 16 for value in cells):
        lines.append(f'[DoubleDummyTricks "{"".join(format(cells[cell], "x") for cell in DDT_CELLS)}"]')
        return
    lines.append('[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]')
    for cell, value in enumerate(cells):
        if value is not None:
            lines.append(f"{SEATS[cell // 5]} {STRAINS[cell % 5]:>2} {value:>2}")
