"""Policy iteration, the training step: the self-play corpus (soft targets, the imitation share,
a rule partner's calls untrained) and `bsm --selfplay --init` lowering the cross-entropy to pi'."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.cli import main
from bridgeflow.dataset.schema import SELFPLAY_DECISIONS
from bridgeflow.training.bidding import bsm_train
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_data import (
    HARD, SELFPLAY_SOURCE, UNTRAINED, gated_target, load_corpus, selfplay_corpus)
from bridgeflow.training.bidding.bsm_model import BSM, losses
from bsm_toy import write_toy_records
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, SearchConfig
from bridgeflow.training.selfplay.actor import Actor, SelfPlayConfig, train_deals

torch.set_num_threads(1)
TINY = dict(hidden=16, layers=1, embed=8, dropout=0.0, batch_size=16, warmup=5, eval_every=1000,
            checkpoint_every=1000, eval_sequences=64, threads=1, lr=0.01)


class FixedTables:
    def tricks(self, owners, deal, declarer, strain):
        return (np.asarray(strain) * 2 + 3) % 14  # some strains make more than others: Q differs


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Toy imitation records, an untrained tiny BSM (generation 0) and its self-play decisions."""
    root = tmp_path_factory.mktemp("loop")
    write_toy_records(root / "records", 120, seed=2)
    config = bsm_train.TrainConfig(**TINY)
    torch.manual_seed(0)
    model = BSM(config.model())
    torch.save({"model_config": vars(config.model()), "model": model.state_dict()}, root / "model.pt")
    bidder = Bidder(model)
    rows = []
    for partner, generation in (("self", 1), ("rule", 2)):
        actor = Actor(bidder, MonteCarloSearch(bidder, FixedTables(), SearchConfig(samples=2, oversample=1, topk=3)),
                      SelfPlayConfig(partner=partner, tempering=2.0, skip_above=0.5))
        for board, (_, owner) in enumerate(train_deals(7000 + generation, 4), start=1):
            rows += actor.play(generation, board, owner)
    (root / "decisions").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=SELFPLAY_DECISIONS), root / "decisions" / "part-00000.parquet")
    return root, config, rows


def test_the_corpus_holds_the_recorded_targets_soft_the_imitation_hard_and_rule_calls_untrained(setup, tmp_path):
    root, _, rows = setup
    imitation = load_corpus(root / "records", tmp_path)
    corpus = selfplay_corpus(root / "decisions", imitation, 0.5, 0, tmp_path)
    meta = corpus.meta
    assert meta["generated_auctions"] == 8 and meta["imitation_train_auctions"] == 8  # 0.5 of the training auctions
    assert meta["auctions_by_split"]["valid"] == imitation.meta["auctions_by_split"]["valid"] > 0  # all held-out kept
    generated_calls = len(rows)
    target_row = np.asarray(corpus.target_row)
    assert (target_row[generated_calls:] == HARD).all()
    assert [int(t) == UNTRAINED for t in target_row[:generated_calls]] == [row["actor"] == "rule" for row in rows]
    for row, target in zip(rows, target_row[:generated_calls]):
        if row["actor"] == "bsm":
            dense = np.zeros(38, np.float32)
            dense[row["candidates"]] = row["target"]
            assert np.allclose(corpus.policy[target], dense)
    ids = corpus.sequences("train", [SELFPLAY_SOURCE])
    batch = corpus.batch(ids)
    assert np.allclose(batch["target"][batch["trained"]].sum(axis=1), 1.0, atol=1e-5)
    assert selfplay_corpus(root / "decisions", imitation, 0.5, 0, tmp_path).folder == corpus.folder  # cached


def test_the_gate_keeps_only_clear_evidence_of_the_search():
    prior = [0.6, 0.3, 0.1]
    q, se = [0.0, 0.4, 3.0], [0.5, 0.5, 0.5]  # the second call within noise, the third clearly better
    target = np.array(prior) * np.exp(np.array(q) / 0.5)
    target /= target.sum()
    assert np.allclose(gated_target(prior, target, q, se, 0.0), target)  # no gate: as generated
    assert np.allclose(gated_target(prior, target, None, None, 1.0), target)  # not searched
    gated = gated_target(prior, target, q, se, 1.0)
    assert np.isclose(gated.sum(), 1.0)
    assert np.isclose(gated[1] / gated[0], 0.3 / 0.6)  # unclear: the prior's odds against the favourite
    assert np.isclose(gated[2] / gated[0], target[2] / target[0])  # clear: the search's odds
    assert np.allclose(gated_target(prior, target, q, se, 10.0), prior)  # nothing clear: the prior


def test_confirm_trains_on_the_favourite_alone_where_the_search_clearly_agrees():
    prior, se = [0.6, 0.3, 0.1], [0.5, 0.5, 0.5]
    agrees, unclear = [2.0, 0.0, -1.0], [2.0, 1.5, -1.0]  # favourite ahead by 2 and 3 IMPs; by 0.5 over one
    target = np.array([0.9, 0.08, 0.02])
    assert np.allclose(gated_target(prior, target, agrees, se, 0.0, confirm=1.0), [1, 0, 0])
    assert np.allclose(gated_target(prior, target, unclear, se, 0.0, confirm=1.0), target)  # one call too close
    assert np.allclose(gated_target(prior, target, agrees, se, 0.0, confirm=5.0), target)  # not by 5 se
    assert np.allclose(gated_target(prior, target, None, None, 0.0, confirm=1.0), target)  # not searched


def test_a_gated_corpus_holds_the_gated_targets_under_its_own_key(setup, tmp_path):
    root, _, rows = setup
    imitation = load_corpus(root / "records", tmp_path)
    ungated = selfplay_corpus(root / "decisions", imitation, 0.5, 0, tmp_path)
    gated = selfplay_corpus(root / "decisions", imitation, 0.5, 0, tmp_path, gate=1.0)
    assert gated.folder != ungated.folder and gated.meta["target_gate"] == 1.0
    confirmed = selfplay_corpus(root / "decisions", imitation, 0.5, 0, tmp_path, gate=1.0, confirm=1.0)
    assert confirmed.folder not in (gated.folder, ungated.folder) and confirmed.meta["target_confirm"] == 1.0
    searched = [(row, t) for row, t in zip(rows, np.asarray(gated.target_row)) if row["actor"] == "bsm" and row["q"]]
    assert searched
    moved = 0
    for row, target in searched:
        expected = np.zeros(38)
        stored = [np.float32(row[key]) for key in ("prior", "target", "q", "se")]  # as the decisions hold them
        expected[row["candidates"]] = gated_target(*stored, 1.0)
        assert np.allclose(gated.policy[target], expected, atol=1e-6)
        moved += not np.allclose(expected[row["candidates"]], row["target"], atol=1e-6)
    assert moved  # the toy search's Q differences include some within one se


def test_soft_targets_are_cross_entropy_to_pi_prime_over_the_trained_points():
    logits = torch.randn(4, 38)
    legal = torch.ones(4, 38, dtype=torch.bool)
    legal[:, 30:] = False
    out = {"call": logits.masked_fill(~legal, float("-inf")), "hcp": torch.zeros(4, 38),
           "lengths": torch.zeros(4, 3, 4, 14), "cards": torch.zeros(4, 52, 4)}
    call = torch.tensor([0, 3, 5, 7])
    batch = {"legal": legal, "call": call, "partner_hcp": call, "lengths": torch.zeros(4, 3, 4, dtype=torch.long),
             "holder": torch.zeros(4, 52, dtype=torch.long), "mine": torch.ones(4, 52, dtype=torch.bool)}
    hard = losses(out, batch)["call"]
    one_hot = torch.nn.functional.one_hot(call, 38).float()
    trained = torch.ones(4, dtype=torch.bool)
    assert torch.isclose(losses(out, batch | {"target": one_hot, "trained": trained})["call"], hard)
    soft = torch.zeros(4, 38)
    soft[:, :2] = 0.5
    expected = -(0.5 * out["call"].log_softmax(-1)[:, :2]).sum(-1)
    half = torch.tensor([True, False, True, False])
    assert torch.isclose(losses(out, batch | {"target": soft, "trained": half})["call"], expected[half].mean())


def test_training_from_init_lowers_the_cross_entropy_to_pi_prime(setup, tmp_path):
    root, config, _ = setup
    corpus = selfplay_corpus(root / "decisions", load_corpus(root / "records", tmp_path), 0.3, 0, tmp_path)
    ids = corpus.sequences("train", [SELFPLAY_SOURCE])
    batch = bsm_train.to_tensors(corpus.batch(ids), "cpu")

    def cross_entropy(model):
        model.eval()
        with torch.no_grad():
            return float(losses(model(batch), batch)["call"])

    before = cross_entropy(Bidder.load(root / "model.pt").model)
    result = bsm_train.train(bsm_train.TrainConfig(**TINY, steps=25), corpus, tmp_path / "bsm", progress=False,
                             init=root / "model.pt")
    after = cross_entropy(result["model"])
    assert after < before - 0.3, (before, after)


def test_the_anchor_keeps_the_new_network_near_its_init(setup, tmp_path):
    """w_anchor adds KL(init || new) on the calls: a heavy anchor leaves the network much nearer the
    generation it started from than the same run without it; it needs --init."""
    root, _, _ = setup
    corpus = selfplay_corpus(root / "decisions", load_corpus(root / "records", tmp_path), 0.3, 0, tmp_path)
    batch = bsm_train.to_tensors(corpus.batch(corpus.sequences("train", [SELFPLAY_SOURCE])), "cpu")
    init = Bidder.load(root / "model.pt").model.eval()

    def kl_to_init(model):
        model.eval()
        with torch.no_grad():
            return float(bsm_train.anchor_kl(model(batch)["call"], init(batch)["call"]))

    runs = {}
    for w_anchor in (0.0, 20.0):
        result = bsm_train.train(bsm_train.TrainConfig(**TINY, steps=25, w_anchor=w_anchor), corpus,
                                 tmp_path / f"bsm{w_anchor}", progress=False, init=root / "model.pt")
        runs[w_anchor] = kl_to_init(result["model"])
        assert ("train_anchor" in result["log"][-1]) == (w_anchor > 0)
    assert runs[20.0] < 0.25 * runs[0.0], runs
    with pytest.raises(bsm_train.InputError, match="w_anchor > 0 needs --init"):
        bsm_train.train(bsm_train.TrainConfig(**TINY, steps=2, w_anchor=1.0), corpus, tmp_path / "no_init", progress=False)


def test_the_verb_trains_on_self_play_and_refuses_bad_input(setup, tmp_path, capsys):
    root, _, _ = setup
    common = ["bsm", "--records", str(root / "records"), "--cache", str(tmp_path / "cache"), "--params", os.devnull,
              "--init", str(root / "model.pt"), "--out", str(tmp_path / "bsm"),
              *[f"--set={key}={value}" for key, value in TINY.items()], "--set=steps=2"]
    assert main(common + ["--selfplay", str(root / "decisions"), "--imitation-fraction", "0.2"]) == 0
    card = (tmp_path / "bsm" / "MODEL_CARD.md").read_text()
    assert "8 self-play auctions" in card and "imitation_fraction 0.2" in card
    capsys.readouterr()
    assert main(common + ["--selfplay", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.startswith("bridgeflow bsm: error: self-play decisions (--selfplay)")
    (tmp_path / "empty").mkdir()
    assert main(common + ["--selfplay", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err.startswith(f"bridgeflow bsm: error: self-play decisions {tmp_path / 'empty'}: no Parquet")
    (tmp_path / "old").mkdir()  # decisions from before the target column
    old = pq.read_table(root / "decisions" / "part-00000.parquet").drop_columns(["target"])
    pq.write_table(old, tmp_path / "old" / "part-00000.parquet")
    assert main(common + ["--selfplay", str(tmp_path / "old")]) == 2
    assert "part-00000.parquet: no `target` column" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(common + ["--selfplay", str(root / "decisions"), "--imitation-fraction", "1"])
    assert "--imitation-fraction must be in [0, 1)" in capsys.readouterr().err
