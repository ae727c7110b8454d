"""The generation evaluator: the loop's default matches, history rows continued across
generations (JSON, CSV, PNG), the same per-board results as `evaluate`'s team match, Facit with
paired intervals against base, and its CLI errors."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.cli import main
from bridgeflow.dataset.encodings import deal_id, random_owner
from bridgeflow.dataset.labels import dd_store_table
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.evaluation import generation
from bridgeflow.training.evaluation.agents import AgentFactory
from bridgeflow.training.evaluation.boards import load_boards
from bridgeflow.training.evaluation.matches import summary, team_match
from bridgeflow.training.search.monte_carlo import SearchConfig

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A DD store (random tables, 6 test-split deals) and three tiny BSMs, gen0..gen2."""
    root = tmp_path_factory.mktemp("gens")
    owners, index = [], 0
    while sum(deal_id(o) % 100 >= 90 for o in owners) < 6:
        owners.append(random_owner(21, index))
        index += 1
    ids = np.array([deal_id(o) for o in owners], np.uint64)
    tables = np.random.default_rng(0).integers(0, 14, (len(ids), 4, 5))
    (root / "dd").mkdir()
    pq.write_table(dd_store_table(ids, np.stack(owners), tables), root / "dd" / "labels.parquet")
    for number in range(3):
        torch.manual_seed(number)
        bsm = BSM(BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0))
        (root / f"gen{number}").mkdir()
        torch.save({"model_config": vars(bsm.config), "model": bsm.state_dict()}, root / f"gen{number}" / "model.pt")
    return root


def measure(root, number, *more, out=None):
    agents = ["--agent", f"new=bsm@{root}/gen{number}", "--agent", f"base=bsm@{root}/gen0"]
    if number > 1:
        agents += ["--agent", f"previous=bsm@{root}/gen{number - 1}", "--history", str(root / f"eval{number - 1}")]
    out = out or root / f"eval{number}"
    argv = ["generation", "--generation", str(number), *agents, "--dd", str(root / "dd"), "--boards", "4",
            "--out", str(out), "--params", os.devnull, *more]
    assert main(argv) == 0
    return json.loads((out / "results.json").read_text())


def test_generations_play_the_loops_matches_and_continue_the_history(setup):
    first = measure(setup, 1)
    assert list(first["matches"]) == ["new:base", "new:rule", "base:rule"]  # previous is base: no new:previous
    second = measure(setup, 2)
    assert list(second["matches"]) == ["new:previous", "new:base", "new:rule"]
    rows = json.loads((setup / "eval2" / "history.json").read_text())
    assert [row["generation"] for row in rows] == [0, 1, 2]
    assert rows[0]["vs_base"] == 0.0 and rows[0]["vs_rule"] == first["matches"]["base:rule"]["mean_imps"]
    assert rows[1]["vs_base"] == first["matches"]["new:base"]["mean_imps"]
    assert rows[2]["vs_previous"] == second["matches"]["new:previous"]["mean_imps"]
    assert [rows[2]["vs_rule_low"], rows[2]["vs_rule_high"]] == second["matches"]["new:rule"]["ci95"]
    with open(setup / "eval2" / "history.csv") as handle:
        assert [int(row["generation"]) for row in csv.DictReader(handle)] == [0, 1, 2]
    assert (setup / "eval2" / "history.png").read_bytes()[:4] == b"\x89PNG"
    assert not (setup / "eval2" / "_progress").exists()


def test_the_generation_kept_is_the_best_at_the_table_that_kept_its_facit(setup):
    measure(setup, 1)
    second = measure(setup, 2)  # the history: generations 0, 1, 2
    rows = json.loads((setup / "eval2" / "history.json").read_text())
    assert [row["network"] for row in rows] == [f"bsm@{setup}/gen{number}" for number in range(3)]
    best = max(rows, key=lambda row: row["vs_base"])
    assert second["kept"]["generation"] == best["generation"] and second["kept"]["network"] == best["network"]


@pytest.mark.parametrize("facit, kept", [
    ([None, None, None], 2),  # no Facit: the best at the table
    ([0.0, -1.5, -2.5], 1),  # generation 2 lost 2.5 points: not kept, though it wins at the table
    ([0.0, -3.0, -2.5], 0),  # both lost more than 2 points: generation 0 stays
    ([0.0, None, -2.0], 2),  # exactly 2 points lost is allowed
])
def test_kept_generation_leaves_out_who_lost_more_than_two_facit_points(facit, kept):
    rows = [{"generation": g, "vs_base": imps, "facit_vs_base": points}
            for g, (imps, points) in enumerate(zip([0.0, 0.3, 0.5], facit))]
    assert generation.kept_generation(rows)["generation"] == kept
    assert generation.kept_generation([{"generation": 1, "vs_base": None, "facit_vs_base": None}]) is None
    tied = [{"generation": 0, "vs_base": 0.0, "facit_vs_base": None}, {"generation": 1, "vs_base": 0.0, "facit_vs_base": None}]
    assert generation.kept_generation(tied)["generation"] == 0


def test_a_match_scores_as_evaluates_team_match(setup):
    boards = load_boards(setup / "dd", 4)
    factory = AgentFactory(None, None, SearchConfig())
    agents = {"new": f"bsm@{setup}/gen1", "base": f"bsm@{setup}/gen0"}
    results = generation.play_matches(agents, ["new:base"], boards, factory, 3, None)
    direct = team_match("new:base", factory.make(agents["new"]), factory.make(agents["base"]), boards, 3)
    assert results["new:base"] == summary([row["imps"] for row in direct])


def test_generation_zero_alone_gets_its_row(setup):
    result = measure(setup, 0, "--agent", f"base=bsm@{setup}/gen0")
    assert list(result["matches"]) == ["base:rule"]
    rows = json.loads((setup / "eval0" / "history.json").read_text())
    assert [(row["generation"], row["vs_base"]) for row in rows] == [(0, 0.0)]
    assert rows[0]["vs_rule"] == result["matches"]["base:rule"]["mean_imps"]


def test_an_agent_labelled_ben_is_a_yardstick_like_rule(setup, tmp_path):
    """`ben=SPEC` (BEN's agents in the documented runs; a tiny BSM stands in here) joins the default
    matches next to rule and gets its own history column and curve."""
    first = measure(setup, 1, "--agent", f"ben=bsm@{setup}/gen2", out=tmp_path / "eval1")
    assert list(first["matches"]) == ["new:base", "new:rule", "new:ben", "base:rule", "base:ben"]
    rows = json.loads((tmp_path / "eval1" / "history.json").read_text())
    assert [row["vs_ben"] for row in rows] == [first["matches"]["base:ben"]["mean_imps"],
                                              first["matches"]["new:ben"]["mean_imps"]]
    assert [rows[1]["vs_ben_low"], rows[1]["vs_ben_high"]] == first["matches"]["new:ben"]["ci95"]
    alone = measure(setup, 0, "--agent", f"base=bsm@{setup}/gen0", "--agent", f"ben=bsm@{setup}/gen2",
                    out=tmp_path / "eval0")
    assert list(alone["matches"]) == ["base:rule", "base:ben"]


def test_facit_scores_every_agent_paired_against_base(setup, shared_dir):
    problems = shared_dir / "data/challenges/lorserker_ben/Challenges/CTC_mayjun20.pbn"
    result = measure(setup, 1, "--facit", str(problems), "--match", "new:rule")
    facit = result["facit"]
    assert set(facit["totals"]) == {"new", "base"} and facit["totals"]["new"]["boards"] == 20
    paired = facit["vs_base"]["new"]
    difference = facit["totals"]["new"]["percent"] - facit["totals"]["base"]["percent"]
    assert np.isclose(paired["difference"], difference) and paired["low"] <= paired["difference"] <= paired["high"]
    row = json.loads((setup / "eval1" / "history.json").read_text())[-1]
    assert (row["facit_percent"], row["facit_vs_base"]) == (facit["totals"]["new"]["percent"], paired["difference"])


def test_facit_without_a_base_agent_is_plotted_without_an_interval(setup, shared_dir, tmp_path):
    """Agents compared among themselves (no `base` label): Facit has no paired interval, and the
    history and its plot are still written."""
    problems = shared_dir / "data/challenges/lorserker_ben/Challenges/CTC_mayjun20.pbn"
    argv = ["generation", "--generation", "1", "--agent", f"new=bsm@{setup}/gen1", "--agent", f"other=bsm@{setup}/gen2",
            "--match", "new:other", "--dd", str(setup / "dd"), "--boards", "2", "--facit", str(problems),
            "--out", str(tmp_path), "--params", os.devnull]
    assert main(argv) == 0
    row = json.loads((tmp_path / "history.json").read_text())[-1]
    assert row["facit_percent"] is not None and row["facit_vs_base"] is None
    assert (tmp_path / "history.png").stat().st_size > 0


@pytest.mark.parametrize("options, named", [
    (["--agent", "new"], "LABEL=SPEC"),
    (["--agent", "rule=bsm"], "LABEL=SPEC"),
    (["--agent", "new=chess"], "unknown agent"),
    (["--match", "new:ben"], "error: --match 'new:ben'"),
    (["--history", "missing"], "--history missing"),
])
def test_bad_arguments_are_one_line_errors(setup, tmp_path, capsys, options, named):
    argv = ["generation", "--generation", "1", "--agent", f"new=bsm@{setup}/gen1", "--dd", str(setup / "dd"),
            "--boards", "2", "--out", str(tmp_path), "--params", os.devnull, *options]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("bridgeflow generation: error: ") and named in err and "Traceback" not in err


def test_training_hours_are_kept_and_become_the_plots_x(setup, tmp_path):
    """`--hours` (a DMC snapshot's training time) goes into the row; generation 0 is at 0 hours."""
    measure(setup, 1, "--hours", "0.5", out=tmp_path / "eval1")
    rows = json.loads((tmp_path / "eval1" / "history.json").read_text())
    assert [(row["generation"], row["hours"]) for row in rows] == [(0, 0.0), (1, 0.5)]
    assert generation.training_hours(rows) == [0.0, 0.5]
    assert generation.training_hours([{**rows[0], "hours": None}, {**rows[1], "hours": None}]) is None
    with open(tmp_path / "eval1" / "history.csv") as handle:
        assert [row["hours"] for row in csv.DictReader(handle)] == ["0.0", "0.5"]
