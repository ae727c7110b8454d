"""`bridgeflow average`: the weighted mean of BSMs, loadable wherever a trained BSM is."""

import json

import numpy as np
import pytest
import torch

from bridgeflow.cli import main
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.bidding.average import average
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig


def save_bsm(folder, seed, **config):
    torch.manual_seed(seed)
    model = BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0, **config))
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model_config": vars(model.config), "model": model.state_dict()}, folder / "model.pt")
    return model.state_dict()


def test_the_average_is_the_weighted_mean_and_plays(tmp_path):
    first, second = save_bsm(tmp_path / "a", 0), save_bsm(tmp_path / "b", 1)
    metrics = average([tmp_path / "a", tmp_path / "b" / "model.pt"], [3, 1], tmp_path / "soup", "test")
    saved = torch.load(tmp_path / "soup" / "model.pt", weights_only=True)
    for key, tensor in saved["model"].items():
        torch.testing.assert_close(tensor, 0.75 * first[key] + 0.25 * second[key])
    assert [member["weight"] for member in metrics["members"]] == [3, 1]
    assert json.loads((tmp_path / "soup" / "metrics.json").read_text())["members"][1]["path"].endswith("b/model.pt")
    assert "0.750" in (tmp_path / "soup" / "MODEL_CARD.md").read_text()
    calls = Bidder.load(tmp_path / "soup").predict(np.arange(13)[None], [[]], 0, 0)["call"]
    assert calls.shape == (1, 38) and np.isclose(calls.sum(), 1.0, atol=1e-4)


def test_equal_weights_by_default(tmp_path):
    first, second = save_bsm(tmp_path / "a", 0), save_bsm(tmp_path / "b", 1)
    average([tmp_path / "a", tmp_path / "b"], None, tmp_path / "soup", "test")
    saved = torch.load(tmp_path / "soup" / "model.pt", weights_only=True)["model"]
    key = next(iter(first))
    torch.testing.assert_close(saved[key], (first[key] + second[key]) / 2)


@pytest.mark.parametrize("members, weights, message", [
    (1, None, "at least two BSMs"),
    (3, [1, 2], "2 weights .* for 3 BSMs"),
    (2, [-1, 2], "must be >= 0"),
    (2, [0, 0], "positive sum"),
])
def test_bad_member_lists_are_refused(tmp_path, members, weights, message):
    save_bsm(tmp_path / "a", 0)
    with pytest.raises(InputError, match=message):
        average([tmp_path / "a"] * members, weights, tmp_path / "soup", "test")


def test_another_architecture_is_refused_naming_file_and_field(tmp_path):
    save_bsm(tmp_path / "a", 0)
    save_bsm(tmp_path / "wide", 1, hand_features=True)
    with pytest.raises(InputError, match=r"wide/model.pt: model_config differs .* in hand_features"):
        average([tmp_path / "a", tmp_path / "wide"], None, tmp_path / "soup", "test")
    assert not (tmp_path / "soup").exists()


def test_cli_writes_the_average_and_a_mistake_is_one_line(tmp_path, capsys):
    save_bsm(tmp_path / "a", 0)
    save_bsm(tmp_path / "b", 1)
    assert main(["average", "--bsm", str(tmp_path / "a"), "--bsm", str(tmp_path / "b"), "--out", str(tmp_path / "soup")]) == 0
    card = (tmp_path / "soup" / "MODEL_CARD.md").read_text()
    assert "bridgeflow average --bsm" in card and (tmp_path / "soup" / "config.json").is_file()
    assert main(["average", "--bsm", str(tmp_path / "a"), "--bsm", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "missing" in error and "no such file" in error
