"""The record model every parser produces: one `BoardRecord` per board played at a table (or per
hand record), or one `Rejected` naming why a record could not be accepted.

Parsers only read syntax and fill what the source says; `validate.check` applies the bridge rules
(52 distinct cards, legal auction, contract matches auction, play possible) to every format alike,
and `schema` turns accepted records into Arrow rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np


class Reason(str, Enum):
    """Quarantine reason codes (a record is rejected with exactly one)."""

    UNDECODABLE_BYTES = "undecodable_bytes"  # text in no encoding we accept
    UNKNOWN_FORMAT = "unknown_format"  # a line/record that is not in the file's format
    SYNTAX = "syntax"  # malformed tag, section or LIN pair
    UNKNOWN_VALUE = "unknown_value"  # tag value outside its domain (Vulnerable "Foo", dealer "Q")
    BAD_CARD = "bad_card"  # a card that does not exist ("SZ")
    DUPLICATE_CARD = "duplicate_card"  # one card in two hands (or twice in one)
    WRONG_HAND_SIZE = "wrong_hand_size"  # a hand that is not 13 cards
    ILLEGAL_CALL = "illegal_call"  # an insufficient bid, a double of partner, a call after the end
    CONTRACT_MISMATCH = "contract_mismatch"  # stated contract/declarer differ from the auction's
    BAD_PLAY = "bad_play"  # a card played by the wrong seat or twice (a revoke is real play: kept)
    BAD_RESULT = "bad_result"  # tricks outside 0..13, or contradicting the play
    NOT_A_DEAL = "not_a_deal"  # no deal at all, or fewer than 52 cards where a full deal is required (DD endgames)


class Repair(str, Enum):
    """A change a reader or `validate.check` made to what a source said, so that an accepted record
    holds what happened at the table and nothing more (listed in its `repairs`, counted per file in
    the ingest manifest)."""

    TRAILING_PASSES_DROPPED = "trailing_passes_dropped"  # passes typed after the end of the auction
    PLACEHOLDER_RESULT_DROPPED = "placeholder_result_dropped"  # a 0-trick result that nothing supports
    # A bidding problem's typos whose meaning is clear (dataset/facit.py's decisions):
    FACIT_SCORING_CASE = "facit_scoring_case"  # [Scoring "facit"] for "Facit"
    FACIT_SCORING_MISSING = "facit_scoring_missing"  # no [Scoring] tag before an award table
    FACIT_NOTE_BEFORE_TABLE = "facit_note_before_table"  # a {note} between [Scoring] and the table
    FACIT_TABLE_CLOSED_BY_BRACKET = "facit_table_closed_by_bracket"  # `{2S 10 3S 6]`
    FACIT_NT_IN_TABLE = "facit_nt_in_table"  # `3NT`/`4nt` for 3N, 4N
    FACIT_PASS_IN_TABLE = "facit_pass_in_table"  # `pass` for the passed-out award P
    INVISIBLE_CHARACTER_DROPPED = "invisible_character_dropped"  # a BOM or zero-width space inside the file


class RecordError(ValueError):
    """Raised inside a parser or validator for one record; becomes a `Rejected`."""

    def __init__(self, reason: Reason, message: str, field_name: str):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field = field_name


NOT_PLAYED = -1  # in `play`: a card not played to its trick (PBN's `-`); trailing ones are dropped


def trick_winner(trick: list[int], trump: int | None) -> int:
    """Offset (0 = lead) of the card that wins `trick` (four entries in playing order, at least one
    played; a NOT_PLAYED entry cannot win). The led suit is the first played card's; trump None or
    NT=4 matches no suit. The best card so far is of the led suit or a trump, so a card of another
    suit beats it only by being a trump."""
    played = [offset for offset, card in enumerate(trick) if card != NOT_PLAYED]
    best = played[0]
    for offset in played[1:]:
        card, top = trick[offset], trick[best]
        if (card > top) if card // 13 == top // 13 else card // 13 == trump:
            best = offset
    return best


@dataclass
class BoardRecord:
    """What a source says about one board at one table. None means "not given"."""

    source_file: str  # path below the input glob's literal prefix
    source_format: str  # "pbn" | "lin" | "openspiel"
    source_position: int  # ordinal of the record in its file, 0-based, rejected records included
    source_line: int  # 1-based line where the record starts
    raw_text: str = ""  # the record as read (kept for quarantine, not written to records)

    owner: np.ndarray | None = None  # int8[52] seat per card, -1 where a hand is unknown ('-')
    dealer: int | None = None
    vulnerability: int | None = None
    board: int | None = None
    event: str | None = None
    site: str | None = None
    date: str | None = None
    room: str | None = None  # "open"/"closed" for LIN qx o/c, PBN [Room]
    scoring: str | None = None
    players: list[str | None] | None = None  # N, E, S, W

    auction: list[int] | None = None  # call indices from dealer; None = no auction given
    alerts: list[bool] | None = None
    explanations: list[str | None] | None = None
    auction_complete: bool | None = None  # set by validate.check when there is an auction

    # The stated result (traveller line, PBN Contract/Declarer/Result, LIN rs), checked against
    # the auction and play by validate; filled from the auction when only that is given.
    contract_level: int | None = None  # 0 = passed out
    contract_strain: int | None = None
    contract_doubled: int | None = None
    declarer: int | None = None
    tricks: int | None = None  # tricks taken by declarer
    claim: int | None = None  # tricks claimed by declarer (LIN mc)

    # A bidding problem (docs/conventions.md, "Bidding problems (Facit)"), not a board played: its [Auction]
    # is a script, never `auction`.
    award_table: list[tuple[str, int]] | None = None  # (contract, points) in the file's order
    problem_script: list[int] | None = None  # call indices from dealer, facit.OUR_CALL_INDEX where N/S call

    play: list[int] | None = None  # cards in the order played; NOT_PLAYED where a trick lacks one (PBN's `-`)
    source_score: str | None = None  # the source's own score text, as given
    dd_tricks: list[int | None] | None = None  # 20 cells, [declarer N,E,S,W][strain C,D,H,S,NT]
    tags: dict[str, str] = field(default_factory=dict)  # other tags/fields, verbatim
    repairs: list[Repair] = field(default_factory=list)  # set by the reader and validate.check, in the order made

    def reject(self, reason: Reason, message: str, field_name: str) -> "Rejected":
        return Rejected(
            source_file=self.source_file,
            source_format=self.source_format,
            source_position=self.source_position,
            source_line=self.source_line,
            raw_text=self.raw_text,
            reason=reason,
            message=message,
            field=field_name,
        )


@dataclass
class Rejected:
    """A record that could not be accepted, with where it is and why."""

    source_file: str
    source_format: str
    source_position: int
    source_line: int
    raw_text: str
    reason: Reason
    message: str
    field: str  # the tag / LIN key / token that is wrong ("Deal", "md", "auction[3]")

    def __str__(self) -> str:
        return (
            f"{self.source_file}: record {self.source_position} (line {self.source_line}), "
            f"field {self.field}: {self.reason.value}: {self.message}"
        )
