"""The bridge rules every accepted record obeys, whatever its format.

Parsers call `owner_from_hands` while reading a deal; the ingest calls `check` on every parsed
record. Both raise or return a reason code naming the field at fault.

`check` quarantines a record that holds nothing of a board (no deal, auction, play or result) as
NOT_A_DEAL, and makes two repairs, each listed in the record's `repairs` (record.Repair), for every format
alike; anything else that breaks a rule is quarantined:

* trailing_passes_dropped: passes after the end of a complete auction (operators type one or two
  too many) are dropped, so the auction ends where the table's did. Any other call after the end
  is illegal.
* placeholder_result_dropped: a stated result of 0 tricks for a contract (level 1 or more) with no
  play is a placeholder (robot result files write `[Result "0"]` on boards they did not play), and
  `tricks` becomes unknown, unless the source's score is consistent with it: the score text, read
  as "NS n", "EW n", "NS n EW m" or a bare n for declarer's side, equals the contract's duplicate
  score with 0 tricks.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from .auction import AuctionState, IllegalCall, replay
from .encodings import NT, PASS, SEATS, STRAINS, call_name
from .record import NOT_PLAYED, BoardRecord, Reason, RecordError, Rejected, Repair, trick_winner
from .scoring import score_ns

# A source's score text: "NS 620", "EW -100", "NS 620 EW -620", or "-100" (declarer's side).
_SCORE = re.compile(r"(?:(NS|EW)\s*)?([+-]?\d+)(?:\s+(?:NS|EW)\s*[+-]?\d+)?", re.I)


def owner_from_hands(hands: Sequence[Sequence[int] | None], field_name: str = "deal") -> np.ndarray:
    """Four hands (N, E, S, W; None = unknown) -> int8[52] owner, -1 where unknown.

    Each known hand must hold 13 distinct cards, no card in two hands. Three known hands imply
    the fourth (LIN `md` often omits it)."""
    owner = np.full(52, -1, dtype=np.int8)
    for seat, cards in enumerate(hands):
        if cards is None:
            continue
        if len(cards) != 13:
            raise RecordError(Reason.WRONG_HAND_SIZE, f"{SEATS[seat]} hand has {len(cards)} cards, not 13", field_name)
        for card in cards:
            if not 0 <= card < 52:
                raise RecordError(Reason.BAD_CARD, f"{SEATS[seat]} hand: card index {card} out of range", field_name)
            if owner[card] != -1:
                holder = "twice in" if owner[card] == seat else f"in {SEATS[owner[card]]} and"
                raise RecordError(
                    Reason.DUPLICATE_CARD, f"{_card_text(card)} is {holder} {SEATS[seat]} hand", field_name
                )
            owner[card] = seat
    known = [seat for seat in range(4) if hands[seat] is not None]
    if len(known) == 3:
        missing = next(seat for seat in range(4) if hands[seat] is None)
        owner[owner == -1] = missing
    return owner


def _card_text(card: int) -> str:
    return "CDHS"[card // 13] + "23456789TJQKA"[card % 13]


def is_complete(owner: np.ndarray | None) -> bool:
    return owner is not None and bool((owner >= 0).all())


def check(record: BoardRecord) -> BoardRecord | Rejected:
    """Apply the rules; fill the contract from the auction and tricks from play/claim when the
    source left them out. Returns the record (completed) or a Rejected naming the first fault."""
    try:
        _check_is_a_board(record)
        _check_auction_and_contract(record)
        _drop_placeholder_result(record)
        _check_play_and_tricks(record)
        _check_dd(record)
    except RecordError as error:
        return record.reject(error.reason, error.message, error.field)
    return record


def _check_is_a_board(record: BoardRecord) -> None:
    """NOT_A_DEAL for a record that says nothing of a board: no hand, auction, play, result, DD
    table or award table (`[Event ""][Deal ""]`, a lone LIN `qx|o1|`), only names and numbers."""
    if (record.owner is None and record.auction is None and not record.play and record.contract_level is None
            and record.tricks is None and record.claim is None and record.dd_tricks is None
            and record.award_table is None):
        raise RecordError(Reason.NOT_A_DEAL, "no deal, auction, play or result: not a board", "deal")


def _check_auction_and_contract(record: BoardRecord) -> None:
    if record.auction is None:
        _check_stated_contract_shape(record)
        return
    if record.dealer is None:
        raise RecordError(Reason.UNKNOWN_VALUE, "an auction needs a dealer", "dealer")
    try:
        state, length = replay_to_end(record.dealer, record.auction)
    except IllegalCall as error:
        raise RecordError(Reason.ILLEGAL_CALL, str(error), f"auction[{len(_prefix_ok(record))}]") from None
    if length < len(record.auction):
        record.auction = record.auction[:length]
        if record.alerts is not None:
            record.alerts = record.alerts[:length]
        if record.explanations is not None:
            record.explanations = record.explanations[:length]
        record.repairs.append(Repair.TRAILING_PASSES_DROPPED)
    record.auction_complete = state.finished
    if not state.finished:
        _check_stated_contract_shape(record)
        return
    contract = state.contract()
    derived = (0, None, None, None) if contract is None else (
        contract.level, contract.strain, contract.doubled, contract.declarer)
    stated = (record.contract_level, record.contract_strain, record.contract_doubled, record.declarer)
    if record.contract_level is not None:
        # A stated contract may omit declarer (LIN) or doubling; compare what it gives.
        for name, said, got in zip(("level", "strain", "doubled", "declarer"), stated, derived):
            if said is not None and got is not None and said != got:
                raise RecordError(
                    Reason.CONTRACT_MISMATCH,
                    f"stated contract {_contract_text(*stated)} but the auction reaches {_contract_text(*derived)} "
                    f"({name} differs)",
                    "contract",
                )
            if said is not None and got is None and name == "level" and said != 0:
                raise RecordError(Reason.CONTRACT_MISMATCH, "stated a contract but the auction was passed out", "contract")
    record.contract_level, record.contract_strain, record.contract_doubled, record.declarer = derived


def replay_to_end(dealer: int, calls: list[int]) -> tuple[AuctionState, int]:
    """`replay` that stops at the end of a complete auction when only passes follow; returns the
    state and the auction's real length (len(calls) unless passes were typed after the end).
    Raises IllegalCall for an illegal call, including any other call after the end."""
    state = AuctionState.start(dealer)
    for index, call in enumerate(calls):
        if call == PASS and state.finished and all(later == PASS for later in calls[index:]):
            return state, index
        state.add(call)
    return state, len(calls)


def _prefix_ok(record: BoardRecord) -> list[int]:
    """The longest legal prefix of the auction (to name the first illegal call's index)."""
    state = replay(record.dealer, [])
    for call in record.auction:
        if not state.is_legal(call):
            break
        state.add(call)
    return state.calls


def _contract_text(level, strain, doubled, declarer) -> str:
    if level == 0:
        return "passed out"
    if level is None:
        return "none"
    text = f"{level}{STRAINS[strain] if strain is not None else '?'}{('', 'X', 'XX')[doubled or 0]}"
    return text + (f" by {SEATS[declarer]}" if declarer is not None else "")


def _check_stated_contract_shape(record: BoardRecord) -> None:
    level = record.contract_level
    if level is None:
        return
    if not 0 <= level <= 7:
        raise RecordError(Reason.UNKNOWN_VALUE, f"contract level {level}", "contract")
    if level > 0 and (record.contract_strain is None or not 0 <= record.contract_strain <= NT):
        raise RecordError(Reason.UNKNOWN_VALUE, f"contract strain {record.contract_strain}", "contract")


def _drop_placeholder_result(record: BoardRecord) -> None:
    """0 stated tricks for a contract, with no play and no score that agrees: unknown tricks."""
    if record.tricks != 0 or not record.contract_level or record.play:
        return
    score = None if record.source_score is None else _score_ns(record.source_score, record.declarer)
    if score is not None and score == _zero_trick_score(record):
        return
    record.tricks = None
    record.repairs.append(Repair.PLACEHOLDER_RESULT_DROPPED)


def _score_ns(text: str, declarer: int | None) -> int | None:
    """North-South's score from a source's score text; None when it cannot be read."""
    match = _SCORE.fullmatch(text.strip())
    if match is None:
        return None
    side, points = match.group(1), int(match.group(2))
    if side is None:
        if declarer is None:
            return None
        side = ("NS", "EW")[declarer % 2]
    return points if side.upper() == "NS" else -points


def _zero_trick_score(record: BoardRecord) -> int | None:
    """North-South's score for the record's contract going down with 0 tricks; None when unknown."""
    if None in (record.contract_strain, record.declarer, record.vulnerability):
        return None
    return score_ns(record.contract_level, record.contract_strain, record.contract_doubled or 0, record.declarer,
                    record.vulnerability, 0)


def _check_play_and_tricks(record: BoardRecord) -> None:
    if record.tricks is not None and not 0 <= record.tricks <= 13:
        raise RecordError(Reason.BAD_RESULT, f"{record.tricks} tricks", "result")
    if record.claim is not None and not 0 <= record.claim <= 13:
        raise RecordError(Reason.BAD_RESULT, f"claim of {record.claim} tricks", "claim")
    play = record.play
    if not play:
        if record.tricks is None and record.claim is not None:
            record.tricks = record.claim
        return
    seen = set()
    for index, card in enumerate(play):
        if card == NOT_PLAYED:
            continue
        if not 0 <= card < 52:
            raise RecordError(Reason.BAD_CARD, f"card index {card}", f"play[{index}]")
        if card in seen:
            raise RecordError(Reason.BAD_PLAY, f"{_card_text(card)} played twice", f"play[{index}]")
        seen.add(card)
    if len(play) > 52:
        raise RecordError(Reason.BAD_PLAY, f"{len(play)} cards played", "play")
    owner = record.owner
    if record.declarer is None or record.contract_strain is None or not record.contract_level or not is_complete(owner):
        return
    trump = record.contract_strain
    leader = (record.declarer + 1) % 4
    declarer_tricks = 0
    for start in range(0, len(play), 4):
        trick = play[start:start + 4]
        for offset, card in enumerate(trick):
            seat = (leader + offset) % 4
            if card != NOT_PLAYED and owner[card] != seat:
                raise RecordError(
                    Reason.BAD_PLAY,
                    f"trick {start // 4 + 1}: {SEATS[seat]} to play but {_card_text(card)} is {SEATS[owner[card]]}'s",
                    f"play[{start + offset}]",
                )
        if len(trick) < 4 or all(card == NOT_PLAYED for card in trick):
            break
        winner = (leader + trick_winner(trick, trump)) % 4
        if winner % 2 == record.declarer % 2:
            declarer_tricks += 1
        leader = winner
    if len(play) == 52 and NOT_PLAYED not in play:
        if record.claim is None and record.tricks is not None and record.tricks != declarer_tricks:
            raise RecordError(
                Reason.BAD_RESULT, f"stated {record.tricks} tricks but the play gives {declarer_tricks}", "result"
            )
        if record.tricks is None:
            record.tricks = record.claim if record.claim is not None else declarer_tricks
    elif record.tricks is None and record.claim is not None:
        record.tricks = record.claim


def _check_dd(record: BoardRecord) -> None:
    if record.dd_tricks is None:
        return
    if len(record.dd_tricks) != 20:
        raise RecordError(Reason.SYNTAX, f"DD table with {len(record.dd_tricks)} cells, not 20", "dd_tricks")
    for index, value in enumerate(record.dd_tricks):
        if value is not None and not 0 <= value <= 13:
            raise RecordError(Reason.UNKNOWN_VALUE, f"DD cell {value}", f"dd_tricks[{index}]")


__all__ = ["check", "owner_from_hands", "is_complete", "replay_to_end", "call_name"]
