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

Layout: hand features (`Hand`), rules and tables (`Rule`, `RuleTable`), auction reading
(`_Auction`, `Ctx`), the system (openings, responses, rebids, competition, generic game/slam
placement), and the public `RuleBidder`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from bridgeflow.dataset.encodings import DOUBLE, NUM_CALLS, PASS, REDOUBLE, call_name, is_vulnerable, parse_call
from bridgeflow.dataset.encodings import bid_index as _bid
from bridgeflow.dataset.encodings import bid_level as _level
from bridgeflow.dataset.encodings import bid_strain as _strain

CLUBS, DIAMONDS, HEARTS, SPADES, NOTRUMP = range(5)
MAJORS = (SPADES, HEARTS)
MINORS = (DIAMONDS, CLUBS)
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
LETTERS = "CDHS"
MAX_HCP = 40
_BALANCED_SHAPES = frozenset({(3, 3, 3, 4), (2, 3, 4, 4), (2, 3, 3, 5)})
ONE_NT, TWO_NT, THREE_NT = parse_call("1NT"), parse_call("2NT"), parse_call("3NT")


def _is_game(call: int) -> bool:
    level, strain = _level(call), _strain(call)
    return level >= (3 if strain == NOTRUMP else 4 if strain >= HEARTS else 5)


# ---------------------------------------------------------------- hand features

class Hand:
    """Features of one 13-card hand, computed once so that rules only compare numbers."""

    __slots__ = ("hcp", "len", "bal", "stop", "good", "top3", "longest", "open_suit", "shortest")

    def __init__(self, cards: Sequence[int]):
        lens = [0, 0, 0, 0]
        honors = [0, 0, 0, 0]  # bit 4 = A, 3 = K, 2 = Q, 1 = J, 0 = T
        hcp = 0
        for card in cards:
            suit, points, bit = _CARD_FEATURES[card]
            lens[suit] += 1
            honors[suit] |= bit
            hcp += points
        self.hcp = hcp
        self.len = lens
        self.bal = tuple(sorted(lens)) in _BALANCED_SHAPES
        # A stopper: A, Kx, Qxx or Jxxx.
        self.stop = [h & 16 > 0 or (h & 8 > 0 and n >= 2) or (h & 4 > 0 and n >= 3) or (h & 2 > 0 and n >= 4)
                     for h, n in zip(honors, lens)]
        self.top3 = [_BITS[h & 28] for h in honors]
        # A good suit for preempts and overcalls: two of the top three or three of the top five honours.
        self.good = [t >= 2 or _BITS[h] >= 3 for t, h in zip(self.top3, honors)]
        longest = 3
        for s in (2, 1, 0):
            if lens[s] > lens[longest]:
                longest = s
        self.longest = longest  # the higher of equal lengths
        self.shortest = min(lens)
        self.open_suit = _opening_suit(lens)


# Per card index: (suit, HCP, honour bit); and the number of set bits of 0..31.
_CARD_FEATURES = tuple((card // 13, max(card % 13 - 8, 0), 1 << (card % 13 - 8) if card % 13 >= 8 else 0)
                       for card in range(52))
_BITS = tuple(bin(v).count("1") for v in range(32))


def _opening_suit(lens: list[int]) -> int:
    """SAYC suit for a one-level opening: a 5+ major unless a minor is longer, else the longer minor
    (1D with 4-4, 1C with 3-3); the higher of two equal 5+ suits."""
    major = SPADES if lens[SPADES] >= lens[HEARTS] else HEARTS
    minor = DIAMONDS if lens[DIAMONDS] > lens[CLUBS] or (lens[DIAMONDS] == lens[CLUBS] >= 4) else CLUBS
    if lens[major] >= 5 and lens[major] >= lens[minor]:
        return major
    return minor


# ---------------------------------------------------------------- rules and tables

ShowsFn = Callable[["Ctx"], tuple]


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    """One named bidding rule. `call`, `hcp` and `lens` are constants or hand-blind functions of the
    context (a call function returns a bid, or -1 for "not available here"); `guard` tests the
    auction only, `when` adds hand tests that the call does not promise. `hcp`, `lens`, `maxlens`
    and `bal` are both the condition and what the call shows. A `catchall` rule ("nothing else to
    say") makes a call without giving it its meaning."""

    name: str
    call: int | Callable[["Ctx"], int]
    note: str
    hcp: tuple[int, int] | ShowsFn
    lens: tuple[int, int, int, int] | ShowsFn
    maxlens: tuple[int, int, int, int] | ShowsFn | None
    bal: bool
    when: Callable[[Hand, "Ctx"], bool] | None
    guard: Callable[["Ctx"], bool] | None
    forcing: bool
    catchall: bool

    def fires(self, hand: Hand, ctx: "Ctx") -> int:
        """The call this rule makes for `hand` here, or -1. Fixed ranges are tested first: they
        are the cheapest way to reject most rules."""
        hcp, need, have = self.hcp, self.lens, hand.len
        if type(hcp) is tuple and not hcp[0] <= hand.hcp <= hcp[1]:
            return -1
        if type(need) is tuple and (need[0] > have[0] or need[1] > have[1] or need[2] > have[2] or need[3] > have[3]):
            return -1
        if self.bal and not hand.bal:
            return -1
        if self.guard is not None and not self.guard(ctx):
            return -1
        call = self.call if type(self.call) is int else self.call(ctx)
        if call < 0 or not ctx.legal(call):
            return -1
        if type(hcp) is not tuple:
            lo, hi = hcp(ctx)
            if not lo <= hand.hcp <= hi:
                return -1
        if type(need) is not tuple:
            need = need(ctx)
            if need[0] > have[0] or need[1] > have[1] or need[2] > have[2] or need[3] > have[3]:
                return -1
        if self.maxlens is not None:
            top = self.maxlens if type(self.maxlens) is tuple else self.maxlens(ctx)
            if top[0] < have[0] or top[1] < have[1] or top[2] < have[2] or top[3] < have[3]:
                return -1
        if self.when is not None and not self.when(hand, ctx):
            return -1
        return call

    def shows(self, ctx: "Ctx") -> tuple[int, int, list[int], list[int]]:
        """(hcp lo, hcp hi, min lengths, max lengths) promised by this rule's call here."""
        lo, hi = self.hcp if type(self.hcp) is tuple else self.hcp(ctx)
        mins = list(self.lens if type(self.lens) is tuple else self.lens(ctx))
        if self.maxlens is None:
            maxs = [13, 13, 13, 13]
        else:
            maxs = list(self.maxlens if type(self.maxlens) is tuple else self.maxlens(ctx))
        if self.bal:
            mins = [max(m, 2) for m in mins]
            maxs = [min(m, 5) for m in maxs]
        lo = max(lo, 0)
        return lo, max(min(hi, MAX_HCP), lo), mins, maxs

    def meaning(self, ctx: "Ctx", call: int) -> str:
        """'1H: 12-21 HCP, 5+ hearts': what the call shows here, then the rule's note."""
        fixed = type(self.hcp) is tuple and type(self.lens) is tuple and type(self.maxlens) is not _FUNCTION
        if fixed and (self, call) in _MEANINGS:
            return _MEANINGS[self, call]
        lo, hi, mins, maxs = self.shows(ctx)
        parts = []
        if hi < MAX_HCP or lo > 0:
            parts.append(f"{lo}+ HCP" if hi >= MAX_HCP else f"{lo}-{hi} HCP")
        implied_min, implied_max = (2, 5) if self.bal else (0, 13)
        parts += [f"{mins[s]}+ {SUIT_WORDS[s]}" for s in (3, 2, 1, 0) if mins[s] > implied_min]
        parts += [f"at most {maxs[s]} {SUIT_WORDS[s]}" for s in (3, 2, 1, 0) if maxs[s] < implied_max]
        if self.bal:
            parts.append("balanced")
        if self.note:
            parts.append(self.note)
        text = f"{_call_word(call)}: {', '.join(parts) if parts else 'no particular values'}"
        if fixed:
            _MEANINGS[self, call] = text
        return text


_FUNCTION = type(lambda: 0)
_MEANINGS: dict[tuple[Rule, int], str] = {}  # meanings of rules whose declarations do not depend on the auction


def _call_word(call: int) -> str:
    return ("Pass", "Double", "Redouble")[call] if call < 3 else call_name(call)


def rule(name: str, call, note: str = "", *, hcp=(0, MAX_HCP), C=0, D=0, H=0, S=0, lens=None, maxlens=None,
         bal=False, when=None, guard=None, forcing=False, catchall=False) -> Rule:
    """Rule builder: calls as text ('1NT', 'P', 'X'), minimum lengths as C=, D=, H=, S= or `lens`."""
    if isinstance(call, str):
        call = parse_call(call)
    return Rule(name, call, note, hcp, lens if lens is not None else (C, D, H, S), maxlens, bal, when, guard, forcing,
                catchall)


@dataclass(frozen=True, slots=True)
class Gate:
    """A shortcut over a run of rules: `test(hand, ctx)` is implied by each rule's own conditions,
    so skipping the run when it fails changes no decision, it only saves time."""

    test: Callable[[Hand, "Ctx"], bool]
    rules: tuple[Rule, ...]


def _first(rules, hand: Hand, ctx: "Ctx") -> tuple[Rule | None, int]:
    for r in rules:
        if type(r) is Gate:
            if r.test(hand, ctx):
                found, call = _first(r.rules, hand, ctx)
                if found is not None:
                    return found, call
            continue
        call = r.fires(hand, ctx)
        if call >= 0:
            return r, call
    return None, -1


class RuleTable:
    """The ordered rules (and gated runs of rules) for one situation, optionally followed by the
    generic later-round rules."""

    def __init__(self, name: str, items: list[Rule | Gate], generic: "RuleTable | None" = None):
        self.name = name
        self.rules = [r for item in items for r in (item.rules if type(item) is Gate else (item,))]
        self.generic = generic
        # For deciding: what a hand of each HCP count can fire (fixed ranges filtered out early).
        fits = lambda r, hcp: type(r.hcp) is not tuple or r.hcp[0] <= hcp <= r.hcp[1]  # noqa: E731
        self.by_hcp = []
        for hcp in range(MAX_HCP + 1):
            items_here = []
            for item in items:
                if type(item) is Gate:
                    kept = tuple(r for r in item.rules if fits(r, hcp))
                    if kept:
                        items_here.append(Gate(item.test, kept))
                elif fits(item, hcp):
                    items_here.append(item)
            self.by_hcp.append(items_here)
        # For reading: rules with a fixed call indexed by call; the others are always bids.
        self.by_call: dict[int, list[Rule]] = {}
        self.dynamic: list[Rule] = []
        for r in self.rules:
            if type(r.call) is int:
                self.by_call.setdefault(r.call, []).append(r)
            else:
                self.dynamic.append(r)

    def decide(self, hand: Hand, ctx: "Ctx") -> tuple[Rule, int]:
        found, call = _first(self.by_hcp[hand.hcp], hand, ctx)
        if found is not None:
            return found, call
        if self.generic is not None:
            return self.generic.decide(hand, ctx)
        return FALLBACK, PASS

    def reading(self, ctx: "Ctx", call: int) -> list[Rule]:
        """What `call` can mean here, hand-blind: the rules of this table that would make it (the
        generic ones only if none does), leaving out catch-alls unless nothing else makes it."""
        found = [r for r in self.by_call.get(call, ()) if r.guard is None or r.guard(ctx)]
        if call >= 3:
            found += [r for r in self.dynamic if (r.guard is None or r.guard(ctx)) and r.call(ctx) == call]
        if not found and self.generic is not None:
            return self.generic.reading(ctx, call)
        return [r for r in found if not r.catchall] or found


FALLBACK = rule("fallback_pass", "P", "no rule applies")


@dataclass(frozen=True, slots=True)
class Decision:
    call: int
    rule: str  # the rule's name, e.g. "open_1h"
    meaning: str  # e.g. "1H: 12-21 HCP, 5+ hearts"


@dataclass(frozen=True, slots=True)
class Shown:
    """What a seat's calls have shown so far, as read by the rules."""

    hcp: tuple[int, int]
    min_len: tuple[int, int, int, int]  # C, D, H, S
    max_len: tuple[int, int, int, int]


# ---------------------------------------------------------------- reading the auction

class Ctx:
    """What the seat to call knows before its hand: the auction and what everyone has shown."""

    __slots__ = ("seat", "position", "last_bid", "last_level", "last_strain", "last_by_us", "doubled", "our_last",
                 "our_game", "rho_call", "we_vul", "they_vul", "p_lo", "p_hi", "p_est", "p_len", "p_fit", "p_forcing",
                 "p_answered", "p_natural", "p_last", "p_stops", "me_len", "opp_suits", "balancing", "table", "fit")

    def legal(self, call: int) -> bool:
        if call == PASS:
            return True
        if call == DOUBLE:
            return self.last_bid >= 0 and not self.last_by_us and self.doubled == 0
        if call == REDOUBLE:
            return self.last_bid >= 0 and self.last_by_us and self.doubled == 1
        return self.last_bid < call < NUM_CALLS


def _estimate(lo: int, hi: int) -> int:
    """A working guess of partner's HCP inside the shown range: the middle of a narrow range, at
    most two above the minimum of a wide one."""
    return lo + (min(hi - lo, 4) + 1) // 2


class _Auction:
    """The auction so far plus each seat's shown HCP range and suit lengths."""

    __slots__ = ("dealer", "vul", "vulnerable", "calls", "last_bid", "last_bidder", "doubled", "passes", "opener", "open_idx",
                 "seat_calls", "side_last", "hlo", "hhi", "llo", "lhi", "forcing", "answered", "natural", "stops",
                 "bid_before")

    def __init__(self, dealer: int, vul: int):
        self.dealer, self.vul = dealer, vul
        self.vulnerable = [is_vulnerable(vul, seat) for seat in range(4)]
        self.calls: list[int] = []
        self.last_bid, self.last_bidder, self.doubled, self.passes = -1, -1, 0, 0
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

    @property
    def finished(self) -> bool:
        return (self.passes >= 4) or (self.last_bid >= 0 and self.passes >= 3)

    def view(self) -> Ctx:
        c = Ctx()
        n = len(self.calls)
        seat = (self.dealer + n) % 4
        pard, lho, rho = (seat + 2) % 4, (seat + 1) % 4, (seat + 3) % 4
        c.seat, c.position = seat, n + 1
        c.last_bid, c.doubled = self.last_bid, self.doubled
        if self.last_bid >= 0:
            c.last_level, c.last_strain = _level(self.last_bid), _strain(self.last_bid)
            c.last_by_us = (self.last_bidder - seat) % 2 == 0
        else:
            c.last_level, c.last_strain, c.last_by_us = 0, -1, False
        c.our_last = self.side_last[seat % 2]
        c.our_game = c.our_last >= 0 and _is_game(c.our_last)
        c.rho_call = self.calls[-1] if n else -1
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
        c.balancing = self.passes == 2 and self.last_bid >= 0
        c.table = self._table(seat)
        c.fit = None
        return c

    def _table(self, seat: int) -> RuleTable:
        """The situation this seat is in, as a rule table."""
        if self.opener < 0:
            return OPENINGS
        pard = (seat + 2) % 4
        oi = self.open_idx
        opening = self.calls[oi]
        acted_since_opening = any(i > oi for i, _ in self.seat_calls[seat])
        if self.opener == pard:
            if acted_since_opening:
                return LATER
            rho = self.calls[-1]
            kind = "resp" if rho == PASS else "resp_x" if rho == DOUBLE else "resp_over"
            return SYSTEM.get((kind, opening), LATER)
        if self.opener == seat:
            if acted_since_opening:
                return LATER
            return SYSTEM.get(("rebid", opening, self.calls[oi + 2]), LATER)
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
        self.bid_before.append(self.last_bid)
        self.seat_calls[seat].append((len(self.calls), call))
        self.calls.append(call)
        if call == PASS:
            self.passes += 1
            return
        self.passes = 0
        if call == DOUBLE:
            self.doubled = 1
        elif call == REDOUBLE:
            self.doubled = 2
        else:
            self.last_bid, self.last_bidder, self.doubled = call, seat, 0
            self.side_last[seat % 2] = call
            if self.opener < 0:
                self.opener, self.open_idx = seat, len(self.calls) - 1

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


# ---------------------------------------------------------------- conditions shared by rules

def _cheapest(ctx: Ctx, strain: int) -> int:
    """The cheapest legal bid in `strain`, -1 above 7NT."""
    k = max(ctx.last_bid + 1, 3)
    call = k + (strain - (k - 3)) % 5
    return call if call < NUM_CALLS else -1


def _cheapest_at(strain: int, max_level: int, min_level: int = 1, jump: int = 0):
    """Call function: cheapest bid in `strain` (plus `jump` levels) if its level is in range."""
    def call(ctx: Ctx) -> int:
        c = _cheapest(ctx, strain)
        if c < 0:
            return -1
        c += 5 * jump
        return c if c < NUM_CALLS and min_level <= _level(c) <= max_level else -1
    return call


def _need(strain: int, n: int) -> tuple[int, int, int, int]:
    lens = [0, 0, 0, 0]
    lens[strain] = n
    return tuple(lens)


def _at_most(strain: int, n: int) -> tuple[int, int, int, int]:
    lens = [13, 13, 13, 13]
    lens[strain] = n
    return tuple(lens)


def _best_fit(hand: Hand, ctx: Ctx) -> int:
    """Our side's best known trump fit (8+ cards together, or a 7-card suit), majors first; -1 if none."""
    if ctx.fit is None:
        best, total = -1, 0
        for group in (MAJORS, MINORS):
            for s in group:
                t = hand.len[s] + ctx.p_fit[s]
                if (t >= 8 or hand.len[s] >= 7) and t > total:
                    best, total = s, t
            if best >= 0:
                break
        ctx.fit = best
    return ctx.fit


def _best_strain(hand: Hand, ctx: Ctx) -> int:
    fit = _best_fit(hand, ctx)
    return fit if fit >= 0 else NOTRUMP


def _stopped(hand: Hand, ctx: Ctx) -> bool:
    """Every suit the opponents have shown is stopped, in this hand or by partner's notrump."""
    return all(hand.stop[s] or ctx.p_stops[s] for s in range(4) if ctx.opp_suits[s])


def _fit_lens(strain: int):
    """Shows: enough cards in `strain` for an 8-card fit with what partner has shown."""
    return lambda ctx: _need(strain, min(max(8 - ctx.p_fit[strain], 0), 7))


def _combined(total: int):
    """Shows: enough HCP for `total` together with partner's estimated values."""
    return lambda ctx: (max(total - ctx.p_est, 0), MAX_HCP)


def _unbid_suits(ctx: Ctx) -> list[int]:
    return [s for s in range(4) if not ctx.opp_suits[s]]


def _best_unbid(hand: Hand, ctx: Ctx) -> int:
    """Advancer's suit: a 4+ major the opponents have not shown, else the longest unshown suit."""
    unbid = _unbid_suits(ctx)
    majors = [s for s in MAJORS if s in unbid and hand.len[s] >= 4]
    if majors:
        return max(majors, key=lambda s: (hand.len[s], s))
    return max(unbid, key=lambda s: (hand.len[s], s))


def _short_in_theirs(hand: Hand, ctx: Ctx) -> bool:
    """Takeout shape: at most two cards in each suit the opponents showed, three in each unbid major,
    two in each unbid minor."""
    for s in range(4):
        if ctx.opp_suits[s] or s == ctx.last_strain:
            if hand.len[s] > 2:
                return False
        elif hand.len[s] < (3 if s >= HEARTS else 2):
            return False
    return True


def _takeout_lens(ctx: Ctx) -> tuple[int, int, int, int]:
    return tuple(3 if s >= HEARTS and not ctx.opp_suits[s] and s != ctx.last_strain else 0 for s in range(4))


def _takeout_max(ctx: Ctx) -> tuple[int, int, int, int]:
    return tuple(2 if ctx.opp_suits[s] or s == ctx.last_strain else 13 for s in range(4))


def _their_bid(ctx: Ctx) -> bool:
    return ctx.last_bid >= 0 and not ctx.last_by_us


def _is(strain_fn, strain: int):
    return lambda hand, ctx: strain_fn(hand, ctx) == strain


# ---------------------------------------------------------------- openings

def _rule_of_20(hand: Hand, ctx: Ctx) -> bool:
    a, b = sorted(hand.len)[2:]
    return hand.hcp + a + b >= 20


def _no_side_major(suit: int):
    return lambda hand, ctx: all(hand.len[m] < 4 for m in MAJORS if m != suit)


def _opening_rules() -> list[Rule]:
    early = lambda ctx: ctx.position <= 3  # noqa: E731 - weak openings are pointless in fourth seat
    rules = [
        rule("open_pass_4th", "P", "fourth seat, rule of 15 fails: pass the board out",
             guard=lambda ctx: ctx.position == 4, when=lambda h, ctx: h.hcp + h.len[SPADES] < 15),
        rule("open_2c", "2C", "strong, artificial, forcing", hcp=(22, MAX_HCP), forcing=True),
        rule("open_2nt", "2NT", hcp=(20, 21), bal=True),
        rule("open_1nt", "1NT", hcp=(15, 17), bal=True),
    ]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"open_1{LETTERS[s].lower()}", _bid(1, s), "longest suit" if s < HEARTS else "",
                          hcp=(12, 21), lens=_need(s, 5 if s >= HEARTS else 3), when=_is(lambda h, c: h.open_suit, s)))
    for s in (SPADES, HEARTS):
        rules.append(rule(f"open_4{LETTERS[s].lower()}", _bid(4, s), "preempt, good suit", hcp=(5, 11),
                          lens=_need(s, 8), guard=early, when=lambda h, c, s=s: h.good[s]))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"open_3{LETTERS[s].lower()}", _bid(3, s), "preempt, good suit", hcp=(5, 10),
                          lens=_need(s, 7), guard=early, when=lambda h, c, s=s: h.good[s]))
    for s in (SPADES, HEARTS, DIAMONDS):
        rules.append(rule(f"open_2{LETTERS[s].lower()}", _bid(2, s), "weak two, good suit, no side 4-card major",
                          hcp=(5, 11), lens=_need(s, 6), maxlens=_at_most(s, 6), guard=early,
                          when=lambda h, c, s=s: h.good[s] and _no_side_major(s)(h, c)))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"open_1{LETTERS[s].lower()}_light", _bid(1, s), "light opening, rule of 20",
                          hcp=(10, 11), lens=_need(s, 5 if s >= HEARTS else 3),
                          when=lambda h, c, s=s: h.open_suit == s and _rule_of_20(h, c)))
    rules.append(rule("open_pass", "P", hcp=(0, 11)))
    return rules


# ---------------------------------------------------------------- responses to one of a suit

def _up_the_line_hearts(hand: Hand, ctx: Ctx) -> bool:
    """Respond 1H rather than 1S with 4-4, or with longer hearts."""
    return hand.len[SPADES] < 5 or hand.len[HEARTS] > hand.len[SPADES]


def _longer_minor(minor: int):
    other = CLUBS if minor == DIAMONDS else DIAMONDS
    tie_wins = minor == CLUBS  # with equal minors, up the line
    return lambda hand, ctx: hand.len[minor] > hand.len[other] or (hand.len[minor] == hand.len[other] and tie_wins)


def _has_shortness(hand: Hand, ctx: Ctx) -> bool:
    return hand.shortest <= 1


def _responses_major(major: int) -> list[Rule]:
    m = LETTERS[major]
    fit3, fit4, fit5 = _need(major, 3), _need(major, 4), _need(major, 5)
    no_fit = _at_most(major, 2)
    rules = [
        rule(f"r1{m}_jacoby_2nt", "2NT", "Jacoby: game-forcing raise", hcp=(13, MAX_HCP), lens=fit4, forcing=True),
        rule(f"r1{m}_4{m}", _bid(4, major), "preemptive raise, shortness", hcp=(0, 9), lens=fit5, when=_has_shortness),
        rule(f"r1{m}_limit_raise", _bid(3, major), "limit raise", hcp=(10, 12), lens=fit3),
        rule(f"r1{m}_raise", _bid(2, major), "single raise", hcp=(6, 10), lens=fit3),
    ]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if s != major:
            level = 2 if s > major else 3
            rules.append(rule(f"r1{m}_jump_shift_{LETTERS[s]}", _bid(level, s), "strong jump shift",
                              hcp=(19, MAX_HCP), lens=_need(s, 5), forcing=True))
    if major == HEARTS:
        rules.append(rule("r1H_1S", "1S", "new suit, forcing", hcp=(6, MAX_HCP), S=4, forcing=True))
    rules.append(rule(f"r1{m}_3nt", "3NT", hcp=(15, 17), bal=True, maxlens=no_fit))
    if major == SPADES:
        rules.append(rule("r1S_2H", "2H", "two over one, forcing", hcp=(10, MAX_HCP), H=5, forcing=True))
    for s in MINORS:
        rules.append(rule(f"r1{m}_2{LETTERS[s]}", _bid(2, s), "two over one, forcing", hcp=(10, MAX_HCP),
                          lens=_need(s, 4), when=_longer_minor(s), forcing=True))
    rules.append(rule(f"r1{m}_1nt", "1NT", "non-forcing", hcp=(6, 10)))
    for s in (CLUBS, DIAMONDS):
        rules.append(rule(f"r1{m}_2{LETTERS[s]}_3", _bid(2, s), "two over one on a 3-card minor, forcing",
                          hcp=(10, MAX_HCP), lens=_need(s, 3), forcing=True))
    rules.append(rule(f"r1{m}_pass", "P", hcp=(0, 5)))
    return rules


def _responses_minor(minor: int) -> list[Rule]:
    m = LETTERS[minor]
    no_major = (13, 13, 3, 3)
    rules = [rule(f"r1{m}_jump_shift_{LETTERS[s]}", _bid(2, s), "strong jump shift", hcp=(19, MAX_HCP),
                  lens=_need(s, 5), forcing=True) for s in MAJORS]
    rules += [
        rule(f"r1{m}_1H", "1H", "new suit, forcing", hcp=(6, MAX_HCP), H=4, when=_up_the_line_hearts, forcing=True),
        rule(f"r1{m}_1S", "1S", "new suit, forcing", hcp=(6, MAX_HCP), S=4, forcing=True),
    ]
    if minor == CLUBS:
        rules.append(rule("r1C_1D", "1D", "new suit, forcing", hcp=(6, MAX_HCP), D=4, maxlens=no_major, forcing=True))
    rules += [
        rule(f"r1{m}_2nt", "2NT", "forcing", hcp=(13, 15), bal=True, maxlens=no_major, forcing=True),
        rule(f"r1{m}_3nt", "3NT", hcp=(16, 17), bal=True, maxlens=no_major),
        rule(f"r1{m}_limit_raise", _bid(3, minor), "limit raise", hcp=(10, 12), lens=_need(minor, 4), maxlens=no_major),
        rule(f"r1{m}_raise", _bid(2, minor), "single raise", hcp=(6, 10), lens=_need(minor, 5 if minor == CLUBS else 4),
             maxlens=no_major),
        rule(f"r1{m}_1nt", "1NT", "no 4-card major", hcp=(6, 10), maxlens=no_major),
    ]
    if minor == DIAMONDS:
        rules.append(rule("r1D_2C", "2C", "new suit, forcing", hcp=(10, MAX_HCP), C=4, forcing=True))
    rules.append(rule(f"r1{m}_pass", "P", hcp=(0, 5)))
    return rules


# ---------------------------------------------------------------- notrump openings and responses

def _transfer_to(major: int):
    other = HEARTS if major == SPADES else SPADES
    if major == SPADES:
        return lambda hand, ctx: hand.len[SPADES] >= hand.len[other]
    return lambda hand, ctx: hand.len[HEARTS] > hand.len[other]


def _has_4_major(hand: Hand, ctx: Ctx) -> bool:
    return hand.len[HEARTS] >= 4 or hand.len[SPADES] >= 4


def _responses_1nt() -> list[Rule]:
    return [
        rule("r1NT_2D_transfer", "2D", "Jacoby transfer to hearts", H=5, when=_transfer_to(HEARTS), forcing=True),
        rule("r1NT_2H_transfer", "2H", "Jacoby transfer to spades", S=5, when=_transfer_to(SPADES), forcing=True),
        rule("r1NT_2C_stayman", "2C", "Stayman, asks for a 4-card major", hcp=(8, MAX_HCP), when=_has_4_major,
             forcing=True),
        rule("r1NT_7NT", "7NT", hcp=(22, MAX_HCP)),
        rule("r1NT_6NT", "6NT", hcp=(18, 21)),
        rule("r1NT_4NT", "4NT", "quantitative slam invitation", hcp=(16, 17)),
        rule("r1NT_3NT", "3NT", hcp=(10, 15)),
        rule("r1NT_2NT", "2NT", "invitational", hcp=(8, 9)),
        rule("r1NT_pass", "P", hcp=(0, 7)),
    ]


def _rebids_1nt() -> dict[int, list[Rule]]:
    return {
        parse_call("2C"): [
            rule("rb1NT_stayman_2H", "2H", "Stayman reply", H=4),
            rule("rb1NT_stayman_2S", "2S", "Stayman reply", S=4),
            rule("rb1NT_stayman_2D", "2D", "Stayman reply: no 4-card major", maxlens=(13, 13, 3, 3)),
        ],
        parse_call("2D"): [rule("rb1NT_complete_2H", "2H", "completes the transfer")],
        parse_call("2H"): [rule("rb1NT_complete_2S", "2S", "completes the transfer")],
        parse_call("2NT"): [rule("rb1NT_accept_3NT", "3NT", "accepts the invitation", hcp=(16, 17)),
                            rule("rb1NT_decline", "P", hcp=(15, 15))],
        parse_call("4NT"): [rule("rb1NT_accept_6NT", "6NT", "accepts the slam invitation", hcp=(16, 17)),
                            rule("rb1NT_decline_slam", "P", hcp=(15, 15))],
    }


def _responses_2nt() -> list[Rule]:
    return [
        rule("r2NT_3D_transfer", "3D", "transfer to hearts", H=5, when=_transfer_to(HEARTS), forcing=True),
        rule("r2NT_3H_transfer", "3H", "transfer to spades", S=5, when=_transfer_to(SPADES), forcing=True),
        rule("r2NT_3C_stayman", "3C", "Stayman", hcp=(4, MAX_HCP), when=_has_4_major, forcing=True),
        rule("r2NT_7NT", "7NT", hcp=(17, MAX_HCP)),
        rule("r2NT_6NT", "6NT", hcp=(13, 16)),
        rule("r2NT_4NT", "4NT", "quantitative slam invitation", hcp=(11, 12)),
        rule("r2NT_3NT", "3NT", hcp=(4, 10)),
        rule("r2NT_pass", "P", hcp=(0, 3)),
    ]


def _rebids_2nt() -> dict[int, list[Rule]]:
    return {
        parse_call("3C"): [
            rule("rb2NT_stayman_3H", "3H", "Stayman reply", H=4),
            rule("rb2NT_stayman_3S", "3S", "Stayman reply", S=4),
            rule("rb2NT_stayman_3D", "3D", "Stayman reply: no 4-card major", maxlens=(13, 13, 3, 3)),
        ],
        parse_call("3D"): [rule("rb2NT_complete_3H", "3H", "completes the transfer")],
        parse_call("3H"): [rule("rb2NT_complete_3S", "3S", "completes the transfer")],
        parse_call("4NT"): [rule("rb2NT_accept_6NT", "6NT", hcp=(21, 21)), rule("rb2NT_decline", "P", hcp=(20, 20))],
    }


# ---------------------------------------------------------------- strong 2C, weak twos, preempts

def _responses_2c() -> list[Rule]:
    rules = [rule(f"r2C_positive_{LETTERS[s]}", _bid(3 if s < HEARTS else 2, s), "positive response, good suit",
                  hcp=(8, MAX_HCP), lens=_need(s, 5), when=lambda h, c, s=s: h.good[s], forcing=True)
             for s in (SPADES, HEARTS, DIAMONDS, CLUBS)]
    rules.append(rule("r2C_positive_2NT", "2NT", "positive response", hcp=(8, MAX_HCP), bal=True, forcing=True))
    rules.append(rule("r2C_2D_waiting", "2D", "waiting, artificial", forcing=True))
    return rules


def _rebids_2c() -> dict[int, list[Rule]]:
    after_2d = [
        rule("rb2C_2NT", "2NT", hcp=(22, 24), bal=True),
        rule("rb2C_3NT", "3NT", hcp=(25, 27), bal=True),
    ]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        after_2d.append(rule(f"rb2C_{LETTERS[s]}", _bid(2 if s >= HEARTS else 3, s), "natural, forcing",
                             lens=_need(s, 5), when=_is(lambda h, c: h.longest, s), forcing=True))
    after_2d.append(rule("rb2C_2NT_other", "2NT", "strong, no 5-card suit", forcing=True, catchall=True))
    return {parse_call("2D"): after_2d}


def _responses_weak(opening: int) -> list[Rule]:
    s, level = _strain(opening), _level(opening)
    x = LETTERS[s]
    game = _bid(4, s) if s >= HEARTS else _bid(5, s)
    rules = []
    if level < 4:
        if s >= HEARTS:
            rules.append(rule(f"rw{level}{x}_game", game, "game raise", hcp=(15, MAX_HCP), lens=_need(s, 2)))
            rules.append(rule(f"rw{level}{x}_preempt_game", game, "preemptive raise to game", hcp=(0, 14),
                              lens=_need(s, 4), guard=lambda ctx: not ctx.we_vul or ctx.they_vul))
        rules.append(rule(f"rw{level}{x}_3NT", "3NT", "to play, no short suit", hcp=(16, MAX_HCP), lens=_need(s, 1),
                          when=lambda h, c: h.shortest >= 2))
        if s < HEARTS:
            rules.append(rule(f"rw{level}{x}_game", game, "game raise", hcp=(16, MAX_HCP), lens=_need(s, 3)))
        if level == 2:
            rules.append(rule(f"rw2{x}_raise", _bid(3, s), "preemptive raise, not invitational", hcp=(0, 14),
                              lens=_need(s, 3)))
            for t in (SPADES, HEARTS, DIAMONDS, CLUBS):
                if t != s:
                    rules.append(rule(f"rw2{x}_new_{LETTERS[t]}", _cheapest_at(t, 3), "new suit, forcing",
                                      hcp=(16, MAX_HCP), lens=_need(t, 5), forcing=True))
    rules.append(rule(f"rw{level}{x}_pass", "P"))
    return rules


# ---------------------------------------------------------------- opener's rebid

def _ours_last(ctx: Ctx) -> bool:
    """Opener's passes hold while our side has the last bid; over an intervention the generic
    competitive rules decide."""
    return ctx.last_by_us


def _opener_rebids(opening: int, response: int) -> list[Rule] | None:
    """Rebids by a one-of-a-suit opener after partner's first call (None: generic rules only)."""
    x = _strain(opening)
    xl = LETTERS[x]
    if response == PASS:
        return _reopening(x)
    if response == DOUBLE:
        return _after_negative_double(x)
    if response < 3:
        return None
    y, yl = _strain(response), _level(response)
    tag = f"rb1{xl}_{call_name(response)}"
    if y == x:
        # Over a raise the opener places the contract; over an intervention the raise may have been
        # competitive, so the generic rules decide.
        u = _ours_last
        if yl == 2 and x >= HEARTS:
            return [rule(f"{tag}_game", _bid(4, x), hcp=(19, MAX_HCP), guard=u),
                    rule(f"{tag}_invite", _bid(3, x), "invitational", hcp=(16, 18), guard=u),
                    rule(f"{tag}_pass", "P", hcp=(12, 15), guard=u)]
        if yl == 2:
            return [rule(f"{tag}_3NT", "3NT", hcp=(18, MAX_HCP), guard=u),
                    rule(f"{tag}_pass", "P", hcp=(12, 17), guard=u)]
        if yl == 3 and x >= HEARTS:
            return [rule(f"{tag}_accept", _bid(4, x), hcp=(14, MAX_HCP), guard=u),
                    rule(f"{tag}_pass", "P", hcp=(12, 13), guard=u)]
        if yl == 3:
            return [rule(f"{tag}_3NT", "3NT", hcp=(14, MAX_HCP), guard=u, when=lambda h, c: h.bal or h.shortest >= 2),
                    rule(f"{tag}_5{xl}", _bid(5, x), hcp=(15, MAX_HCP), guard=u),
                    rule(f"{tag}_pass", "P", hcp=(12, 14), guard=u)]
        return [rule(f"{tag}_pass", "P", guard=u)]
    if y == NOTRUMP:
        if yl == 1:
            return _rebids_after_1nt(x, tag)
        if yl == 2 and x >= HEARTS:
            return [rule(f"{tag}_3{xl}", _bid(3, x), "extra values, slam interest", hcp=(18, MAX_HCP)),
                    rule(f"{tag}_3NT", "3NT", hcp=(15, 17)),
                    rule(f"{tag}_4{xl}", _bid(4, x), "minimum", hcp=(12, 14))]
        if yl == 2:
            return [rule(f"{tag}_6NT", "6NT", hcp=(20, MAX_HCP)), rule(f"{tag}_3NT", "3NT", hcp=(12, 19))]
        if yl == 3:
            return [rule(f"{tag}_6NT", "6NT", hcp=(18, MAX_HCP)),
                    rule(f"{tag}_4{xl}", _bid(4, x), hcp=(12, 17), lens=_need(x, 6)) if x >= HEARTS else None,
                    rule(f"{tag}_pass", "P", guard=_ours_last)]
        return None
    if yl == 1:
        return _rebids_after_one_level(x, response, tag)
    if yl == 2 and y < x:
        return _rebids_after_two_over_one(x, y, tag)
    return _rebids_after_jump_shift(x, y, tag)


def _cheapest_above(call: int, strain: int) -> int:
    k = call + 1
    return k + (strain - (k - 3)) % 5


def _new_suits(x: int, after: int, tag: str) -> list[Rule]:
    """Opener's new suits over partner's `after`, cheapest level: 1-level or lower 2-level suits
    (12-18, non-forcing) and reverses into a higher suit at the 2 level (17+, forcing)."""
    rules = []
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        call = _cheapest_above(after, z)
        if z == x or z == _strain(after) or _level(call) > 2:
            continue
        if _level(call) == 2 and z > x:
            rules.append(rule(f"{tag}_reverse_{LETTERS[z]}", call, "reverse, forcing", hcp=(17, MAX_HCP),
                              lens=_need(z, 4), forcing=True))
        else:
            rules.append(rule(f"{tag}_new_{LETTERS[z]}", call, "new suit", hcp=(12, 18), lens=_need(z, 4)))
    return rules


def _rebids_after_one_level(x: int, response: int, tag: str) -> list[Rule]:
    y = _strain(response)
    xl = LETTERS[x]
    new = _new_suits(x, response, tag)
    rules = []
    if y >= HEARTS:
        rules += [rule(f"{tag}_raise4", _bid(4, y), "game raise", hcp=(19, 21), lens=_need(y, 4)),
                  rule(f"{tag}_raise3", _bid(3, y), "invitational raise", hcp=(16, 18), lens=_need(y, 4)),
                  rule(f"{tag}_raise2", _bid(2, y), "raise", hcp=(12, 15), lens=_need(y, 4))]
    rules += [r for r in new if _level(r.call) == 1]
    rules += [rule(f"{tag}_1NT", "1NT", hcp=(12, 14), bal=True),
              rule(f"{tag}_2NT", "2NT", hcp=(18, 19), bal=True)]
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if z not in (x, y):
            rules.append(rule(f"{tag}_jump_shift_{LETTERS[z]}", _cheapest_above(response, z) + 5,
                              "jump shift, game forcing", hcp=(19, MAX_HCP), lens=_need(z, 4), forcing=True))
    rules += [r for r in new if r.forcing]
    rules.append(rule(f"{tag}_3{xl}", _bid(3, x), "jump rebid", hcp=(16, MAX_HCP), lens=_need(x, 6)))
    if y < HEARTS:
        rules += [rule(f"{tag}_raise3", _bid(3, y), "invitational raise", hcp=(16, 18), lens=_need(y, 4)),
                  rule(f"{tag}_raise2", _bid(2, y), "raise", hcp=(12, 15), lens=_need(y, 4))]
    rules += [r for r in new if _level(r.call) == 2 and not r.forcing]
    rules += [rule(f"{tag}_2{xl}", _bid(2, x), "rebids the suit", hcp=(12, 15), lens=_need(x, 6)),
              rule(f"{tag}_2{xl}_min", _bid(2, x), "minimum, nothing else to say", hcp=(12, 18), lens=_need(x, 5),
                   catchall=True),
              rule(f"{tag}_1NT_other", "1NT", "minimum, nothing else to say", hcp=(12, 15), catchall=True)]
    return rules


def _rebids_after_1nt(x: int, tag: str) -> list[Rule]:
    xl = LETTERS[x]
    rules = []
    if x >= HEARTS:
        rules.append(rule(f"{tag}_4{xl}", _bid(4, x), hcp=(19, MAX_HCP), lens=_need(x, 6)))
    rules += [rule(f"{tag}_3{xl}", _bid(3, x), "invitational", hcp=(16, 18), lens=_need(x, 6)),
              rule(f"{tag}_2NT", "2NT", "invitational", hcp=(18, 19), bal=True)]
    new = _new_suits(x, ONE_NT, tag)
    rules += [r for r in new if r.forcing]
    rules += [rule(f"{tag}_jump_shift_{LETTERS[z]}", _bid(3, z), "jump shift, game forcing", hcp=(19, MAX_HCP),
                   lens=_need(z, 4), forcing=True) for z in (HEARTS, DIAMONDS, CLUBS) if z < x]
    rules += [r for r in new if not r.forcing]
    rules += [rule(f"{tag}_2{xl}", _bid(2, x), "rebids the suit", hcp=(12, 15), lens=_need(x, 6)),
              rule(f"{tag}_pass", "P", guard=_ours_last)]
    return rules


def _rebids_after_two_over_one(x: int, y: int, tag: str) -> list[Rule]:
    xl = LETTERS[x]
    rules = [rule(f"{tag}_raise", _bid(3, y), "raise, forcing", hcp=(12, MAX_HCP),
                  lens=_need(y, 3 if y >= HEARTS else 4), forcing=True),
             rule(f"{tag}_2NT", "2NT", hcp=(12, 14), bal=True, forcing=True),
             rule(f"{tag}_3NT", "3NT", hcp=(18, 19), bal=True),
             rule(f"{tag}_3{xl}", _bid(3, x), "jump rebid, forcing", hcp=(16, MAX_HCP), lens=_need(x, 6), forcing=True),
             rule(f"{tag}_2{xl}", _bid(2, x), "rebids the suit", hcp=(12, 15), lens=_need(x, 6))]
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if z in (x, y):
            continue
        if z > y:
            rules.append(rule(f"{tag}_new_{LETTERS[z]}", _bid(2, z), "new suit, forcing",
                              hcp=(17 if z > x else 12, MAX_HCP), lens=_need(z, 4), forcing=True))
        else:
            rules.append(rule(f"{tag}_new_{LETTERS[z]}", _bid(3, z), "new suit at the three level, forcing",
                              hcp=(15, MAX_HCP), lens=_need(z, 4), forcing=True))
    rules += [rule(f"{tag}_2{xl}_min", _bid(2, x), "nothing else to say", lens=_need(x, 4), catchall=True),
              rule(f"{tag}_2NT_other", "2NT", "nothing else to say", forcing=True, catchall=True)]
    return rules


def _rebids_after_jump_shift(x: int, y: int, tag: str) -> list[Rule]:
    xl = LETTERS[x]
    raise_call = _cheapest_at(y, 4)
    return [rule(f"{tag}_raise", raise_call, "support", lens=_need(y, 3 if y >= HEARTS else 4)),
            rule(f"{tag}_nt", _cheapest_at(NOTRUMP, 3), bal=True),
            rule(f"{tag}_rebid_{xl}", _cheapest_at(x, 4), "rebids the suit", lens=_need(x, 6)),
            rule(f"{tag}_other_{xl}", _cheapest_at(x, 4), "nothing else to say", catchall=True)]


def _reopening(x: int) -> list[Rule]:
    """Opener after partner passed an overcall: reopen with a double when short in their suit,
    notrump with a stopper, a long suit or a strong second suit."""
    xl = LETTERS[x]
    theirs = lambda c: _their_bid(c) and c.last_level <= 2 and c.last_strain < NOTRUMP  # noqa: E731
    short = lambda c: _at_most(c.last_strain, 2)  # noqa: E731
    return [rule(f"rb1{xl}_reopen_x", "X", "reopening double, short in their suit", hcp=(12, MAX_HCP), maxlens=short,
                 guard=theirs, when=lambda h, c: h.len[c.last_strain] <= 1, forcing=True),
            rule(f"rb1{xl}_reopen_nt", _cheapest_at(NOTRUMP, 2), "stopper in their suit", hcp=(18, 19), bal=True,
                 guard=theirs, when=lambda h, c: h.stop[c.last_strain])] + [
            rule(f"rb1{xl}_reopen_new_{LETTERS[z]}", _cheapest_at(z, 2), "strong second suit", hcp=(16, MAX_HCP),
                 lens=_need(z, 5), guard=lambda c, z=z: not c.opp_suits[z] and c.last_strain != z)
            for z in (SPADES, HEARTS, DIAMONDS, CLUBS) if z != x] + [
            rule(f"rb1{xl}_reopen_{xl}", _cheapest_at(x, 3), "rebids a long suit", hcp=(12, 17), lens=_need(x, 6)),
            rule(f"rb1{xl}_reopen_x_strong", "X", "reopening double, strong", hcp=(16, MAX_HCP), maxlens=short,
                 guard=theirs, forcing=True)]


def _after_negative_double(x: int) -> list[Rule]:
    xl = LETTERS[x]
    rules = []
    for m in MAJORS:
        shown = lambda c, m=m: c.p_len[m] >= 4 and not c.opp_suits[m]  # noqa: E731
        rules.append(rule(f"rb1{xl}_negx_jump_{LETTERS[m]}", _cheapest_at(m, 3, jump=1), "jump in partner's major",
                          hcp=(16, 18), lens=_need(m, 4), guard=shown))
        rules.append(rule(f"rb1{xl}_negx_{LETTERS[m]}", _cheapest_at(m, 3), "partner's major", hcp=(12, 15),
                          lens=_need(m, 4), guard=shown))
    rules += [rule(f"rb1{xl}_negx_nt", _cheapest_at(NOTRUMP, 2), "stopper in their suit", hcp=(12, 14),
                   when=lambda h, c: h.stop[c.last_strain] if c.last_strain < 4 else True),
              rule(f"rb1{xl}_negx_penalty", "P", "converts to penalties", hcp=(12, MAX_HCP),
                   guard=lambda c: c.rho_call == PASS and c.last_strain < NOTRUMP,
                   when=lambda h, c: h.len[c.last_strain] >= 4 and h.top3[c.last_strain] >= 2),
              rule(f"rb1{xl}_negx_rebid_{xl}", _cheapest_at(x, 3), "rebids a long suit", lens=_need(x, 6))]
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if z != x:
            rules.append(rule(f"rb1{xl}_negx_new_{LETTERS[z]}", _cheapest_at(z, 2), "second suit", lens=_need(z, 4),
                              guard=lambda c, z=z: not c.opp_suits[z] and c.last_strain != z))
    rules.append(rule(f"rb1{xl}_negx_other_{xl}", _cheapest_at(x, 3), "nothing else to say", catchall=True))
    return rules


# ---------------------------------------------------------------- responses in competition

def _responses_over_interference(opening: int) -> list[Rule]:
    """Responder after RHO overcalled partner's one-of-a-suit opening: raises, negative doubles,
    new suits, notrump with a stopper."""
    x = _strain(opening)
    xl = LETTERS[x]
    support = _need(x, 3 if x >= HEARTS else 5)
    rules = []
    if x >= HEARTS:
        rules.append(rule(f"ro1{xl}_game", _bid(4, x), "game raise", hcp=(13, MAX_HCP), lens=_need(x, 3)))
    rules += [rule(f"ro1{xl}_limit_raise", _cheapest_at(x, 3, jump=1), "limit raise", hcp=(10, 12), lens=support),
              rule(f"ro1{xl}_raise", _cheapest_at(x, 3), "competitive raise", hcp=(6, 10), lens=support)]
    unbid = lambda c, s: s != x and not c.opp_suits[s] and s != c.last_strain  # noqa: E731
    for s in MAJORS:
        rules.append(rule(f"ro1{xl}_new1_{LETTERS[s]}", _cheapest_at(s, 1), "new suit, forcing", hcp=(6, MAX_HCP),
                          lens=_need(s, 5), guard=lambda c, s=s: unbid(c, s), forcing=True))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"ro1{xl}_new2_{LETTERS[s]}", _cheapest_at(s, 2, min_level=2), "new suit, forcing",
                          hcp=(10, MAX_HCP), lens=_need(s, 5), guard=lambda c, s=s: unbid(c, s), forcing=True))
        rules.append(rule(f"ro1{xl}_new3_{LETTERS[s]}", _cheapest_at(s, 3, min_level=3), "new suit, forcing",
                          hcp=(12, MAX_HCP), lens=_need(s, 5), guard=lambda c, s=s: unbid(c, s), forcing=True))

    def negx_lens(c: Ctx) -> tuple[int, int, int, int]:
        return tuple(4 if s >= HEARTS and unbid(c, s) else 0 for s in range(4))

    rules.append(rule(f"ro1{xl}_negative_x", "X", "negative double, the unbid major(s)",
                      hcp=lambda c: (6 if c.last_level == 1 else 8, MAX_HCP), lens=negx_lens,
                      guard=lambda c: c.last_strain < NOTRUMP and c.last_level <= 2
                      and any(unbid(c, m) for m in MAJORS),
                      forcing=True))
    for s in MAJORS:
        rules.append(rule(f"ro1{xl}_new1_4_{LETTERS[s]}", _cheapest_at(s, 1), "new suit, forcing", hcp=(6, MAX_HCP),
                          lens=_need(s, 4), guard=lambda c, s=s: unbid(c, s), forcing=True))
    nt_stop = lambda h, c: h.stop[c.last_strain] if c.last_strain < 4 else h.bal  # noqa: E731
    rules += [rule(f"ro1{xl}_1NT", _cheapest_at(NOTRUMP, 1), "stopper in their suit", hcp=(8, 10), when=nt_stop),
              rule(f"ro1{xl}_2NT", "2NT", "invitational, stopper", hcp=(11, 12), when=nt_stop)]
    rules.append(rule(f"ro1{xl}_3NT", "3NT", "stopper in their suit", hcp=(13, 16), when=nt_stop,
                      maxlens=_at_most(x, 2) if x >= HEARTS else None))
    rules.append(rule(f"ro1{xl}_pass", "P", hcp=(0, 12)))
    return rules


def _responses_over_double(opening: int) -> list[Rule]:
    """Responder after RHO's takeout double: redouble with 10+, else natural and limited."""
    x = _strain(opening)
    xl = LETTERS[x]
    rules = [rule(f"rx1{xl}_xx", "XX", "10+, usually no fit", hcp=(10, MAX_HCP)),
             rule(f"rx1{xl}_raise", _cheapest_at(x, 2), "raise", hcp=(6, 9), lens=_need(x, 3 if x >= HEARTS else 5))]
    for s in MAJORS:
        if s != x:
            rules.append(rule(f"rx1{xl}_new_{LETTERS[s]}", _cheapest_at(s, 1), "natural", hcp=(6, 9), lens=_need(s, 5)))
    rules += [rule(f"rx1{xl}_1NT", "1NT", hcp=(6, 9)), rule(f"rx1{xl}_pass", "P", hcp=(0, 9))]
    return rules


def _responses_1nt_over_interference() -> list[Rule]:
    their = lambda c: _their_bid(c) and c.last_strain < NOTRUMP  # noqa: E731
    rules = [rule("ro1NT_penalty_x", "X", "penalty", hcp=(8, MAX_HCP),
                  lens=lambda c: _need(c.last_strain, 4) if c.last_strain < 4 else (0,) * 4, guard=their)]
    for s in MAJORS:
        rules.append(rule(f"ro1NT_game_{LETTERS[s]}", _bid(4, s), hcp=(10, MAX_HCP), lens=_need(s, 6)))
    rules.append(rule("ro1NT_3NT", "3NT", "stopper", hcp=(10, 15),
                      when=lambda h, c: c.last_strain >= 4 or h.stop[c.last_strain]))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"ro1NT_{LETTERS[s]}", _cheapest_at(s, 2), "to play", hcp=(0, 9), lens=_need(s, 5),
                          guard=lambda c, s=s: s != c.last_strain))
        rules.append(rule(f"ro1NT_force_{LETTERS[s]}", _cheapest_at(s, 3, min_level=3), "forcing", hcp=(10, MAX_HCP),
                          lens=_need(s, 5), guard=lambda c, s=s: s != c.last_strain, forcing=True))
    rules += [rule("ro1NT_values_x", "X", "values, no clear bid", hcp=(10, MAX_HCP),
                   maxlens=lambda c: _at_most(c.last_strain, 2), guard=their),
              rule("ro1NT_pass", "P")]
    return rules


# ---------------------------------------------------------------- overcalls and advances

def _overcalls() -> list[Rule | Gate]:
    """Our side's first action after the opponents opened: direct or balancing."""
    bal = lambda lo, hi: (lambda c: (lo - 3 if c.balancing else lo, hi))  # noqa: E731
    suit_bid = lambda c: c.last_strain < NOTRUMP  # noqa: E731
    their_stop = lambda h, c: h.stop[c.last_strain] and _stopped(h, c)  # noqa: E731
    rules = [
        rule("ovc_1nt", "1NT", "stopper in their suit", hcp=(15, 18), bal=True,
             guard=lambda c: not c.balancing and c.last_level == 1 and suit_bid(c), when=their_stop),
        rule("ovc_1nt_balancing", "1NT", "balancing, stopper", hcp=(11, 14), bal=True,
             guard=lambda c: c.balancing and c.last_level == 1 and suit_bid(c), when=their_stop),
        rule("ovc_x_1nt", "X", "penalty double of 1NT", hcp=(15, MAX_HCP), guard=lambda c: c.last_bid == ONE_NT),
        rule("ovc_x_strong", "X", "strong hand, will bid again", hcp=(19, MAX_HCP), guard=suit_bid, forcing=True),
        rule("ovc_x_balancing_strong", "X", "balancing, too strong for 1NT", hcp=(15, MAX_HCP), bal=True,
             guard=lambda c: c.balancing and suit_bid(c), forcing=True),
        rule("ovc_3nt", "3NT", "to play over a preempt", hcp=(16, 21),
             guard=lambda c: c.last_level >= 2 and suit_bid(c), when=their_stop),
    ]
    jumps = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        ok = lambda c, s=s: s != c.last_strain and not c.opp_suits[s]  # noqa: E731
        jumps.append(rule(f"ovc_weak_jump_{LETTERS[s]}", _cheapest_at(s, 3, min_level=2, jump=1), "weak jump overcall",
                          hcp=(5, 10), lens=_need(s, 6), guard=lambda c, ok=ok: ok(c) and not c.balancing,
                          when=lambda h, c, s=s: h.good[s]))
    rules.append(Gate(lambda h, c: h.len[h.longest] >= 6, tuple(jumps)))
    five_card_suit = lambda h, c: h.len[h.longest] >= 5  # noqa: E731

    def suit_overcalls(suits) -> list[Rule]:
        out = []
        for s in suits:
            ok = lambda c, s=s: s != c.last_strain and not c.opp_suits[s]  # noqa: E731
            good = lambda h, c, s=s: h.good[s] or h.len[s] >= 6  # noqa: E731
            out += [rule(f"ovc_1{LETTERS[s]}", _cheapest_at(s, 1), "overcall", hcp=bal(8, 17), lens=_need(s, 5),
                         guard=ok, when=lambda h, c, s=s: h.good[s] or h.hcp >= 10),
                    rule(f"ovc_2{LETTERS[s]}", _cheapest_at(s, 2, min_level=2), "overcall, good suit", hcp=bal(10, 17),
                         lens=_need(s, 5), guard=ok, when=good),
                    rule(f"ovc_3{LETTERS[s]}", _cheapest_at(s, 3, min_level=3), "overcall, good suit", hcp=bal(13, 17),
                         lens=_need(s, 6), guard=ok, when=good)]
        return out

    rules.append(Gate(five_card_suit, tuple(suit_overcalls(MAJORS))))
    rules.append(rule("ovc_takeout_x", "X", "takeout double",
                      hcp=lambda c: (11 + c.last_level - (3 if c.balancing else 0), MAX_HCP),
                      lens=_takeout_lens, maxlens=_takeout_max, guard=lambda c: suit_bid(c) and c.last_level <= 4,
                      when=_short_in_theirs, forcing=True))
    rules.append(Gate(five_card_suit, tuple(suit_overcalls(MINORS))))
    rules.append(rule("ovc_pass", "P"))
    return rules


def _advances_after_takeout() -> list[Rule]:
    their = lambda c: c.last_strain  # noqa: E731
    stopped = lambda h, c: h.stop[their(c)] if their(c) < 4 else True  # noqa: E731
    rules = [
        rule("adv_x_penalty_pass", "P", "converts the double to penalties", hcp=(7, MAX_HCP),
             guard=lambda c: c.rho_call == PASS and c.last_level == 1 and c.doubled == 1 and c.last_strain < 4,
             when=lambda h, c: h.len[their(c)] >= 5 and h.top3[their(c)] >= 2),
    ]
    for m in MAJORS:
        rules.append(rule(f"adv_x_game_{LETTERS[m]}", _bid(4, m), "game", hcp=(12, MAX_HCP), lens=_need(m, 5),
                          guard=lambda c, m=m: not c.opp_suits[m] and c.last_strain != m))
    rules.append(rule("adv_x_3NT", "3NT", "stopper", hcp=(13, MAX_HCP), when=lambda h, c: stopped(h, c) and h.bal))
    unbid_ok = lambda c, s: not c.opp_suits[s] and c.last_strain != s  # noqa: E731
    best = _best_unbid
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_x_jump_{LETTERS[s]}", _cheapest_at(s, 3, jump=1), "jump, invitational", hcp=(9, 11),
                          lens=_need(s, 4), guard=lambda c, s=s: unbid_ok(c, s) and c.rho_call == PASS,
                          when=_is(best, s)))
    rules += [rule("adv_x_2NT", _cheapest_at(NOTRUMP, 2, min_level=2), "invitational, stopper", hcp=(11, 12),
                   when=lambda h, c: stopped(h, c) and h.bal),
              rule("adv_x_1NT", _cheapest_at(NOTRUMP, 1), "stopper, no 4-card major", hcp=(6, 10),
                   maxlens=(13, 13, 3, 3), when=stopped)]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_x_{LETTERS[s]}", _cheapest_at(s, 3), "forced advance",
                          hcp=lambda c: (0, 8) if c.rho_call == PASS else (6, 11), lens=_need(s, 4),
                          guard=lambda c, s=s: unbid_ok(c, s), when=_is(best, s)))
    rules.append(rule("adv_x_pass", "P", "opponents bid: no longer forced", guard=lambda c: c.rho_call != PASS))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_x_any_{LETTERS[s]}", _cheapest_at(s, 4), "forced advance, longest unbid suit",
                          guard=lambda c, s=s: unbid_ok(c, s), when=_is(best, s), catchall=True))
    return rules


def _advances_after_overcall() -> list[Rule]:
    rules = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        theirs = lambda c, s=s: c.p_natural == s  # noqa: E731 - partner overcalled in this suit
        if s >= HEARTS:
            rules.append(rule(f"adv_game_{LETTERS[s]}", _bid(4, s), "game raise", hcp=(14, MAX_HCP), lens=_need(s, 3),
                              guard=theirs))
        rules += [rule(f"adv_limit_raise_{LETTERS[s]}", _cheapest_at(s, 3, jump=1), "limit raise", hcp=(10, 13),
                       lens=_need(s, 3), guard=theirs),
                  rule(f"adv_raise_{LETTERS[s]}", _cheapest_at(s, 3), "raise", hcp=(6, 13), lens=_need(s, 3),
                       guard=theirs)]
    rules += [rule("adv_3NT", "3NT", "stopper", hcp=(15, MAX_HCP), when=_stopped),
              rule("adv_1NT", _cheapest_at(NOTRUMP, 1), "stopper", hcp=(8, 11), when=_stopped),
              rule("adv_2NT", "2NT", "stopper", hcp=(12, 14), when=_stopped)]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_new_{LETTERS[s]}", _cheapest_at(s, 2), "new suit, non-forcing", hcp=(8, 14),
                          lens=_need(s, 5), guard=lambda c, s=s: not c.opp_suits[s] and c.p_natural != s,
                          when=lambda h, c, s=s: h.good[s]))
    rules.append(rule("adv_pass", "P"))
    return rules


def _advances_after_1nt_overcall() -> list[Rule]:
    rules = [rule(f"adv_nt_game_{LETTERS[m]}", _bid(4, m), hcp=(9, MAX_HCP), lens=_need(m, 6)) for m in MAJORS]
    rules.append(rule("adv_nt_3NT", "3NT", hcp=(10, MAX_HCP)))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_nt_{LETTERS[s]}", _cheapest_at(s, 2, min_level=2), "to play", hcp=(0, 7),
                          lens=_need(s, 5), guard=lambda c, s=s: not c.opp_suits[s]))
    rules += [rule("adv_nt_2NT", "2NT", "invitational", hcp=(8, 9)), rule("adv_nt_pass", "P")]
    return rules


def _advances_after_penalty_x() -> list[Rule]:
    rules = [rule(f"adv_xnt_run_{LETTERS[s]}", _cheapest_at(s, 2), "weak, long suit", hcp=(0, 4), lens=_need(s, 5))
             for s in (SPADES, HEARTS, DIAMONDS, CLUBS)]
    rules.append(rule("adv_xnt_pass", "P", "leaves the penalty double in"))
    return rules


# ---------------------------------------------------------------- generic later rounds

def _generic_rules() -> list[Rule | Gate]:
    """Placement by combined values: slam, game, penalty doubles, invitations, forced bids,
    competing on a fit, preferences; else pass."""
    best_fit, best_strain = _best_fit, _best_strain
    suits = (SPADES, HEARTS, DIAMONDS, CLUBS)

    def their_strain_len(n):
        return lambda c: _need(c.last_strain, n) if c.last_strain < 4 else (0,) * 4

    grand = lambda c: (max(37 - c.p_lo, 0), MAX_HCP)  # noqa: E731 - a grand slam needs partner's minimum to do
    slams = [rule(f"slam_{level}{call_name(_bid(1, s))[1:]}", _bid(level, s), f"{word} on combined values",
                  hcp=values, lens=_fit_lens(s) if s < 4 else (0,) * 4,
                  guard=lambda c, level=level: c.our_last < _bid(level, 0) and c.p_lo >= 6, when=_is(best_strain, s))
             for level, values, word in ((7, grand, "grand slam"), (6, _combined(33), "small slam"))
             for s in suits + (NOTRUMP,)]

    below_game = lambda c: not c.our_game or c.our_last == THREE_NT  # noqa: E731
    not_game = lambda c: not c.our_game  # noqa: E731
    games = [rule(f"game_4{LETTERS[m]}", _bid(4, m), "game on combined values and a fit", hcp=_combined(25),
                  lens=_fit_lens(m), guard=below_game, when=_is(best_fit, m)) for m in MAJORS]
    games += [rule(f"game_5{LETTERS[m]}", _bid(5, m), "minor-suit game, unbalanced or a suit unstopped",
                   hcp=_combined(27), lens=_fit_lens(m), guard=not_game,
                   when=lambda h, c, m=m: best_fit(h, c) == m and (h.shortest <= 1 or not _stopped(h, c)))
              for m in MINORS]
    games.append(rule("game_3NT", "3NT", "game on combined values, stoppers", hcp=_combined(25), guard=not_game,
                      when=lambda h, c: best_fit(h, c) < HEARTS and _stopped(h, c)))

    penalties = [  # a double is legal only of their undoubled bid: the gate below is implied
        rule("penalty_x_values", "X", "penalty: they outbid our combined values", hcp=_combined(25),
             lens=their_strain_len(2), guard=lambda c: c.last_level >= 3),
        rule("penalty_x_trumps", "X", "penalty: trump length and the balance of strength", hcp=_combined(22),
             lens=their_strain_len(4), guard=lambda c: c.last_level >= 2,
             when=lambda h, c: c.last_strain == NOTRUMP or h.top3[c.last_strain] >= 1),
    ]

    invite_range = lambda c: (max(25 - c.p_hi, 23 - c.p_est, 0), 24 - c.p_est)  # noqa: E731
    # Invite only when partner bid last, has limited the hand with room left to accept, and has
    # either shown values or was forced to bid (a weak hand bidding freely has signed off).
    room = lambda c: (c.last_by_us and c.p_hi > c.p_est and c.p_hi - c.p_lo <= 12  # noqa: E731
                      and (c.p_lo >= 6 or c.p_answered) and not c.p_forcing)
    invites = [rule(f"invite_3{LETTERS[m]}", _bid(3, m), "invitational", hcp=invite_range, lens=_fit_lens(m),
                    guard=lambda c, m=m: room(c) and c.last_bid < _bid(3, m), when=_is(best_fit, m)) for m in MAJORS]
    invites.append(rule("invite_2NT", "2NT", "invitational", hcp=invite_range,
                        guard=lambda c: room(c) and c.last_bid < TWO_NT,
                        when=lambda h, c: h.bal and best_fit(h, c) < HEARTS and _stopped(h, c)))

    forced = lambda c: c.p_forcing and c.rho_call == PASS  # noqa: E731
    forced_bids = [rule("forced_penalty_pass", "P", "converts partner's double to penalties",
                        lens=their_strain_len(5),
                        guard=lambda c: forced(c) and c.p_last == DOUBLE and c.last_strain < NOTRUMP,
                        when=lambda h, c: h.top3[c.last_strain] >= 2)]
    forced_bids += [rule(f"forced_raise_{LETTERS[s]}", _cheapest_at(s, 5), "support for partner's suit",
                         lens=_need(s, 3 if s >= HEARTS else 4), guard=lambda c, s=s: forced(c) and c.p_natural == s)
                    for s in suits]
    forced_bids += [rule(f"forced_own_{LETTERS[s]}", _cheapest_at(s, 4), "a long suit", lens=_need(s, 5),
                         guard=lambda c, s=s: forced(c) and not c.opp_suits[s], when=_is(lambda h, c: h.longest, s))
                    for s in suits]
    forced_bids.append(rule("forced_nt", _cheapest_at(NOTRUMP, 3), "stoppers", guard=forced, when=_stopped))
    forced_bids += [rule(f"forced_any_{LETTERS[s]}", _cheapest_at(s, 5), "forced, longest suit", guard=forced,
                         when=_is(lambda h, c: h.longest, s), catchall=True) for s in suits]

    competes = [rule(f"compete_own_{LETTERS[s]}", _cheapest_at(s, 3), "rebids a long suit in competition",
                     hcp=(13, MAX_HCP), lens=_need(s, 6), guard=lambda c, s=s: c.me_len[s] >= 5,
                     when=lambda h, c, s=s: h.longest == s) for s in suits]
    competes += [rule(f"compete_{LETTERS[s]}", _cheapest_at(s, 4), "competes on a fit (total tricks)",
                     lens=_fit_lens(s), guard=lambda c: c.p_lo > 0,
                     when=lambda h, c, s=s: best_fit(h, c) == s
                     and _level(_cheapest(c, s)) <= h.len[s] + c.p_fit[s] - 6) for s in suits]
    competing = lambda h, c: _their_bid(c) and (c.p_lo > 0 or h.hcp >= 13)  # noqa: E731

    signoff = lambda c: (0, max(24 - c.p_est, 0))  # noqa: E731 - no game or invitation: a limited hand
    partscores = [rule(f"preference_{LETTERS[s]}", _cheapest_at(s, 2), "better fit than partner's last suit",
                       hcp=signoff, lens=_fit_lens(s),
                       guard=lambda c, s=s: c.last_by_us and c.last_strain != s and c.p_lo > 0, when=_is(best_fit, s))
                  for s in suits]
    partscores += [rule(f"own_suit_{LETTERS[s]}", _cheapest_at(s, 2), "long suit, no fit", hcp=signoff,
                        lens=_need(s, 6),
                        guard=lambda c, s=s: c.last_by_us and c.last_strain != s and not c.opp_suits[s],
                        when=lambda h, c, s=s: best_fit(h, c) < 0 and h.longest == s) for s in suits]
    partscores.append(rule("misfit_nt", _cheapest_at(NOTRUMP, 2), "misfit with partner's last suit",
                           hcp=lambda c: (6, max(24 - c.p_est, 6)),
                           guard=lambda c: c.last_by_us and 0 <= c.p_natural < NOTRUMP and c.p_natural == c.last_strain,
                           when=lambda h, c: h.len[c.p_natural] <= (2 if c.last_level == 1 else 1)
                           and best_fit(h, c) < 0 and _stopped(h, c)))

    return [
        Gate(lambda h, c: c.p_lo >= 6 and h.hcp + c.p_est >= 33, tuple(slams)),
        rule("slam_reached_pass", "P", "slam reached", guard=lambda c: c.last_by_us and c.last_level >= 6),
        Gate(lambda h, c: h.hcp + c.p_est >= 25, tuple(games)),
        rule("game_reached_pass", "P", "game reached", guard=lambda c: c.last_by_us and c.our_game),
        Gate(lambda h, c: _their_bid(c) and c.doubled == 0, tuple(penalties)),
        Gate(lambda h, c: room(c), tuple(invites)),
        Gate(lambda h, c: forced(c), tuple(forced_bids)),
        Gate(competing, tuple(competes)),
        Gate(lambda h, c: c.last_by_us, tuple(partscores)),
        rule("later_pass", "P", "nothing more to say", catchall=True),
    ]


# ---------------------------------------------------------------- the system's tables

LATER = RuleTable("later", _generic_rules())
OPENINGS = RuleTable("open", _opening_rules())
OVERCALLS = RuleTable("overcall", _overcalls())


def _build_system() -> dict[tuple, RuleTable]:
    system: dict[tuple, RuleTable] = {}

    def add(key: tuple, rules: list[Rule] | None, generic: bool = True) -> None:
        if rules is not None:
            system[key] = RuleTable("/".join(map(str, key)), [r for r in rules if r is not None],
                                    LATER if generic else None)

    one_suit = [_bid(1, s) for s in range(4)]
    for opening in one_suit:
        s = _strain(opening)
        add(("resp", opening), _responses_major(s) if s >= HEARTS else _responses_minor(s), generic=False)
        add(("resp_x", opening), _responses_over_double(opening), generic=False)
        add(("resp_over", opening), _responses_over_interference(opening))
        for response in range(NUM_CALLS):
            add(("rebid", opening, response), _opener_rebids(opening, response))
    nt1, nt2, c2 = parse_call("1NT"), parse_call("2NT"), parse_call("2C")
    add(("resp", nt1), _responses_1nt(), generic=False)
    add(("resp_x", nt1), _responses_1nt(), generic=False)
    add(("resp_over", nt1), _responses_1nt_over_interference())
    for response, rules in _rebids_1nt().items():
        add(("rebid", nt1, response), rules)
    add(("resp", nt2), _responses_2nt(), generic=False)
    for response, rules in _rebids_2nt().items():
        add(("rebid", nt2, response), rules)
    add(("resp", c2), _responses_2c(), generic=False)
    for response, rules in _rebids_2c().items():
        add(("rebid", c2, response), rules)
    for opening in [_bid(2, s) for s in (DIAMONDS, HEARTS, SPADES)] + [_bid(3, s) for s in range(4)] + \
            [_bid(4, s) for s in MAJORS]:
        add(("resp", opening), _responses_weak(opening), generic=False)
    add(("advance", "x"), _advances_after_takeout())
    add(("advance", "xnt"), _advances_after_penalty_x())
    add(("advance", "suit"), _advances_after_overcall())
    add(("advance", "nt"), _advances_after_1nt_overcall())
    return system


SYSTEM = _build_system()


# ---------------------------------------------------------------- public API

class RuleBidder:
    """Deterministic SAYC-style bidder; every call is explained by the rule that made it."""

    def explain_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> Decision:
        """The call for the seat to act (dealer + len(auction)) holding `hand` (13 card indices)."""
        state = _replay(auction, dealer, vul)
        if state.finished:
            raise ValueError("the auction has already ended")
        return _decide(Hand(hand), state.view())

    def next_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> int:
        return self.explain_call(hand, auction, dealer, vul).call

    def shown(self, auction: Sequence[int], dealer: int, vul: int) -> list[Shown]:
        """What each seat (N, E, S, W) has shown by its calls in `auction`: the partnership
        inference the rules bid with."""
        state = _replay(auction, dealer, vul)
        return [Shown((state.hlo[s], state.hhi[s]), tuple(state.llo[s]), tuple(state.lhi[s])) for s in range(4)]

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
        state = _Auction(dealer, vul)
        decisions = []
        while not state.finished:
            ctx = state.view()
            decision = _decide(hands[ctx.seat], ctx)
            state.push(decision.call, ctx)
            decisions.append(decision)
        return decisions


def _replay(auction: Sequence[int], dealer: int, vul: int) -> _Auction:
    state = _Auction(dealer, vul)
    for call in auction:
        if state.finished:
            raise ValueError("calls after the end of the auction")
        ctx = state.view()
        if not ctx.legal(int(call)):
            raise ValueError(f"illegal call {call} at position {len(state.calls)}")
        state.push(int(call), ctx)
    return state


def _decide(hand: Hand, ctx: Ctx) -> Decision:
    r, call = ctx.table.decide(hand, ctx)
    return Decision(call, r.name, r.meaning(ctx, call))
