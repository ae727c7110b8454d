"""A deterministic natural bidder in the spirit of Standard American Yellow Card.

Every call comes from a named rule in a table. A rule declares what its call shows (an HCP range,
minimum and maximum suit lengths, balanced or not) and fires only on hands that fit those
declarations, so the same data serves twice: to bid, and to read the auction. Reading ("inference")
replays each earlier call hand-blind: the call means what the rules of that situation that would
make it declare (all of them together, leaving out "nothing else to say" catch-alls), and that is
recorded for the seat that made it. Later rules use partner's shown range and lengths for
"combined values" decisions. Bidding and reading therefore cannot drift apart.

A seat sees only its own 13 cards, the auction, dealer and vulnerability. Any sequence of legal
calls ends, so the bidder always produces a legal, finished auction: a rule whose call is illegal
is skipped, and when no rule fires the seat passes (rule `fallback_pass`).

Layout: the engine (hands, rules, tables, `Ctx`) and the rules of each phase live in `rule_system/`
(`engine`, `conditions`, `openings`, `responses`, `rebids`, `competition`, `later_rounds`); this
module reads the auction (`_Auction`: which table a seat is in, what each call showed), assembles
the system's tables (`SYSTEM`) and holds the public `RuleBidder`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import DOUBLE, NUM_CALLS, PASS, is_vulnerable, parse_call
from bridgeflow.dataset.encodings import bid_index as _bid
from bridgeflow.dataset.encodings import bid_level as _level
from bridgeflow.dataset.encodings import bid_strain as _strain

from .rule_system.competition import (
    advances_after_1nt_overcall,
    advances_after_overcall,
    advances_after_penalty_x,
    advances_after_takeout,
    overcalls,
    responses_1nt_over_interference,
    responses_over_double,
    responses_over_interference,
)
from .rule_system.engine import (
    DIAMONDS,
    FALLBACK,
    HEARTS,
    MAJORS,
    MAX_HCP,
    NOTRUMP,
    SPADES,
    Ctx,
    Decision,
    Hand,
    Rule,
    RuleTable,
    Shown,
    rule,
)
from .rule_system.later_rounds import generic_rules
from .rule_system.openings import opening_rules
from .rule_system.rebids import opener_rebids, rebids_1nt, rebids_2c, rebids_2nt
from .rule_system.responses import (
    responses_1nt,
    responses_2c,
    responses_2nt,
    responses_major,
    responses_minor,
    responses_weak,
)

# The bidder's public names; the engine's among them are what callers of the bidder meet (its
# decisions, what seats have shown, hands and rules for tables of their own).
__all__ = ["FALLBACK", "Decision", "Hand", "Rule", "RuleBidder", "RuleTable", "Shown", "rule"]


# ---------------------------------------------------------------- reading the auction

def _is_game(call: int) -> bool:
    level, strain = _level(call), _strain(call)
    return level >= (3 if strain == NOTRUMP else 4 if strain >= HEARTS else 5)


def _estimate(lo: int, hi: int) -> int:
    """A working guess of partner's HCP inside the shown range: the middle of a narrow range, at
    most two above the minimum of a wide one."""
    return lo + (min(hi - lo, 4) + 1) // 2


class _Auction:
    """The auction so far plus each seat's shown HCP range and suit lengths. The calls, the last
    bid, doubles, passes, legality and the end are `state`'s (the laws' AuctionState)."""

    __slots__ = ("state", "vulnerable", "opener", "open_idx", "seat_calls", "side_last", "hlo", "hhi", "llo",
                 "lhi", "forcing", "answered", "natural", "stops", "bid_before")

    def __init__(self, dealer: int, vul: int):
        self.state = AuctionState.start(dealer)
        self.vulnerable = [is_vulnerable(vul, seat) for seat in range(4)]
        self.opener, self.open_idx = -1, -1
        self.seat_calls: list[list[tuple[int, int]]] = [[], [], [], []]
        self.side_last = [-1, -1]
        self.hlo, self.hhi = [0] * 4, [MAX_HCP] * 4
        self.llo = [[0] * 4 for _ in range(4)]
        self.lhi = [[13] * 4 for _ in range(4)]
        self.forcing = [False] * 4  # each seat's last call was forcing
        self.answered = [False] * 4  # each seat's last call answered partner's force (it may be weak)
        self.natural = [-1] * 4  # strain of each seat's last natural bid
        self.stops = [(False,) * 4] * 4  # suits of the opponents a seat showed stopped by bidding notrump
        self.bid_before: list[int] = []

    def view(self) -> Ctx:
        """What the seat to call knows now; valid until the next call is pushed."""
        c = Ctx()
        state = self.state
        calls, last_bid = state.calls, state.last_bid
        n = len(calls)
        seat = (state.dealer + n) % 4
        pard, lho, rho = (seat + 2) % 4, (seat + 1) % 4, (seat + 3) % 4
        c.seat, c.position = seat, n + 1
        c.legal = state.is_legal
        c.last_bid, c.doubled = last_bid, state.doubled
        if last_bid >= 0:
            c.last_level, c.last_strain = _level(last_bid), _strain(last_bid)
            c.last_by_us = (state.last_bidder - seat) % 2 == 0
        else:
            c.last_level, c.last_strain, c.last_by_us = 0, -1, False
        c.our_last = self.side_last[seat % 2]
        c.our_game = c.our_last >= 0 and _is_game(c.our_last)
        c.rho_call = calls[-1] if n else -1
        c.we_vul, c.they_vul = self.vulnerable[seat], self.vulnerable[lho]
        c.p_lo, c.p_hi = self.hlo[pard], self.hhi[pard]
        c.p_est = _estimate(c.p_lo, c.p_hi)
        c.p_len = self.llo[pard]
        c.me_len = self.llo[seat]
        c.p_natural = self.natural[pard]
        # For finding a fit: a notrump bidder is assumed to hold two cards in any suit.
        c.p_fit = [max(n, 2) for n in c.p_len] if c.p_natural == NOTRUMP else c.p_len
        c.p_stops = self.stops[pard]
        c.p_forcing = self.forcing[pard]
        c.p_answered = self.answered[pard]
        c.p_last = self.seat_calls[pard][-1][1] if self.seat_calls[pard] else -1
        a, b = self.llo[lho], self.llo[rho]
        c.opp_suits = (a[0] >= 3 or b[0] >= 3, a[1] >= 3 or b[1] >= 3, a[2] >= 3 or b[2] >= 3, a[3] >= 3 or b[3] >= 3)
        c.balancing = state.passes_in_row == 2 and last_bid >= 0
        c.table = self._table(seat)
        c.fit = None
        return c

    def _table(self, seat: int) -> RuleTable:
        """The situation this seat is in, as a rule table."""
        if self.opener < 0:
            return OPENINGS
        pard = (seat + 2) % 4
        oi = self.open_idx
        calls = self.state.calls
        opening = calls[oi]
        acted_since_opening = any(i > oi for i, _ in self.seat_calls[seat])
        if self.opener == pard:
            if acted_since_opening:
                return LATER
            rho = calls[-1]
            kind = "resp" if rho == PASS else "resp_x" if rho == DOUBLE else "resp_over"
            return SYSTEM.get((kind, opening), LATER)
        if self.opener == seat:
            if acted_since_opening:
                return LATER
            return SYSTEM.get(("rebid", opening, calls[oi + 2]), LATER)
        ours = [(i, s, cl) for s in (seat, pard) for i, cl in self.seat_calls[s] if cl != PASS]
        if not ours:
            return OVERCALLS
        first, by, action = min(ours)
        if by == pard and not any(i > first for i, _ in self.seat_calls[seat]):
            if action == DOUBLE:
                kind = "xnt" if _strain(self.bid_before[first]) == NOTRUMP else "x"
            else:
                kind = "nt" if _strain(action) == NOTRUMP else "suit"
            return SYSTEM[("advance", kind)]
        return LATER

    def push(self, call: int, ctx: Ctx) -> None:
        """Record `call` by the seat to act, reading what it shows with the same rules (hand-blind)."""
        seat = ctx.seat
        pard = (seat + 2) % 4
        self.answered[seat] = self.forcing[pard] and ctx.rho_call == PASS
        meanings = ctx.table.reading(ctx, call)
        if meanings:
            # What the call shows: everything any of its meanings allows.
            lo, hi, mins, maxs = meanings[0].shows(ctx)
            forcing = meanings[0].forcing
            for r in meanings[1:]:
                a, b, mn, mx = r.shows(ctx)
                lo, hi, forcing = min(lo, a), max(hi, b), forcing and r.forcing
                mins = [min(u, v) for u, v in zip(mins, mn)]
                maxs = [max(u, v) for u, v in zip(maxs, mx)]
            self._narrow(seat, lo, hi, mins, maxs)
            self.forcing[seat] = forcing
            if call >= 3:
                strain = _strain(call)
                self.natural[seat] = strain if strain == NOTRUMP or mins[strain] >= 3 else -1
                if strain == NOTRUMP:
                    self.stops[seat] = tuple(a or b for a, b in zip(self.stops[seat], ctx.opp_suits))
        else:
            self.forcing[seat] = False
        state = self.state
        self.bid_before.append(state.last_bid)
        self.seat_calls[seat].append((len(state.calls), call))
        state.add(call)
        if call >= 3:
            self.side_last[seat % 2] = call
            if self.opener < 0:
                self.opener, self.open_idx = seat, len(state.calls) - 1

    def _narrow(self, seat: int, lo: int, hi: int, mins: list[int], maxs: list[int]) -> None:
        """Intersect what `seat` has shown with a new call's promise; on a contradiction the newer
        call wins (the earlier reading was the approximate one)."""
        a, b = max(self.hlo[seat], lo), min(self.hhi[seat], hi)
        self.hlo[seat], self.hhi[seat] = (a, b) if a <= b else (lo, hi)
        if mins == _NO_MINS and maxs == _NO_MAXS:
            return
        llo, lhi = self.llo[seat][:], self.lhi[seat][:]
        for s in range(4):
            a, b = max(llo[s], mins[s]), min(lhi[s], maxs[s])
            llo[s], lhi[s] = (a, b) if a <= b else (mins[s], maxs[s])
        self.llo[seat], self.lhi[seat] = llo, lhi


_NO_MINS, _NO_MAXS = [0, 0, 0, 0], [13, 13, 13, 13]


# ---------------------------------------------------------------- the system's tables

LATER = RuleTable("later", generic_rules())
OPENINGS = RuleTable("open", opening_rules())
OVERCALLS = RuleTable("overcall", overcalls())


def _build_system() -> dict[tuple, RuleTable]:
    system: dict[tuple, RuleTable] = {}

    def add(key: tuple, rules: list[Rule] | None, generic: bool = True) -> None:
        if rules is not None:
            system[key] = RuleTable("/".join(map(str, key)), [r for r in rules if r is not None],
                                    LATER if generic else None)

    one_suit = [_bid(1, s) for s in range(4)]
    for opening in one_suit:
        s = _strain(opening)
        add(("resp", opening), responses_major(s) if s >= HEARTS else responses_minor(s), generic=False)
        add(("resp_x", opening), responses_over_double(opening), generic=False)
        add(("resp_over", opening), responses_over_interference(opening))
        for response in range(NUM_CALLS):
            add(("rebid", opening, response), opener_rebids(opening, response))
    nt1, nt2, c2 = parse_call("1NT"), parse_call("2NT"), parse_call("2C")
    add(("resp", nt1), responses_1nt(), generic=False)
    add(("resp_x", nt1), responses_1nt(), generic=False)
    add(("resp_over", nt1), responses_1nt_over_interference())
    for response, rules in rebids_1nt().items():
        add(("rebid", nt1, response), rules)
    add(("resp", nt2), responses_2nt(), generic=False)
    for response, rules in rebids_2nt().items():
        add(("rebid", nt2, response), rules)
    add(("resp", c2), responses_2c(), generic=False)
    for response, rules in rebids_2c().items():
        add(("rebid", c2, response), rules)
    for opening in [_bid(2, s) for s in (DIAMONDS, HEARTS, SPADES)] + [_bid(3, s) for s in range(4)] + \
            [_bid(4, s) for s in MAJORS]:
        add(("resp", opening), responses_weak(opening), generic=False)
    add(("advance", "x"), advances_after_takeout())
    add(("advance", "xnt"), advances_after_penalty_x())
    add(("advance", "suit"), advances_after_overcall())
    add(("advance", "nt"), advances_after_1nt_overcall())
    return system


SYSTEM = _build_system()


# ---------------------------------------------------------------- public API

class RuleBidder:
    """Deterministic SAYC-style bidder; every call is explained by the rule that made it."""

    def explain_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> Decision:
        """The call for the seat to act (dealer + len(auction)) holding `hand` (13 card indices)."""
        reading = _replay(auction, dealer, vul)
        if reading.state.finished:
            raise ValueError("the auction has already ended")
        return _decide(Hand(hand), reading.view())

    def next_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> int:
        return self.explain_call(hand, auction, dealer, vul).call

    def shown(self, auction: Sequence[int], dealer: int, vul: int) -> list[Shown]:
        """What each seat (N, E, S, W) has shown by its calls in `auction`: the partnership
        inference the rules bid with."""
        reading = _replay(auction, dealer, vul)
        return [Shown((reading.hlo[s], reading.hhi[s]), tuple(reading.llo[s]), tuple(reading.lhi[s])) for s in range(4)]

    def bid_deal(self, owner: np.ndarray | Sequence[int], dealer: int, vul: int) -> list[Decision]:
        """Bid all four seats of a deal (int8[52] seat per card) to the end of the auction."""
        cards: list[list[int]] = [[], [], [], []]
        for card, seat in enumerate(np.asarray(owner, dtype=np.int8).tobytes()):
            if seat > 3:
                raise ValueError("bid_deal needs a complete deal: every card owned by a seat 0-3")
            cards[seat].append(card)
        if any(len(c) != 13 for c in cards):
            raise ValueError("bid_deal needs 13 cards per seat")
        hands = [Hand(c) for c in cards]
        reading = _Auction(dealer, vul)
        decisions = []
        while not reading.state.finished:
            ctx = reading.view()
            decision = _decide(hands[ctx.seat], ctx)
            reading.push(decision.call, ctx)
            decisions.append(decision)
        return decisions


def _replay(auction: Sequence[int], dealer: int, vul: int) -> _Auction:
    reading = _Auction(dealer, vul)
    for call in auction:
        if reading.state.finished:
            raise ValueError("calls after the end of the auction")
        ctx = reading.view()
        if not ctx.legal(int(call)):
            raise ValueError(f"illegal call {call} at position {len(reading.state.calls)}")
        reading.push(int(call), ctx)
    return reading


def _decide(hand: Hand, ctx: Ctx) -> Decision:
    r, call = ctx.table.decide(hand, ctx)
    return Decision(call, r.name, r.meaning(ctx, call))
