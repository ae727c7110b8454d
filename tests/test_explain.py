"""`bridgeflow explain`: the PNG is drawn and the printed summary says what the Bidder says."""

from __future__ import annotations

import os
import re

import matplotlib.image
import numpy as np
import pytest
import torch

from bridgeflow.dataset.encodings import (
    SUITS,
    call_name,
    parse_auction,
    parse_call,
    parse_pbn_hand,
    parse_vulnerability,
)
from bridgeflow.training.bidding import explain
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_train import run as train_run
from bsm_toy import write_toy_records

torch.set_num_threads(1)
HAND = "K843.Q92.A75.J64"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain")
    write_toy_records(root / "records", 120, seed=21)
    train_run(["--records", str(root / "records"), "--cache", str(root / "cache"), "--out", str(root / "bsm"),
               "--params", os.devnull, "--set", "steps=20", "--set", "hidden=32", "--set", "embed=8",
               "--set", "batch_size=16", "--set", "warmup=2", "--set", "lr=0.01"])
    return root / "bsm"


def test_explain_renders_png_and_summary_matching_the_bidder(checkpoint, tmp_path, capsys):
    png = tmp_path / "f.png"
    summary = explain.run(["--hand", HAND, "--auction", "1H P", "--dealer", "N", "--vul", "none",
                           "--checkpoint", str(checkpoint), "--out", str(png)])
    text = capsys.readouterr().out
    image = matplotlib.image.imread(png)
    assert image.shape[:2] == (1100, 1500)
    assert image[..., :3].std() > 0.1  # not blank
    assert len(np.unique((image[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50  # heatmaps drawn

    bidder = Bidder.load(checkpoint)
    hand, auction = parse_pbn_hand(HAND), [parse_call("1H"), parse_call("P")]
    probs = bidder.next_call(hand, auction, 0, 0)
    beliefs = bidder.beliefs(hand, auction, 0, 0)
    assert summary["seat"] == 2 and summary["others"] == ["W", "N", "E"]  # South to call after two calls

    top = re.search(r"top calls: (.*)", text).group(1).split()
    order = np.argsort(-probs, kind="stable")[:5]
    assert [t.split("=")[0] for t in top] == [call_name(c) for c in order]
    assert [float(t.split("=")[1]) for t in top] == pytest.approx(probs[order], abs=5e-4)

    mean = float(re.search(r"partner \(N\) HCP: mean=([\d.]+)", text).group(1))
    assert mean == pytest.approx((beliefs.partner_hcp * np.arange(38)).sum(), abs=5e-3)

    expected_lengths = (beliefs.suit_lengths * np.arange(14)).sum(-1)
    for k, seat in enumerate(["W", "N", "E"]):
        line = re.search(rf"suit lengths {seat} .*expected: (.*)", text).group(1)
        printed = dict(item.split("=") for item in line.split())
        for s, letter in enumerate(SUITS):
            assert float(printed[letter]) == pytest.approx(expected_lengths[k, s], abs=5e-3)
    spades = text.split("suit lengths N (partner)")[1].splitlines()[1].split()  # partner's spade distribution
    assert spades[0] == "S"
    for item in spades[1:]:
        n, p = item.split(":")
        assert float(p) == pytest.approx(beliefs.suit_lengths[1, 3, int(n)], abs=5e-3)

    grid = text.split("cards N (partner)")[1].splitlines()[1:5]  # rows S, H, D, C; columns A..2
    for row, suit in zip(grid, (3, 2, 1, 0)):
        cells = row.split()[1:]
        for cell, rank in zip(cells, range(12, -1, -1)):
            card = suit * 13 + rank
            if card in hand:
                assert cell == "--"
            else:
                assert abs(int(cell) - 100 * beliefs.cards[card, 2]) <= 0.5 + 1e-6


def test_dealer_to_call_and_vulnerability_names(checkpoint, tmp_path, capsys):
    summary = explain.run(["--hand", HAND, "--auction", "", "--dealer", "e", "--vul", "Both",
                           "--checkpoint", str(checkpoint / "model.pt"), "--out", str(tmp_path / "g.png")])
    assert summary["seat"] == 1 and "vul All" in capsys.readouterr().out
    assert [parse_vulnerability(v) for v in ("none", "NS", "e-w", "all")] == [0, 1, 2, 3]
    assert parse_auction("1h, p 2NT") == [parse_call("1H"), 0, parse_call("2NT")]
    assert parse_auction("-") == []


def test_bad_input_is_refused(checkpoint, tmp_path):
    args = ["--dealer", "N", "--checkpoint", str(checkpoint), "--out", str(tmp_path / "h.png")]
    for bad in (["--hand", HAND, "--auction", "1H 1C"], ["--hand", "K843.Q92.A75.J6"], ["--hand", HAND, "--vul", "red"]):
        with pytest.raises(SystemExit):
            explain.run([*bad, *args])
    assert not (tmp_path / "h.png").exists()
