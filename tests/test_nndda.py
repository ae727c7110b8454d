"""NN-DDA: metrics, model, data filtering, a tiny training run that must learn, resume after a kill,
the DDEstimator API, and the oracle loader against DDS."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.dataset.encodings import CARD_HCP, deal_id
from bridgeflow.dataset.labels import dd_store_table
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.training.dd import nndda_train, symmetry
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.dd.dd_oracle import load_oracle, read_source
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig

torch.set_num_threads(1)

TINY = ["--set", "hidden=64", "--set", "layers=2", "--set", "steps=300", "--set", "batch_size=256",
        "--set", "warmup=30", "--set", "lr=0.01", "--set", "eval_every=100", "--set", "ckpt_every=100",
        "--set", "threads=1", "--set", "eval_symmetries=[id,rot]"]


def random_owners(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(np.repeat(np.arange(4), 13)) for _ in range(n)]).astype(np.int8)


def toy_tables(owners: np.ndarray) -> np.ndarray:
    """A stand-in for DD with the same 96 symmetries and nothing more (declarer and partner play
    different parts): a suit strain's 'tricks' are declarer's cards in the suit plus partner's
    honours (J-A) in it, NT's are declarer's high-card points / 3."""
    tables = np.zeros((len(owners), 4, 5), dtype=np.int8)
    honour = np.tile(np.arange(13) >= 9, 4)
    for declarer in range(4):
        own, partner = owners == declarer, owners == (declarer + 2) % 4
        tables[:, declarer, :4] = np.minimum(13, own.reshape(-1, 4, 13).sum(-1) + (partner & honour).reshape(-1, 4, 13).sum(-1))
        tables[:, declarer, 4] = (own * CARD_HCP).sum(-1) // 3
    return tables


@pytest.fixture(scope="module")
def toy_store(tmp_path_factory):
    """A DD store of 3000 toy-labelled deals plus 200 'nn-dda' rows whose labels are garbage."""
    folder = tmp_path_factory.mktemp("dd")
    owners = random_owners(3200, 0)
    ids = np.array([deal_id(o) for o in owners], dtype=np.uint64)
    tables = toy_tables(owners)
    pq.write_table(dd_store_table(ids[:3000], owners[:3000], tables[:3000]), folder / "part-0.parquet")
    garbage = np.full((200, 4, 5), 13, dtype=np.int8)
    pq.write_table(dd_store_table(ids[3000:], owners[3000:], garbage, solver="nn-dda", solver_version="x"),
                   folder / "part-1.parquet")
    return folder


@pytest.fixture(scope="module")
def trained(toy_store, tmp_path_factory):
    out = tmp_path_factory.mktemp("nndda")
    metrics = nndda_train.run(["--dd", str(toy_store), "--out", str(out)] + TINY)
    return out, metrics


def test_metrics_count_exact_cells_and_make_fail_flips():
    true = np.full((1, 4, 5), 9)
    pred = true.copy()
    pred[0, 0, 4] = 10  # 3NT makes either way; 4NT now "makes": one flip, at level 4
    pred[0, 1, 0] = 7  # 2C and 3C now fail: two flips
    m = nndda_train.dd_metrics(pred, true)
    assert m["exact"] == 18 / 20 and m["within1"] == 19 / 20 and m["mae"] == 3 / 20
    assert m["flips_by_level"] == {"1": 0.0, "2": 1 / 20, "3": 1 / 20, "4": 1 / 20, "5": 0.0, "6": 0.0, "7": 0.0}
    assert m["flip_rate"] == pytest.approx(3 / 140)
    assert m["by_strain"]["NT"]["flips_by_level"]["4"] == 1 / 4 and m["by_strain"]["C"]["exact"] == 3 / 4


def test_model_first_layer_equals_a_linear_layer_on_the_one_hot():
    model = NNDDA(NNDDAConfig(hidden=32, layers=2, head="ce", arch="mlp"))
    owners = torch.from_numpy(random_owners(5, 1))
    one_hot = torch.nn.functional.one_hot(owners.long(), 4).transpose(1, 2).reshape(5, 208).float()
    dense = one_hot @ model.cards.weight + model.bias
    assert torch.allclose(model.cards(owners.long() * 52 + model.card_index) + model.bias, dense, atol=1e-5)
    assert model(owners).shape == (5, 20, 14)
    assert NNDDA(NNDDAConfig(hidden=32, layers=1, head="mse", arch="mlp"))(owners).shape == (5, 20)
    with pytest.raises(ValueError):
        NNDDAConfig(head="softmax")
    assert NNDDAConfig(arch="mlp", nt_hidden=8).nt_hidden == 0  # an NT layer exists only in arch="suits"


@pytest.mark.parametrize("head,nt_hidden,nt_pool", [("ce", 0, "mean"), ("mse", 0, "mean"), ("ce", 8, "mean"), ("ce", 8, "meanmax")])
def test_suits_model_permutes_its_outputs_exactly_with_the_suits(head, nt_hidden, nt_pool):
    model = NNDDA(NNDDAConfig(hidden=16, layers=3, head=head, arch="suits", nt_hidden=nt_hidden, nt_pool=nt_pool)).eval()
    owners = torch.from_numpy(random_owners(6, 2))
    with torch.no_grad():
        out = model(owners)
        assert out.shape == ((6, 20, 14) if head == "ce" else (6, 20))
        for g in symmetry.GROUPS["suits"][1:]:
            moved = model(symmetry.transform_owners(owners, int(g)))
            assert torch.allclose(moved, symmetry.transform_cells(out, int(g)), atol=1e-5), g
        rotated = model(symmetry.transform_owners(owners, int(symmetry.GROUPS["rot"][1])))
        assert not torch.allclose(rotated, symmetry.transform_cells(out, int(symmetry.GROUPS["rot"][1])), atol=1e-3)


def test_suits_model_in_place_forward_equals_the_plain_formula_in_outputs_and_gradients():
    """The in-place SuitMix and first layer (for speed) compute relu(own(h) + pooled(mean h)) and
    relu(cards + bias) exactly, gradients included."""
    torch.manual_seed(0)
    model = NNDDA(NNDDAConfig(hidden=16, layers=3, arch="suits"))
    owners = torch.from_numpy(random_owners(8, 3))

    def plain(owners):
        per_suit = owners.long().view(-1, 13) * 13 + model.card_index
        h = torch.relu(model.cards(per_suit).view(len(owners), 4, -1) + model.bias)
        for layer in model.mix:
            h = torch.relu(layer.own(h) + layer.pooled(h.mean(1, keepdim=True)))
        pooled = torch.cat([h.mean(1, keepdim=True), h.amax(1, keepdim=True)], 2)
        strains = torch.cat([model.trump_head(h), model.nt_head(pooled)], 1)
        return strains.view(len(owners), 5, 4, -1).transpose(1, 2).reshape(len(owners), 20, 14)

    grads = []
    for forward in (model, plain):
        model.zero_grad()
        out = forward(owners)
        (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    assert torch.allclose(grads[0][0], grads[1][0], atol=1e-6)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(grads[0][1], grads[1][1]))


@pytest.mark.parametrize("variant,config", [("arch=mlp", ("mlp", 0, "meanmax")), ("nt_hidden=0", ("suits", 0, "meanmax")),
                                            ("nt_pool=mean", ("suits", 128, "mean"))])
def test_other_variants_learn_the_toy_labels(toy_store, tmp_path, variant, config):
    metrics = nndda_train.run(["--dd", str(toy_store), "--out", str(tmp_path)] + TINY + ["--set", variant])
    test = metrics["test"]["id"]
    assert test["exact"] > 0.8 and test["within1"] > 0.97, test
    saved = DDEstimator.load(tmp_path / "nndda.pt").model.config
    assert (saved.arch, saved.nt_hidden, saved.nt_pool) == config


@pytest.mark.parametrize("saved", [{"hidden": 16, "layers": 2, "head": "ce"},  # before `arch`: an MLP
                                   {"hidden": 16, "layers": 2, "head": "ce", "arch": "suits"}])  # before `nt_hidden`
def test_model_files_from_before_a_config_field_load_as_what_they_are(tmp_path, saved):
    model = NNDDA(NNDDAConfig(**{"arch": "mlp", "nt_hidden": 0, "nt_pool": "mean"} | saved))
    torch.save({"model_config": saved, "model": model.state_dict()}, tmp_path / "old.pt")
    owners = random_owners(4, 3)
    estimator = DDEstimator.load(tmp_path / "old.pt")
    assert (estimator.model.config.arch, estimator.model.config.nt_hidden) == (saved.get("arch", "mlp"), 0)
    assert np.array_equal(estimator.tables(owners), DDEstimator(model).tables(owners))


def test_a_device_torch_cannot_use_is_a_config_error():
    with pytest.raises(ValueError, match="nndda.device: 'gpu' is not a torch device"):
        nndda_train.TrainConfig(device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            nndda_train.TrainConfig(device="cuda")


def test_params_from_yaml_and_overrides(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("other: {x: 1}\nnndda:\n  hidden: 128\n  head: mse\n")
    config = nndda_train.load_config(str(path), ["hidden=64", "eval_symmetries=[id,all]"])
    assert (config.hidden, config.head, config.eval_symmetries) == (64, "mse", ["id", "all"])
    assert config.steps == nndda_train.TrainConfig().steps
    with pytest.raises(ValueError, match="unknown"):
        nndda_train.load_config(str(path), ["hiden=3"])


def test_read_dd_keeps_only_exact_labels(toy_store):
    ids, owners, tables, dropped = nndda_train.read_dd(toy_store)
    assert len(ids) == 3000 and dropped == 200
    assert (np.diff(ids.astype(np.float64)) > 0).all()
    assert np.array_equal(tables, toy_tables(owners))  # no garbage row made it in


def test_read_dd_merges_several_stores(toy_store, tmp_path):
    whole = nndda_train.read_dd(toy_store)
    for index, part in enumerate(np.array_split(np.arange(3000), 3)):  # three stores, one overlapping deal
        rows = np.append(part, part[-1] + 1) if index < 2 else part
        (tmp_path / f"store{index}").mkdir()
        pq.write_table(dd_store_table(whole[0][rows], whole[1][rows], whole[2][rows]),
                       tmp_path / f"store{index}" / "part-0.parquet")
    merged = nndda_train.read_dd(*(tmp_path / f"store{index}" for index in range(3)))
    assert all(np.array_equal(a, b) for a, b in zip(merged[:3], whole[:3])) and merged[3] == 0


def test_tiny_training_learns_the_toy_labels(trained):
    out, metrics = trained
    assert metrics["data"]["dropped_not_exact"] == 200
    assert metrics["data"]["train"] + metrics["data"]["valid"] + metrics["data"]["test"] == 3000
    test = metrics["test"]["id"]
    assert test["exact"] > 0.8 and test["within1"] > 0.97, test  # ~0.95 here; ~0.37 with a wrong symmetry
    curve = (out / "plots" / "curve.csv").read_text().splitlines()
    assert curve[0].startswith("step,") and len(curve) == 1 + 3
    assert json.loads((out / "metrics.json").read_text())["test"]["rot"]["deals"] == test["deals"]
    assert "| test | id |" in (out / "MODEL_CARD.md").read_text() and "- trained: 300 steps in " in (out / "MODEL_CARD.md").read_text()
    assert metrics["schema_version"] == SCHEMA_VERSION and f"schema_version: {SCHEMA_VERSION}" in (out / "MODEL_CARD.md").read_text()


def test_max_deals_cuts_the_training_set(toy_store, tmp_path):
    metrics = nndda_train.run(["--dd", str(toy_store), "--out", str(tmp_path)] + TINY + ["--set", "max_deals=100", "--set", "steps=2"])
    assert metrics["data"]["train_used"] == 100 and metrics["data"]["train"] > 2000


@pytest.mark.parametrize("ema", ["0", "0.9"])
def test_resume_after_a_kill_gives_the_same_weights(toy_store, tmp_path, monkeypatch, ema):
    args = ["--dd", str(toy_store)] + TINY + ["--set", "steps=30", "--set", "ckpt_every=10", "--set", "eval_every=10",
                                              "--set", f"ema={ema}"]
    nndda_train.run(args + ["--out", str(tmp_path / "straight")])

    save = nndda_train.checkpoint

    def killed_after_step_20(path, state):
        save(path, state)
        if state["step"] == 20:
            raise KeyboardInterrupt

    monkeypatch.setattr(nndda_train, "checkpoint", killed_after_step_20)
    with pytest.raises(KeyboardInterrupt):
        nndda_train.run(args + ["--out", str(tmp_path / "killed")])
    monkeypatch.setattr(nndda_train, "checkpoint", save)
    assert not (tmp_path / "killed" / "nndda.pt").exists()
    nndda_train.run(args + ["--out", str(tmp_path / "killed"), "--set", "device=cpu"])  # where it runs: not a training param

    a = torch.load(tmp_path / "straight" / "nndda.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "killed" / "nndda.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    # the resumed run really started at step 20, and the curve is whole
    ckpt = torch.load(tmp_path / "killed" / "ckpt.pt", weights_only=True)
    assert [row["step"] for row in ckpt["curve"]] == [10, 20, 30]
    if float(ema):  # the weight average resumed too
        straight = torch.load(tmp_path / "straight" / "ckpt.pt", weights_only=True)["average"]
        assert all(torch.equal(x, y) for x, y in zip(straight, ckpt["average"]))

    # a checkpoint from other params is not resumed
    other = nndda_train.run(args + ["--out", str(tmp_path / "killed"), "--set", "seed=1"])
    c = torch.load(tmp_path / "killed" / "nndda.pt", weights_only=True)["model"]
    assert not all(torch.equal(a[k], c[k]) for k in a) and other["train"]["steps"] == 30


def test_estimator_api_and_exact_equivariance_under_full_averaging(trained):
    out, _ = trained
    est = DDEstimator.load(out / "nndda.pt")
    assert est.solver_version.startswith("nn-dda:")
    owners = random_owners(50, 7)
    tables = est.tables(owners)
    assert tables.dtype == np.int8 and tables.shape == (50, 4, 5) and 0 <= tables.min() and tables.max() <= 13
    dist = est.trick_distributions(owners)
    assert dist.shape == (50, 4, 5, 14) and np.allclose(dist.sum(-1), 1, atol=1e-5)
    assert np.array_equal(dist.argmax(-1), tables)
    assert np.allclose(est.expected_tricks(owners), dist @ np.arange(14), atol=1e-4)

    g = 2 * 24 + 9
    moved = symmetry.transform_owners(owners, g)
    for name, equivariant in (("id", False), ("all", True)):
        here = symmetry.transform_cells(est.trick_distributions(owners, name).reshape(50, 20, 14), g)
        there = est.trick_distributions(moved, name).reshape(50, 20, 14)
        assert np.allclose(here, there, atol=1e-5) == equivariant, name


def test_oracle_deals_match_dds(oracle_data):
    ids, owners, tables = load_oracle(oracle_data)
    assert len(ids) == 6927 and (np.stack([(owners == s).sum(1) for s in range(4)]) == 13).all()
    real, random = load_oracle(oracle_data, "dds")[0], load_oracle(oracle_data, "macroxue")[0]
    assert len(real) + len(random) == len(np.union1d(real, random)) == 6927  # the two parts split it
    # the first deal of three sources (DDS list, macroxue file, macroxue folder) against DDS
    from test_symmetry import dds_tables

    xue = oracle_data / "macroxue_bridge_solver"
    sources = [oracle_data / "dds_hands" / "list10.txt", xue / "comparison" / "results.5k_deals.txt", xue / "new_deals"]
    firsts = [tuple(a[0] for a in read_source(path)) for path in sources]
    owners3, tables3 = np.stack([o for o, _ in firsts]), np.stack([t for _, t in firsts])
    assert np.array_equal(dds_tables(owners3), tables3)
    rows = np.searchsorted(ids, np.array([deal_id(o) for o in owners3], dtype=np.uint64))
    assert np.array_equal(tables[rows], tables3)


def test_the_weight_average_is_kept_only_where_it_scores_better_on_valid(toy_store, tmp_path):
    metrics = nndda_train.run(["--dd", str(toy_store), "--out", str(tmp_path)] + TINY + ["--set", "ema=0.99"])
    weights = metrics["train"]["weights"]
    better = max(("last", "averaged"), key=lambda name: weights[name]["valid_exact"])
    assert weights["kept"] == better and f"weights kept: {better}" in (tmp_path / "MODEL_CARD.md").read_text()

    # the saved model is the one kept: it scores that on the valid split
    ids, owners, tables, _ = nndda_train.read_dd(toy_store)
    _, rows = nndda_train.split_data(ids, 0)
    model = DDEstimator.load(tmp_path / "nndda.pt").model
    stats = nndda_train.valid_stats(model, owners[rows["valid"]], tables[rows["valid"]], "ce")
    assert stats["valid_exact"] == pytest.approx(weights[better]["valid_exact"])


def test_keep_better_weights_puts_back_the_last_step_when_the_average_is_worse():
    model = NNDDA(NNDDAConfig(hidden=16, layers=1, nt_hidden=0))
    output_biases = {id(model.trump_head.bias), id(model.nt_head.bias)}

    def weights_saying(tricks: int) -> list[torch.Tensor]:
        """All zero but the output biases: every cell of every deal gets `tricks`."""
        weights = [torch.zeros_like(p) for p in model.parameters()]
        for weight, p in zip(weights, model.parameters()):
            if id(p) in output_biases:
                weight.view(4, 14)[:, tricks] = 10.0
        return weights

    owners, tables = random_owners(64, 3), np.full((64, 4, 5), 7, dtype=np.int8)
    last = weights_saying(7)
    with torch.no_grad():
        torch._foreach_copy_(list(model.parameters()), last)
    weights = nndda_train.keep_better_weights(model, weights_saying(0), (owners, tables), "ce")
    assert weights["kept"] == "last" and weights["last"]["valid_exact"] == 1.0 and weights["averaged"]["valid_exact"] == 0.0
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), last))
    weights = nndda_train.keep_better_weights(model, weights_saying(7), (owners, tables), "ce")
    assert weights["kept"] == "averaged"
