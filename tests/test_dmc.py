"""Deep Monte Carlo self-play (training/dmc): call features, legality, the duplicate reward, the
toy game DMC must learn, resuming after a kill, and checkpoints at generation.py's evaluator."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import DOUBLE, PASS, REDOUBLE, deal_id, hands_from_owner, parse_call, random_owner
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.dmc.actor import decisions, play_batch
from bridgeflow.training.dmc.q_model import (
    CALL_FEATURES,
    DMCAgent,
    QConfig,
    QNetwork,
    call_features,
    decision_batch,
    epsilon_greedy,
    from_bsm,
    load_q,
)
from bridgeflow.training.dmc.reward import BridgeReward, DealTables, Played
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig
from bridgeflow.training.dmc.buffer import SharedBuffer
from bridgeflow.training.dmc.train import DMCConfig, Learner, run, train
from bridgeflow.training.params import load_section
from dmc_toy import WINNING_CALL, FirstCallWins

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parents[1]
TOY_BSM = BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0, hand_features=True)


@pytest.fixture(scope="module")
def bsm_file(tmp_path_factory):
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("bsm") / "model.pt"
    torch.save({"model": BSM(TOY_BSM).state_dict(), "model_config": asdict(TOY_BSM)}, path)
    return path


def toy_config(bsm_file, **changes) -> DMCConfig:
    values = dict(init=str(bsm_file), dd="", actors=1, deals_per_batch=16, epsilon=1.0, max_calls=8, buffer=4000,
                  min_fill=500, batch_size=256, lr=3e-3, updates=300, head_hidden=32, log_seconds=5.0)
    return DMCConfig(**(values | changes))


def features_after(auction: str) -> torch.Tensor:
    state = replay(0, [parse_call(c) for c in auction.split()])
    return call_features(torch.from_numpy(state.legal_mask())[None])[0]


def test_a_call_is_encoded_by_its_kind_level_strain_and_jump():
    opening = features_after("")
    one_nt, three_nt = parse_call("1NT"), parse_call("3NT")
    assert opening.shape == (38, CALL_FEATURES)
    assert opening[PASS, 0] == 1 and opening[DOUBLE].sum() == 1 and opening[REDOUBLE].sum() == 1  # kinds only
    assert opening[three_nt, 3] == 1 and opening[three_nt, 4 + 2] == 1 and opening[three_nt, 4 + 7 + 4] == 1
    jump = slice(4 + 7 + 5, None)
    assert opening[one_nt, jump].argmax() == 0 and opening[three_nt, jump].argmax() == 2
    after_one_spade = features_after("1S")
    assert after_one_spade[parse_call("2H"), jump].argmax() == 0  # the cheapest heart bid: no jump
    assert after_one_spade[parse_call("3H"), jump].argmax() == 1
    assert after_one_spade[parse_call("2S"), jump].argmax() == 0
    assert after_one_spade[parse_call("1H"), jump].sum() == 0  # illegal: no jump


def test_q_is_minus_infinity_on_illegal_calls_and_exploration_stays_legal(bsm_file):
    network = from_bsm(bsm_file, 16)
    state = replay(0, [parse_call("1S"), DOUBLE])
    hand = np.zeros((1, 52), bool)
    hand[0, hands_from_owner(random_owner(1, 0))[2]] = True
    q = network.values(hand, np.array([state.calls], np.int16), np.array([0]), np.array([0]))[0]
    assert (np.isfinite(q) == state.legal_mask()).all()
    calls = epsilon_greedy(np.repeat(q[None], 500, axis=0), 1.0, np.random.default_rng(0))
    assert state.legal_mask()[calls].all() and len(set(calls)) > 20


def test_the_trunk_starts_from_the_imitation_bsm(bsm_file):
    saved = torch.load(bsm_file, weights_only=True)["model"]
    network = from_bsm(bsm_file, 16)
    assert torch.equal(network.trunk.rnn.weight_ih_l0, saved["rnn.weight_ih_l0"])
    assert not hasattr(network.trunk, "call_head")


def test_with_the_bsms_policy_a_fresh_head_plays_its_calls_and_explores_its_candidates(bsm_file):
    saved = torch.load(bsm_file, weights_only=True)
    bsm = BSM(TOY_BSM).eval()
    bsm.load_state_dict(saved["model"])
    network = from_bsm(bsm_file, 16, prior=1.0).eval()
    torch.nn.init.zeros_(network.value[-1].weight)  # a head that rates every call alike
    rng = np.random.default_rng(3)
    hands = np.zeros((6, 52), bool)
    for row in range(6):
        hands[row, hands_from_owner(random_owner(1, row))[row % 4]] = True
    auctions = [[], [parse_call("1S")], [parse_call("1C"), DOUBLE], [PASS, PASS], [parse_call("2H")], []]
    calls = np.full((6, 2), -1, np.int16)
    for row, auction in enumerate(auctions):
        calls[row, :len(auction)] = auction
    dealer, vul = rng.integers(0, 4, 6), rng.integers(0, 4, 6)
    batch = decision_batch(hands, calls, dealer, vul, False)
    with torch.no_grad():
        expected = bsm(batch)["call"].argmax(dim=1).numpy()
    assert (network.values(hands, calls, dealer, vul).argmax(axis=1) == expected).all()
    with torch.no_grad():
        top_two = bsm(batch)["call"].topk(2, dim=1).indices.numpy()
    restricted = from_bsm(bsm_file, 16, candidates=2).values(hands, calls, dealer, vul)
    assert (np.isfinite(restricted).sum(axis=1) == 2).all()
    assert all(set(np.flatnonzero(np.isfinite(row))) == set(top) for row, top in zip(restricted, top_two))
    explored = epsilon_greedy(np.repeat(restricted[:1], 200, axis=0), 1.0, rng)
    assert set(explored) == set(top_two[0])  # exploration stays within the candidates


def test_a_frozen_trunk_stays_the_bsms_while_the_head_learns(bsm_file, tmp_path):
    saved = torch.load(bsm_file, weights_only=True)["model"]
    config = toy_config(bsm_file, prior=0.5, candidates=3, freeze_trunk=True, updates=3, min_fill=64, batch_size=32)
    train(config, tmp_path, FirstCallWins)
    trained = load_q(tmp_path).state_dict()
    assert all(torch.equal(trained[f"trunk.{key}"], value) for key, value in saved.items())  # trunk and prior
    torch.manual_seed(config.seed)  # the head the learner started from
    assert not torch.equal(trained["value.3.weight"], from_bsm(bsm_file, 32, prior=0.5, candidates=3).value[3].weight)


def test_the_learner_fits_the_head_alone_and_the_prior_only_steers_play(bsm_file, tmp_path):
    """With a head that outputs 0, the loss is the returns' mean square whatever the prior's weight:
    the BSM's log-policy is a bonus at play, not something the head must learn to cancel."""
    learner = Learner(toy_config(bsm_file, prior=5.0, candidates=3, batch_size=16), tmp_path)
    torch.nn.init.zeros_(learner.network.value[-1].weight)
    torch.nn.init.zeros_(learner.network.value[-1].bias)
    buffer = SharedBuffer(64, 8)
    rows = {"hand": np.zeros((64, 52), bool), "calls": np.full((64, 8), -1, np.int16), "dealer": np.zeros(64, np.int8),
            "vul": np.zeros(64, np.int8), "call": np.full(64, PASS, np.int64), "ret": np.full(64, 3.0, np.float32)}
    rows["hand"][:, :13] = True
    buffer.add(rows)
    assert learner.step(buffer) == pytest.approx(9.0)
    batch = decision_batch(rows["hand"][:1], rows["calls"][:1, :0], rows["dealer"][:1], rows["vul"][:1], False)
    with torch.no_grad():
        head, played = learner.network(batch, with_prior=False), learner.network(batch)
    playable = torch.isfinite(played)
    assert playable.sum() == 3 and not torch.equal(head[playable], played[playable])


class FixedTables:
    """North-South take 10 tricks in every strain, East-West the other 3."""

    def tables(self, owners, deal_ids):
        return np.tile(np.array([10, 3, 10, 3], np.int8)[:, None], (len(owners), 1, 5))


def duplicate_of(auction_0: str, auction_1: str, reward: str = "duplicate") -> list[np.ndarray]:
    owner = random_owner(1, 0)
    states = [replay(0, [parse_call(c) for c in text.split()]) for text in (auction_0, auction_1)]
    played = Played(owner[None], np.array([deal_id(owner)], np.uint64), np.array([0]), np.array([0]), states)
    return BridgeReward(reward, FixedTables()).returns(played)


def test_the_duplicate_reward_is_team_a_s_imps_with_the_right_sign_for_every_caller():
    table_0, table_1 = duplicate_of("4S P P P", "P P P P")  # NS make 4S at table 0, passed out at table 1
    assert table_0.tolist() == [9, -9, 9, -9]  # 420 (not vulnerable) = 9 IMPs: N and S +, E and W -
    assert table_1.tolist() == [-9, 9, -9, 9]  # table 1: EW are team A
    swapped = duplicate_of("P P P P", "4S P P P")
    assert swapped[0].tolist() == (-table_0).tolist()  # swapping the tables' auctions turns the result over
    assert swapped[1].tolist() == table_0.tolist()  # the same auction by the same seats returns the same, either table
    assert all((values == 0).all() for values in duplicate_of("1S P P P", "1S P P P"))  # bid alike: nothing


class CountingEstimator:
    """An NN-DDA stand-in: 7 tricks everywhere, and how many deals it was asked about."""

    def __init__(self):
        self.asked = 0

    def tables(self, owners):
        self.asked += len(owners)
        return np.full((len(owners), 4, 5), 7, np.int8)


def test_labelled_deals_get_their_exact_table_and_the_others_nndda():
    owners = np.stack([random_owner(3, i) for i in range(3)])
    ids = np.array([deal_id(o) for o in owners], np.uint64)
    estimator = CountingEstimator()
    tables = DealTables({int(ids[1]): np.full((4, 5), 11, np.int8)}, estimator)
    out = tables.tables(owners, ids)
    assert (out[1] == 11).all() and (out[[0, 2]] == 7).all()
    assert estimator.asked == 2 and tables.counts == {"exact": 1, "nndda": 2}
    with pytest.raises(InputError, match="no exact DD table and no NN-DDA"):
        DealTables({}, None).tables(owners, ids)


def test_the_par_reward_scores_each_table_against_par():
    table_0, table_1 = duplicate_of("4S P P P", "P P P P", reward="par")
    assert table_0.tolist() == [0, 0, 0, 0]  # 4S = 420 against par 3NT + 1 = 430: 0 IMPs
    assert table_1.tolist() == [-10, 10, -10, 10]  # passed out: 430 lost, each table on its own


def test_dmc_learns_the_one_call_that_always_wins(bsm_file, tmp_path):
    metrics = train(toy_config(bsm_file, snapshot_every=100), tmp_path / "dmc", FirstCallWins)
    assert metrics["updates"] == 300 and metrics["decisions"] > 0
    assert sorted(p.name for p in (tmp_path / "dmc" / "snapshots").iterdir()) == [
        "q-00000100.pt", "q-00000200.pt", "q-00000300.pt"]
    agent = DMCAgent(load_q(tmp_path / "dmc"))
    openings = [agent.next_call(hands_from_owner(random_owner(5, i))[i % 4], [], i % 4, i % 4) for i in range(20)]
    assert openings == [WINNING_CALL] * 20
    progress = (tmp_path / "dmc" / "progress.csv").read_text().splitlines()
    assert progress[0] == "updates,decisions,seconds,decisions_per_second,buffer_fill,loss" and len(progress) > 2


def test_decisions_carry_the_calls_before_them_and_the_callers_hand(bsm_file):
    network = from_bsm(bsm_file, 16)
    owners = np.stack([random_owner(2, i) for i in range(2)])
    played = play_batch(network, owners, np.zeros(2, np.uint64), np.array([1, 2]), np.array([0, 3]), 0.5,
                        np.random.default_rng(0), 8)
    returns = FirstCallWins().returns(played)
    rows = decisions(played, returns, 8)
    first = played.states[0]
    assert len(rows["call"]) == sum(len(s.calls) for s in played.states) and all(s.finished for s in played.states)
    assert rows["call"][:len(first.calls)].tolist() == first.calls
    assert (rows["calls"][1, :1] == first.calls[:1]).all() and (rows["calls"][1, 1:] == -1).all()
    assert (rows["hand"][1] == (owners[0] == (1 + 1) % 4)).all()  # the second call is dealer E's LHO, S


def test_a_killed_run_resumes_from_its_checkpoint(bsm_file, tmp_path):
    out = tmp_path / "dmc"
    params = tmp_path / "params.yaml"
    settings = asdict(toy_config(bsm_file, dd=str(REPO / "datasets" / "dd_labels"), epsilon=0.5, updates=100000,
                                 checkpoint_every=10, min_fill=300, batch_size=64))  # bridge's duplicate reward
    params.write_text(json.dumps({"dmc": settings}))
    command = [sys.executable, "-m", "bridgeflow.cli", "dmc", "train", "--out", str(out), "--params", str(params)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "ckpt.pt").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the learner and its actors, as a machine going down would
        process.wait()
    saved = torch.load(out / "ckpt.pt", weights_only=True)
    assert saved["updates"] >= 10 and not (out / "q.pt").exists()
    resumed = train(DMCConfig(**(settings | {"updates": saved["updates"] + 5})), out)
    assert resumed["updates"] == saved["updates"] + 5 and resumed["decisions"] > saved["decisions"]
    with pytest.raises(InputError, match="other dmc params"):
        train(DMCConfig(**(settings | {"lr": 0.5})), out)


def test_a_run_with_nothing_to_score_its_deals_is_a_one_line_error(bsm_file, tmp_path):
    with pytest.raises(InputError, match="they need an NN-DDA"):
        train(toy_config(bsm_file), tmp_path / "dmc")


def test_a_checkpoint_is_evaluated_by_generation_py(bsm_file, tmp_path):
    from bridgeflow.training.evaluation import generation

    network = QNetwork(QConfig(bsm=asdict(TOY_BSM), hidden=16))
    network.save(tmp_path / "q.pt")
    results = generation.run(["--generation", "1", "--agent", f"new=dmc@{tmp_path}", "--agent", f"base=bsm@{bsm_file}",
                              "--dd", str(REPO / "datasets" / "dd_labels"), "--boards", "2",
                              "--out", str(tmp_path / "eval")])
    assert set(results["matches"]) == {"new:base", "new:rule", "base:rule"}
    assert str(tmp_path / "q.pt") in results["checkpoints"]
    with pytest.raises(InputError, match="dmc needs @CHECKPOINT"):
        generation.run(["--generation", "1", "--agent", "new=dmc", "--dd", str(REPO / "datasets" / "dd_labels"),
                        "--boards", "2", "--out", str(tmp_path / "eval2")])


def toy_nndda(folder: Path) -> Path:
    torch.manual_seed(0)
    model = NNDDA(NNDDAConfig(hidden=8, layers=1))
    torch.save({"model_config": vars(model.config), "model": model.state_dict()}, folder / "nndda.pt")
    return folder / "nndda.pt"


def test_the_nndda_check_scores_the_same_auctions_both_ways(bsm_file, tmp_path):
    QNetwork(QConfig(bsm=asdict(TOY_BSM), hidden=16)).save(tmp_path / "q.pt")
    out = tmp_path / "check.json"
    result = run(["check", "--agent", f"dmc@{tmp_path}", "--against", f"bsm@{bsm_file}", "--dd",
                  str(REPO / "datasets" / "dd_labels"), "--boards", "3", "--nndda", str(toy_nndda(tmp_path)),
                  "--out", str(out)])
    assert json.loads(out.read_text())["boards"] == 3
    difference = np.array(result["nndda"]["mean_imps"]) - result["exact"]["mean_imps"]
    assert result["nndda_minus_exact"]["mean_imps"] == pytest.approx(difference)


def test_the_repositorys_dmc_params_load_and_the_stage_calls_the_verb():
    config = load_section(DMCConfig, REPO / "params.yaml", "dmc", [])
    stage = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["dmc"]
    assert stage["cmd"].split()[:3] == ["bridgeflow", "dmc", "train"] and "dmc" in stage["params"]
    assert config.init == "data/bsm" and config.reward == "duplicate"


def test_a_bad_dmc_param_is_a_one_line_cli_error(tmp_path, capsys):
    from bridgeflow.cli import main

    assert main(["dmc", "train", "--out", str(tmp_path), "--set", "actors=0"]) == 2
    assert capsys.readouterr().err.startswith("bridgeflow dmc: error: dmc params")


def test_a_learning_rate_written_3e_4_is_a_float():
    """YAML 1.1 reads 3e-4 (no dot) as a string; a float param takes it as the number it means."""
    assert load_section(DMCConfig, None, "dmc", ["lr=3e-4"]).lr == pytest.approx(3e-4)
    with pytest.raises(ValueError, match="dmc.lr = 'fast': expected float"):
        load_section(DMCConfig, None, "dmc", ["lr=fast"])
