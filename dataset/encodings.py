"""The encodings every stage agrees on (docs/conventions.md): seats, strains, cards, calls, vulnerability,
deal identity. Conversions to other tools' numbering live next to the tool that needs them."""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

SEATS = "NESW"
N, E, S, W = range(4)
STRAINS = ("C", "D", "H", "S", "NT")
SUITS = "CDHS"
RANKS = "23456789TJQKA"
NT = 4

# Calls: 0 Pass, 1 Double, 2 Redouble, 3 + 5*(level-1) + strain for bids (1C = 3, 7NT = 37).
PASS, DOUBLE, REDOUBLE = 0, 1, 2
NUM_CALLS = 38

# Vulnerability: none=0, NS=1, EW=2, both=3.
VUL_NAMES = ("None", "NS", "EW", "All")
VUL_NONE, VUL_NS, VUL_EW, VUL_BOTH = range(4)


def seat_index(letter: str) -> int:
    """'N'/'E'/'S'/'W' (any case) -> 0..3."""
    index = SEATS.find(letter.upper())
    if index < 0 or len(letter) != 1:
        raise ValueError(f"not a seat: {letter!r}")
    return index


def card_index(suit: int, rank: int) -> int:
    """suit C,D,H,S = 0..3; rank 0 = '2' ... 12 = 'A'."""
    return suit * 13 + rank


def card_name(card: int) -> str:
    """52 -> 'SA' style (suit letter, rank letter)."""
    return SUITS[card // 13] + RANKS[card % 13]


def parse_card(text: str) -> int:
    """'SA', 'sa', 'S10', 'AS' is not accepted: suit first, then rank."""
    text = text.strip().upper()
    if len(text) == 3 and text[1:] == "10":
        text = text[0] + "T"
    if len(text) != 2 or text[0] not in SUITS or text[1] not in RANKS:
        raise ValueError(f"not a card: {text!r}")
    return card_index(SUITS.index(text[0]), RANKS.index(text[1]))


def bid_index(level: int, strain: int) -> int:
    if not (1 <= level <= 7 and 0 <= strain <= 4):
        raise ValueError(f"not a bid: level {level} strain {strain}")
    return 3 + 5 * (level - 1) + strain


def bid_level(call: int) -> int:
    return (call - 3) // 5 + 1


def bid_strain(call: int) -> int:
    return (call - 3) % 5


def is_bid(call: int) -> bool:
    return 3 <= call < NUM_CALLS


def call_name(call: int) -> str:
    """0 -> 'P', 1 -> 'X', 2 -> 'XX', 3 -> '1C', 37 -> '7NT'."""
    if call == PASS:
        return "P"
    if call == DOUBLE:
        return "X"
    if call == REDOUBLE:
        return "XX"
    if not is_bid(call):
        raise ValueError(f"not a call: {call}")
    return f"{bid_level(call)}{STRAINS[bid_strain(call)]}"


_CALL_ALIASES = {
    "P": PASS, "PASS": PASS, "AP": None,
    "X": DOUBLE, "D": DOUBLE, "DBL": DOUBLE, "DOUBLE": DOUBLE,
    "XX": REDOUBLE, "R": REDOUBLE, "RDBL": REDOUBLE, "REDOUBLE": REDOUBLE,
}
_STRAIN_ALIASES = {"C": 0, "D": 1, "H": 2, "S": 3, "N": 4, "NT": 4}


def parse_call(text: str) -> int:
    """'P', 'Pass', 'X', 'XX', 'D', 'R', '1C', '3N', '3NT' (any case) -> call index."""
    token = text.strip().upper()
    if token in _CALL_ALIASES and _CALL_ALIASES[token] is not None:
        return _CALL_ALIASES[token]
    if len(token) >= 2 and token[0] in "1234567" and token[1:] in _STRAIN_ALIASES:
        return bid_index(int(token[0]), _STRAIN_ALIASES[token[1:]])
    raise ValueError(f"not a call: {text!r}")


def parse_auction(text: str) -> list[int]:
    """'1H P 2C' (calls separated by spaces or commas; '' or '-' = no call yet) -> call ids."""
    tokens = text.replace(",", " ").split()
    return [] if tokens in ([], ["-"]) else [parse_call(token) for token in tokens]


VUL_ALIASES = {"none": 0, "-": 0, "love": 0, "ns": 1, "n-s": 1, "ew": 2, "e-w": 2, "both": 3, "all": 3}


def parse_vulnerability(text: str) -> int:
    """'none' / 'NS' / 'e-w' / 'both' (any case) -> 0..3."""
    key = text.strip().lower()
    if key not in VUL_ALIASES:
        raise ValueError(f"vulnerability must be one of {sorted(VUL_ALIASES)}, not {text!r}")
    return VUL_ALIASES[key]


def partner(seat: int) -> int:
    return (seat + 2) % 4


def side_of(seat: int) -> int:
    """0 for N/S, 1 for E/W."""
    return seat % 2


def is_vulnerable(vul: int, seat: int) -> bool:
    return vul == VUL_BOTH or (vul == VUL_NS and seat % 2 == 0) or (vul == VUL_EW and seat % 2 == 1)


def duplicate_dealer(board: int) -> int:
    """Dealer of board n (1-based) in standard duplicate rotation: N, E, S, W, ..."""
    return (board - 1) % 4


_VUL_CYCLE = (0, 1, 2, 3, 1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2)


def duplicate_vulnerability(board: int) -> int:
    """Vulnerability of board n (1-based) in the standard 16-board cycle."""
    return _VUL_CYCLE[(board - 1) % 16]


# ---------------------------------------------------------------- deals

def deal_id(owner: np.ndarray | Sequence[int]) -> int:
    """uint64 = first 8 bytes (little endian) of blake2b over the 52 owner bytes."""
    data = np.asarray(owner, dtype=np.int8).tobytes()
    if len(data) != 52:
        raise ValueError("owner must have 52 entries")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


_SEATS_PER_CARD = np.repeat(np.arange(4, dtype=np.int8), 13)


def random_owner(seed: int, index: int) -> np.ndarray:
    """int8[52]: the seat of each card of synthetic board `index`, a pure function of (seed, index)
    (docs/conventions.md: determinism), so any board of a corpus can be regenerated alone."""
    rng = np.random.default_rng([seed, index])
    return _SEATS_PER_CARD[rng.permutation(52)]


def owner_from_hands(hands: Sequence[Sequence[int]]) -> np.ndarray:
    """Four lists of card indices (N, E, S, W) -> int8[52] owner; cards not held stay -1."""
    owner = np.full(52, -1, dtype=np.int8)
    for seat, cards in enumerate(hands):
        owner[list(cards)] = seat
    return owner


def hands_from_owner(owner: np.ndarray | Sequence[int]) -> list[list[int]]:
    owner = np.asarray(owner)
    return [np.flatnonzero(owner == seat).tolist() for seat in range(4)]


def hand_to_pbn(cards: Sequence[int]) -> str:
    """Card indices -> 'AK5.QT2..J9876' (suits S.H.D.C, ranks high to low, a void is empty)."""
    by_suit = [[], [], [], []]
    for card in cards:
        by_suit[card // 13].append(card % 13)
    return ".".join("".join(RANKS[r] for r in sorted(by_suit[suit], reverse=True)) for suit in (3, 2, 1, 0))


def parse_pbn_hand(text: str) -> list[int]:
    """'K843.Q92.A75.J64' (S.H.D.C) -> card indices. Raises ValueError on malformed text."""
    parts = text.strip().split(".")
    if len(parts) != 4:
        raise ValueError(f"hand {text!r} does not have 4 suits separated by '.'")
    cards = []
    for suit, holding in zip((3, 2, 1, 0), parts):
        holding = holding.upper().replace("10", "T")
        for rank_char in holding:
            rank = RANKS.find(rank_char)
            if rank < 0:
                raise ValueError(f"hand {text!r}: {rank_char!r} is not a rank")
            cards.append(card_index(suit, rank))
    return cards


def deal_to_pbn(owner: np.ndarray | Sequence[int], first: int = N) -> str:
    """owner -> 'N:hand hand hand hand' (clockwise from `first`); an unknown hand is '-'."""
    holdings = [[[] for _ in range(4)] for _ in range(4)]  # [seat][suit S,H,D,C] rank chars
    for card, seat in zip(range(51, -1, -1), reversed(np.asarray(owner).tolist())):
        if seat >= 0:
            holdings[seat][3 - card // 13].append(RANKS[card % 13])
    parts = []
    for k in range(4):
        seat = (first + k) % 4
        suits = holdings[seat]
        parts.append(".".join("".join(suit) for suit in suits) if any(suits) else "-")
    return f"{SEATS[first]}:" + " ".join(parts)


HCP_BY_RANK = np.array([0] * 9 + [1, 2, 3, 4], dtype=np.int8)  # J=1 Q=2 K=3 A=4
CARD_HCP = np.tile(HCP_BY_RANK, 4)


def hcp_by_seat(owner: np.ndarray) -> np.ndarray:
    """int8[4] high-card points per seat (4-3-2-1); cards owned by -1 count for nobody."""
    owner = np.asarray(owner)
    return np.array([CARD_HCP[owner == seat].sum() for seat in range(4)], dtype=np.int8)


def suit_lengths(owner: np.ndarray) -> np.ndarray:
    """int8[4, 4]: [seat][suit C,D,H,S] card counts."""
    grid = np.asarray(owner).reshape(4, 13)
    return np.stack([(grid == seat).sum(axis=1) for seat in range(4)]).astype(np.int8)
