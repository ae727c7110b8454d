"""Monte Carlo search: config loading, DD scoring of final contracts, IMP datums, the choice and
its evidence, fallbacks, determinism, and the `bid` command."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from bridgeflow.dataset.auction import AuctionBatch, replay
from bridgeflow.dataset.dd import Solver
from bridgeflow.dataset.encodings import parse_auction, parse_call, parse_pbn_hand, parse_vulnerability, random_owner
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.scoring import imps, score_ns
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig, native_bf16
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.dd.exact_dd import ExactDD
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig
from bridgeflow.training.evaluation.agents import AgentFactory
from bridgeflow.training.params import load_section
from bridgeflow.training.search import monte_carlo as search_module
from bridgeflow.training.search.monte_carlo import (
    EstimatedDD,
    MonteCarloSearch,
    SearchConfig,
)
from bridgeflow.training.search.sampling import call_log_likelihoods, categorical, sample_deals

torch.set_num_threads(1)
HAND = parse_pbn_hand("K843.Q92.A75.J64")
# The BSM paper's search: a fixed top k, every one searched, no last look, no second round of sampling,
# the log prior (the defaults add or change them).
PLAIN = dict(candidates="topk", min_prior=0.0, last_look=False, resample=0, relax=0, prior="log")


def calls(text: str) -> list[int]:
    return [parse_call(t) for t in text.split()]


@pytest.fixture(scope="module")
def bidder() -> Bidder:
    torch.manual_seed(0)
    return Bidder(BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0)))


class FixedTables:
    """A DD scorer stub: the same table for every deal."""

    def __init__(self, table):
        self.table = np.asarray(table, np.int8)

    def tricks(self, owners, deal, declarer, strain):
        return self.table[declarer, strain]


def test_load_section_reads_params_then_overrides(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("search:\n  samples: 12\n  gamma: 1\n  rollout: sample\n")
    cfg = load_section(SearchConfig, params, "search", ["topk=5", "selection=proportional"])
    assert (cfg.samples, cfg.gamma, cfg.rollout, cfg.topk, cfg.selection) == (12, 1.0, "sample", 5, "proportional")
    with pytest.raises(ValueError, match="unknown"):
        load_section(SearchConfig, params, "search", ["sample=3"])
    with pytest.raises(ValueError, match="expected int"):
        load_section(SearchConfig, params, "search", ["samples=many"])
    with pytest.raises(ValueError, match="imps_vs"):
        load_section(SearchConfig, None, "search", ["imps_vs=median"])


def test_scores_are_dd_scores_for_the_players_side(bidder):
    table = np.arange(20).reshape(4, 5) % 14
    finished = [calls("1S P 4S P P P"), calls("P 2H X P P P"), calls("P P P P"), calls("1NT X XX P P P")]
    auctions = AuctionBatch(0, 4)  # rows: candidate 0 on deals 0, 1, then candidate 1
    for step in range(6):
        auctions.add(np.array([a[step] if step < len(a) else -1 for a in finished], np.int16))
    search = MonteCarloSearch(bidder, FixedTables(table), SearchConfig())
    owners = np.stack([random_owner(0, 0), random_owner(0, 1)])
    for player in range(4):
        got = search.scores(auctions, owners, vul=1, player=player)
        sign = 1 if player % 2 == 0 else -1
        t = table.tolist()
        expected = [[score_ns(4, 3, 0, 0, 1, t[0][3]), score_ns(2, 2, 1, 1, 1, t[1][2])],
                    [0, score_ns(1, 4, 2, 0, 1, t[0][4])]]
        assert got.tolist() == (sign * np.array(expected)).tolist()


class FixedDistributions(EstimatedDD):
    """An NN-DDA stub: the same trick distribution [4, 5, 14] for every deal."""

    def __init__(self, probs):
        self.probs = np.asarray(probs, float)

    def tricks(self, owners, deal, declarer, strain):
        return self.probs.argmax(-1)[declarer, strain]

    def trick_probabilities(self, owners, deal, declarer, strain):
        return self.probs[declarer, strain]


def test_expected_scores_average_over_the_trick_distribution(bidder):
    auctions = AuctionBatch(0, 2)  # 4S by N, then a passed-out board
    for step, row in enumerate(zip(calls("1S P 4S P P P"), calls("P P P P") + [-1, -1])):
        auctions.add(np.array(row, np.int16))
    owners = np.stack([random_owner(0, 0)])
    sure = np.zeros((4, 5, 14))
    sure[..., 10] = 1.0  # every cell: 10 tricks for certain
    split = sure.copy()
    split[0, 3] = 0.0
    split[0, 3, [9, 10]] = 0.5  # N in spades: 9 or 10 tricks, 50:50
    for probs, want in [(sure, score_ns(4, 3, 0, 0, 0, 10)),
                        (split, (score_ns(4, 3, 0, 0, 0, 9) + score_ns(4, 3, 0, 0, 0, 10)) / 2)]:
        expected = MonteCarloSearch(bidder, FixedDistributions(probs), SearchConfig(nndda_scores="expected"))
        argmax = MonteCarloSearch(bidder, FixedDistributions(probs), SearchConfig(nndda_scores="argmax"))
        got = expected.scores(auctions, owners, vul=0, player=1)
        assert got.tolist() == [[-want], [0.0]]
        if probs is sure:  # a certain network: the same scores either way
            assert argmax.scores(auctions, owners, vul=0, player=1).tolist() == got.tolist()


@pytest.mark.parametrize("datum", ["mean", "best", "prior"])
def test_imps_against_each_datum(bidder, datum):
    scores = np.array([[420.0, -50.0], [170.0, 620.0], [-100.0, 100.0]])
    search = MonteCarloSearch(bidder, FixedTables(np.zeros((4, 5))), SearchConfig(imps_vs=datum))
    if datum == "mean":
        reference = scores.mean(axis=0, keepdims=True).repeat(3, axis=0)
    elif datum == "prior":
        reference = scores[[0, 0, 0]]
    else:
        reference = np.array([[max(scores[1, d], scores[2, d]) for d in range(2)],
                              [max(scores[0, d], scores[2, d]) for d in range(2)],
                              [max(scores[0, d], scores[1, d]) for d in range(2)]])
    expected = [[imps(int(round(scores[c, d] - reference[c, d]))) for d in range(2)] for c in range(3)]
    assert search.imps(scores).tolist() == expected


@pytest.mark.parametrize("temperature", [0.0, 2.0])
def test_search_chooses_by_mean_imps_and_prior_and_reports_evidence(bidder, temperature):
    cfg = SearchConfig(samples=6, oversample=2, **PLAIN, topk=3, prior_temperature=temperature)
    search = MonteCarloSearch(bidder, EstimatedDD(DDEstimator(NNDDA(NNDDAConfig(hidden=16, layers=1)))), cfg)
    result = search.search(HAND, calls("1H P"), 0, 0)
    assert result.fallback is None and result.samples == 6 and result.generated == 12
    prior = bidder.next_call(HAND, calls("1H P"), 0, 0)
    assert [c.call for c in result.candidates] == list(np.argsort(-prior)[:3])
    assert result.prior_call == result.candidates[0].call
    best = max(result.candidates, key=lambda c: c.mean_imps + temperature * np.log(c.prior))
    assert result.call == best.call
    for c in result.candidates:
        assert c.samples == 6 and sum(c.contracts.values()) == 6 and c.se_imps >= 0
        assert replay(0, calls("1H P") + [c.call]).legal_mask().any() or c.call == 0
    assert json.loads(json.dumps(result.to_dict()))["call"] == search_module.call_name(result.call)
    assert search_module.call_name(result.call) in result.format()


@pytest.mark.parametrize("weight", [0.0, 3.0, 1e6])
def test_the_linear_prior_chooses_by_mean_imps_plus_weight_times_prior(bidder, weight):
    cfg = SearchConfig(samples=6, oversample=2, **PLAIN | {"prior": "linear", "prior_weight": weight}, topk=3)
    search = MonteCarloSearch(bidder, EstimatedDD(DDEstimator(NNDDA(NNDDAConfig(hidden=16, layers=1)))), cfg)
    prior = bidder.next_call(HAND, calls("1H P"), 0, 0)
    result = search.search(HAND, calls("1H P"), 0, 0, prior=prior)  # our side alone has bid: prior_weight
    assert result.call == max(result.candidates, key=lambda c: c.mean_imps + weight * c.prior).call
    if weight == 1e6:
        assert result.call == result.prior_call
    if weight == 0.0:
        assert result.call == max(result.candidates, key=lambda c: c.mean_imps).call


def test_prior_temperature_pulls_towards_the_bsm(bidder):
    cfg = SearchConfig(samples=4, oversample=1, **PLAIN | {"topk": 4}, prior_temperature=1e6)
    search = MonteCarloSearch(bidder, FixedTables(np.full((4, 5), 9)), cfg)
    result = search.search(HAND, calls("1H P"), 0, 0)
    assert result.call == result.prior_call


def test_all_candidates_are_every_legal_call(bidder):
    search = MonteCarloSearch(bidder, FixedTables(np.full((4, 5), 7)), SearchConfig(candidates="all", samples=2))
    prior = bidder.next_call(HAND, calls("1H P 4S"), 0, 0)
    assert sorted(search.candidates(prior)) == list(np.flatnonzero(replay(0, calls("1H P 4S")).legal_mask()))


def test_fallbacks_play_the_bsm_call(bidder):
    dd = FixedTables(np.full((4, 5), 7))
    strict = MonteCarloSearch(bidder, dd, SearchConfig(samples=3, min_fitting=100, **PLAIN))
    result = strict.search(HAND, calls("1H P"), 0, 0)
    assert result.fallback and result.call == result.prior_call and not result.candidates
    single = MonteCarloSearch(bidder, dd, SearchConfig(**PLAIN | {"topk": 1})).search(HAND, calls("1H P"), 0, 0)
    assert single.fallback == "one candidate call" and single.call == single.prior_call


def test_same_seed_same_search(bidder):
    cfg = SearchConfig(samples=4, oversample=2, rollout="sample", selection="proportional", seed=5)
    dd = FixedTables(np.full((4, 5), 8))
    first = MonteCarloSearch(bidder, dd, cfg).search(HAND, [], 1, 2)
    second = MonteCarloSearch(bidder, dd, cfg).search(HAND, [], 1, 2)
    strip = lambda r: {k: v for k, v in r.to_dict().items() if k != "seconds"}  # noqa: E731
    assert strip(first) == strip(second)


def test_exact_dd_solves_the_cells_asked_like_a_full_table():
    owners = np.stack([random_owner(4, 0), random_owner(4, 1)])
    with Solver() as solver:
        tables = np.stack(solver.solve(list(owners))).reshape(2, 4, 5)
    deal = np.array([0] * 20 + [1, 1, 1, 1])  # deal 0 whole (one table), deal 1 three cells (single solves)
    declarer = np.array([d for d in range(4) for _ in range(5)] + [0, 3, 1, 0])
    strain = np.array(list(range(5)) * 4 + [4, 2, 0, 4])
    exact = ExactDD()
    try:
        got = exact.tricks(owners, deal, declarer, strain)
    finally:
        exact.close()
    assert got.tolist() == tables[deal, declarer, strain].tolist()


def test_parsers():
    assert parse_auction("1h, p 2H") == calls("1H P 2H") and parse_auction("") == [] and parse_auction("-") == []
    assert [parse_vulnerability(v) for v in ("none", "NS", "ew", "Both", "all")] == [0, 1, 2, 3, 3]
    with pytest.raises(ValueError):
        parse_vulnerability("nv")


def test_bid_command_prints_the_evidence(bidder, tmp_path, capsys):
    torch.save({"model_config": vars(bidder.model.config), "model": bidder.model.state_dict()}, tmp_path / "model.pt")
    nndda = NNDDA(NNDDAConfig(hidden=16, layers=1))
    torch.save({"model_config": vars(nndda.config), "model": nndda.state_dict()}, tmp_path / "nndda.pt")
    argv = ["--hand", "K843.Q92.A75.J64", "--auction", "1H P", "--dealer", "N", "--vul", "none",
            "--bsm", str(tmp_path), "--nndda", str(tmp_path), "--params", os.devnull,
            "--set", "samples=3", "--set", "oversample=2", "--set", "min_prior=0"]  # untrained: every call < 0.05
    result = search_module.run(argv)
    out = capsys.readouterr().out
    assert "S to call, dealer N" in out and f"call: {search_module.call_name(result.call)}" in out
    search_module.run(argv + ["--json"])
    assert json.loads(capsys.readouterr().out)["samples"] == 3
    with pytest.raises(SystemExit):
        search_module.run(argv[:1] + ["K843.Q92.A75"] + argv[2:])


def test_an_opponents_bsm_bids_and_is_read_for_the_opponents_only(bidder, tmp_path):
    """With `opponents`, LHO and RHO are that BSM's in the rollouts and in the sampler's likelihood;
    the player's and the partner's calls stay the searcher's. The agents and `bid` load it from
    `search.opponents`."""
    torch.manual_seed(2)
    other = Bidder(BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0)))
    search = MonteCarloSearch(bidder, FixedTables(np.zeros((4, 5))), SearchConfig(), opponents=other)
    assert search.seat_bidders(1) == [(bidder, [3]), (other, [0, 2])]
    owners = np.stack([random_owner(5, i) for i in range(3)])
    auction = calls("1NT P 3NT P")  # N, E, S, W; N (seat 0) to call
    mixed = call_log_likelihoods(bidder, owners, auction, 0, 0, 0, search.seat_bidders(0))
    own, by_other = (call_log_likelihoods(b, owners, auction, 0, 0, 0) for b in (bidder, other))
    assert np.allclose(mixed[:, 2], own[:, 2]) and np.allclose(mixed[:, [1, 3]], by_other[:, [1, 3]])
    assert not np.allclose(mixed[:, [1, 3]], own[:, [1, 3]])
    torch.save({"model_config": vars(other.model.config), "model": other.model.state_dict()}, tmp_path / "model.pt")
    factory = AgentFactory(None, None, SearchConfig(opponents=str(tmp_path)))
    factory.scorer = FixedTables(np.zeros((4, 5)))
    agent = factory.make(f"search@{tmp_path}")
    assert agent.search.opponents is factory.bidders[tmp_path / "model.pt"]
    with pytest.raises(InputError, match="nowhere"):
        AgentFactory(None, None, SearchConfig(opponents=str(tmp_path / "nowhere"))).make(f"search@{tmp_path}")


def test_the_sampler_fallback_is_counted_per_decision(bidder):
    """The decision's unfitting deals are the sampler's fill-up: K minus those that fit (top
    keeps fitting deals first); none when every deal fits; all K (and the BSM's call) when none
    does; none when it did not sample (one candidate)."""
    dd = FixedTables(np.full((4, 5), 7))
    auction = calls("1H P")

    def decide(min_call_prob, **options):
        config = SearchConfig(**{"samples": 6, "oversample": 1, "min_call_prob": min_call_prob, **PLAIN, **options})
        return MonteCarloSearch(bidder, dd, config).search(HAND, auction, 0, 0)

    loose = decide(0.0, oversample=2)
    assert loose.unfitting == 0 and not loose.sampler_fell_back and loose.fitting == loose.generated == 12
    # The same six deals as the search draws (seed 0, oversample 1): a threshold two of them meet.
    deals = sample_deals(bidder, HAND, auction, 0, 0, 6, np.random.default_rng(0), oversample=1, min_call_prob=0.0)
    least = np.exp(call_log_likelihoods(bidder, deals.owners, auction, 0, 0, 2)[:, :2]).min(axis=1)
    some = decide(float(np.sort(least)[-2]))
    assert some.fallback is None and some.fitting == 2 and some.unfitting == 4 and some.sampler_fell_back
    assert "sampler fallback: 4 of the deals kept do not fit the auction" in some.format()
    none = decide(0.999)
    assert none.fitting == 0 and none.unfitting == 6 and none.fallback and none.call == none.prior_call
    single = decide(0.999, topk=1)
    assert single.generated == 0 and single.unfitting == 0 and not single.sampler_fell_back


def step_by_step_rollout(search, owners, auction, dealer, first_calls):
    """The reference rollout: every step re-reads each whole auction with Bidder.predict (the
    partner's BSM for the searcher's partner, the opponents' for theirs), the calls drawn in the
    same order as `rollout`."""
    hands = np.argsort(owners, axis=1, kind="stable").reshape(len(owners), 4, 13)
    states = [replay(dealer, [*auction, call]) for call in first_calls for _ in owners]
    player = (dealer + len(auction)) % 4
    partner_seat = (player + 2) % 4
    while True:
        active = [row for row, state in enumerate(states) if not state.finished]
        if not active:
            return [state.calls for state in states]
        seat = states[active[0]].to_call
        bidder = search.bidder
        if search.partner is not None and seat == partner_seat:
            bidder = search.partner
        if search.opponents is not None and seat % 2 != player % 2:
            bidder = search.opponents
        probs = bidder.predict(np.stack([hands[row % len(owners), seat] for row in active]),
                               [states[row].calls for row in active], dealer, 0)["call"]
        made = probs.argmax(axis=1) if search.config.rollout == "greedy" else categorical(probs, search.rng)
        for row, call in zip(active, made):
            states[row].add(int(call))


@pytest.mark.parametrize("arch", ["lstm", "gru", "mlp"])
@pytest.mark.parametrize("rollout", ["greedy", "sample"])
@pytest.mark.parametrize("others", ["", "partner", "opponents", "partner+opponents"])
def test_the_stateful_rollout_makes_the_step_by_step_auctions(arch, rollout, others):
    """Keeping each (candidate, deal, seat)'s recurrent state gives the auctions of re-reading the
    auction at every step, greedy or sampled on the same seed, with or without a partner's and an
    opponents' BSM (the MLP, which has no state, re-reads: ReplayStreams)."""
    torch.manual_seed(3)
    small = dict(embed=8, mlp_layers=1, mlp_hidden=32)
    bsm = Bidder(BSM(BSMConfig(arch=arch, hidden=24, layers=2, hand_features=True, **small)))
    partner = Bidder(BSM(BSMConfig(arch=arch, hidden=16, layers=1, **small))) if "partner" in others else None
    opponents = Bidder(BSM(BSMConfig(arch=arch, hidden=12, layers=1, **small))) if "opponents" in others else None
    auction, hand = calls("1D P"), list(np.flatnonzero(random_owner(9, 0) == 2))
    owners = sample_deals(bsm, hand, auction, 0, 0, 6, np.random.default_rng(9)).owners  # S holds `hand` in all
    prior = bsm.next_call(hand, auction, 0, 0)
    search = MonteCarloSearch(bsm, FixedTables(np.zeros((4, 5))), SearchConfig(rollout=rollout, topk=3), partner,
                              opponents=opponents)
    first = search.candidates(prior)
    search.reseed(11)
    got = search.rollout(owners, auction, 0, 0, first)
    search.reseed(11)
    expected = step_by_step_rollout(search, owners, auction, 0, first)
    assert [got.auction(row) for row in range(len(expected))] == expected
    assert any(len(a) > len(auction) + 4 for a in expected)  # the untrained BSMs bid on: a real test of the states


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16 (AVX512-BF16 or AMX)")
@pytest.mark.parametrize("arch", ["lstm", "gru"])
def test_bf16_arithmetic_answers_within_a_few_hundredths_of_fp32(arch, tmp_path):
    """precision=bf16 (autocast) changes the numbers a little and nothing else: float32 answers,
    illegal calls at 0, call probabilities within 0.03 of fp32's and the same favourite where
    fp32's is clear, in one pass (predict), in the rollouts' kept states (streams) and in the
    sampler's likelihoods."""
    torch.manual_seed(5)
    model = BSM(BSMConfig(arch=arch, hidden=64, layers=2, embed=16, hand_features=True, dropout=0.0))
    with torch.no_grad():  # sure of its calls, as a trained one is (untrained ones are near uniform)
        [*model.call_head.parameters()][-2].mul_(30)
    exact, fast = Bidder(model), Bidder(model, precision="bf16")
    owners = np.stack([random_owner(21, i) for i in range(40)])
    hands = np.argsort(owners, axis=1, kind="stable").reshape(40, 4, 13)[:, 0]
    auctions = [calls("1D P 1S"), calls("P"), [], calls("1NT X 2C P")] * 10
    want, got = exact.predict(hands, auctions, 3, 1), fast.predict(hands, auctions, 3, 1)
    assert all(v.dtype == np.float32 for v in got.values())
    assert np.array_equal(got["call"] == 0, want["call"] == 0)  # the same legal calls
    assert 0 < np.abs(got["call"] - want["call"]).max() < 0.03  # bf16 was used, and is close
    ranked = np.sort(want["call"], axis=1)
    clear = ranked[:, -1] - ranked[:, -2] > 0.05
    assert clear.any() and (got["call"].argmax(1) == want["call"].argmax(1))[clear].all()
    after = exact.predict(hands[:8], [calls("1D P 1S")] * 8, 3, 1)["call"]
    streams = fast.streams(owners[:8] == 0, np.full(8, 2), 3, 1, calls("1D P 1S"))  # South to call, holding hands[:8]
    streamed = streams.call_probs(np.arange(8), np.tile(np.array(calls("1D P 1S"), np.int16), (8, 1)), after > 0)
    assert streamed.dtype == np.float32 and 0 < np.abs(streamed - after).max() < 0.03
    auction = calls("1D P 1S P 2C")
    assert np.abs(call_log_likelihoods(fast, owners, auction, 3, 1, 0)
                  - call_log_likelihoods(exact, owners, auction, 3, 1, 0)).max() < 0.1
    torch.save({"model_config": vars(model.config), "model": model.state_dict()}, tmp_path / "model.pt")
    assert AgentFactory(None, None, SearchConfig(precision="bf16")).bidder(tmp_path / "model.pt").precision == "bf16"


def test_bf16_is_refused_where_the_cpu_would_emulate_it(bidder, monkeypatch):
    """Emulated bf16 is slower than fp32 (and PyTorch's LSTM has none on AVX2): a clear error
    naming the fix, at the params (one line from the CLI) and for a Bidder built in code; a
    precision that does not exist is refused on any CPU."""
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    with pytest.raises(ValueError, match="native bfloat16.*use fp32"):
        Bidder(bidder.model, precision="bf16")
    with pytest.raises(ValueError, match="native bfloat16.*use fp32"):
        SearchConfig(precision="bf16")
    assert Bidder(bidder.model, precision="fp32").precision == "fp32"
    with pytest.raises(ValueError, match="precision must be one of"):
        Bidder(bidder.model, precision="fp16")
    with pytest.raises(ValueError, match="precision must be one of"):
        SearchConfig(precision="fp16")


def test_candidates_by_mass_cover_the_prior_with_at_least_two_and_at_most_the_cap(bidder):
    search = MonteCarloSearch(bidder, FixedTables(np.zeros((4, 5))), SearchConfig(candidates="mass", mass=0.9,
                                                                                    max_candidates=4, min_prior=0))
    prior = np.zeros(38)
    prior[[0, 5, 7, 9, 11, 13]] = [0.5, 0.3, 0.15, 0.03, 0.01, 0.01]
    assert search.candidates(prior).tolist() == [0, 5, 7]  # 0.5 + 0.3 < 0.9 <= 0.95
    prior[[0, 5, 7, 9, 11, 13]] = [0.97, 0.01, 0.01, 0.005, 0.003, 0.002]
    assert search.candidates(prior).tolist() == [0, 5]  # 0.97 covers it alone: still two
    prior[[0, 5, 7, 9, 11, 13]] = 1 / 6
    assert search.candidates(prior).tolist() == [0, 5, 7, 9]  # flat: the cap
    search.config = SearchConfig(candidates="mass", mass=1.0, min_prior=0)
    assert search.candidates(prior).tolist() == [0, 5, 7, 9, 11, 13]  # mass 1: every legal call (up to the cap of 8)
    with pytest.raises(ValueError, match="mass"):
        SearchConfig(candidates="mass", mass=0.0)


@pytest.mark.parametrize("mode", ["mass", "topk"])
def test_min_prior_drops_the_unlikely_candidates_but_never_the_bsm_call(bidder, mode):
    search = MonteCarloSearch(bidder, FixedTables(np.zeros((4, 5))),
                              SearchConfig(candidates=mode, mass=0.99, topk=4, min_prior=0.05))
    prior = np.zeros(38)
    prior[[0, 5, 7, 9, 11]] = [0.5, 0.3, 0.15, 0.04, 0.01]
    assert search.candidates(prior).tolist() == [0, 5, 7]  # 0.04 and 0.01 fall under 0.05
    prior[[0, 5, 7, 9, 11]] = [0.2, 0.2, 0.2, 0.2, 0.2]
    search.config = SearchConfig(candidates=mode, mass=0.99, topk=4, min_prior=0.5)
    assert search.candidates(prior).tolist() == [0]  # none reaches 0.5: the BSM's call alone
    search.config = SearchConfig(candidates="all", min_prior=0.5)
    assert search.candidates(prior).tolist() == [0, 5, 7, 9, 11]  # all: every legal call, however unlikely
    with pytest.raises(ValueError, match="min_prior"):
        SearchConfig(min_prior=1.0)


def test_the_prior_bonus_is_log_or_linear_and_linear_trusts_the_bsm_less_once_they_have_bid():
    prior = np.array([0.6, 0.3, 0.1])
    log = SearchConfig(prior="log", prior_temperature=2.0)
    assert search_module.prior_bonus(log, prior, "competitive") == pytest.approx(2.0 * np.log(prior))
    linear = SearchConfig(prior="linear", prior_weight=8.0, prior_weight_contested=2.4)
    for kind, weight in [("opening", 8.0), ("uncontested", 8.0), ("defending", 2.4), ("competitive", 2.4)]:
        assert search_module.prior_bonus(linear, prior, kind) == pytest.approx(weight * prior)
    with pytest.raises(ValueError, match="search.prior must be one of"):
        SearchConfig(prior="softmax")


def test_one_candidate_left_plays_the_bsm_call_without_sampling(bidder):
    config = SearchConfig(samples=4, oversample=1, **PLAIN | {"min_prior": 0.999})  # untrained: no call is that sure
    result = MonteCarloSearch(bidder, FixedTables(np.full((4, 5), 7)), config).search(HAND, calls("1H P"), 0, 0)
    assert result.call == result.prior_call and result.generated == 0
    assert result.fallback.startswith("one candidate call (every other call under min_prior 0.999)")
    assert "no deals sampled" in result.format()


def test_the_last_look_adds_the_cheapest_bid_of_each_strain_and_the_double_when_pass_may_end_it(bidder):
    state = replay(0, calls("1H P 2H"))  # W to call: a Pass, then N's and E's passes end it in 2H
    assert search_module.pass_may_be_last(state)
    assert search_module.alternatives(state).tolist() == sorted([parse_call(c) for c in ("X", "2S", "2NT", "3C", "3D", "3H")])
    assert not search_module.pass_may_be_last(replay(0, calls("P P")))  # two more passes would not end it
    assert search_module.pass_may_be_last(replay(0, calls("P P P")))  # ours passes the board out
    dd = FixedTables(np.full((4, 5), 7))
    prior = np.zeros(38)
    prior[[parse_call("P"), parse_call("3H")]] = [0.9, 0.1]  # the prior's candidates: Pass and 3H
    plain = MonteCarloSearch(bidder, dd, SearchConfig(samples=3, oversample=1, **PLAIN)).search(HAND, calls("1H P 2H"), 0, 0, prior)
    assert [c.call for c in plain.candidates] == [parse_call("P"), parse_call("3H")]
    looked = MonteCarloSearch(bidder, dd, SearchConfig(samples=3, oversample=1, **PLAIN | {"last_look": True})).search(
        HAND, calls("1H P 2H"), 0, 0, prior)
    assert {c.call for c in looked.candidates} == {parse_call("P"), parse_call("3H")} | set(search_module.alternatives(state))
    assert [c.call for c in looked.candidates][:2] == [parse_call("P"), parse_call("3H")]  # likeliest first
    assert all(c.last_look == (c.call not in (parse_call("P"), parse_call("3H"))) for c in looked.candidates)
    without_pass = prior.copy()
    without_pass[[parse_call("P"), parse_call("4H")]] = [0.0, 0.9]
    again = MonteCarloSearch(bidder, dd, SearchConfig(samples=3, oversample=1, **PLAIN | {"last_look": True})).search(
        HAND, calls("1H P 2H"), 0, 0, without_pass)
    assert len(again.candidates) == 2  # no Pass among the candidates: nothing to look at
    after_grand = calls("1C P 7NT P")  # nothing is left to bid, double or redouble: Pass and 7NT's own continuation only
    assert search_module.alternatives(replay(0, after_grand)).tolist() == []
    grand_prior = np.zeros(38)
    grand_prior[parse_call("P")] = 1.0
    grand = MonteCarloSearch(bidder, dd, SearchConfig(samples=3, oversample=1, last_look=True, candidates="mass"))
    assert grand.search(HAND, after_grand, 0, 0, grand_prior).call == parse_call("P")


class ExactTables:
    """An NN-DDA stub that is exact: the DDS tables of the deals it is shown."""

    def tricks(self, owners, deal, declarer, strain):
        with Solver() as solver:
            tables = np.stack(solver.solve(list(owners))).reshape(-1, 4, 5)
        return tables[deal, declarer, strain]


@pytest.mark.parametrize("screen", ["exact", "flat"])
def test_exact_rescoring_of_the_finalists_agrees_with_an_nndda_that_is_exact(bidder, screen):
    """The two best candidates are rescored with exact DDS (in its child process): their IMPs
    against each other and the call are those of an NN-DDA that is exact, whether the screening
    NN-DDA was exact too or says 7 tricks everywhere."""
    config = dict(samples=4, oversample=1, **PLAIN, topk=3, prior_temperature=0.5)
    auction = calls("1H P")
    screening = ExactTables() if screen == "exact" else FixedTables(np.full((4, 5), 7))
    screened = MonteCarloSearch(bidder, screening, SearchConfig(**config, exact_top=2))
    try:
        result = screened.search(HAND, auction, 0, 0)
    finally:
        screened.close()
    finalists = [c for c in result.candidates if c.exact_imps is not None]
    assert len(finalists) == 2 and screened.exact.pool is None  # closed
    # The same comparison by an exact NN-DDA alone, between those two calls only.
    prior = bidder.next_call(HAND, auction, 0, 0)
    two = np.zeros(38)
    two[[c.call for c in finalists]] = prior[[c.call for c in finalists]]
    alone = MonteCarloSearch(bidder, ExactTables(), SearchConfig(**config)).search(HAND, auction, 0, 0, two)
    assert [c.call for c in alone.candidates] == [c.call for c in finalists]
    assert [c.mean_imps for c in alone.candidates] == pytest.approx([c.exact_imps for c in finalists])
    assert result.call == alone.call


def test_params_yaml_search_section_is_the_defaults_and_says_what_each_knob_trades():
    """params.yaml's `search:` holds every SearchConfig field at its default, each with a comment."""
    from dataclasses import asdict
    from pathlib import Path

    import yaml

    params = Path(__file__).resolve().parents[1] / "params.yaml"
    assert yaml.safe_load(params.read_text())["search"] == asdict(SearchConfig())
    text = params.read_text()
    section = text[text.index("\nsearch:"):].split("\n\n")[0].splitlines()[2:]
    lines = [line for line in section if line.startswith("  ") and not line.startswith("   ")]
    assert len(lines) == len(asdict(SearchConfig())) and all("# " in line for line in lines)


@pytest.mark.parametrize("auction,kind", [("", "opening"), ("P P", "opening"), ("1H P", "uncontested"),
                                          ("1H", "defending"), ("1H 1S", "competitive"), ("1H X", "uncontested")])
def test_position_kind_says_which_sides_have_bid(auction, kind):
    assert search_module.position_kind(calls(auction), 0) == kind  # the player: dealer + len(auction)


def test_the_search_reports_its_position_kind_and_relaxed_calls(bidder):
    config = SearchConfig(samples=4, oversample=1, min_call_prob=0.999, relax=2)
    result = MonteCarloSearch(bidder, FixedTables(np.full((4, 5), 7)), config).search(HAND, calls("1H 1S"), 0, 0)
    assert result.position == "competitive" and result.relaxed == 2  # untrained: no deal explains 0.999
    assert "2 least likely earlier calls left out" in result.format()


def test_a_redouble_scores_the_worse_of_its_rollout_and_the_contract_left_in(bidder):
    """Deal by deal, our XX's auction becomes 1HXX passed out where that scores worse for us than
    its rollout (the opponents may always sit); other candidates and deals keep their rollouts; in
    `search` the knob turns it on and off."""
    auction, hand = calls("1H X"), list(np.flatnonzero(random_owner(5, 0) == 2))  # S, whose partner opened
    owners = sample_deals(bidder, hand, auction, 0, 0, 16, np.random.default_rng(5)).owners
    table = np.array([[7, 7, 6, 0, 6], [4, 4, 4, 4, 4]] * 2)  # 1HXX by N one down: -400, 6S by N -600
    search = MonteCarloSearch(bidder, FixedTables(table), SearchConfig(**PLAIN))
    first = np.array([parse_call("P"), parse_call("XX")])
    rolled = search.rollout(owners, auction, 0, 0, first)
    kept = search.redouble_left_in(rolled, owners, auction, 0, 0, 1)
    before, after = search.scores(rolled, owners, 0, 2), search.scores(kept, owners, 0, 2)
    left_in = score_ns(1, 2, 2, 0, 0, table[0, 2])
    assert (before[1] < left_in).any() and (before[1] > left_in).any()  # both cases occur
    assert after[0].tolist() == before[0].tolist() and after[1].tolist() == np.minimum(before[1], left_in).tolist()
    for deal in range(len(owners)):
        row = len(owners) + deal
        assert kept.auction(deal) == rolled.auction(deal)
        assert kept.auction(row) == (rolled.auction(row) if before[1, deal] <= left_in else calls("1H X XX P P P"))
    prior = np.zeros(38)
    prior[first] = [0.5, 0.5]
    on, off = (MonteCarloSearch(bidder, FixedTables(table), SearchConfig(samples=16, **PLAIN, left_in=left)).search(
        hand, auction, 0, 0, prior) for left in (True, False))
    assert on.candidates[0].mean_score == off.candidates[0].mean_score and on.candidates[1].mean_score < off.candidates[1].mean_score
    assert on.candidates[1].contracts.get("1HXX-N", 0) > off.candidates[1].contracts.get("1HXX-N", 0)


@pytest.mark.parametrize("asker, auction", [
    ("AKQJ4.KQ3.A2.K32", "1S P 3S P 4NT P 5H P 5NT P 6D P"),  # the king answer
    ("AKJ54.KQ3.A2.A32", "1S P 3S P 4NT P 5C P 5D P 6S P"),  # the queen shown, no keycard missing
])
def test_the_search_compares_the_grands_once_the_asks_are_answered(bidder, asker, auction):
    """However sure the network is of the small slam, seven of the trump suit and 7NT are rolled out."""
    prior = np.zeros(38)
    prior[parse_call("6S") if auction.endswith("6D P") else parse_call("P")] = 1.0
    search = MonteCarloSearch(bidder, FixedTables(np.full((4, 5), 13)), SearchConfig(
        samples=3, oversample=1, min_call_prob=0.0, last_look=False, candidates="mass"))
    found = search.search(parse_pbn_hand(asker), calls(auction), 0, 0, prior)
    grands = {parse_call("7S"), parse_call("7NT")}
    assert grands <= {c.call for c in found.candidates}
    assert all(c.last_look == (c.call in grands) for c in found.candidates)
    assert found.call in grands  # thirteen tricks on every deal: the grand
