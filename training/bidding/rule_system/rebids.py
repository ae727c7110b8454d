"""Opener's second call: after a response to one of a suit (raises, new suits, reverses, jump
shifts, notrump), after partner passed an overcall (reopening) or made a negative double, and
the answers to Stayman, transfers and invitations after 1NT, 2NT and 2C.
"""

from __future__ import annotations

from bridgeflow.dataset.encodings import DOUBLE, PASS, call_name, parse_call
from bridgeflow.dataset.encodings import bid_index as _bid
from bridgeflow.dataset.encodings import bid_level as _level
from bridgeflow.dataset.encodings import bid_strain as _strain

from .conditions import at_most, cheapest_at, is_, need, their_bid
from .engine import CLUBS, DIAMONDS, HEARTS, LETTERS, MAJORS, MAX_HCP, NOTRUMP, ONE_NT, SPADES, Ctx, Rule, rule


# ---------------------------------------------------------------- after one of a suit

def _ours_last(ctx: Ctx) -> bool:
    """Opener's passes hold while our side has the last bid; over an intervention the generic
    competitive rules decide."""
    return ctx.last_by_us


def opener_rebids(opening: int, response: int) -> list[Rule] | None:
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
                    rule(f"{tag}_4{xl}", _bid(4, x), hcp=(12, 17), lens=need(x, 6)) if x >= HEARTS else None,
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
                              lens=need(z, 4), forcing=True))
        else:
            rules.append(rule(f"{tag}_new_{LETTERS[z]}", call, "new suit", hcp=(12, 18), lens=need(z, 4)))
    return rules


def _rebids_after_one_level(x: int, response: int, tag: str) -> list[Rule]:
    y = _strain(response)
    xl = LETTERS[x]
    new = _new_suits(x, response, tag)
    rules = []
    if y >= HEARTS:
        rules += [rule(f"{tag}_raise4", _bid(4, y), "game raise", hcp=(19, 21), lens=need(y, 4)),
                  rule(f"{tag}_raise3", _bid(3, y), "invitational raise", hcp=(16, 18), lens=need(y, 4)),
                  rule(f"{tag}_raise2", _bid(2, y), "raise", hcp=(12, 15), lens=need(y, 4))]
    rules += [r for r in new if _level(r.call) == 1]
    rules += [rule(f"{tag}_1NT", "1NT", hcp=(12, 14), bal=True),
              rule(f"{tag}_2NT", "2NT", hcp=(18, 19), bal=True)]
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if z not in (x, y):
            rules.append(rule(f"{tag}_jump_shift_{LETTERS[z]}", _cheapest_above(response, z) + 5,
                              "jump shift, game forcing", hcp=(19, MAX_HCP), lens=need(z, 4), forcing=True))
    rules += [r for r in new if r.forcing]
    rules.append(rule(f"{tag}_3{xl}", _bid(3, x), "jump rebid", hcp=(16, MAX_HCP), lens=need(x, 6)))
    if y < HEARTS:
        rules += [rule(f"{tag}_raise3", _bid(3, y), "invitational raise", hcp=(16, 18), lens=need(y, 4)),
                  rule(f"{tag}_raise2", _bid(2, y), "raise", hcp=(12, 15), lens=need(y, 4))]
    rules += [r for r in new if _level(r.call) == 2 and not r.forcing]
    rules += [rule(f"{tag}_2{xl}", _bid(2, x), "rebids the suit", hcp=(12, 15), lens=need(x, 6)),
              rule(f"{tag}_2{xl}_min", _bid(2, x), "minimum, nothing else to say", hcp=(12, 18), lens=need(x, 5),
                   catchall=True),
              rule(f"{tag}_1NT_other", "1NT", "minimum, nothing else to say", hcp=(12, 15), catchall=True)]
    return rules


def _rebids_after_1nt(x: int, tag: str) -> list[Rule]:
    xl = LETTERS[x]
    rules = []
    if x >= HEARTS:
        rules.append(rule(f"{tag}_4{xl}", _bid(4, x), hcp=(19, MAX_HCP), lens=need(x, 6)))
    rules += [rule(f"{tag}_3{xl}", _bid(3, x), "invitational", hcp=(16, 18), lens=need(x, 6)),
              rule(f"{tag}_2NT", "2NT", "invitational", hcp=(18, 19), bal=True)]
    new = _new_suits(x, ONE_NT, tag)
    rules += [r for r in new if r.forcing]
    rules += [rule(f"{tag}_jump_shift_{LETTERS[z]}", _bid(3, z), "jump shift, game forcing", hcp=(19, MAX_HCP),
                   lens=need(z, 4), forcing=True) for z in (HEARTS, DIAMONDS, CLUBS) if z < x]
    rules += [r for r in new if not r.forcing]
    rules += [rule(f"{tag}_2{xl}", _bid(2, x), "rebids the suit", hcp=(12, 15), lens=need(x, 6)),
              rule(f"{tag}_pass", "P", guard=_ours_last)]
    return rules


def _rebids_after_two_over_one(x: int, y: int, tag: str) -> list[Rule]:
    xl = LETTERS[x]
    rules = [rule(f"{tag}_raise", _bid(3, y), "raise, forcing", hcp=(12, MAX_HCP),
                  lens=need(y, 3 if y >= HEARTS else 4), forcing=True),
             rule(f"{tag}_2NT", "2NT", hcp=(12, 14), bal=True, forcing=True),
             rule(f"{tag}_3NT", "3NT", hcp=(18, 19), bal=True),
             rule(f"{tag}_3{xl}", _bid(3, x), "jump rebid, forcing", hcp=(16, MAX_HCP), lens=need(x, 6), forcing=True),
             rule(f"{tag}_2{xl}", _bid(2, x), "rebids the suit", hcp=(12, 15), lens=need(x, 6))]
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if z in (x, y):
            continue
        if z > y:
            rules.append(rule(f"{tag}_new_{LETTERS[z]}", _bid(2, z), "new suit, forcing",
                              hcp=(17 if z > x else 12, MAX_HCP), lens=need(z, 4), forcing=True))
        else:
            rules.append(rule(f"{tag}_new_{LETTERS[z]}", _bid(3, z), "new suit at the three level, forcing",
                              hcp=(15, MAX_HCP), lens=need(z, 4), forcing=True))
    rules += [rule(f"{tag}_2{xl}_min", _bid(2, x), "nothing else to say", lens=need(x, 4), catchall=True),
              rule(f"{tag}_2NT_other", "2NT", "nothing else to say", forcing=True, catchall=True)]
    return rules


def _rebids_after_jump_shift(x: int, y: int, tag: str) -> list[Rule]:
    xl = LETTERS[x]
    raise_call = cheapest_at(y, 4)
    return [rule(f"{tag}_raise", raise_call, "support", lens=need(y, 3 if y >= HEARTS else 4)),
            rule(f"{tag}_nt", cheapest_at(NOTRUMP, 3), bal=True),
            rule(f"{tag}_rebid_{xl}", cheapest_at(x, 4), "rebids the suit", lens=need(x, 6)),
            rule(f"{tag}_other_{xl}", cheapest_at(x, 4), "nothing else to say", catchall=True)]


def _reopening(x: int) -> list[Rule]:
    """Opener after partner passed an overcall: reopen with a double when short in their suit,
    notrump with a stopper, a long suit or a strong second suit."""
    xl = LETTERS[x]
    theirs = lambda c: their_bid(c) and c.last_level <= 2 and c.last_strain < NOTRUMP  # noqa: E731
    short = lambda c: at_most(c.last_strain, 2)  # noqa: E731
    return [rule(f"rb1{xl}_reopen_x", "X", "reopening double, short in their suit", hcp=(12, MAX_HCP), maxlens=short,
                 guard=theirs, when=lambda h, c: h.len[c.last_strain] <= 1, forcing=True),
            rule(f"rb1{xl}_reopen_nt", cheapest_at(NOTRUMP, 2), "stopper in their suit", hcp=(18, 19), bal=True,
                 guard=theirs, when=lambda h, c: h.stop[c.last_strain])] + [
            rule(f"rb1{xl}_reopen_new_{LETTERS[z]}", cheapest_at(z, 2), "strong second suit", hcp=(16, MAX_HCP),
                 lens=need(z, 5), guard=lambda c, z=z: not c.opp_suits[z] and c.last_strain != z)
            for z in (SPADES, HEARTS, DIAMONDS, CLUBS) if z != x] + [
            rule(f"rb1{xl}_reopen_{xl}", cheapest_at(x, 3), "rebids a long suit", hcp=(12, 17), lens=need(x, 6)),
            rule(f"rb1{xl}_reopen_x_strong", "X", "reopening double, strong", hcp=(16, MAX_HCP), maxlens=short,
                 guard=theirs, forcing=True)]


def _after_negative_double(x: int) -> list[Rule]:
    xl = LETTERS[x]
    rules = []
    for m in MAJORS:
        shown = lambda c, m=m: c.p_len[m] >= 4 and not c.opp_suits[m]  # noqa: E731
        rules.append(rule(f"rb1{xl}_negx_jump_{LETTERS[m]}", cheapest_at(m, 3, jump=1), "jump in partner's major",
                          hcp=(16, 18), lens=need(m, 4), guard=shown))
        rules.append(rule(f"rb1{xl}_negx_{LETTERS[m]}", cheapest_at(m, 3), "partner's major", hcp=(12, 15),
                          lens=need(m, 4), guard=shown))
    rules += [rule(f"rb1{xl}_negx_nt", cheapest_at(NOTRUMP, 2), "stopper in their suit", hcp=(12, 14),
                   when=lambda h, c: h.stop[c.last_strain] if c.last_strain < 4 else True),
              rule(f"rb1{xl}_negx_penalty", "P", "converts to penalties", hcp=(12, MAX_HCP),
                   guard=lambda c: c.rho_call == PASS and c.last_strain < NOTRUMP,
                   when=lambda h, c: h.len[c.last_strain] >= 4 and h.top3[c.last_strain] >= 2),
              rule(f"rb1{xl}_negx_rebid_{xl}", cheapest_at(x, 3), "rebids a long suit", lens=need(x, 6))]
    for z in (SPADES, HEARTS, DIAMONDS, CLUBS):
        if z != x:
            rules.append(rule(f"rb1{xl}_negx_new_{LETTERS[z]}", cheapest_at(z, 2), "second suit", lens=need(z, 4),
                              guard=lambda c, z=z: not c.opp_suits[z] and c.last_strain != z))
    rules.append(rule(f"rb1{xl}_negx_other_{xl}", cheapest_at(x, 3), "nothing else to say", catchall=True))
    return rules


# ---------------------------------------------------------------- after 1NT, 2NT and 2C

def rebids_1nt() -> dict[int, list[Rule]]:
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


def rebids_2nt() -> dict[int, list[Rule]]:
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


def rebids_2c() -> dict[int, list[Rule]]:
    after_2d = [
        rule("rb2C_2NT", "2NT", hcp=(22, 24), bal=True),
        rule("rb2C_3NT", "3NT", hcp=(25, 27), bal=True),
    ]
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        after_2d.append(rule(f"rb2C_{LETTERS[s]}", _bid(2 if s >= HEARTS else 3, s), "natural, forcing",
                             lens=need(s, 5), when=is_(lambda h, c: h.longest, s), forcing=True))
    after_2d.append(rule("rb2C_2NT_other", "2NT", "strong, no 5-card suit", forcing=True, catchall=True))
    return {parse_call("2D"): after_2d}
