"""The generic later-round rules, behind every situation the phase tables do not cover (or cover
only in part): slam and game by combined values, penalty doubles, invitations, forced bids,
competing on a fit, preferences and partscores; else pass.
"""

from __future__ import annotations

from bridgeflow.dataset.encodings import DOUBLE, PASS, call_name
from bridgeflow.dataset.encodings import bid_index as _bid
from bridgeflow.dataset.encodings import bid_level as _level

from .conditions import best_fit, best_strain, cheapest, cheapest_at, combined, fit_lens, is_, need, stopped, their_bid
from .engine import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    LETTERS,
    MAJORS,
    MAX_HCP,
    MINORS,
    NOTRUMP,
    SPADES,
    THREE_NT,
    TWO_NT,
    Gate,
    Rule,
    rule,
)


def generic_rules() -> list[Rule | Gate]:
    """Placement by combined values: slam, game, penalty doubles, invitations, forced bids,
    competing on a fit, preferences; else pass."""
    suits = (SPADES, HEARTS, DIAMONDS, CLUBS)

    def their_strain_len(n):
        return lambda c: need(c.last_strain, n) if c.last_strain < 4 else (0,) * 4

    grand = lambda c: (max(37 - c.p_lo, 0), MAX_HCP)  # noqa: E731 - a grand slam needs partner's minimum to do
    slams = [rule(f"slam_{level}{call_name(_bid(1, s))[1:]}", _bid(level, s), f"{word} on combined values",
                  hcp=values, lens=fit_lens(s) if s < 4 else (0,) * 4,
                  guard=lambda c, level=level: c.our_last < _bid(level, 0) and c.p_lo >= 6, when=is_(best_strain, s))
             for level, values, word in ((7, grand, "grand slam"), (6, combined(33), "small slam"))
             for s in suits + (NOTRUMP,)]

    below_game = lambda c: not c.our_game or c.our_last == THREE_NT  # noqa: E731
    not_game = lambda c: not c.our_game  # noqa: E731
    games = [rule(f"game_4{LETTERS[m]}", _bid(4, m), "game on combined values and a fit", hcp=combined(25),
                  lens=fit_lens(m), guard=below_game, when=is_(best_fit, m)) for m in MAJORS]
    games += [rule(f"game_5{LETTERS[m]}", _bid(5, m), "minor-suit game, unbalanced or a suit unstopped",
                   hcp=combined(27), lens=fit_lens(m), guard=not_game,
                   when=lambda h, c, m=m: best_fit(h, c) == m and (h.shortest <= 1 or not stopped(h, c)))
              for m in MINORS]
    games.append(rule("game_3NT", "3NT", "game on combined values, stoppers", hcp=combined(25), guard=not_game,
                      when=lambda h, c: best_fit(h, c) < HEARTS and stopped(h, c)))

    penalties = [  # a double is legal only of their undoubled bid: the gate below is implied
        rule("penalty_x_values", "X", "penalty: they outbid our combined values", hcp=combined(25),
             lens=their_strain_len(2), guard=lambda c: c.last_level >= 3),
        rule("penalty_x_trumps", "X", "penalty: trump length and the balance of strength", hcp=combined(22),
             lens=their_strain_len(4), guard=lambda c: c.last_level >= 2,
             when=lambda h, c: c.last_strain == NOTRUMP or h.top3[c.last_strain] >= 1),
    ]

    invite_range = lambda c: (max(25 - c.p_hi, 23 - c.p_est, 0), 24 - c.p_est)  # noqa: E731
    # Invite only when partner bid last, has limited the hand with room left to accept, and has
    # either shown values or was forced to bid (a weak hand bidding freely has signed off).
    room = lambda c: (c.last_by_us and c.p_hi > c.p_est and c.p_hi - c.p_lo <= 12  # noqa: E731
                      and (c.p_lo >= 6 or c.p_answered) and not c.p_forcing)
    invites = [rule(f"invite_3{LETTERS[m]}", _bid(3, m), "invitational", hcp=invite_range, lens=fit_lens(m),
                    guard=lambda c, m=m: room(c) and c.last_bid < _bid(3, m), when=is_(best_fit, m)) for m in MAJORS]
    invites.append(rule("invite_2NT", "2NT", "invitational", hcp=invite_range,
                        guard=lambda c: room(c) and c.last_bid < TWO_NT,
                        when=lambda h, c: h.bal and best_fit(h, c) < HEARTS and stopped(h, c)))

    forced = lambda c: c.p_forcing and c.rho_call == PASS  # noqa: E731
    forced_bids = [rule("forced_penalty_pass", "P", "converts partner's double to penalties",
                        lens=their_strain_len(5),
                        guard=lambda c: forced(c) and c.p_last == DOUBLE and c.last_strain < NOTRUMP,
                        when=lambda h, c: h.top3[c.last_strain] >= 2)]
    forced_bids += [rule(f"forced_raise_{LETTERS[s]}", cheapest_at(s, 5), "support for partner's suit",
                         lens=need(s, 3 if s >= HEARTS else 4), guard=lambda c, s=s: forced(c) and c.p_natural == s)
                    for s in suits]
    forced_bids += [rule(f"forced_own_{LETTERS[s]}", cheapest_at(s, 4), "a long suit", lens=need(s, 5),
                         guard=lambda c, s=s: forced(c) and not c.opp_suits[s], when=is_(lambda h, c: h.longest, s))
                    for s in suits]
    forced_bids.append(rule("forced_nt", cheapest_at(NOTRUMP, 3), "stoppers", guard=forced, when=stopped))
    forced_bids += [rule(f"forced_any_{LETTERS[s]}", cheapest_at(s, 5), "forced, longest suit", guard=forced,
                         when=is_(lambda h, c: h.longest, s), catchall=True) for s in suits]

    competes = [rule(f"compete_own_{LETTERS[s]}", cheapest_at(s, 3), "rebids a long suit in competition",
                     hcp=(13, MAX_HCP), lens=need(s, 6), guard=lambda c, s=s: c.me_len[s] >= 5,
                     when=lambda h, c, s=s: h.longest == s) for s in suits]
    competes += [rule(f"compete_{LETTERS[s]}", cheapest_at(s, 4), "competes on a fit (total tricks)",
                     lens=fit_lens(s), guard=lambda c: c.p_lo > 0,
                     when=lambda h, c, s=s: best_fit(h, c) == s
                     and _level(cheapest(c, s)) <= h.len[s] + c.p_fit[s] - 6) for s in suits]
    competing = lambda h, c: their_bid(c) and (c.p_lo > 0 or h.hcp >= 13)  # noqa: E731

    signoff = lambda c: (0, max(24 - c.p_est, 0))  # noqa: E731 - no game or invitation: a limited hand
    partscores = [rule(f"preference_{LETTERS[s]}", cheapest_at(s, 2), "better fit than partner's last suit",
                       hcp=signoff, lens=fit_lens(s),
                       guard=lambda c, s=s: c.last_by_us and c.last_strain != s and c.p_lo > 0, when=is_(best_fit, s))
                  for s in suits]
    partscores += [rule(f"own_suit_{LETTERS[s]}", cheapest_at(s, 2), "long suit, no fit", hcp=signoff,
                        lens=need(s, 6),
                        guard=lambda c, s=s: c.last_by_us and c.last_strain != s and not c.opp_suits[s],
                        when=lambda h, c, s=s: best_fit(h, c) < 0 and h.longest == s) for s in suits]
    partscores.append(rule("misfit_nt", cheapest_at(NOTRUMP, 2), "misfit with partner's last suit",
                           hcp=lambda c: (6, max(24 - c.p_est, 6)),
                           guard=lambda c: c.last_by_us and 0 <= c.p_natural < NOTRUMP and c.p_natural == c.last_strain,
                           when=lambda h, c: h.len[c.p_natural] <= (2 if c.last_level == 1 else 1)
                           and best_fit(h, c) < 0 and stopped(h, c)))

    return [
        Gate(lambda h, c: c.p_lo >= 6 and h.hcp + c.p_est >= 33, tuple(slams)),
        rule("slam_reached_pass", "P", "slam reached", guard=lambda c: c.last_by_us and c.last_level >= 6),
        Gate(lambda h, c: h.hcp + c.p_est >= 25, tuple(games)),
        rule("game_reached_pass", "P", "game reached", guard=lambda c: c.last_by_us and c.our_game),
        Gate(lambda h, c: their_bid(c) and c.doubled == 0, tuple(penalties)),
        Gate(lambda h, c: room(c), tuple(invites)),
        Gate(lambda h, c: forced(c), tuple(forced_bids)),
        Gate(competing, tuple(competes)),
        Gate(lambda h, c: c.last_by_us, tuple(partscores)),
        rule("later_pass", "P", "nothing more to say", catchall=True),
    ]
