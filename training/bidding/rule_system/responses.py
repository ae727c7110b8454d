"""Responder's first call after partner's opening when the opponents stay out: to one of a suit,
to 1NT and 2NT, to the strong 2C, to weak twos and preempts. (Over an overcall or a double:
`competition`.)
"""

from __future__ import annotations

from bridgeflow.dataset.encodings import bid_index as _bid
from bridgeflow.dataset.encodings import bid_level as _level
from bridgeflow.dataset.encodings import bid_strain as _strain

from .conditions import at_most, cheapest_at, need
from .engine import CLUBS, DIAMONDS, HEARTS, LETTERS, MAJORS, MAX_HCP, MINORS, SPADES, Ctx, Hand, Rule, rule


# ---------------------------------------------------------------- to one of a suit

def _up_the_line_hearts(hand: Hand, ctx: Ctx) -> bool:
    """Respond 1H rather than 1S with 4-4, or with longer hearts."""
    return hand.len[SPADES] < 5 or hand.len[HEARTS] > hand.len[SPADES]


def _longer_minor(minor: int):
    other = CLUBS if minor == DIAMONDS else DIAMONDS
    tie_wins = minor == CLUBS  # with equal minors, up the line
    return lambda hand, ctx: hand.len[minor] > hand.len[other] or (hand.len[minor] == hand.len[other] and tie_wins)


def _has_shortness(hand: Hand, ctx: Ctx) -> bool:
    return hand.shortest <= 1


def responses_major(major: int) -> list[Rule]:
    m = LETTERS[major]
    fit3, fit4, fit5 = need(major, 3), need(major, 4), need(major, 5)
    no_fit = at_most(major, 2)
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
                              hcp=(19, MAX_HCP), lens=need(s, 5), forcing=True))
    if major == HEARTS:
        rules.append(rule("r1H_1S", "1S", "new suit, forcing", hcp=(6, MAX_HCP), S=4, forcing=True))
    rules.append(rule(f"r1{m}_3nt", "3NT", hcp=(15, 17), bal=True, maxlens=no_fit))
    if major == SPADES:
        rules.append(rule("r1S_2H", "2H", "two over one, forcing", hcp=(10, MAX_HCP), H=5, forcing=True))
    for s in MINORS:
        rules.append(rule(f"r1{m}_2{LETTERS[s]}", _bid(2, s), "two over one, forcing", hcp=(10, MAX_HCP),
                          lens=need(s, 4), when=_longer_minor(s), forcing=True))
    rules.append(rule(f"r1{m}_1nt", "1NT", "non-forcing", hcp=(6, 10)))
    for s in (CLUBS, DIAMONDS):
        rules.append(rule(f"r1{m}_2{LETTERS[s]}_3", _bid(2, s), "two over one on a 3-card minor, forcing",
                          hcp=(10, MAX_HCP), lens=need(s, 3), forcing=True))
    rules.append(rule(f"r1{m}_pass", "P", hcp=(0, 5)))
    return rules


def responses_minor(minor: int) -> list[Rule]:
    m = LETTERS[minor]
    no_major = (13, 13, 3, 3)
    rules = [rule(f"r1{m}_jump_shift_{LETTERS[s]}", _bid(2, s), "strong jump shift", hcp=(19, MAX_HCP),
                  lens=need(s, 5), forcing=True) for s in MAJORS]
    rules += [
        rule(f"r1{m}_1H", "1H", "new suit, forcing", hcp=(6, MAX_HCP), H=4, when=_up_the_line_hearts, forcing=True),
        rule(f"r1{m}_1S", "1S", "new suit, forcing", hcp=(6, MAX_HCP), S=4, forcing=True),
    ]
    if minor == CLUBS:
        rules.append(rule("r1C_1D", "1D", "new suit, forcing", hcp=(6, MAX_HCP), D=4, maxlens=no_major, forcing=True))
    rules += [
        rule(f"r1{m}_2nt", "2NT", "forcing", hcp=(13, 15), bal=True, maxlens=no_major, forcing=True),
        rule(f"r1{m}_3nt", "3NT", hcp=(16, 17), bal=True, maxlens=no_major),
        rule(f"r1{m}_limit_raise", _bid(3, minor), "limit raise", hcp=(10, 12), lens=need(minor, 4), maxlens=no_major),
        rule(f"r1{m}_raise", _bid(2, minor), "single raise", hcp=(6, 10), lens=need(minor, 5 if minor == CLUBS else 4),
             maxlens=no_major),
        rule(f"r1{m}_1nt", "1NT", "no 4-card major", hcp=(6, 10), maxlens=no_major),
    ]
    if minor == DIAMONDS:
        rules.append(rule("r1D_2C", "2C", "new suit, forcing", hcp=(10, MAX_HCP), C=4, forcing=True))
    rules.append(rule(f"r1{m}_pass", "P", hcp=(0, 5)))
    return rules


# ---------------------------------------------------------------- to 1NT and 2NT

def _transfer_to(major: int):
    other = HEARTS if major == SPADES else SPADES
    if major == SPADES:
        return lambda hand, ctx: hand.len[SPADES] >= hand.len[other]
    return lambda hand, ctx: hand.len[HEARTS] > hand.len[other]


def _has_4_major(hand: Hand, ctx: Ctx) -> bool:
    return hand.len[HEARTS] >= 4 or hand.len[SPADES] >= 4


def responses_1nt() -> list[Rule]:
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


def responses_2nt() -> list[Rule]:
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


# ---------------------------------------------------------------- to strong 2C, weak twos and preempts

def responses_2c() -> list[Rule]:
    rules = [rule(f"r2C_positive_{LETTERS[s]}", _bid(3 if s < HEARTS else 2, s), "positive response, good suit",
                  hcp=(8, MAX_HCP), lens=need(s, 5), when=lambda h, c, s=s: h.good[s], forcing=True)
             for s in (SPADES, HEARTS, DIAMONDS, CLUBS)]
    rules.append(rule("r2C_positive_2NT", "2NT", "positive response", hcp=(8, MAX_HCP), bal=True, forcing=True))
    rules.append(rule("r2C_2D_waiting", "2D", "waiting, artificial", forcing=True))
    return rules


def responses_weak(opening: int) -> list[Rule]:
    s, level = _strain(opening), _level(opening)
    x = LETTERS[s]
    game = _bid(4, s) if s >= HEARTS else _bid(5, s)
    rules = []
    if level < 4:
        if s >= HEARTS:
            rules.append(rule(f"rw{level}{x}_game", game, "game raise", hcp=(15, MAX_HCP), lens=need(s, 2)))
            rules.append(rule(f"rw{level}{x}_preempt_game", game, "preemptive raise to game", hcp=(0, 14),
                              lens=need(s, 4), guard=lambda ctx: not ctx.we_vul or ctx.they_vul))
        rules.append(rule(f"rw{level}{x}_3NT", "3NT", "to play, no short suit", hcp=(16, MAX_HCP), lens=need(s, 1),
                          when=lambda h, c: h.shortest >= 2))
        if s < HEARTS:
            rules.append(rule(f"rw{level}{x}_game", game, "game raise", hcp=(16, MAX_HCP), lens=need(s, 3)))
        if level == 2:
            rules.append(rule(f"rw2{x}_raise", _bid(3, s), "preemptive raise, not invitational", hcp=(0, 14),
                              lens=need(s, 3)))
            for t in (SPADES, HEARTS, DIAMONDS, CLUBS):
                if t != s:
                    rules.append(rule(f"rw2{x}_new_{LETTERS[t]}", cheapest_at(t, 3), "new suit, forcing",
                                      hcp=(16, MAX_HCP), lens=need(t, 5), forcing=True))
    rules.append(rule(f"rw{level}{x}_pass", "P"))
    return rules
