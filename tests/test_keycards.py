"""Keycard Blackwood by rule (training/bidding/keycards.py): the answers, the asker's sign-off, and
that every BSM-based consumer (next_call, the rollouts' streams, the sampler's likelihoods) sees it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bridgeflow.dataset.encodings import NUM_CALLS, call_name, parse_auction, parse_call, parse_pbn_hand
from bridgeflow.training.bidding import keycards
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.search.sampling import KEYCARD_MISMATCH, call_log_likelihoods

torch.set_num_threads(1)


def hand(pbn: str) -> np.ndarray:
    cards = np.zeros(52, bool)
    cards[parse_pbn_hand(pbn)] = True
    return cards


def flat() -> np.ndarray:
    return np.full(NUM_CALLS, 1.0 / NUM_CALLS)


def best(probs: np.ndarray) -> str:
    return call_name(int(np.argmax(probs)))


@pytest.fixture(scope="module")
def bidder() -> Bidder:
    torch.manual_seed(0)
    return Bidder(BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0)))


@pytest.mark.parametrize("text, side, trump", [
    ("1S P 3S P", 0, 3),                  # raised
    ("P P 1S P 2C P 3H P 4S P", 0, 3),    # dealer N passes: S opens, N raises at his second turn
    ("1D P 1H P 2H P", 0, 2),             # the latest suit both bid
    ("1C P 1S P 2S P 3D P", 0, 3),        # diamonds bid by one partner only: still spades
    ("1C P 1S P 2S P 3C P", 0, 0),        # clubs bid by both, the later: clubs
    ("P 1C P 1S P 2S P 4C P 4D P", 1, 3), # spades agreed, then 4C a cue bid (though N opened 1C)
    ("1H P 3H P 4C P 4D P", 0, 2),        # cue bids after hearts
    ("1C P 1H P 3C P 4C P", 0, 0),        # a minor agreed: 4C raises it
    ("1NT P 2NT P", 0, None),             # no suit: 4NT is quantitative
    ("1S 2H 3S 4H", 1, 2),                # their side's hearts
    ("1S 2H 3S 4H", 0, 3),
])
def test_agreed_trump_is_a_suit_both_partners_bid(text, side, trump):
    assert keycards.agreed_trump(parse_auction(text), side) == trump


@pytest.mark.parametrize("cards, answer", [
    ("Q8652.T872.K8.96", "5D"),    # 0
    ("Q8652.T872.K8.A6", "5C"),    # 1
    ("K8652.T872.A8.96", "5H"),    # 2 without the queen
    ("KQ652.T872.A8.96", "5S"),    # 2 with it
    ("K8652.AT87.A8.96", "5D"),    # 3
    ("K8652.AT87.A8.A6", "5C"),    # 4
])
def test_the_answer_to_4nt_counts_the_keycards(cards, answer):
    assert best(keycards.ruled(flat(), hand(cards), parse_auction("1S P 3S P 4NT P"))) == answer


def test_the_rules_leave_other_auctions_alone():
    probs = flat()
    for text in ("1NT P 4NT P",              # quantitative: no suit agreed
                 "1S P 3S P 4NT X",          # interference over 4NT
                 "1S P 3S P 4NT P 5C 5D",    # over the answer
                 "1S P 3S P 4S P"):
        assert keycards.ruled(probs, hand("AKQJ4.KQ3.A2.K32"), parse_auction(text)) is probs


def test_the_asker_signs_off_when_two_keycards_are_missing():
    asker = hand("AKQJ4.KQ3.A2.K32")  # SA SK DA: 3 keycards and the queen
    after = lambda answer: keycards.ruled(flat(), asker, parse_auction(f"1S P 3S P 4NT P {answer} P"))
    assert best(after("5D")) == "5S"  # 0 (3 would make 6 of 5)
    one_missing = after("5C")  # 1: small slam allowed, no grand, no 5NT
    assert one_missing[[parse_call(c) for c in ("7S", "7NT", "5NT")]].sum() == 0
    assert one_missing[parse_call("6S")] > 0 and np.isclose(one_missing.sum(), 1)
    assert best(after("5H")) == "5NT"  # 2: all five and the queen: ask for kings
    weak = hand("AT542.KQ3.Q2.K32")  # SA only
    assert best(keycards.ruled(flat(), weak, parse_auction("1S P 3S P 4NT P 5S P"))) == "P"  # 5S is the sign-off
    clubs = keycards.ruled(flat(), hand("A.KQ3.Q2.QJT86532"), parse_auction("1C P 3C P 4NT P 5H P"))
    assert best(clubs) == "6C"  # SA + 2 without the queen: 5C is below the answer, six is the sign-off
    void = keycards.ruled(flat(), hand("KQT4.AKT4..AJ964"), parse_auction("1C P 3C P 4NT P 5C P"))
    assert void[parse_call("6C")] > 0 and void[parse_call("7C")] == 0  # CA HA + 1, but the DA may be no loser


def test_the_asker_rules_out_only_what_both_counts_allow():
    # 2 keycards (SA CA) and 5D: partner has 0 (three missing) or 3 (none missing): no rule.
    probs = keycards.ruled(flat(), hand("AQJ94.K.KQ97.AT8"), parse_auction("P P 1S P 2C P 3H P 4S P 4NT P 5D P"))
    np.testing.assert_array_equal(probs, flat())
    # 5H: 2 without the queen; the asker lacks it too: one keycard and the queen missing, sign off.
    probs = keycards.ruled(flat(), hand("AJT94.K.KQ97.AT8"), parse_auction("P P 1S P 2C P 3H P 4S P 4NT P 5H P"))
    assert best(probs) == "5S"


def test_bidder_streams_and_sampler_play_the_rule(bidder):
    auction = parse_auction("1S P 3S P 4NT P")
    two = parse_pbn_hand("K8652.T872.A8.96")
    ruled = bidder.next_call(two, auction, 0, 0)
    assert best(ruled) == "5H" and ruled.max() == 1.0
    assert not Bidder(bidder.model, keycards=False).next_call(two, auction, 0, 0).max() == 1.0
    # The rollouts' streams answer as next_call does.
    mine = hand("K8652.T872.A8.96")[None]
    streams = bidder.streams(mine, np.array([2]), 0, 0, auction)
    legal = ruled > 0
    np.testing.assert_allclose(streams.call_probs(np.array([0]), np.array([auction], np.int16), legal[None])[0], ruled)
    # The sampler: a deal whose N hand would not have answered 5H does not fit.
    owners = np.zeros((2, 52), np.int8)  # S (seat 2) answers; N, E, W hold the rest
    for deal, south in enumerate([two, parse_pbn_hand("Q8652.T872.K8.A6")]):  # 5H; 5C
        others = [c for c in range(52) if c not in south]
        owners[deal, south] = 2
        owners[deal, others[:13]], owners[deal, others[13:26]], owners[deal, others[26:]] = 0, 1, 3
    logp = call_log_likelihoods(bidder, owners, auction + [parse_call("5H"), 0], 0, 0, 0)
    assert logp[0, 6] == 0.0 and logp[1, 6] == pytest.approx(np.log(KEYCARD_MISMATCH))


def test_one_keycard_and_the_queen_unknown_asks_for_the_queen():
    asker = hand("AK652.KQ3.A2.432")  # SA SK DA, no SQ
    asked = "1S P 3S P 4NT P 5C P"    # 1: one missing, the queen unknown
    assert best(keycards.ruled(flat(), asker, parse_auction(asked))) == "5D"
    for responder, reply in (("QT43.A54.K54.K65", "6S"), ("JT43.A54.K54.K65", "5S"), ("JT843.A54.K54.K6", "6S")):
        assert best(keycards.ruled(flat(), hand(responder), parse_auction(asked + " 5D P"))) == reply
        assert best(keycards.ruled(flat(), asker, parse_auction(asked + f" 5D P {reply} P"))) == "P"
    # Hearts, 4 keycards and 5D (0): the next step would be 5S, above five hearts: no queen ask.
    hearts = keycards.ruled(flat(), hand("A2.AK652.A2.432"), parse_auction("1H P 3H P 4NT P 5D P"))
    assert hearts[parse_call("5S")] > 0 and hearts[parse_call("7H")] == 0


def test_all_keycards_and_the_queen_ask_for_kings_and_the_grand_is_compared():
    asker = hand("AKQJ4.KQ3.A2.K32")  # SA SK DA and the queen
    asked = "1S P 3S P 4NT P 5H P"    # 2: none missing
    assert best(keycards.ruled(flat(), asker, parse_auction(asked))) == "5NT"
    assert keycards.situation(parse_auction(asked + " 5NT P")) == ("kings", 3)
    for responder, reply in (("T9876.A54.K54.Q6", "6D"), ("T9876.A54.Q54.Q6", "6C"), ("T987.A54.K54.KQ6", "6H")):
        assert best(keycards.ruled(flat(), hand(responder), parse_auction(asked + " 5NT P"))) == reply  # side kings
    counted = parse_auction(asked + " 5NT P 6D P")
    assert keycards.situation(counted) == ("counted", 3)
    assert keycards.grand_slams(asker, counted) == [parse_call("7S"), parse_call("7NT")]
    assert keycards.grand_slams(asker, parse_auction(asked)) == []
    choice = keycards.ruled(flat(), asker, counted)  # six, 6NT or a grand, by the network's belief
    assert sorted(call_name(c) for c in np.flatnonzero(choice)) == ["6NT", "6S", "7NT", "7S"]
    assert np.isclose(choice.sum(), 1)
    passed = keycards.ruled(flat(), asker, parse_auction(asked + " 5NT P 6S P"))  # 3 kings: 6S, pass it or go on
    assert sorted(call_name(c) for c in np.flatnonzero(passed)) == ["6NT", "7NT", "7S", "P"]
    only_hearts = np.zeros(NUM_CALLS)
    only_hearts[parse_call("6H")] = 1.0  # the network believes in none of them: the small slam
    assert best(keycards.ruled(only_hearts, asker, counted)) == "6S"
    # Without the queen (5H: 2 without it, the asker lacks it too): a small slam, no king ask, no grand.
    small = keycards.ruled(flat(), hand("AKJT4.KQ3.A2.K32"), parse_auction(asked))
    assert sorted(call_name(c) for c in np.flatnonzero(small)) == ["6NT", "6S"]


def test_all_keycards_and_the_queen_unknown_ask_for_it_then_choose_the_slam():
    asker = hand("AKJ54.KQ3.A2.A32")  # SA SK DA CA, no SQ
    asked = "1S P 3S P 4NT P 5C P"    # 1 or 4: with the asker's 4, only 1: none missing
    assert best(keycards.ruled(flat(), asker, parse_auction(asked))) == "5D"  # the queen ask
    shown = parse_auction(asked + " 5D P 6S P")
    assert keycards.situation(shown) == ("placed", 3)
    choice = keycards.ruled(flat(), asker, shown)  # the queen shown: pass six, 6NT or a grand
    assert sorted(call_name(c) for c in np.flatnonzero(choice)) == ["6NT", "7NT", "7S", "P"]
    assert keycards.grand_slams(asker, shown) == [parse_call("7S"), parse_call("7NT")]
    denied = parse_auction(asked + " 5D P 5S P")
    assert best(keycards.ruled(flat(), asker, denied)) == "6S"  # no queen: the small slam
    assert keycards.grand_slams(asker, denied) == []
    one_missing = hand("AK654.KQ3.A2.432")  # 3 keycards: partner's 5C is 1, one missing
    assert best(keycards.ruled(flat(), one_missing, parse_auction(asked))) == "5D"
    assert best(keycards.ruled(flat(), one_missing, shown)) == "P"
    assert best(keycards.ruled(flat(), one_missing, denied)) == "P"
    assert keycards.grand_slams(one_missing, shown) == []


def test_a_void_with_no_keycard_missing_still_asks_for_kings():
    # SK DA CA and the queen, partner's 5H two more: all five held; the heart void must not make it "-1 missing"
    probs = keycards.ruled(flat(), hand("KQ9854..A976.AT8"), parse_auction("P 1C P 1S P 2S P 4NT P 5H P"))
    assert best(probs) == "5NT"
