"""The rule engine: hand features (`Hand`), rules and the tables that order them (`Rule`, `rule`,
`Gate`, `RuleTable`), and what the seat to call knows before its hand (`Ctx`).

A rule declares what its call shows (an HCP range, minimum and maximum suit lengths, balanced or
not) and fires only on hands that fit those declarations, so the same declarations decide a call
(`RuleTable.decide`) and read one hand-blind (`RuleTable.reading`, `Rule.shows`). The system's
rules are written with these in the phase modules beside this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from bridgeflow.dataset.encodings import PASS, call_name, parse_call


CLUBS, DIAMONDS, HEARTS, SPADES, NOTRUMP = range(5)
MAJORS = (SPADES, HEARTS)
MINORS = (DIAMONDS, CLUBS)
SUIT_WORDS = ("clubs", "diamonds", "hearts", "spades")
LETTERS = "CDHS"
MAX_HCP = 40
_BALANCED_SHAPES = frozenset({(3, 3, 3, 4), (2, 3, 4, 4), (2, 3, 3, 5)})
ONE_NT, TWO_NT, THREE_NT = parse_call("1NT"), parse_call("2NT"), parse_call("3NT")


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


# ---------------------------------------------------------------- what the seat to call knows

class Ctx:
    """What the seat to call knows before its hand: the auction and what everyone has shown."""

    # `legal(call)`: the laws' rule for the auction so far (its AuctionState.is_legal).
    __slots__ = ("seat", "position", "legal", "last_bid", "last_level", "last_strain", "last_by_us", "doubled",
                 "our_last", "our_game", "rho_call", "we_vul", "they_vul", "p_lo", "p_hi", "p_est", "p_len", "p_fit",
                 "p_forcing", "p_answered", "p_natural", "p_last", "p_stops", "me_len", "opp_suits", "balancing",
                 "table", "fit")
