"""The rule-based bidder: textbook hands per rule family, reading of the auction, the engine's
safety net, and properties on random deals (legal, finished, explainable, hand-private)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import DOUBLE, PASS, N, call_name, hands_from_owner, parse_call, parse_pbn_hand
from bridgeflow.training.bidding.rule_bidder import FALLBACK, Hand, RuleBidder, RuleTable, _Auction, rule

BIDDER = RuleBidder()


def calls(text: str) -> list[int]:
    return [parse_call(token) for token in text.split()]


def decide(hand: str, auction: str = "", dealer: int = N, vul: int = 0):
    cards = parse_pbn_hand(hand)
    assert len(cards) == 13, hand
    return BIDDER.explain_call(cards, calls(auction), dealer, vul)


# (auction so far with North dealing, the hand to call, expected call, expected rule)
TEXTBOOK = {
    "openings": [
        ("", "AQ3.KJ4.Q963.K52", "1NT", "open_1nt"),
        ("", "AKJ85.Q94.K72.83", "1S", "open_1s"),
        ("", "AK976.KQ854.A3.4", "1S", "open_1s"),  # 5-5 majors: the higher
        ("", "K84.A5.KJ73.Q952", "1D", "open_1d"),  # 4-4 minors
        ("", "AQ42.K83.Q84.K93", "1C", "open_1c"),  # 3-3 minors
        ("", "AKQ5.AKJ4.AQ3.K2", "2C", "open_2c"),
        ("", "AK5.KQ84.AQ3.Q32", "2NT", "open_2nt"),
        ("", "84.KQJ954.743.82", "2H", "open_2h"),
        ("", "KQJ9863.4.852.73", "3S", "open_3s"),
        ("", "KJ954.AQ873.3.42", "1S", "open_1s_light"),  # rule of 20
        ("", "Q84.J73.K952.Q63", "P", "open_pass"),
        ("P P P", "4.AKJ53.K872.J84", "P", "open_pass_4th"),  # rule of 15 fails
    ],
    "notrump responses": [
        ("1NT P", "KJ84.Q73.A52.963", "2C", "r1NT_2C_stayman"),
        ("1NT P", "84.KJ854.Q73.962", "2D", "r1NT_2D_transfer"),
        ("1NT P", "KJ854.84.Q73.962", "2H", "r1NT_2H_transfer"),
        ("1NT P", "K84.Q73.AJ52.Q96", "3NT", "r1NT_3NT"),
        ("1NT P", "K84.Q73.J852.Q96", "2NT", "r1NT_2NT"),
        ("1NT P", "984.Q73.J852.T96", "P", "r1NT_pass"),
        ("1NT P 2C P", "AQ3.KJ84.Q96.K52", "2H", "rb1NT_stayman_2H"),
        ("1NT P 2C P", "AQ3.KJ4.Q963.K52", "2D", "rb1NT_stayman_2D"),
        ("1NT P 2D P", "AQ3.KJ4.Q963.K52", "2H", "rb1NT_complete_2H"),
    ],
    "strong and weak twos": [
        ("2C P", "984.Q73.J852.T96", "2D", "r2C_2D_waiting"),
        ("2C P 2D P", "AK5.KQ84.AQ3.KQ2", "2NT", "rb2C_2NT"),
        ("2H P", "A84.K73.AK52.K62", "4H", "rw2H_game"),
    ],
    "after a transfer": [
        ("1NT P 2D P 2H P", "84.KJ854.Q73.962", "P", "later_pass"),
        ("1NT P 2D P 2H P", "84.KJ854.KQ3.962", "3NT", "game_3NT"),
        ("1NT P 2D P 2H P 3NT P", "AQ3.KJ4.Q963.K52", "4H", "game_4H"),  # three hearts: the 5-3 fit
    ],
    "responses to a major": [
        ("1H P", "K84.Q73.J852.Q96", "2H", "r1H_raise"),
        ("1H P", "K84.QT73.A852.Q6", "3H", "r1H_limit_raise"),
        ("1H P", "K84.QT73.A852.A6", "2NT", "r1H_jacoby_2nt"),
        ("1H P", "KJ84.73.Q852.Q96", "1S", "r1H_1S"),
        ("1H P", "K84.73.Q852.Q962", "1NT", "r1H_1nt"),
        ("1H P", "K84.73.AQ852.K96", "2D", "r1H_2D"),
        ("1H P", "984.73.Q852.J962", "P", "r1H_pass"),
    ],
    "opener's rebids": [
        ("1H P 1S P", "AJ84.AK853.K72.4", "2S", "rb1H_1S_raise2"),
        ("1H P 1S P", "A4.AK853.Q72.984", "1NT", "rb1H_1S_1NT"),
        ("1H P 1S P", "84.AKJ853.K72.J4", "2H", "rb1H_1S_2H"),
        ("1D P 1S P", "4.AQ84.AKJ73.K42", "2H", "rb1D_1S_reverse_H"),
        ("1S P 2S P", "AKJ85.KQ4.A72.83", "3S", "rb1S_2S_invite"),
        ("1S P 2S P", "AKJ85.KQ4.AQ2.83", "4S", "rb1S_2S_game"),
    ],
    "overcalls": [
        ("1D", "KQJ84.73.852.A96", "1S", "ovc_1S"),
        ("1D", "AQ3.KJ4.KJ96.K52", "1NT", "ovc_1nt"),
        ("1D", "KJ84.AQ73.4.K962", "X", "ovc_takeout_x"),
        ("1D", "KQJ984.73.852.96", "2S", "ovc_weak_jump_S"),
        ("1D", "984.73.Q852.J962", "P", "ovc_pass"),
        ("1NT", "AQ3.KJ4.KJ96.K52", "X", "ovc_x_1nt"),
    ],
    "advances of a takeout double": [
        ("1D X P", "9842.J73.Q52.962", "1S", "adv_x_S"),
        ("1D X P", "KJ84.Q73.852.A96", "2S", "adv_x_jump_S"),
        ("1D X P", "84.73.KQJT85.A96", "P", "adv_x_penalty_pass"),
        ("1D X P", "K84.Q73.KJ52.962", "1NT", "adv_x_1NT"),
    ],
    "negative doubles": [
        ("1C 1S", "84.KJ73.Q852.K96", "X", "ro1C_negative_x"),
        ("1C 1S X P", "A4.AQ84.K72.J984", "2H", "rb1C_negx_H"),
    ],
    "penalty doubles": [
        ("1NT 2H", "K84.KJ94.Q52.962", "X", "ro1NT_penalty_x"),
        ("1NT P 3NT 4S P P", "KJ94.Q73.A52.K96", "X", "penalty_x_values"),
    ],
    "competition": [
        ("1H 2C 2H 3C", "84.AKJ853.K72.J4", "3H", "compete_H"),
    ],
    "game and slam": [
        ("1NT P", "KQ4.AJ3.KQ52.KQ6", "6NT", "r1NT_6NT"),
        ("1S P 2NT P 3S P", "KQ84.AQ3.K52.Q96", "6S", "slam_6S"),
        ("1H P 1S P 1NT P", "KJ84.Q73.A52.K96", "4H", "game_4H"),
        ("1H P 1S P 1NT P", "KJ84.73.Q52.J962", "P", "later_pass"),
    ],
}


@pytest.mark.parametrize("auction, hand, call, rule_name",
                         [case for family in TEXTBOOK.values() for case in family],
                         ids=[f"{family}: {case[0] or '-'} {case[1]}" for family, cases in TEXTBOOK.items()
                              for case in cases])
def test_textbook_hands(auction, hand, call, rule_name):
    decision = decide(hand, auction)
    assert (call_name(decision.call), decision.rule) == (call, rule_name), decision.meaning


def test_meaning_states_what_the_call_shows():
    assert decide("AKJ85.Q94.K72.83").meaning == "1S: 12-21 HCP, 5+ spades"
    assert decide("AQ3.KJ4.Q963.K52").meaning == "1NT: 15-17 HCP, balanced"
    assert decide("84.KJ854.Q73.962", "1NT P").meaning.startswith("2D: 5+ hearts")


def test_reading_the_auction_uses_the_rules_meanings():
    """What each seat has shown is read from the same rules that bid."""
    shown = BIDDER.shown(calls("1NT P 2D P"), N, 0)
    assert shown[N].hcp == (15, 17)
    assert shown[N].min_len == (2, 2, 2, 2) and shown[N].max_len == (5, 5, 5, 5)
    assert shown[2].min_len[2] == 5  # South's transfer promised five hearts, not diamonds
    shown = BIDDER.shown(calls("1H P 1S P 1NT P"), N, 0)
    assert shown[N].hcp == (12, 14) and shown[N].min_len[2] == 5
    assert shown[2].hcp[0] == 6 and shown[2].min_len[3] == 4


def test_combined_values_decide_game():
    """Responder's decision adds its HCP to opener's range as read from the auction: 12-14 after a
    1NT rebid, 16-18 after an invitational raise."""
    after_1nt_rebid = "1H P 1S P 1NT P"
    assert decide("KJ84.Q73.A52.K96", after_1nt_rebid).rule == "game_4H"  # 13 + 13
    assert decide("KJ84.Q73.Q52.K96", after_1nt_rebid).rule == "invite_3H"  # 11 + 13
    after_invitation = "1H P 2H P 3H P"
    assert decide("K84.Q73.J852.Q96", after_invitation).rule == "game_4H"  # 8 + 17
    assert decide("984.Q73.J852.K96", after_invitation).rule == "later_pass"  # 6 + 17


def test_fallback_when_no_rule_fires():
    table = RuleTable("test", [rule("needs_22", "2C", hcp=(22, 40))])
    state = _Auction(N, 0)
    assert table.decide(Hand(parse_pbn_hand("Q84.J73.K952.Q63")), state.view()) == (FALLBACK, PASS)


def test_illegal_call_is_skipped():
    table = RuleTable("test", [rule("one_club", "1C"), rule("double", "X"), rule("one_spade", "1S")])
    state = _Auction(N, 0)
    state.push(parse_call("1D"), state.view())  # North opens 1D; East to call
    fired, call = table.decide(Hand(parse_pbn_hand("Q84.J73.K952.Q63")), state.view())
    assert (fired.name, call) == ("double", DOUBLE)
    state.push(DOUBLE, state.view())  # now neither 1C nor X is legal for South
    fired, call = table.decide(Hand(parse_pbn_hand("Q84.J73.K952.Q63")), state.view())
    assert (fired.name, call_name(call)) == ("one_spade", "1S")


def test_explain_call_rejects_bad_auctions():
    with pytest.raises(ValueError):
        decide("Q84.J73.K952.Q63", "1D 1C")
    with pytest.raises(ValueError):
        decide("Q84.J73.K952.Q63", "P P P P")


deals = st.permutations(range(52)).map(lambda perm: np.repeat(np.arange(4, dtype=np.int8), 13)[np.argsort(perm)])


@settings(max_examples=300, deadline=None)
@given(owner=deals, dealer=st.integers(0, 3), vul=st.integers(0, 3))
def test_random_deals_give_legal_finished_auctions(owner, dealer, vul):
    decisions = BIDDER.bid_deal(owner, dealer, vul)
    state = replay(dealer, [d.call for d in decisions])  # raises on an illegal call
    assert state.finished
    for d in decisions:
        assert d.rule and d.meaning.split(":")[0] in ("Pass", "Double", "Redouble", call_name(d.call))


@settings(max_examples=100, deadline=None)
@given(owner=deals, dealer=st.integers(0, 3), vul=st.integers(0, 3))
def test_each_call_depends_only_on_own_hand_and_auction(owner, dealer, vul):
    """explain_call, given one hand and the auction, reproduces every decision of bid_deal."""
    decisions = BIDDER.bid_deal(owner, dealer, vul)
    hands = hands_from_owner(owner)
    auction = [d.call for d in decisions]
    for k, d in enumerate(decisions):
        assert BIDDER.explain_call(hands[(dealer + k) % 4], auction[:k], dealer, vul) == d


def test_bidding_is_deterministic_and_mostly_named_rules():
    rng = np.random.default_rng(7)
    boards = [(np.repeat(np.arange(4, dtype=np.int8), 13)[rng.permutation(52)], k % 4, k % 4) for k in range(200)]
    first = [BIDDER.bid_deal(*board) for board in boards]
    assert first == [BIDDER.bid_deal(*board) for board in boards]
    fallbacks = sum(d.rule == FALLBACK.name for auction in first for d in auction)
    assert fallbacks <= 2


def test_random_deals_reach_sensible_contracts():
    """A sanity check of the system as a whole: few boards passed out, most games with 25+ HCP and
    an 8-card major fit bid, no slam without 30+ HCP."""
    rng = np.random.default_rng(11)
    passed_out = games_with_values = chances = 0
    for k in range(400):
        owner = np.repeat(np.arange(4, dtype=np.int8), 13)[rng.permutation(52)]
        state = replay(k % 4, [d.call for d in BIDDER.bid_deal(owner, k % 4, 0)])
        contract = state.contract()
        passed_out += contract is None
        hands = [Hand(h) for h in hands_from_owner(owner)]
        for side in (0, 1):
            hcp = hands[side].hcp + hands[side + 2].hcp
            fit = max(hands[side].len[s] + hands[side + 2].len[s] for s in (2, 3))
            ours = contract is not None and contract.declarer % 2 == side
            if ours and contract.level >= 6:
                assert hcp >= 30
            if hcp >= 25 and fit >= 8:
                chances += 1
                games_with_values += ours and contract.level >= (3 if contract.strain == 4 else 4)
    assert passed_out <= 0.08 * 400
    assert games_with_values >= 0.7 * chances


def test_bid_deal_rejects_incomplete_deals():
    owner = np.repeat(np.arange(4, dtype=np.int8), 13)
    owner[0] = -1
    with pytest.raises(ValueError):
        BIDDER.bid_deal(owner, N, 0)
    owner[0] = 1
    with pytest.raises(ValueError):
        BIDDER.bid_deal(owner, N, 0)
