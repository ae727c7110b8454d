"""Reader and writer for OpenSpiel bridge trajectories (the `bridge_supervised_learning` text
files): one deal per line, space-separated action ids.

* the first 52 ids deal the cards, the i-th to player i % 4 (0=N, 1=E, 2=S, 3=W);
* then the calls, id 52 + call index (DESIGN.md call encoding);
* then the cards played. Card ids are 4 * rank + suit (suit C,D,H,S = 0..3), converted here to
  DESIGN.md's suit * 13 + rank.
Dealer North, nobody vulnerable (OpenSpiel's defaults). Call ids and card ids do not overlap, so
the auction is every id >= 52 before the first card played; whether it is legal is for
`validate.check` to say. Blank lines are not records.
"""

from __future__ import annotations

from typing import Iterator

from .encodings import N, NUM_CALLS, VUL_NONE
from .record import NOT_PLAYED, BoardRecord, Reason, RecordError, Rejected
from .validate import is_complete, owner_from_hands

FIRST_CALL_ID = 52
LAST_ID = FIRST_CALL_ID + NUM_CALLS - 1  # 89 = 7NT
_CARD_OF_ID = [(spiel_id % 4) * 13 + spiel_id // 4 for spiel_id in range(52)]
_ID_OF_CARD = [0] * 52
for _spiel_id, _card in enumerate(_CARD_OF_ID):
    _ID_OF_CARD[_card] = _spiel_id


def looks_like_openspiel(first_bytes: bytes) -> bool:
    """True when the first line is a trajectory: at least 52 integer ids in 0..89, the first
    52 a permutation of the cards. `first_bytes` may end mid-line (its last token is ignored)."""
    text = first_bytes.lstrip(b"\r\n\t ")
    line, newline, _ = text.partition(b"\n")
    tokens = line.split()
    if not newline and tokens:
        tokens = tokens[:-1]  # may be cut
    if len(tokens) < 52 or not all(token.isdigit() for token in tokens):
        return False
    ids = [int(token) for token in tokens]
    return max(ids) <= LAST_ID and sorted(ids[:52]) == list(range(52))


def parse_openspiel(data: bytes, source_file: str) -> Iterator[BoardRecord | Rejected]:
    """One BoardRecord or Rejected per non-blank line; never raises for bad input."""
    position = 0
    for line_number, line_bytes in enumerate(data.split(b"\n"), start=1):
        if not line_bytes.strip():
            continue
        record = BoardRecord(source_file=source_file, source_format="openspiel", source_position=position,
                             source_line=line_number, raw_text=line_bytes.decode("latin-1").rstrip("\r"))
        position += 1
        try:
            _fill(record, line_bytes)
        except RecordError as error:
            yield record.reject(error.reason, error.message, error.field)
            continue
        yield record


def _fill(record: BoardRecord, line_bytes: bytes) -> None:
    tokens = line_bytes.split()
    if not all(token.isdigit() for token in tokens):
        bad = next(token for token in tokens if not token.isdigit())
        raise RecordError(Reason.UNKNOWN_FORMAT, f"{bad[:20]!r} is not an action id: not an OpenSpiel trajectory",
                          "line")
    ids = [int(token) for token in tokens]
    for index, spiel_id in enumerate(ids):
        if spiel_id > LAST_ID:
            raise RecordError(Reason.UNKNOWN_VALUE, f"action id {spiel_id} is above {LAST_ID}", f"action[{index}]")
    deal_ids = ids[:52]
    dealt = next((index for index, spiel_id in enumerate(deal_ids) if spiel_id >= FIRST_CALL_ID), len(deal_ids))
    if dealt < 52:
        raise RecordError(Reason.NOT_A_DEAL, f"only {dealt} cards dealt, 52 needed",
                          f"action[{dealt}]")
    hands = [[_CARD_OF_ID[spiel_id] for spiel_id in deal_ids[seat::4]] for seat in range(4)]
    record.owner = owner_from_hands(hands, "deal")
    record.dealer, record.vulnerability = N, VUL_NONE
    rest = ids[52:]
    calls_end = next((index for index, spiel_id in enumerate(rest) if spiel_id < FIRST_CALL_ID), len(rest))
    if calls_end:
        record.auction = [spiel_id - FIRST_CALL_ID for spiel_id in rest[:calls_end]]
    play_ids = rest[calls_end:]
    for index, spiel_id in enumerate(play_ids):
        if spiel_id >= FIRST_CALL_ID:
            raise RecordError(Reason.UNKNOWN_VALUE, f"call id {spiel_id} among the cards played",
                              f"action[{52 + calls_end + index}]")
    if play_ids:
        record.play = [_CARD_OF_ID[spiel_id] for spiel_id in play_ids]


def format_openspiel(record: BoardRecord) -> str:
    """One trajectory line (no newline). Each hand is dealt in ascending card order. Raises
    ValueError for what the format cannot carry: an incomplete deal, a dealer other than North,
    vulnerability, or play without an auction."""
    if not is_complete(record.owner):
        raise ValueError("OpenSpiel needs all 52 cards dealt")
    if record.dealer not in (None, N) or record.vulnerability not in (None, VUL_NONE):
        raise ValueError("OpenSpiel trajectories have dealer North and nobody vulnerable")
    if record.play and not record.auction:
        raise ValueError("OpenSpiel cannot write play without an auction")
    owner = record.owner.tolist()
    hands = [sorted(_ID_OF_CARD[card] for card in range(52) if owner[card] == seat) for seat in range(4)]
    ids = [hands[seat][k] for k in range(13) for seat in range(4)]
    ids += [FIRST_CALL_ID + call for call in record.auction or ()]
    play = record.play or []
    ids += [_ID_OF_CARD[card] for card in (play[:play.index(NOT_PLAYED)] if NOT_PLAYED in play else play)]  # no "not played" id
    return " ".join(map(str, ids))
