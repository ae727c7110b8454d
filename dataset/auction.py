"""Auction rules: which calls are legal, when an auction ends, and the contract it reaches.

Every parser, the bidder, the models and the search use this one implementation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .encodings import DOUBLE, NUM_CALLS, PASS, REDOUBLE, bid_level, bid_strain, call_name, is_bid


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


@dataclass
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
        return (len(self.calls) >= 4 and self.passes_in_row >= 4) or (self.last_bid >= 0 and self.passes_in_row >= 3)

    def legal_mask(self) -> np.ndarray:
        """bool[38]: the calls legal now (all False once the auction is over)."""
        mask = np.zeros(NUM_CALLS, dtype=bool)
        if self.finished:
            return mask
        mask[PASS] = True
        mask[max(self.last_bid + 1, 3):] = True
        if self.last_bid >= 0:
            opponents_bid = (self.last_bidder - self.to_call) % 2 == 1
            mask[DOUBLE] = opponents_bid and self.doubled == 0
            mask[REDOUBLE] = (not opponents_bid) and self.doubled == 1
        return mask

    def is_legal(self, call: int) -> bool:
        """The same rule as legal_mask, for one call without building the mask (parsers' hot path)."""
        if self.finished or not 0 <= call < NUM_CALLS:
            return False
        if call == PASS:
            return True
        if call >= 3:
            return call > self.last_bid
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
        reason = self.why_illegal(call)
        if reason:
            raise IllegalCall(f"call {len(self.calls) + 1} ({call_name(call) if 0 <= call < NUM_CALLS else call}): {reason}")
        seat = self.to_call
        self.calls.append(call)
        if call == PASS:
            self.passes_in_row += 1
        else:
            self.passes_in_row = 0
            if call == DOUBLE:
                self.doubled = 1
            elif call == REDOUBLE:
                self.doubled = 2
            else:
                self.last_bid, self.last_bidder, self.doubled = call, seat, 0

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
