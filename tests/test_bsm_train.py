"""BSM training: params, the bidder filter, determinism, resume after a kill, the outputs of a run, learning on the toy
system, and the Bidder built from a checkpoint (legality, batching, agreement with training)."""

from __future__ import annotations

import csv
import json
import math
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.dataset.auction import AuctionState, replay
from bridgeflow.dataset.encodings import PASS, parse_call
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.schema import RECORDS, SCHEMA_VERSION
from bridgeflow.dataset.splits import split_of
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_data import load_corpus
from bridgeflow.training.bidding.bsm_model import HAND_SUMMARY, hand_summary, native_bf16
from bridgeflow.training.bidding.bsm_train import TrainConfig, evaluate, load_config, run, to_tensors, train
from bridgeflow.training.bidding.rule_bidder import Hand
from bsm_toy import toy_auction, toy_rows, write_toy_records

torch.set_num_threads(1)
BF16 = pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16 (AVX512-BF16 or AMX)")
TINY = dict(layers=2, hidden=32, embed=8, mlp_layers=2, mlp_hidden=32, batch_size=16, warmup=2, eval_every=1000,
            eval_sequences=64)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("bsm")
    write_toy_records(root / "records", 300, seed=11, shards=2)
    return load_corpus(root / "records", root / "cache")


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_load_config_layers_params_and_overrides(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("synth:\n  deals: 5\nbsm:\n  arch: gru\n  layers: 3\n  lr: 1\n")
    cfg = load_config(params, ["hidden=512", "call_uses_beliefs=false", "sources=[lin, pbn]", "sources=openspiel",
                               "bidders=ben-nosearch"])
    assert (cfg.arch, cfg.layers, cfg.hidden, cfg.lr, cfg.call_uses_beliefs) == ("gru", 3, 512, 1.0, False)
    assert cfg.sources == ["openspiel"] and cfg.bidders == ["ben-nosearch"]
    assert load_config(params, ["bidders=[rule, ben-nosearch]"]).bidders == ["rule", "ben-nosearch"]
    assert load_config(None, []) == TrainConfig()
    with pytest.raises(ValueError, match="unknown bsm params"):
        load_config(params, ["hiden=3"])
    with pytest.raises(ValueError, match="expected int"):
        load_config(params, ["layers=two"])


def test_a_bad_bsm_param_on_the_command_line_is_one_line(tmp_path, capsys):
    """Not load_config's ValueError as a traceback: the verb's one-line error, exit 2."""
    from bridgeflow.cli import main

    assert main(["bsm", "--records", str(tmp_path), "--out", str(tmp_path / "out"), "--params", os.devnull,
                 "--set", "layers=two"]) == 2
    assert capsys.readouterr().err == (f"bridgeflow bsm: error: bsm params ({os.devnull}, --set): "
                                       "bsm.layers = 'two': expected int\n")


def test_bidders_select_the_auctions_trained_and_tested_on(tmp_path):
    """Two corpora of the same deals, told apart by their players (synth's bidder): a run on one
    is evaluated on that one's test auctions and says so in its card; a bidder not there is an error."""
    rule, other = toy_rows(120, 3), toy_rows(80, 3)
    for row in other:
        row["auction"] = [PASS] * 4
    rows = [row | {"players": ["rule"] * 4} for row in rule] + [row | {"players": ["passer"] * 4} for row in other]
    (tmp_path / "records").mkdir()
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORDS), tmp_path / "records" / "a.parquet")
    params = tmp_path / "params.yaml"
    params.write_text("bsm:\n" + "".join(f"  {k}: {v}\n" for k, v in TINY.items()))
    common = ["--records", str(tmp_path / "records"), "--cache", str(tmp_path / "cache"), "--params", str(params),
              "--set", "steps=2"]
    corpus = load_corpus(tmp_path / "records", tmp_path / "cache")
    for bidders, auctions in (("[passer]", other), ("[rule, passer]", rule + other)):
        metrics = run(common + ["--out", str(tmp_path / bidders), "--set", f"bidders={bidders}"])
        test_calls = sum(len(row["auction"]) for row in auctions if split_of(row["deal_id"]) == "test")
        assert metrics["decision_points"] == test_calls
        card = (tmp_path / bidders / "MODEL_CARD.md").read_text()
        assert f"- bidders: {load_config(params, [f'bidders={bidders}']).bidders} (available: passer, rule)" in card
        if bidders == "[passer]":
            assert "by_bidder" not in metrics and "By bidder" not in card
        else:  # the mix, scored on each corpus's test auctions too
            parts = metrics["by_bidder"]
            assert sorted(parts) == ["passer", "rule"]
            assert sum(part["decision_points"] for part in parts.values()) == test_calls
            assert sum(part["call_accuracy"] * part["decision_points"] for part in parts.values()) == pytest.approx(
                metrics["call_accuracy"] * test_calls)
            assert (tmp_path / bidders / "plots" / "by_position-passer.csv").exists() and "By bidder" in card
    with pytest.raises(InputError, match=r"bidders=\['gib'\] \(the records hold .* bidders \['passer', 'rule'\]\)"):
        train(TrainConfig(**TINY, steps=2, bidders=["gib"]), corpus, tmp_path / "gib", progress=False)


def test_training_is_deterministic_given_the_seed(corpus, tmp_path):
    cfg = TrainConfig(**TINY, steps=4)
    a = train(cfg, corpus, tmp_path / "a", progress=False)
    b = train(cfg, corpus, tmp_path / "b", progress=False)
    c = train(TrainConfig(**TINY, steps=4, seed=1), corpus, tmp_path / "c", progress=False)
    assert same_weights(a["model"], b["model"])
    assert not same_weights(a["model"], c["model"])


@pytest.mark.parametrize("arch", ["lstm", "mlp"])
def test_resume_after_kill_matches_uninterrupted_run(corpus, tmp_path, arch):
    cfg = TrainConfig(**{**TINY, "eval_every": 4}, arch=arch, steps=10, checkpoint_every=3)
    whole = train(cfg, corpus, tmp_path / "whole", progress=False)
    killed = train(cfg, corpus, tmp_path / "killed", stop_at=8, progress=False)  # dies after step 8; last checkpoint: 6
    assert killed["step"] == 8 and torch.load(tmp_path / "killed" / "ckpt.pt", weights_only=False)["step"] == 6
    resumed = train(cfg, corpus, tmp_path / "killed", progress=False)
    assert resumed["step"] == 10
    assert same_weights(whole["model"], resumed["model"])
    assert whole["log"] == resumed["log"] and [row["step"] for row in whole["log"]] == [4, 8, 10]
    other = train(TrainConfig(**{**TINY, "eval_every": 4}, arch=arch, steps=10, checkpoint_every=3, lr=5e-4), corpus,
                  tmp_path / "killed", progress=False)  # other params: the old checkpoint is not resumed
    assert not same_weights(whole["model"], other["model"])


def test_init_warm_starts_from_a_trained_model(corpus, tmp_path):
    first = train(TrainConfig(**TINY, steps=6), corpus, tmp_path / "first", progress=False)
    torch.save({"model": first["model"].state_dict()}, tmp_path / "first" / "model.pt")
    start = train(TrainConfig(**TINY, steps=3, lr=1e-4), corpus, tmp_path / "warm", stop_at=0, progress=False,
                  init=tmp_path / "first")
    assert same_weights(start["model"], first["model"])  # step 0 of the continuation is the trained model
    cold = train(TrainConfig(**TINY, steps=3, lr=1e-4), corpus, tmp_path / "cold", stop_at=0, progress=False)
    assert not same_weights(cold["model"], first["model"])
    warm = train(TrainConfig(**TINY, steps=3, lr=1e-4), corpus, tmp_path / "warm", progress=False, init=tmp_path / "first")
    assert warm["step"] == 3 and "first" in warm["init"]
    again = train(TrainConfig(**TINY, steps=3, lr=1e-4), corpus, tmp_path / "warm", progress=False)  # other start:
    assert not same_weights(again["model"], warm["model"])  # the warm checkpoint is not resumed from scratch
    with pytest.raises(ValueError, match="do not fit"):
        train(TrainConfig(**{**TINY, "hidden": 16}, steps=3), corpus, tmp_path / "bad", progress=False, init=tmp_path / "first")


@pytest.mark.parametrize("arch,uses,hand", [("lstm", True, False), ("gru", False, True), ("rnn", True, False),
                                            ("mlp", False, True)])
def test_run_writes_checkpoint_metrics_plots_and_card(corpus, tmp_path, arch, uses, hand):
    params = tmp_path / "params.yaml"
    params.write_text("bsm:\n" + "".join(f"  {k}: {v}\n" for k, v in TINY.items()))
    out = tmp_path / "out"
    metrics = run(["--records", corpus.meta["records"], "--cache", str(corpus.folder.parent), "--out", str(out),
                   "--params", str(params), "--set", f"arch={arch}", "--set", f"call_uses_beliefs={uses}",
                   "--set", f"hand_features={hand}", "--set", "steps=3"])
    saved = json.loads((out / "metrics.json").read_text())
    assert saved == pytest.approx(metrics)
    for key in ("call_accuracy", "bid_accuracy", "top3_accuracy", "call_ece", "partner_hcp_mae", "suit_length_mae",
                "card_logloss", "card_brier"):
        assert 0 <= saved[key] < 20, key
    assert saved["decision_points"] == len(load_corpus_batch_calls(corpus, "test"))
    assert saved["card_logloss_prior"] == pytest.approx(math.log(3))
    assert saved["card_brier_prior"] == pytest.approx(2 / 3)
    assert saved["top3_accuracy"] >= saved["call_accuracy"]
    with open(out / "plots" / "by_position.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert sum(int(r["decision_points"]) for r in rows) == saved["decision_points"]
    assert (out / "plots" / "calibration.csv").exists() and (out / "plots" / "train_log.csv").exists()
    card = (out / "MODEL_CARD.md").read_text()
    assert f"arch: {arch}" in card and "deal_id % 100" in card and f"{saved['call_accuracy']:.4f}" in card
    assert saved["schema_version"] == SCHEMA_VERSION and f"schema_version: {SCHEMA_VERSION}" in card
    bidder = Bidder.load(out)
    assert bidder.model.config.arch == arch and bidder.model.config.call_uses_beliefs == uses
    assert bidder.model.config.hand_features == hand


def load_corpus_batch_calls(corpus, split):
    return corpus.batch(corpus.sequences(split))["call"]


@BF16
def test_bf16_training_is_deterministic_and_not_fp32s(corpus, tmp_path):
    cfg = TrainConfig(**TINY, steps=4, precision="bf16")
    a = train(cfg, corpus, tmp_path / "a", progress=False)
    b = train(cfg, corpus, tmp_path / "b", progress=False)
    fp32 = train(TrainConfig(**TINY, steps=4), corpus, tmp_path / "c", progress=False)
    assert same_weights(a["model"], b["model"]) and not same_weights(a["model"], fp32["model"])
    assert all(p.dtype == torch.float32 for p in a["model"].parameters())  # the weights stay fp32


@pytest.mark.parametrize("precision", ["fp32", pytest.param("bf16", marks=BF16)])
def test_learns_the_toy_system(corpus, tmp_path, precision):
    """A few hundred steps on 240 training auctions: calls well above always-pass, beliefs better than the priors."""
    cfg = TrainConfig(**{**TINY, "layers": 1, "hidden": 64, "batch_size": 32, "warmup": 20}, steps=250, lr=1e-2,
                      min_lr=1e-3, dropout=0.0, precision=precision)
    model = train(cfg, corpus, tmp_path, progress=False)["model"]
    ids = corpus.sequences("train")
    metrics = evaluate(model, corpus, ids, "cpu")["metrics"]
    pass_rate = float((load_corpus_batch_calls(corpus, "train") == PASS).mean())
    assert metrics["call_accuracy"] > pass_rate + 0.2, (metrics["call_accuracy"], pass_rate)
    assert metrics["bid_accuracy"] > 0.6
    assert metrics["partner_hcp_mae"] < metrics["partner_hcp_mae_prior"] - 0.8
    assert metrics["suit_length_mae"] < metrics["suit_length_mae_prior"]
    assert metrics["card_logloss"] < metrics["card_logloss_prior"] - 0.05
    assert metrics["card_brier"] < metrics["card_brier_prior"] - 0.03


@pytest.fixture(scope="module", params=["lstm", "mlp"])
def bidder(corpus, tmp_path_factory, request):
    out = tmp_path_factory.mktemp("bidder")
    cfg = TrainConfig(**TINY, steps=5, arch=request.param)
    train(cfg, corpus, out, progress=False)
    return Bidder.load(out / "ckpt.pt")


def random_queries(count: int, seed: int):
    """Random hands and unfinished legal auction prefixes."""
    rng = np.random.default_rng(seed)
    hands, auctions, dealers = [], [], []
    for _ in range(count):
        dealer = int(rng.integers(4))
        state = AuctionState.start(dealer)
        for _ in range(int(rng.integers(0, 12))):
            legal = np.flatnonzero(state.legal_mask())
            call = int(rng.choice(legal[:5]))
            state.add(call)
            if state.finished:
                state = replay(dealer, state.calls[:-1])
                break
        hands.append(rng.permutation(52)[:13])
        auctions.append(list(state.calls))
        dealers.append(dealer)
    return np.array(hands), auctions, np.array(dealers)


def test_bidder_never_proposes_an_illegal_call(bidder):
    hands, auctions, dealers = random_queries(200, seed=3)
    probs = bidder.next_call_batch(hands, auctions, vul=2, dealer=dealers)
    assert probs.shape == (200, 38)
    np.testing.assert_allclose(probs.sum(axis=1), 1, atol=1e-5)
    for p, auction, dealer in zip(probs, auctions, dealers):
        illegal = ~replay(int(dealer), auction).legal_mask()
        assert (p[illegal] == 0).all()


def test_bidder_batched_equals_single_and_beliefs_are_distributions(bidder):
    hands, auctions, dealers = random_queries(6, seed=4)
    batch = bidder.predict(hands, auctions, vul=1, dealer=dealers)
    for i in range(6):
        single = bidder.next_call(hands[i], auctions[i], int(dealers[i]), 1)
        np.testing.assert_allclose(single, batch["call"][i], atol=1e-5)
        beliefs = bidder.beliefs(hands[i], auctions[i], int(dealers[i]), 1)
        np.testing.assert_allclose(beliefs.cards, batch["cards"][i], atol=1e-5)
        assert beliefs.partner_hcp.shape == (38,) and beliefs.suit_lengths.shape == (3, 4, 14)
        np.testing.assert_allclose(beliefs.cards.sum(-1), 1, atol=1e-5)
        np.testing.assert_allclose(beliefs.suit_lengths.sum(-1), 1, atol=1e-5)
        mine = np.zeros(52, bool)
        mine[hands[i]] = True
        assert (beliefs.cards[mine, 0] == 1).all() and (beliefs.cards[~mine, 0] == 0).all()


def test_bidder_agrees_with_the_training_forward(bidder, corpus):
    """The same decision point through Corpus.batch (teacher forcing) and through Bidder.predict."""
    ids = corpus.sequences("test")[:40]
    raw = corpus.batch(ids, features480=bidder.model.config.arch == "mlp")
    with torch.no_grad():
        trained = bidder.model(to_tensors(raw, "cpu"))["call"].softmax(-1).numpy()
    hands, auctions, vuls, dealers = [], [], [], []
    for row, t in zip(raw["row"], raw["position"]):
        auction, player = divmod(int(ids[row]), 4)
        calls = corpus.calls[corpus.offsets[auction]:corpus.offsets[auction + 1]].tolist()
        hands.append(np.flatnonzero(np.asarray(corpus.owner[auction]) == player))
        auctions.append(calls[:t])
        vuls.append(int(corpus.vul[auction]))
        dealers.append(int(corpus.dealer[auction]))
    served = bidder.next_call_batch(np.array(hands), auctions, np.array(dealers), np.array(vuls))
    np.testing.assert_allclose(served, trained, atol=1e-5)


def test_bidder_rejects_finished_or_illegal_auctions(bidder):
    hand = np.arange(13)
    with pytest.raises(ValueError, match="illegal or already finished"):
        bidder.next_call(hand, [parse_call("1H"), PASS, PASS, PASS], 0, 0)
    with pytest.raises(ValueError, match="illegal or already finished"):
        bidder.next_call(hand, [parse_call("1H"), parse_call("1C")], 0, 0)
    with pytest.raises(ValueError, match="same card twice"):
        bidder.next_call([0] * 13, [], 0, 0)


def test_toy_auctions_are_complete_and_legal():
    owner = np.repeat(np.arange(4, dtype=np.int8), 13)
    calls = toy_auction(owner, dealer=0)
    assert replay(0, calls).finished


def test_hand_summary_thermometers_match_the_rule_bidders_hand_features():
    """The optional hand-feature inputs: bit k-1 of the HCP block is HCP >= k, and so on per suit."""
    rng = np.random.default_rng(3)
    hands = [np.sort(rng.permutation(52)[:13]) for _ in range(200)]
    cards = torch.zeros(len(hands), 52)
    for row, hand in enumerate(hands):
        cards[row, hand] = 1
    bits = hand_summary(cards)
    assert bits.shape == (len(hands), HAND_SUMMARY)
    for row, hand in enumerate(hands):
        features = Hand([int(c) for c in hand])
        hcp_bits, length_bits = bits[row, :37], bits[row, 37:].view(4, 13)
        assert hcp_bits.sum() == features.hcp and bool(hcp_bits[:features.hcp].all())
        assert length_bits.sum(1).tolist() == features.len
        assert all(bool(length_bits[s, :n].all()) for s, n in enumerate(features.len))
