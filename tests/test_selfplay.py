"""Policy iteration, the actor: pi' math, the tempered prior, the near-certain skip, the
compatible setting's seats and search partner, and a board as a pure function of its seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from bridgeflow.cli import VERBS
from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import PASS, deal_id, parse_call, random_owner
from bridgeflow.dataset.splits import split_of
from bridgeflow.pipelines.selfplay import SECTIONS, load_configs
from bridgeflow.training.bidding.bidder import Bidder, ReplayStreams
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.params import Params
from bridgeflow.training.search.monte_carlo import (
    Candidate,
    MonteCarloSearch,
    SearchConfig,
    SearchResult,
    improved_policy,
    tempered_prior,
)
from bridgeflow.training.search.sampling import call_log_likelihoods
from bridgeflow.training.selfplay.actor import GENERATE_KEYS, NEAR_CERTAIN, Actor, SelfPlayConfig, train_deals

torch.set_num_threads(1)
ONE_NT, TWO_NT, THREE_NT = parse_call("1NT"), parse_call("2NT"), parse_call("3NT")


@pytest.fixture(scope="module")
def bidder() -> Bidder:
    torch.manual_seed(0)
    return Bidder(BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0)))


class FixedTables:
    def tricks(self, owners, deal, declarer, strain):
        return np.full(len(deal), 9)


class FixedPrior:
    """A network stub: the same call probabilities at every decision."""

    def __init__(self, prior: dict[int, float]):
        self.prior = np.zeros(38)
        for call, p in prior.items():
            self.prior[call] = p

    def next_call(self, hand, auction, dealer, vul):
        return self.prior.copy()


class KnownQ(MonteCarloSearch):
    """A search stub: mean IMPs from a table per candidate call; counts its searches."""

    def __init__(self, q: dict[int, float], config: SearchConfig = SearchConfig(topk=3, min_prior=0.0)):  # as selfplay.search
        super().__init__(None, FixedTables(), config)
        self.q, self.searched = q, 0

    def search(self, hand, auction, dealer, vul, prior=None):
        self.searched += 1
        calls = self.candidates(prior)
        candidates = [Candidate(int(c), float(prior[c]), self.q[int(c)], 0.5, 8, 0.0, {}) for c in calls]
        return SearchResult(int(calls[0]), int(calls[0]), candidates, 8, 8, 40, 0, None, 0.0)


def test_the_improved_policy_is_the_prior_times_exp_q_over_t():
    prior, q = np.array([0.5, 0.3, 0.2]), np.array([0.0, 2.0, -2.0])
    expected = prior * np.exp(q / 2.0)
    assert np.allclose(improved_policy(prior, q, 2.0), expected / expected.sum())
    assert np.allclose(improved_policy(prior, np.zeros(3), 5.0), prior)  # no evidence: pi' = pi
    assert improved_policy(prior, q, 0.0).tolist() == [0.0, 1.0, 0.0]  # T = 0: the best Q alone
    assert improved_policy(prior, np.zeros(3), 0.0).tolist() == [1.0, 0.0, 0.0]  # ties: the likelier


def test_the_tempered_prior_flattens_and_floors_over_the_legal_calls_only():
    prior = np.zeros(38)
    prior[[0, ONE_NT]] = [0.81, 0.19]
    tempered = tempered_prior(prior, 2.0)
    assert np.allclose(tempered[[0, ONE_NT]], np.sqrt([0.81, 0.19]) / np.sqrt([0.81, 0.19]).sum())
    floored = tempered_prior(prior, 1.0, floor=0.1)
    assert np.allclose(floored[[0, ONE_NT]], 0.9 * prior[[0, ONE_NT]] + 0.1 / 2)
    assert (floored[prior == 0] == 0).all() and np.isclose(floored.sum(), 1.0)
    assert np.allclose(tempered_prior(prior), prior)


def test_a_searched_decision_records_pi_prime_of_the_tempered_prior_and_q():
    network = FixedPrior({PASS: 0.9, ONE_NT: 0.06, TWO_NT: 0.04})
    config = SelfPlayConfig(tempering=2.0, floor=0.0, skip_above=0.99)
    search = KnownQ({PASS: -3.0, ONE_NT: 4.0, TWO_NT: 0.0})
    row = Actor(network, search, config).decide(list(range(13)), [], 0, 0, np.random.default_rng(0))
    tempered = np.sqrt([0.9, 0.06, 0.04]) / np.sqrt([0.9, 0.06, 0.04]).sum()
    expected = tempered * np.exp(np.array([-3.0, 4.0, 0.0]) / 2.0)
    assert row["searched"] and row["skipped"] is None and search.searched == 1
    assert row["candidates"] == [PASS, ONE_NT, TWO_NT]
    assert np.allclose(row["tempered"], tempered) and np.allclose(row["prior"], [0.9, 0.06, 0.04])
    assert np.allclose(row["policy"], expected / expected.sum())
    sharp = np.array([0.9, 0.06, 0.04]) * np.exp(np.array([-3.0, 4.0, 0.0]) * 2.0 / 2.0)  # T / tempering
    assert np.allclose(row["target"], sharp / sharp.sum())
    assert np.argmax(row["target"]) == np.argmax(row["policy"])  # no floor: pi' and the target rank alike
    assert row["q"] == [-3.0, 4.0, 0.0] and row["se"] == [0.5] * 3 and row["samples"] == 8
    assert (row["prior_best"], row["policy_best"]) == (PASS, ONE_NT)  # the search changed the best call
    assert row["call"] in row["candidates"]


def test_a_near_certain_tempered_prior_skips_the_search():
    network = FixedPrior({PASS: 0.999, ONE_NT: 0.001})
    search = KnownQ({PASS: 0.0, ONE_NT: 10.0})
    sure = Actor(network, search, SelfPlayConfig(tempering=1.0, floor=0.0, skip_above=0.95, skip_on="tempered"))
    row = sure.decide(list(range(13)), [], 0, 0, np.random.default_rng(0))
    assert (row["searched"], row["skipped"], search.searched, row["q"]) == (False, NEAR_CERTAIN, 0, None)
    assert np.allclose(row["policy"], [0.999, 0.001]) and row["policy_best"] == PASS
    assert np.allclose(row["target"], [0.999, 0.001])
    # tempered harder, the same prior is no longer near-certain: searched
    unsure = Actor(network, search, SelfPlayConfig(tempering=4.0, floor=0.0, skip_above=0.95, skip_on="tempered"))
    assert unsure.decide(list(range(13)), [], 0, 0, np.random.default_rng(0))["searched"] and search.searched == 1
    # ... unless the test reads the network's own prior
    own = Actor(network, search, SelfPlayConfig(tempering=4.0, floor=0.0, skip_above=0.95, skip_on="prior"))
    assert own.decide(list(range(13)), [], 0, 0, np.random.default_rng(0))["skipped"] == NEAR_CERTAIN
    assert search.searched == 1


def test_the_skip_test_on_the_own_prior_still_searches_real_doubt():
    network = FixedPrior({PASS: 0.9, ONE_NT: 0.1})
    search = KnownQ({PASS: 0.0, ONE_NT: 10.0})
    actor = Actor(network, search, SelfPlayConfig(tempering=1.0, floor=0.0, skip_above=0.95, skip_on="prior"))
    row = actor.decide(list(range(13)), [], 0, 0, np.random.default_rng(0))
    assert row["searched"] and search.searched == 1 and row["policy_best"] == ONE_NT
    with pytest.raises(ValueError, match="skip_on"):
        SelfPlayConfig(skip_on="posterior")


class BestQ(KnownQ):
    """KnownQ that decides as the test-time search does: its call is the best Q; keeps the prior it got."""

    def search(self, hand, auction, dealer, vul, prior=None):
        result = super().search(hand, auction, dealer, vul, prior)
        self.given = prior
        result.call = max(result.candidates, key=lambda c: c.mean_imps).call
        return result


def test_target_search_plays_and_learns_the_searchs_own_call_one_hot():
    network = FixedPrior({PASS: 0.9, ONE_NT: 0.06, TWO_NT: 0.04})
    search = BestQ({PASS: -3.0, ONE_NT: 4.0, TWO_NT: 0.0})
    actor = Actor(network, search, SelfPlayConfig(tempering=3.0, floor=0.02, skip_above=0.95, target="search"))
    row = actor.decide(list(range(13)), [], 0, 0, np.random.default_rng(0))
    assert row["searched"] and search.searched == 1
    assert np.allclose(search.given, network.prior)  # the network's own prior, not the tempered one
    assert row["candidates"] == [PASS, ONE_NT, TWO_NT] and row["q"] == [-3.0, 4.0, 0.0]
    assert row["call"] == ONE_NT and (row["prior_best"], row["policy_best"]) == (PASS, ONE_NT)
    assert row["target"] == [0.0, 1.0, 0.0] and row["policy"] == [0.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="target"):
        SelfPlayConfig(target="hard")


def test_target_search_keeps_the_networks_call_and_prior_where_it_is_near_certain():
    network = FixedPrior({PASS: 0.97, ONE_NT: 0.03})
    search = BestQ({PASS: 0.0, ONE_NT: 10.0})
    actor = Actor(network, search, SelfPlayConfig(skip_above=0.95, target="search"))
    row = actor.decide(list(range(13)), [], 0, 0, np.random.default_rng(0))
    assert (row["searched"], row["skipped"], search.searched, row["call"]) == (False, NEAR_CERTAIN, 0, PASS)
    assert np.allclose(row["target"], [0.97, 0.03]) and row["policy"] == [1.0, 0.0]


def test_the_played_call_is_drawn_from_pi_prime():
    network = FixedPrior({PASS: 0.5, ONE_NT: 0.5})
    actor = Actor(network, KnownQ({PASS: 0.0, ONE_NT: 2.0 * np.log(3.0)}),
                  SelfPlayConfig(tempering=1.0, floor=0.0, skip_above=0.99))
    rng = np.random.default_rng(1)
    calls = [actor.decide(list(range(13)), [], 0, 0, rng)["call"] for _ in range(2000)]
    assert abs(np.mean(np.array(calls) == ONE_NT) - 0.75) < 0.04  # pi' = (1/4, 3/4)


def test_boards_are_train_split_deals_of_the_generation_seed():
    deals = list(train_deals(7001, 30))
    assert len(deals) == 30 and all(split_of(deal_id(owner)) == "train" for _, owner in deals)
    index, owner = deals[-1]
    assert (random_owner(7001, index) == owner).all() and index >= 30  # some deals of other splits were passed over


def test_a_board_is_a_pure_function_of_seed_generation_and_board(bidder):
    config = SelfPlayConfig(skip_above=0.999)
    search_config = SearchConfig(samples=2, oversample=1, topk=2, selection="proportional", rollout="sample")
    _, owner = next(train_deals(7001, 1))

    def play(generation):
        return Actor(bidder, MonteCarloSearch(bidder, FixedTables(), search_config), config).play(generation, 1, owner)

    first, again = play(1), play(1)
    assert first == again
    assert replay(first[0]["dealer"], [row["call"] for row in first]).finished
    assert [row["position"] for row in first] == list(range(len(first)))
    assert all(row["auction"] == [r["call"] for r in first[:row["position"]]] for row in first)
    assert play(2) != first  # another generation draws differently


def test_the_compatible_setting_seats_the_rule_bidder_as_partner(bidder):
    config = SelfPlayConfig(partner="rule", skip_above=0.999)
    search = MonteCarloSearch(bidder, FixedTables(), SearchConfig(samples=2, oversample=2), partner=bidder)
    _, owner = next(train_deals(7001, 1))
    rows = Actor(bidder, search, config).play(1, 3, owner)
    for row in rows:
        assert row["actor"] == ("bsm" if row["seat"] in (0, 1) else "rule")
        if row["actor"] == "rule":
            assert (row["candidates"], row["policy"], row["skipped"]) == ([row["call"]], [1.0], "rule")


class FixedCall:
    """An `against` opponent: always `call`; counts its reseeds."""

    def __init__(self, call: int):
        self.call, self.seeds = call, []

    def next_call(self, hand, auction, dealer, vul):
        return self.call

    def reseed(self, seed):
        self.seeds.append(seed)


def test_against_seats_the_network_north_south_and_the_other_agent_east_west(bidder):
    config = SelfPlayConfig(against="rule", skip_above=0.999)
    search = MonteCarloSearch(bidder, FixedTables(), SearchConfig(samples=2, oversample=2))
    opponent = FixedCall(PASS)
    _, owner = next(train_deals(7001, 1))
    rows = Actor(bidder, search, config, opponent).play(1, 3, owner)
    assert {row["seat"] for row in rows if row["actor"] == "bsm"} <= {0, 2}
    assert [row["seat"] for row in rows if row["actor"] == "opponent"] and \
        all(row["seat"] in (1, 3) for row in rows if row["actor"] == "opponent")
    for row in rows:
        if row["actor"] == "opponent":
            assert (row["call"], row["candidates"], row["target"], row["skipped"]) == (PASS, [PASS], [1.0], "opponent")
    again = FixedCall(PASS)
    assert Actor(bidder, search, config, again).play(1, 3, owner) == rows and again.seeds == opponent.seeds  # seeded by the board


def test_against_needs_its_opponent_and_partner_self(bidder):
    search = MonteCarloSearch(bidder, FixedTables(), SearchConfig(samples=2, oversample=2))
    with pytest.raises(ValueError, match="against"):
        Actor(bidder, search, SelfPlayConfig(against="rule"))
    with pytest.raises(ValueError, match="against"):
        Actor(bidder, search, SelfPlayConfig(), FixedCall(PASS))
    with pytest.raises(ValueError, match="partner: self"):
        SelfPlayConfig(partner="rule", against="rule")


def test_a_partner_bsm_scores_the_partners_calls_in_the_sampler(bidder):
    """call_log_likelihoods with a partner BSM: the partner's calls by it, the others' by the bidder."""
    torch.manual_seed(1)
    other = Bidder(BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0)))
    owners = np.stack([random_owner(5, i) for i in range(3)])
    auction = [ONE_NT, PASS, THREE_NT, PASS]  # N, E, S, W; N to call: partner is S
    own = call_log_likelihoods(bidder, owners, auction, 0, 0, 0)
    mixed = call_log_likelihoods(bidder, owners, auction, 0, 0, 0, [(bidder, [1, 3]), (other, [2])])
    by_other = call_log_likelihoods(other, owners, auction, 0, 0, 0)
    assert np.allclose(mixed[:, [1, 3]], own[:, [1, 3]]) and np.allclose(mixed[:, 2], by_other[:, 2])
    assert not np.allclose(mixed[:, 2], own[:, 2]) and (mixed[:, 0] == 0).all()


def test_bad_selfplay_params_are_refused():
    with pytest.raises(ValueError, match="partner"):
        SelfPlayConfig(partner="ben")
    with pytest.raises(ValueError, match="tempering"):
        SelfPlayConfig(tempering=0.0)
    with pytest.raises(ValueError, match="imitation_fraction"):
        SelfPlayConfig(imitation_fraction=1.0)


def test_the_repositorys_params_and_pipeline_hold_a_loadable_loop():
    """params.yaml's selfplay section loads (its search overrides too), and every selfplay stage of
    dvc.yaml calls a bridgeflow verb with generation items that name their init network."""
    repo = Path(__file__).resolve().parents[1]
    config, search = load_configs(Params(repo / "params.yaml", [], SECTIONS, bare="selfplay"))
    assert (search.selection, search.rollout) == ("proportional", "sample")
    assert all({"gen", "prev", "init"} <= set(item) for item in config.generations)
    stages = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    loop = {name: stage for name, stage in stages.items() if name.startswith("selfplay")}
    assert len(loop) == 4
    for stage in loop.values():
        command = (stage.get("do") or stage)["cmd"].split()
        assert command[0] == "bridgeflow" and command[1] in VERBS
    generate = loop["selfplay-generate"]["do"]["params"]
    assert sorted(generate) == sorted([f"selfplay.{key}" for key in GENERATE_KEYS] + ["search"])


class Scripted:
    """A BSM stub for rollouts: a one-hot call from a rule of the auction state."""

    def __init__(self, rule):
        self.rule = rule

    def streams(self, *args):
        return ReplayStreams(self, *args)

    def predict(self, hands, auctions, dealer, vul):
        probs = np.zeros((len(auctions), 38))
        for row, auction in enumerate(auctions):
            probs[row, self.rule(replay(dealer, list(auction)))] = 1.0
        return {"call": probs}


def test_a_partner_bsm_makes_the_partners_calls_in_the_rollouts():
    def raise_once(state):
        return state.last_bid + 1 if state.last_bid < THREE_NT else PASS

    search = MonteCarloSearch(Scripted(raise_once), FixedTables(), SearchConfig(), partner=Scripted(lambda state: PASS))
    first = random_owner(5, 0)
    owners = np.stack([first, np.where(first == 1, 3, np.where(first == 3, 1, first))])  # S holds one hand in both
    auction = [ONE_NT, PASS]  # dealer N: S to call, N is the partner
    auctions = search.rollout(owners, auction, 0, 0, [TWO_NT])
    for row in range(len(owners)):
        later = list(enumerate(auctions.auction(row)))[len(auction) + 1:]
        assert all(call == PASS for position, call in later if position % 4 == 0)  # N: the partner's BSM
        assert any(call != PASS for position, call in later if position % 2 == 1)  # E/W: the searcher's
