"""Openings: strong 2C, notrump, one of a suit (SAYC's choice of suit), preempts and weak twos, light
openings by the rule of 20, and the rule of 15 in fourth seat.
"""

from __future__ import annotations

from bridgeflow.dataset.encodings import bid_index as _bid

from .conditions import at_most, is_, need
from .engine import CLUBS, DIAMONDS, HEARTS, LETTERS, MAJORS, MAX_HCP, SPADES, Ctx, Hand, Rule, rule


def _rule_of_20(hand: Hand, ctx: Ctx) -> bool:
    a, b = sorted(hand.len)[2:]
    return hand.hcp + a + b >= 20


def _no_side_major(suit: int):
    return lambda hand, ctx: all(hand.len[m] < 4 for m in MAJORS if m != suit)


def opening_rules() -> list[Rule]:
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
                          hcp=(12, 21), lens=need(s, 5 if s >= HEARTS else 3), when=is_(lambda h, c: h.open_suit, s)))
    for s in (SPADES, HEARTS):
        rules.append(rule(f"open_4{LETTERS[s].lower()}", _bid(4, s), "preempt, good suit", hcp=(5, 11),
                          lens=need(s, 8), guard=early, when=lambda h, c, s=s: h.good[s]))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"open_3{LETTERS[s].lower()}", _bid(3, s), "preempt, good suit", hcp=(5, 10),
                          lens=need(s, 7), guard=early, when=lambda h, c, s=s: h.good[s]))
    for s in (SPADES, HEARTS, DIAMONDS):
        rules.append(rule(f"open_2{LETTERS[s].lower()}", _bid(2, s), "weak two, good suit, no side 4-card major",
                          hcp=(5, 11), lens=need(s, 6), maxlens=at_most(s, 6), guard=early,
                          when=lambda h, c, s=s: h.good[s] and _no_side_major(s)(h, c)))
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        rules.append(rule(f"open_1{LETTERS[s].lower()}_light", _bid(1, s), "light opening, rule of 20",
                          hcp=(10, 11), lens=need(s, 5 if s >= HEARTS else 3),
                          when=lambda h, c, s=s: h.open_suit == s and _rule_of_20(h, c)))
    rules.append(rule("open_pass", "P", hcp=(0, 11)))
    return rules
