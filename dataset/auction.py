"""Auction rules: which calls are legal, when an auction ends, and the contract it reaches.

Every parser, the bidder, the models and the search use this one module: `AuctionState` / `replay`
for one auction, and the same rules vectorised over a batch (`AuctionBatch`, a call at a time; over padded
auctions `auction_scan`, `legal_masks`, `auction_status`) for the models and the search, tested equal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .encodings import (
    DOUBLE,
    NUM_CALLS,
    PASS,
    REDOUBLE,
    bid_level,
    bid_strain,
    call_name,
    card_name,
    is_bid,
    parse_auction,
    parse_pbn_hand,
    parse_vulnerability,
    seat_index,
)


class IllegalCall(ValueError):
    """A call that the laws do not allow at this point of the auction."""


@dataclass(frozen=True)
class Contract:
    level: int
    strain: int  # C,D,H,S,NT = 0..4
    doubled: int  # 0 undoubled, 1 doubled, 2 redoubled
    declarer: int  # seat N,E,S,W = 0..3

    def __str__(self) -> str:
        return call_name(3 + 5 * (self.level - 1) + self.strain) + ("", "X", "XX")[self.doubled]


@dataclass(slots=True)
class AuctionState:
    """Incremental auction state. `calls` are call indices in the order made, starting with dealer."""

    dealer: int
    calls: list[int]
    last_bid: int = -1  # call index of the highest bid, -1 if none
    last_bidder: int = -1  # seat
    doubled: int = 0
    passes_in_row: int = 0

    @classmethod
    def start(cls, dealer: int) -> "AuctionState":
        return cls(dealer=dealer, calls=[])

    @property
    def to_call(self) -> int:
        return (self.dealer + len(self.calls)) % 4

    @property
    def finished(self) -> bool:
        # Four passes (a passed-out board) or three after a bid; most calls stop at the first test.
        return self.passes_in_row >= 3 and (self.passes_in_row >= 4 or self.last_bid >= 0)

    def legal_mask(self) -> np.ndarray:
        """bool[38]: `is_legal` of every call (all False once the auction is over)."""
        return np.array([self.is_legal(call) for call in range(NUM_CALLS)], dtype=bool)

    def is_legal(self, call: int) -> bool:
        """The laws' rule, one call at a time (the parsers' and the rule bidder's hot path): nothing
        after the end; pass always; a bid above the last; a double of the opponents' undoubled bid;
        a redouble of the opponents' double of our bid."""
        if self.finished or not 0 <= call < NUM_CALLS:
            return False
        if call >= 3:
            return call > self.last_bid
        if call == PASS:
            return True
        if self.last_bid < 0:
            return False
        opponents_bid = (self.last_bidder - self.to_call) % 2 == 1
        if call == DOUBLE:
            return opponents_bid and self.doubled == 0
        return (not opponents_bid) and self.doubled == 1

    def why_illegal(self, call: int) -> str | None:
        if self.finished:
            return "auction already ended"
        if not 0 <= call < NUM_CALLS:
            return f"unknown call {call}"
        if self.is_legal(call):
            return None
        if is_bid(call):
            return f"{call_name(call)} is not higher than {call_name(self.last_bid)}"
        if call == DOUBLE:
            return "double only of an opponent's undoubled bid"
        return "redouble only of a double of own side's bid"

    def add(self, call: int) -> None:
        if not self.is_legal(call):
            reason = self.why_illegal(call)
            raise IllegalCall(f"call {len(self.calls) + 1} ({call_name(call) if 0 <= call < NUM_CALLS else call}): {reason}")
        if call == PASS:
            self.passes_in_row += 1
        else:
            self.passes_in_row = 0
            if call == DOUBLE:
                self.doubled = 1
            elif call == REDOUBLE:
                self.doubled = 2
            else:
                self.last_bid, self.last_bidder, self.doubled = call, self.to_call, 0
        self.calls.append(call)

    def contract(self) -> Contract | None:
        """The contract once finished; None for a passed-out board (or an unfinished auction)."""
        if not self.finished or self.last_bid < 0:
            return None
        strain = bid_strain(self.last_bid)
        side = self.last_bidder % 2
        for index, call in enumerate(self.calls):
            seat = (self.dealer + index) % 4
            if is_bid(call) and seat % 2 == side and bid_strain(call) == strain:
                return Contract(bid_level(self.last_bid), strain, self.doubled, seat)
        raise AssertionError("unreachable: the last bid's side named its strain")


def replay(dealer: int, calls: Iterable[int]) -> AuctionState:
    """Apply calls in order; raises IllegalCall naming the first bad call."""
    state = AuctionState.start(dealer)
    for call in calls:
        state.add(call)
    return state


def legal_mask(dealer: int, calls: Sequence[int]) -> np.ndarray:
    return replay(dealer, calls).legal_mask()


@dataclass(frozen=True)
class Decision:
    """A hand to call at a point of an auction, as `bid` and `explain` take it."""

    hand: list[int]  # 13 card ids
    auction: list[int]  # calls so far, from the dealer
    dealer: int
    vulnerability: int
    state: AuctionState


def parse_decision(hand: str, auction: str, dealer: str, vulnerability: str) -> Decision:
    """Command-line text -> a Decision; ValueError with a one-line message naming the bad option."""
    try:
        cards = parse_pbn_hand(hand)
    except ValueError as error:
        raise ValueError(f"--hand: {error}") from None
    repeated = sorted({card for card in cards if cards.count(card) > 1})
    if repeated:
        raise ValueError(f"--hand {hand!r} holds {', '.join(card_name(card) for card in repeated)} more than once")
    if len(cards) != 13:
        raise ValueError(f"--hand {hand!r} holds {len(cards)} cards, not 13")
    try:
        seat = seat_index(dealer)
    except ValueError:
        raise ValueError(f"--dealer {dealer!r}: not a seat (N, E, S or W)") from None
    try:
        vul = parse_vulnerability(vulnerability)
    except ValueError as error:
        raise ValueError(f"--vul: {error}") from None
    try:
        calls = parse_auction(auction)
        state = replay(seat, calls)
    except ValueError as error:  # IllegalCall included
        raise ValueError(f"--auction {auction!r}: {error}") from None
    if state.finished:
        raise ValueError(f"--auction {auction!r} has already ended: no call is left to make")
    return Decision(cards, calls, seat, vul, state)


# ------------------------------------------------------------------ auction rules, vectorised

class AuctionBatch:
    """B auctions of one batch advanced a call at a time, in numpy: AuctionState over a batch (a
    Monte Carlo rollout's auctions, one row per (candidate, deal)). A call of -1 leaves its row
    as it is (a padded or finished auction)."""

    def __init__(self, dealer: np.ndarray | int, size: int | None = None):
        self.dealer = np.broadcast_to(np.asarray(dealer, np.int64), (size if size is not None else len(dealer),))
        batch = len(self.dealer)
        self.length = np.zeros(batch, np.int64)
        self.last_bid = np.full(batch, -1, np.int16)
        self.last_bidder = np.full(batch, -1, np.int16)
        self.doubled = np.zeros(batch, np.int16)
        self.passes = np.zeros(batch, np.int16)
        self.first_namer = np.full((batch, 2, 5), -1, np.int16)  # [row, side, strain]: seat that named it first
        self.calls: list[np.ndarray] = []  # one int16[B] per step, -1 where the row made no call

    @classmethod
    def replay(cls, dealer: int, calls: Sequence[int], size: int) -> "AuctionBatch":
        """`size` copies of one auction (raises IllegalCall on a bad call, as `replay`)."""
        replay(dealer, calls)
        batch = cls(dealer, size)
        for call in calls:
            batch.add(np.full(size, call, np.int16))
        return batch

    @property
    def to_call(self) -> np.ndarray:
        return (self.dealer + self.length) % 4

    @property
    def finished(self) -> np.ndarray:
        return (self.passes >= 4) | ((self.last_bid >= 0) & (self.passes >= 3))

    def state(self) -> dict[str, np.ndarray]:
        """The state legal_masks reads: last bid, its bidder, doubled, passes in a row, finished."""
        return {"last_bid": self.last_bid, "last_bidder": self.last_bidder, "doubled": self.doubled,
                "passes": self.passes, "finished": self.finished}

    def legal(self) -> np.ndarray:
        """bool[B, 38] the calls legal now for the row's player to call (none once it is over)."""
        return legal_masks(self.state(), self.to_call)

    def add(self, call: np.ndarray) -> None:
        """One call per row (-1: none). Legality is the caller's: the search draws from legal masks."""
        call = np.asarray(call, np.int16)
        made, bid = call >= 0, call > REDOUBLE
        seat = self.to_call
        rows = np.flatnonzero(bid)
        strain = (call[rows] - 3) % 5
        unnamed = self.first_namer[rows, seat[rows] % 2, strain] < 0
        self.first_namer[rows[unnamed], seat[rows[unnamed]] % 2, strain[unnamed]] = seat[rows[unnamed]]
        self.last_bid = np.where(bid, call, self.last_bid)
        self.last_bidder = np.where(bid, seat, self.last_bidder).astype(np.int16)
        self.doubled = np.where(bid, 0, np.where(call == DOUBLE, 1, np.where(call == REDOUBLE, 2, self.doubled))).astype(np.int16)
        self.passes = np.where(call == PASS, self.passes + 1, np.where(made, 0, self.passes)).astype(np.int16)
        self.length = self.length + made
        self.calls.append(call)

    def where(self, mask: np.ndarray, other: "AuctionBatch") -> "AuctionBatch":
        """Row i of `other` where mask[i], else row i of this batch (both of one size and dealer):
        a rollout's auctions with some rows replaced by other finished auctions."""
        out = AuctionBatch(self.dealer, len(mask))
        for name in ("length", "last_bid", "last_bidder", "doubled", "passes", "first_namer"):
            mine, theirs = getattr(self, name), getattr(other, name)
            setattr(out, name, np.where(mask.reshape(-1, *[1] * (mine.ndim - 1)), theirs, mine))
        none = np.full(len(mask), -1, np.int16)  # no call: rows of different lengths line up
        steps = max(len(self.calls), len(other.calls))
        padded = [calls + [none] * (steps - len(calls)) for calls in (self.calls, other.calls)]
        out.calls = [np.where(mask, theirs, mine) for mine, theirs in zip(*padded)]
        return out

    def auction(self, row: int) -> list[int]:
        """The calls of one row, in order."""
        return [int(step[row]) for step in self.calls if step[row] >= 0]

    def contracts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(level, strain, doubled, declarer) int64[B] of the finished rows; level 0 = passed out or
        not finished (as AuctionState.contract's None)."""
        played = self.finished & (self.last_bid >= 0)
        strain = np.where(played, (self.last_bid - 3) % 5, 0).astype(np.int64)
        level = np.where(played, (self.last_bid - 3) // 5 + 1, 0).astype(np.int64)
        side = np.maximum(self.last_bidder, 0) % 2
        declarer = np.where(played, self.first_namer[np.arange(len(strain)), side, strain], 0).astype(np.int64)
        return level, strain, np.where(played, self.doubled, 0).astype(np.int64), declarer


def auction_scan(calls: np.ndarray, dealer: np.ndarray) -> dict[str, np.ndarray]:
    """The state before each step of padded auctions (`calls` [B, T], -1 = no call): last bid,
    its bidder's seat, doubled 0/1/2, passes in a row, finished (AuctionBatch, step by step)."""
    batch, steps = calls.shape
    auctions = AuctionBatch(dealer, batch)
    out = {name: np.empty((batch, steps), np.int16) for name in ("last_bid", "last_bidder", "doubled", "passes")}
    for t in range(steps):
        out["last_bid"][:, t], out["last_bidder"][:, t] = auctions.last_bid, auctions.last_bidder
        out["doubled"][:, t], out["passes"][:, t] = auctions.doubled, auctions.passes
        auctions.add(calls[:, t])
    out["finished"] = (out["passes"] >= 4) | ((out["last_bid"] >= 0) & (out["passes"] >= 3))
    return out


def legal_masks(state: dict[str, np.ndarray], seat: np.ndarray) -> np.ndarray:
    """bool[..., 38] legal calls for `seat` in the scanned `state` (any matching leading shape)."""
    last_bid, doubled = state["last_bid"], state["doubled"]
    mask = np.arange(NUM_CALLS) > np.maximum(last_bid, REDOUBLE)[..., None]
    opponents_bid = (state["last_bidder"] - seat) % 2 == 1
    mask[..., PASS] = True
    mask[..., DOUBLE] = (last_bid >= 0) & opponents_bid & (doubled == 0)
    mask[..., REDOUBLE] = (last_bid >= 0) & ~opponents_bid & (doubled == 1)
    mask &= ~state["finished"][..., None]
    return mask


def auction_status(calls: np.ndarray, dealer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(every given call legal [B], auction finished after its calls [B]) for padded `calls`."""
    steps = calls.shape[1]
    state = auction_scan(np.concatenate([calls, np.full((len(calls), 1), -1, calls.dtype)], axis=1), dealer)
    seat = (dealer[:, None] + np.arange(steps + 1)) % 4
    legal = legal_masks(state, seat)[:, :steps]
    made = calls >= 0
    ok = np.take_along_axis(legal, np.where(made, calls, 0)[..., None].astype(np.int64), axis=2)[..., 0]
    length = made.sum(axis=1)
    finished = state["finished"][np.arange(len(calls)), length]
    return (ok | ~made).all(axis=1), finished
