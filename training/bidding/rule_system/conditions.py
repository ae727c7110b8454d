"""Conditions shared by the rules of several phases, in the forms `rule` takes: call functions
(cheapest bids), promises relative to partner's shown hand (`fit_lens`, `combined`), and hand tests
(fits, stoppers, takeout shape).
"""

from __future__ import annotations

from bridgeflow.dataset.encodings import NUM_CALLS
from bridgeflow.dataset.encodings import bid_level as _level

from .engine import HEARTS, MAJORS, MAX_HCP, MINORS, NOTRUMP, Ctx, Hand


def cheapest(ctx: Ctx, strain: int) -> int:
    """The cheapest legal bid in `strain`, -1 above 7NT."""
    k = max(ctx.last_bid + 1, 3)
    call = k + (strain - (k - 3)) % 5
    return call if call < NUM_CALLS else -1


def cheapest_at(strain: int, max_level: int, min_level: int = 1, jump: int = 0):
    """Call function: cheapest bid in `strain` (plus `jump` levels) if its level is in range."""
    def call(ctx: Ctx) -> int:
        c = cheapest(ctx, strain)
        if c < 0:
            return -1
        c += 5 * jump
        return c if c < NUM_CALLS and min_level <= _level(c) <= max_level else -1
    return call


def need(strain: int, n: int) -> tuple[int, int, int, int]:
    lens = [0, 0, 0, 0]
    lens[strain] = n
    return tuple(lens)


def at_most(strain: int, n: int) -> tuple[int, int, int, int]:
    lens = [13, 13, 13, 13]
    lens[strain] = n
    return tuple(lens)


def best_fit(hand: Hand, ctx: Ctx) -> int:
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


def best_strain(hand: Hand, ctx: Ctx) -> int:
    fit = best_fit(hand, ctx)
    return fit if fit >= 0 else NOTRUMP


def stopped(hand: Hand, ctx: Ctx) -> bool:
    """Every suit the opponents have shown is stopped, in this hand or by partner's notrump."""
    return all(hand.stop[s] or ctx.p_stops[s] for s in range(4) if ctx.opp_suits[s])


def fit_lens(strain: int):
    """Shows: enough cards in `strain` for an 8-card fit with what partner has shown."""
    return lambda ctx: need(strain, min(max(8 - ctx.p_fit[strain], 0), 7))


def combined(total: int):
    """Shows: enough HCP for `total` together with partner's estimated values."""
    return lambda ctx: (max(total - ctx.p_est, 0), MAX_HCP)


def _unbid_suits(ctx: Ctx) -> list[int]:
    return [s for s in range(4) if not ctx.opp_suits[s]]


def best_unbid(hand: Hand, ctx: Ctx) -> int:
    """Advancer's suit: a 4+ major the opponents have not shown, else the longest unshown suit."""
    unbid = _unbid_suits(ctx)
    majors = [s for s in MAJORS if s in unbid and hand.len[s] >= 4]
    if majors:
        return max(majors, key=lambda s: (hand.len[s], s))
    return max(unbid, key=lambda s: (hand.len[s], s))


def short_in_theirs(hand: Hand, ctx: Ctx) -> bool:
    """Takeout shape: at most two cards in each suit the opponents showed, three in each unbid major,
    two in each unbid minor."""
    for s in range(4):
        if ctx.opp_suits[s] or s == ctx.last_strain:
            if hand.len[s] > 2:
                return False
        elif hand.len[s] < (3 if s >= HEARTS else 2):
            return False
    return True


def takeout_lens(ctx: Ctx) -> tuple[int, int, int, int]:
    return tuple(3 if s >= HEARTS and not ctx.opp_suits[s] and s != ctx.last_strain else 0 for s in range(4))


def takeout_max(ctx: Ctx) -> tuple[int, int, int, int]:
    return tuple(2 if ctx.opp_suits[s] or s == ctx.last_strain else 13 for s in range(4))


def their_bid(ctx: Ctx) -> bool:
    """The last bid is the opponents'."""
    return ctx.last_bid >= 0 and not ctx.last_by_us


def is_(strain_fn, strain: int):
    """Hand test: `strain_fn(hand, ctx)` (e.g. `best_fit`) picks `strain`."""
    return lambda hand, ctx: strain_fn(hand, ctx) == strain
