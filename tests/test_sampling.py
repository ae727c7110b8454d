"""Deal sampling consistent with an auction: card accounting, the exact conditional draws, the
likelihood of earlier calls (against Bidder.predict), and the selection of the K best."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from bridgeflow.dataset.encodings import CARD_HCP, parse_call, parse_pbn_hand, random_owner
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.search.sampling import (
    call_log_likelihoods,
    conditional_bernoulli,
    sample_deals,
    sample_lengths,
    sample_opponents,
    sample_partner,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def bidder() -> Bidder:
    torch.manual_seed(0)
    return Bidder(BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0)))


def auction(text: str) -> list[int]:
    return [parse_call(t) for t in text.split()]


@pytest.mark.parametrize("calls,dealer", [("", 0), ("1H P", 0), ("P 1S X", 3), ("1C 1D 1H 1S 2C", 1)])
def test_every_sample_is_a_deal_that_gives_the_player_its_hand(bidder, calls, dealer):
    owner = random_owner(7, len(calls))
    player = (dealer + len(auction(calls))) % 4
    hand = np.flatnonzero(owner == player)
    for selection in ("top", "proportional"):
        s = sample_deals(bidder, hand, auction(calls), dealer, 2, 6, np.random.default_rng(1), selection=selection)
        assert s.owners.shape == (6, 52) and s.generated == 30
        assert all(((s.owners == seat).sum(axis=1) == 13).all() for seat in range(4))
        assert (s.owners[:, hand] == player).all()


def test_conditional_bernoulli_matches_the_exact_conditional_distribution():
    odds = np.array([0.5, 1.0, 2.0, 4.0, 1.0])
    allowed = np.array([True, True, True, True, False])
    draws = 40000
    chosen = conditional_bernoulli(np.tile(np.log(odds), (draws, 1)), np.tile(allowed, (draws, 1)),
                                   np.full(draws, 2), np.random.default_rng(0))
    assert (chosen.sum(axis=1) == 2).all() and not chosen[:, 4].any()
    subsets = list(itertools.combinations(range(4), 2))
    exact = np.array([odds[a] * odds[b] for a, b in subsets])
    exact /= exact.sum()
    seen = np.array([(chosen[:, a] & chosen[:, b]).mean() for a, b in subsets])
    assert np.abs(seen - exact).max() < 0.01


def test_conditional_bernoulli_refuses_an_impossible_count():
    with pytest.raises(ValueError):
        conditional_bernoulli(np.zeros((1, 3)), np.array([[True, False, False]]), np.array([2]),
                              np.random.default_rng(0))


def test_sample_lengths_is_the_prior_conditioned_on_13_within_bounds():
    prior = np.random.default_rng(3).random((4, 14))
    low, high = np.array([1, 0, 2, 0]), np.array([6, 5, 7, 13])
    draws = 30000
    got = sample_lengths(prior, np.tile(low, (draws, 1)), np.tile(high, (draws, 1)), np.random.default_rng(0))
    assert (got.sum(axis=1) == 13).all() and (got >= low).all() and (got <= high).all()
    shapes = [s for s in itertools.product(*(range(lo, hi + 1) for lo, hi in zip(low, high))) if sum(s) == 13]
    exact = np.array([np.prod([prior[i, n] for i, n in enumerate(s)]) for s in shapes])
    exact /= exact.sum()
    counts = {s: 0 for s in shapes}
    for row in map(tuple, got):
        counts[row] += 1
    seen = np.array([counts[s] for s in shapes]) / draws
    assert np.abs(seen - exact).max() < 0.01


def test_sample_lengths_falls_back_when_the_prior_cannot_fit_the_bounds():
    prior = np.zeros((4, 14))
    prior[:, 0] = 1.0  # all the mass on voids: cannot sum to 13
    got = sample_lengths(prior, np.array([[1, 1, 1, 1]]), np.array([[13, 13, 13, 13]]), np.random.default_rng(0))
    assert got.sum() == 13 and (got >= 1).all()


def test_partner_hcp_and_shape_follow_the_beliefs():
    mine = np.zeros(52, bool)
    mine[parse_pbn_hand("K843.Q92.A75.J64")] = True
    hcp = np.zeros(38)
    hcp[14] = 1.0
    lengths = np.zeros((4, 14))
    lengths[[0, 1, 2, 3], [2, 3, 4, 4]] = 1.0  # clubs 2, diamonds 3, hearts 4, spades 4
    partner = sample_partner(hcp, lengths, np.full(52, 1 / 3), mine, 200, np.random.default_rng(0))
    assert not (partner & mine).any()
    assert ((partner * CARD_HCP).sum(axis=1) == 14).all()
    assert (partner.reshape(-1, 4, 13).sum(axis=2) == [2, 3, 4, 4]).all()


def test_partner_hcp_that_no_honours_can_make_is_never_drawn():
    mine = np.zeros(52, bool)
    mine[parse_pbn_hand("AKQJ.AKQJ.AKQ.AK4")] = True  # 37 HCP: partner has at most 3
    hcp = np.zeros(38)
    hcp[[2, 20]] = [0.01, 0.99]
    partner = sample_partner(hcp, np.full((4, 14), 1 / 14), np.full(52, 1 / 3), mine, 50, np.random.default_rng(0))
    assert ((partner * CARD_HCP).sum(axis=1) == 2).all()


def test_opponents_split_follows_card_ownership():
    free = np.zeros((100, 52), bool)
    free[:, :26] = True
    p_lho = np.full(52, 0.5)
    p_lho[:5] = 0.999999  # surely LHO's
    lho = sample_opponents(p_lho, 1 - p_lho, free, np.random.default_rng(0))
    assert (lho.sum(axis=1) == 13).all() and not lho[:, 26:].any()
    assert lho[:, :5].all()
    assert 0.35 < lho[:, 5:26].mean() < 0.45  # the other 8 of 21 spread evenly


def test_call_likelihoods_agree_with_bidder_predict(bidder):
    owners = np.stack([random_owner(1, i) for i in range(3)])
    calls, dealer, vul = auction("1C 1D X P 1S"), 1, 3
    player = (dealer + len(calls)) % 4
    logp = call_log_likelihoods(bidder, owners, calls, dealer, vul, player)
    for m, owner in enumerate(owners):
        for t, call in enumerate(calls):
            seat = (dealer + t) % 4
            if seat == player:
                assert logp[m, t] == 0
                continue
            probs = bidder.next_call(np.flatnonzero(owner == seat), calls[:t], dealer, vul)
            assert logp[m, t] == pytest.approx(np.log(probs[call]), abs=1e-4)


def test_top_selection_keeps_the_best_discounted_scores(bidder):
    owner = random_owner(2, 0)
    calls, dealer, gamma = auction("1D 1S 2H"), 0, 0.5
    hand = np.flatnonzero(owner == 3)
    s = sample_deals(bidder, hand, calls, dealer, 0, 5, np.random.default_rng(0), oversample=4, gamma=gamma,
                     min_call_prob=0.0)
    logp = call_log_likelihoods(bidder, s.owners, calls, dealer, 0, 3)
    assert s.score == pytest.approx(logp @ gamma ** np.arange(3))
    assert (np.diff(s.score) <= 1e-9).all()
    assert s.fitting == 20
    wider = sample_deals(bidder, hand, calls, dealer, 0, 5, np.random.default_rng(0), oversample=40, gamma=gamma,
                         min_call_prob=0.0)
    assert wider.score.mean() > s.score.mean()  # more candidates to choose from: likelier keeps


def test_too_few_fitting_deals_fill_up_and_are_counted(bidder):
    owner = random_owner(2, 1)
    s = sample_deals(bidder, np.flatnonzero(owner == 2), auction("1D 1S"), 0, 0, 4, np.random.default_rng(0),
                     min_call_prob=0.99)
    assert s.fitting == 0 and len(s.owners) == 4


def test_kept_fitting_counts_the_returned_deals_that_fit(bidder):
    """A threshold between the deals' least likely calls: some fit, some do not; `top` keeps the
    fitting ones first, so min(fitting, K) of the K returned fit, and exactly those do."""
    owner = random_owner(2, 1)
    hand, calls, k = np.flatnonzero(owner == 2), auction("1D 1S"), 6
    everything = sample_deals(bidder, hand, calls, 0, 0, k, np.random.default_rng(0), oversample=1, min_call_prob=0.0)
    least = np.exp(call_log_likelihoods(bidder, everything.owners, calls, 0, 0, 2)[:, [0, 1]]).min(axis=1)
    threshold = float(np.median(least))
    for oversample in (1, 3):
        s = sample_deals(bidder, hand, calls, 0, 0, k, np.random.default_rng(0), oversample=oversample,
                         min_call_prob=threshold)
        fit = np.exp(call_log_likelihoods(bidder, s.owners, calls, 0, 0, 2)[:, [0, 1]]).min(axis=1) >= threshold
        assert s.kept_fitting == fit.sum() == min(s.fitting, k)
        if oversample == 1:
            assert 0 < s.kept_fitting < k


def test_resample_draws_more_rounds_only_while_too_few_fit(bidder):
    owner = random_owner(2, 1)
    hand, calls = np.flatnonzero(owner == 2), auction("1D 1S 2C")
    strict = sample_deals(bidder, hand, calls, 0, 0, 4, np.random.default_rng(0), oversample=2, min_call_prob=0.99,
                          resample=3)
    assert strict.fitting < 4 and strict.generated == 4 * 2 * 4  # the first round and three more
    loose = sample_deals(bidder, hand, calls, 0, 0, 4, np.random.default_rng(0), oversample=2, min_call_prob=0.0,
                         resample=3)
    assert loose.generated == 8 and loose.fitting == 8  # enough fit at once: no more rounds
    plain = sample_deals(bidder, hand, calls, 0, 0, 4, np.random.default_rng(0), oversample=2, min_call_prob=0.99)
    assert (strict.owners.shape, plain.generated) == ((4, 52), 8)


def test_relax_leaves_the_call_fewest_deals_explain_out_of_the_fit_test_first(bidder):
    """With K = every deal drawn (oversample 1, top), the kept deals are all those generated: the
    relaxed fit count is that of the fit test without the call the fewest of them explain."""
    owner = random_owner(2, 1)
    hand, calls, k = np.flatnonzero(owner == 0), auction("1D 1S 2C 2H"), 12  # N to call again
    everything = sample_deals(bidder, hand, calls, 0, 0, k, np.random.default_rng(0), oversample=1, min_call_prob=0.0)
    logp = call_log_likelihoods(bidder, everything.owners, calls, 0, 0, 0)
    others = [1, 2, 3]  # E's 1S, S's 2C, W's 2H (N's own 1D is not scored)
    threshold = float(np.median(np.exp(logp[:, others]).min(axis=1)))
    explained = np.exp(logp) >= threshold
    worst = min(others, key=lambda t: (explained[:, t].sum(), logp[:, t].mean()))
    rest = [t for t in others if t != worst]
    strict = sample_deals(bidder, hand, calls, 0, 0, k, np.random.default_rng(0), oversample=1, min_call_prob=threshold)
    relaxed = sample_deals(bidder, hand, calls, 0, 0, k, np.random.default_rng(0), oversample=1, min_call_prob=threshold,
                           relax=1)
    assert strict.relaxed == 0 and strict.fitting == explained[:, others].all(axis=1).sum() < k
    assert relaxed.relaxed == 1 and relaxed.fitting == explained[:, rest].all(axis=1).sum() >= strict.fitting
    assert sorted(map(tuple, relaxed.owners)) == sorted(map(tuple, everything.owners))  # the same deals, re-ranked
