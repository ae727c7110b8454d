"""Competitive bidding: responder after an overcall or a takeout double of partner's opening (and
after interference over 1NT), our side's first action after the opponents opened (overcalls,
takeout and penalty doubles, balancing), and advancer's answer to partner's overcall or double.
"""

from __future__ import annotations

from bridgeflow.dataset.encodings import PASS
from bridgeflow.dataset.encodings import bid_index as _bid
from bridgeflow.dataset.encodings import bid_strain as _strain

from .conditions import (
    at_most,
    best_unbid,
    cheapest_at,
    is_,
    need,
    short_in_theirs,
    stopped,
    takeout_lens,
    takeout_max,
    their_bid,
)
from .engine import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    LETTERS,
    MAJORS,
    MAX_HCP,
    MINORS,
    NOTRUMP,
    ONE_NT,
    SPADES,
    Ctx,
    Gate,
    Rule,
    rule,
)


# ---------------------------------------------------------------- responses in competition

def responses_over_interference(opening: int) -> list[Rule]:
    """Responder after RHO overcalled partner's one-of-a-suit opening: raises, negative doubles,
    new suits, notrump with a stopper."""
    x = _strain(opening)
    xl = LETTERS[x]
    support = need(x, 3 if x >= HEARTS else 5)
    rules = []
    if x >= HEARTS:
        rules.append(rule(f"ro1{xl}_game", _bid(4, x), "game raise", hcp=(13, MAX_HCP), lens=need(x, 3)))
    rules += [rule(f"ro1{xl}_limit_raise", cheapest_at(x, 3, jump=1), "limit raise", hcp=(10, 12), lens=support),
              rule(f"ro1{xl}_raise", cheapest_at(x, 3), "competitive raise", hcp=(6, 10), lens=support)]
    unbid = lambda c, s: s != x and not c.opp_suits[s] and s != c.last_strain  # noqa: E731
    for s in MAJORS:
        rules.append(rule(f"ro1{xl}_new1_{LETTERS[s]}", cheapest_at(s, 1), "new suit, forcing", hcp=(6, MAX_HCP),
                          lens=need(s, 5), guard=lambda c, s=s: unbid(c, s), forcing=True))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"ro1{xl}_new2_{LETTERS[s]}", cheapest_at(s, 2, min_level=2), "new suit, forcing",
                          hcp=(10, MAX_HCP), lens=need(s, 5), guard=lambda c, s=s: unbid(c, s), forcing=True))
        rules.append(rule(f"ro1{xl}_new3_{LETTERS[s]}", cheapest_at(s, 3, min_level=3), "new suit, forcing",
                          hcp=(12, MAX_HCP), lens=need(s, 5), guard=lambda c, s=s: unbid(c, s), forcing=True))

    def negx_lens(c: Ctx) -> tuple[int, int, int, int]:
        return tuple(4 if s >= HEARTS and unbid(c, s) else 0 for s in range(4))

    rules.append(rule(f"ro1{xl}_negative_x", "X", "negative double, the unbid major(s)",
                      hcp=lambda c: (6 if c.last_level == 1 else 8, MAX_HCP), lens=negx_lens,
                      guard=lambda c: c.last_strain < NOTRUMP and c.last_level <= 2
                      and any(unbid(c, m) for m in MAJORS),
                      forcing=True))
    for s in MAJORS:
        rules.append(rule(f"ro1{xl}_new1_4_{LETTERS[s]}", cheapest_at(s, 1), "new suit, forcing", hcp=(6, MAX_HCP),
                          lens=need(s, 4), guard=lambda c, s=s: unbid(c, s), forcing=True))
    nt_stop = lambda h, c: h.stop[c.last_strain] if c.last_strain < 4 else h.bal  # noqa: E731
    rules += [rule(f"ro1{xl}_1NT", cheapest_at(NOTRUMP, 1), "stopper in their suit", hcp=(8, 10), when=nt_stop),
              rule(f"ro1{xl}_2NT", "2NT", "invitational, stopper", hcp=(11, 12), when=nt_stop)]
    rules.append(rule(f"ro1{xl}_3NT", "3NT", "stopper in their suit", hcp=(13, 16), when=nt_stop,
                      maxlens=at_most(x, 2) if x >= HEARTS else None))
    rules.append(rule(f"ro1{xl}_pass", "P", hcp=(0, 12)))
    return rules


def responses_over_double(opening: int) -> list[Rule]:
    """Responder after RHO's takeout double: redouble with 10+, else natural and limited."""
    x = _strain(opening)
    xl = LETTERS[x]
    rules = [rule(f"rx1{xl}_xx", "XX", "10+, usually no fit", hcp=(10, MAX_HCP)),
             rule(f"rx1{xl}_raise", cheapest_at(x, 2), "raise", hcp=(6, 9), lens=need(x, 3 if x >= HEARTS else 5))]
    for s in MAJORS:
        if s != x:
            rules.append(rule(f"rx1{xl}_new_{LETTERS[s]}", cheapest_at(s, 1), "natural", hcp=(6, 9), lens=need(s, 5)))
    rules += [rule(f"rx1{xl}_1NT", "1NT", hcp=(6, 9)), rule(f"rx1{xl}_pass", "P", hcp=(0, 9))]
    return rules


def responses_1nt_over_interference() -> list[Rule]:
    their = lambda c: their_bid(c) and c.last_strain < NOTRUMP  # noqa: E731
    rules = [rule("ro1NT_penalty_x", "X", "penalty", hcp=(8, MAX_HCP),
                  lens=lambda c: need(c.last_strain, 4) if c.last_strain < 4 else (0,) * 4, guard=their)]
    for s in MAJORS:
        rules.append(rule(f"ro1NT_game_{LETTERS[s]}", _bid(4, s), hcp=(10, MAX_HCP), lens=need(s, 6)))
    rules.append(rule("ro1NT_3NT", "3NT", "stopper", hcp=(10, 15),
                      when=lambda h, c: c.last_strain >= 4 or h.stop[c.last_strain]))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"ro1NT_{LETTERS[s]}", cheapest_at(s, 2), "to play", hcp=(0, 9), lens=need(s, 5),
                          guard=lambda c, s=s: s != c.last_strain))
        rules.append(rule(f"ro1NT_force_{LETTERS[s]}", cheapest_at(s, 3, min_level=3), "forcing", hcp=(10, MAX_HCP),
                          lens=need(s, 5), guard=lambda c, s=s: s != c.last_strain, forcing=True))
    rules += [rule("ro1NT_values_x", "X", "values, no clear bid", hcp=(10, MAX_HCP),
                   maxlens=lambda c: at_most(c.last_strain, 2), guard=their),
              rule("ro1NT_pass", "P")]
    return rules


# ---------------------------------------------------------------- overcalls and advances

def overcalls() -> list[Rule | Gate]:
    """Our side's first action after the opponents opened: direct or balancing."""
    bal = lambda lo, hi: (lambda c: (lo - 3 if c.balancing else lo, hi))  # noqa: E731
    suit_bid = lambda c: c.last_strain < NOTRUMP  # noqa: E731
    their_stop = lambda h, c: h.stop[c.last_strain] and stopped(h, c)  # noqa: E731
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
        jumps.append(rule(f"ovc_weak_jump_{LETTERS[s]}", cheapest_at(s, 3, min_level=2, jump=1), "weak jump overcall",
                          hcp=(5, 10), lens=need(s, 6), guard=lambda c, ok=ok: ok(c) and not c.balancing,
                          when=lambda h, c, s=s: h.good[s]))
    rules.append(Gate(lambda h, c: h.len[h.longest] >= 6, tuple(jumps)))
    five_card_suit = lambda h, c: h.len[h.longest] >= 5  # noqa: E731

    def suit_overcalls(suits) -> list[Rule]:
        out = []
        for s in suits:
            ok = lambda c, s=s: s != c.last_strain and not c.opp_suits[s]  # noqa: E731
            good = lambda h, c, s=s: h.good[s] or h.len[s] >= 6  # noqa: E731
            out += [rule(f"ovc_1{LETTERS[s]}", cheapest_at(s, 1), "overcall", hcp=bal(8, 17), lens=need(s, 5),
                         guard=ok, when=lambda h, c, s=s: h.good[s] or h.hcp >= 10),
                    rule(f"ovc_2{LETTERS[s]}", cheapest_at(s, 2, min_level=2), "overcall, good suit", hcp=bal(10, 17),
                         lens=need(s, 5), guard=ok, when=good),
                    rule(f"ovc_3{LETTERS[s]}", cheapest_at(s, 3, min_level=3), "overcall, good suit", hcp=bal(13, 17),
                         lens=need(s, 6), guard=ok, when=good)]
        return out

    rules.append(Gate(five_card_suit, tuple(suit_overcalls(MAJORS))))
    rules.append(rule("ovc_takeout_x", "X", "takeout double",
                      hcp=lambda c: (11 + c.last_level - (3 if c.balancing else 0), MAX_HCP),
                      lens=takeout_lens, maxlens=takeout_max, guard=lambda c: suit_bid(c) and c.last_level <= 4,
                      when=short_in_theirs, forcing=True))
    rules.append(Gate(five_card_suit, tuple(suit_overcalls(MINORS))))
    rules.append(rule("ovc_pass", "P"))
    return rules


def advances_after_takeout() -> list[Rule]:
    their = lambda c: c.last_strain  # noqa: E731
    stopped = lambda h, c: h.stop[their(c)] if their(c) < 4 else True  # noqa: E731
    rules = [
        rule("adv_x_penalty_pass", "P", "converts the double to penalties", hcp=(7, MAX_HCP),
             guard=lambda c: c.rho_call == PASS and c.last_level == 1 and c.doubled == 1 and c.last_strain < 4,
             when=lambda h, c: h.len[their(c)] >= 5 and h.top3[their(c)] >= 2),
    ]
    for m in MAJORS:
        rules.append(rule(f"adv_x_game_{LETTERS[m]}", _bid(4, m), "game", hcp=(12, MAX_HCP), lens=need(m, 5),
                          guard=lambda c, m=m: not c.opp_suits[m] and c.last_strain != m))
    rules.append(rule("adv_x_3NT", "3NT", "stopper", hcp=(13, MAX_HCP), when=lambda h, c: stopped(h, c) and h.bal))
    unbid_ok = lambda c, s: not c.opp_suits[s] and c.last_strain != s  # noqa: E731
    best = best_unbid
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_x_jump_{LETTERS[s]}", cheapest_at(s, 3, jump=1), "jump, invitational", hcp=(9, 11),
                          lens=need(s, 4), guard=lambda c, s=s: unbid_ok(c, s) and c.rho_call == PASS,
                          when=is_(best, s)))
    rules += [rule("adv_x_2NT", cheapest_at(NOTRUMP, 2, min_level=2), "invitational, stopper", hcp=(11, 12),
                   when=lambda h, c: stopped(h, c) and h.bal),
              rule("adv_x_1NT", cheapest_at(NOTRUMP, 1), "stopper, no 4-card major", hcp=(6, 10),
                   maxlens=(13, 13, 3, 3), when=stopped)]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_x_{LETTERS[s]}", cheapest_at(s, 3), "forced advance",
                          hcp=lambda c: (0, 8) if c.rho_call == PASS else (6, 11), lens=need(s, 4),
                          guard=lambda c, s=s: unbid_ok(c, s), when=is_(best, s)))
    rules.append(rule("adv_x_pass", "P", "opponents bid: no longer forced", guard=lambda c: c.rho_call != PASS))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_x_any_{LETTERS[s]}", cheapest_at(s, 4), "forced advance, longest unbid suit",
                          guard=lambda c, s=s: unbid_ok(c, s), when=is_(best, s), catchall=True))
    return rules


def advances_after_overcall() -> list[Rule]:
    rules = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        theirs = lambda c, s=s: c.p_natural == s  # noqa: E731 - partner overcalled in this suit
        if s >= HEARTS:
            rules.append(rule(f"adv_game_{LETTERS[s]}", _bid(4, s), "game raise", hcp=(14, MAX_HCP), lens=need(s, 3),
                              guard=theirs))
        rules += [rule(f"adv_limit_raise_{LETTERS[s]}", cheapest_at(s, 3, jump=1), "limit raise", hcp=(10, 13),
                       lens=need(s, 3), guard=theirs),
                  rule(f"adv_raise_{LETTERS[s]}", cheapest_at(s, 3), "raise", hcp=(6, 13), lens=need(s, 3),
                       guard=theirs)]
    rules += [rule("adv_3NT", "3NT", "stopper", hcp=(15, MAX_HCP), when=stopped),
              rule("adv_1NT", cheapest_at(NOTRUMP, 1), "stopper", hcp=(8, 11), when=stopped),
              rule("adv_2NT", "2NT", "stopper", hcp=(12, 14), when=stopped)]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_new_{LETTERS[s]}", cheapest_at(s, 2), "new suit, non-forcing", hcp=(8, 14),
                          lens=need(s, 5), guard=lambda c, s=s: not c.opp_suits[s] and c.p_natural != s,
                          when=lambda h, c, s=s: h.good[s]))
    rules.append(rule("adv_pass", "P"))
    return rules


def advances_after_1nt_overcall() -> list[Rule]:
    rules = [rule(f"adv_nt_game_{LETTERS[m]}", _bid(4, m), hcp=(9, MAX_HCP), lens=need(m, 6)) for m in MAJORS]
    rules.append(rule("adv_nt_3NT", "3NT", hcp=(10, MAX_HCP)))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"adv_nt_{LETTERS[s]}", cheapest_at(s, 2, min_level=2), "to play", hcp=(0, 7),
                          lens=need(s, 5), guard=lambda c, s=s: not c.opp_suits[s]))
    rules += [rule("adv_nt_2NT", "2NT", "invitational", hcp=(8, 9)), rule("adv_nt_pass", "P")]
    return rules


def advances_after_penalty_x() -> list[Rule]:
    rules = [rule(f"adv_xnt_run_{LETTERS[s]}", cheapest_at(s, 2), "weak, long suit", hcp=(0, 4), lens=need(s, 5))
             for s in (SPADES, HEARTS, DIAMONDS, CLUBS)]
    rules.append(rule("adv_xnt_pass", "P", "leaves the penalty double in"))
    return rules
