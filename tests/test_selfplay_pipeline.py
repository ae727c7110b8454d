"""The selfplay Beam job: its output schema and summary, resuming a killed run to the same
decisions, and its CLI errors."""

from __future__ import annotations

import json
import logging
import os

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.cli import main
from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.schema import SELFPLAY_DECISIONS
from bridgeflow.dataset.splits import split_of
from bridgeflow.pipelines import selfplay
from bridgeflow.training.bidding.bidder import Bidder

torch.set_num_threads(1)



def argv(models, out, *more):
    return ["--bsm", str(models), "--generation", "1", "--out", str(out), "--params", os.devnull, "--workers", "1",
            "--set", f"nndda={models}", "--set", "deals=6", "--set", "boards_per_task=2",
            "--set", "search.samples=2", "--set", "search.oversample=1", "--set", "search.topk=2",
            "--set", "tempering=2.0", "--set", "skip_above=0.01", *more]


def decisions(out):
    return pq.read_table(out / "decisions").to_pylist()


@pytest.fixture(scope="module")
def played(models, tmp_path_factory):
    """An uninterrupted run: its out folder and summary (skip_above 0.01: every decision skipped, fast)."""
    out = tmp_path_factory.mktemp("play")
    return out, selfplay.run(argv(models, out))


def test_every_call_of_every_auction_is_a_row_of_the_schema(played):
    out, summary = played
    assert pq.read_schema(next((out / "decisions").glob("*.parquet"))).remove_metadata() == SELFPLAY_DECISIONS.remove_metadata()
    rows = decisions(out)
    boards = sorted({row["board"] for row in rows})
    assert boards == list(range(1, 7))
    for board in boards:
        auction = [row for row in rows if row["board"] == board]
        assert [row["position"] for row in auction] == list(range(len(auction)))
        assert replay(auction[0]["dealer"], [row["call"] for row in auction]).finished
        assert split_of(auction[0]["deal_id"]) == "train"
    for row in rows:
        assert row["call"] in row["candidates"] and np.isclose(sum(row["policy"]), 1.0, atol=1e-5)
    assert summary["calls"] == len(rows) == summary["decisions"]  # partner self: every call is the network's
    assert summary["skipped_near_certain"] == summary["decisions"] and summary["searched"] == 0
    assert json.loads((out / "summary.json").read_text())["boards"] == 6
    assert not (out / "_work").exists()


def test_searched_decisions_count_and_carry_q(models, tmp_path):
    summary = selfplay.run(argv(models, tmp_path, "--set", "deals=2", "--set", "skip_above=1.0"))
    rows = decisions(tmp_path)
    searched = [row for row in rows if row["searched"]]
    assert summary["searched"] == len(searched) > 0
    assert all(len(row["q"]) == len(row["se"]) == len(row["candidates"]) and row["samples"] == 2 for row in searched)
    assert summary["best_changed"] == sum(row["prior_best"] != row["policy_best"] for row in rows)


def test_a_killed_run_resumes_to_the_same_decisions(models, played, tmp_path, monkeypatch, caplog):
    original = selfplay.PlayTask.process
    calls = []

    def dies_after_the_first_task(self, element):
        if calls:
            raise RuntimeError("killed")
        calls.append(element[0])
        yield from original(self, element)

    monkeypatch.setattr(selfplay.PlayTask, "process", dies_after_the_first_task)
    with pytest.raises(Exception, match="killed"):
        selfplay.run(argv(models, tmp_path))
    assert len(list(tmp_path.glob("_work/*/done/*.json"))) == 1
    monkeypatch.setattr(selfplay.PlayTask, "process", original)
    played_now = []
    monkeypatch.setattr(selfplay.Actor, "play", lambda self, generation, board, owner, play=selfplay.Actor.play:
                        played_now.append(board) or play(self, generation, board, owner))
    with caplog.at_level(logging.INFO, logger="bridgeflow.selfplay"):
        selfplay.run(argv(models, tmp_path))
    assert "resuming, 1 of 3 tasks already played" in caplog.text
    assert "selfplay: 6/6 boards" in caplog.text and "ETA" in caplog.text
    assert sorted(played_now) == [3, 4, 5, 6]
    assert decisions(tmp_path) == decisions(played[0])


def test_a_finished_run_is_not_played_again(models, played, monkeypatch, caplog):
    out, summary = played
    monkeypatch.setattr(selfplay.Actor, "play", lambda *args: pytest.fail("a finished generation was replayed"))
    with caplog.at_level(logging.INFO, logger="bridgeflow.selfplay"):
        assert selfplay.run(argv(models, out)) == summary
    assert "already holds this generation's decisions" in caplog.text


def test_a_model_of_the_opponents_is_the_searchs_not_the_tables(models, tmp_path, monkeypatch):
    """search.opponents reaches self-play's search (and its work key); the opponents at the table
    are still the network, so every call is the network's."""
    made = []
    original = selfplay.MonteCarloSearch.__init__

    def records(self, *args, opponents=None, **kwargs):
        made.append(opponents)
        original(self, *args, opponents=opponents, **kwargs)

    monkeypatch.setattr(selfplay.MonteCarloSearch, "__init__", records)
    summary = selfplay.run(argv(models, tmp_path, "--set", "deals=2", "--set", f"search.opponents={models}"))
    assert made and all(isinstance(bidder, Bidder) for bidder in made)
    assert summary["calls"] == summary["decisions"]
    with pytest.raises(InputError, match=r"BSM \(search.opponents\) missing"):
        selfplay.run(argv(models, tmp_path / "missing", "--set", "search.opponents=missing"))


def test_against_an_agent_only_north_south_are_the_networks_decisions(models, tmp_path):
    summary = selfplay.run(argv(models, tmp_path, "--set", "deals=2", "--set", "against=rule"))
    rows = decisions(tmp_path)
    assert {row["actor"] for row in rows} == {"bsm", "opponent"}
    assert all((row["seat"] in (0, 2)) == (row["actor"] == "bsm") for row in rows)
    assert summary["decisions"] == sum(row["actor"] == "bsm" for row in rows) < summary["calls"] == len(rows)
    model = selfplay.run(argv(models, tmp_path / "bsm", "--set", "deals=2", "--set", f"against=bsm@{models}"))
    assert model["key"] != summary["key"] and str(models / "model.pt") in model["models"]


def test_other_params_start_afresh(models, played, tmp_path):
    selfplay.run(argv(models, tmp_path, "--set", "deals=2"))
    assert {row["board"] for row in decisions(tmp_path)} == {1, 2}
    selfplay.run(argv(models, tmp_path, "--set", "deals=2", "--set", "seed=1"))
    first = {row["deal_id"] for row in decisions(tmp_path)}
    assert first.isdisjoint({row["deal_id"] for row in decisions(played[0])})


@pytest.mark.parametrize("options, named", [
    (["--generation", "0"], "--generation 0"),
    (["--bsm", "missing/model.pt"], "missing/model.pt"),
    (["--set", "partner=ben"], "selfplay.partner"),
    (["--set", "search.rollout=best"], "search.rollout"),
    (["--set", "nndda=missing"], "missing"),
    (["--partner-bsm", "x"], "--partner-bsm goes with selfplay.partner: rule"),
    (["--set", "against=chess"], "selfplay.against: unknown agent 'chess'"),
    (["--set", "against=bsm@missing"], "selfplay.against: BSM"),
    (["--set", "partner=rule", "--set", "against=rule"], "partner: self"),
])
def test_bad_arguments_are_one_line_errors(models, tmp_path, capsys, options, named):
    code = main(["selfplay", *argv(models, tmp_path), *options])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("bridgeflow selfplay: error: ") and named in err and "Traceback" not in err
