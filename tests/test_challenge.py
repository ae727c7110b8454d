"""`bridgeflow challenge`: BEN's Challenges problems bid along their scripts and scored by Facit.
The rules of a scripted auction on hand-made problems with a stub agent; the rule agent end to end
on real problem files (totals = award_points of the logged auctions, the PBN read back); and the
command's one-line errors."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.dataset import facit, pbn, validate
from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import call_name, parse_auction, parse_call
from bridgeflow.dataset.record import BoardRecord
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig
from bridgeflow.training.evaluation.challenge_report import pbn_name
from bridgeflow.training.evaluation.problem_scores import paired_interval
from bridgeflow.training.evaluation.problems import bid_problem
from bridgeflow.training.evaluation.robot_comparison import first_difference, kept_script

from test_cli_errors import one_line_error, run_cli
from test_facit import CHANGED_TABLES, REPAIRED, UNREADABLE, challenge_files

DEAL = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"


class StubAgent:
    """Makes the given calls in order and notes the seat of each decision it is asked for."""

    name = "stub"

    def __init__(self, calls: str):
        self.calls = parse_auction(calls)
        self.seats: list[int] = []

    def next_call(self, hand, auction, dealer, vul) -> int:
        self.seats.append((dealer + len(auction)) % 4)
        return self.calls[len(self.seats) - 1]

    def reseed(self, seed: int) -> None:
        pass


def problem(dealer: int, script: str, table: str = "4H 10 3H 6") -> facit.Problem:
    return facit.Problem(1, DEAL, facit.parse_table(table.split(), False), dealer, 0, tuple(script.split()))


def names(calls) -> str:
    return " ".join(call_name(call) for call in calls)


def test_an_opponents_scripted_call_made_illegal_becomes_pass_and_is_logged():
    agent = StubAgent("1H 3H P")  # N 1H, S 3H: W's scripted 2S is no longer legal
    bidding = bid_problem(problem(0, "AC 1S AC 2S"), agent)
    assert names(bidding.calls) == "1H 1S 3H P P P"
    assert bidding.substitutions == ["call 4 (W): scripted 2S 2S is not higher than 3H: Pass"]
    assert agent.seats == [0, 2, 0]
    assert (str(bidding.contract), bidding.contract.declarer, bidding.points) == ("3H", 0, 6)


def test_our_sides_scripted_calls_are_forced_and_the_agent_bids_the_ac_places():
    """BW board 26's shape: dealer S, `1C 2S AC P`: S's 1C is the script's, N's AC the agent's;
    after the script E/W pass and the agent bids for both N and S."""
    agent = StubAgent("3H 4H P")
    bidding = bid_problem(problem(2, "1C 2S AC P"), agent)
    assert names(bidding.calls) == "1C 2S 3H P 4H P P P"
    assert agent.seats == [0, 2, 0] and bidding.substitutions == []
    assert (bidding.contract.declarer, bidding.points) == (0, 10)


def test_a_scripted_call_of_ours_made_illegal_is_the_agents_and_is_logged():
    agent = StubAgent("4S P P")
    bidding = bid_problem(problem(0, "AC P 2H"), agent)
    assert names(bidding.calls) == "4S P P P"
    assert bidding.substitutions == ["call 3 (S): scripted 2H 2H is not higher than 4S: the agent bid"]


def test_uncontested_problems_are_bid_by_the_agent_for_n_and_s_alone():
    agent = StubAgent("P 1S 4H P")
    bidding = bid_problem(problem(2, ""), agent)
    assert names(bidding.calls) == "P P 1S P 4H P P P"
    assert agent.seats == [2, 0, 2, 0] and bidding.points == 10


def test_a_passed_out_problem_scores_nothing():
    bidding = bid_problem(problem(0, ""), StubAgent("P P"))
    assert (names(bidding.calls), bidding.contract, bidding.points) == ("P P P P", None, 0)


def challenges(shared_dir: Path) -> Path:
    return shared_dir / "data/challenges/lorserker_ben/Challenges"


def test_the_rule_agent_end_to_end_on_real_files(shared_dir, tmp_path, capsys):
    """CTC_mayjun20 (16 uncontested, 4 scripted) and oct13_feb23_nov23_jun24 (scripts that go on
    after an AC or start after the dealer): the totals are award_points of the logged auctions,
    and the PBN written reads back as a Results file and through the ingest's reader."""
    files = ["CTC_mayjun20.pbn", "oct13_feb23_nov23_jun24.pbn"]
    status, err = run_cli(capsys, "challenge", *[item for name in files for item in
                                                 ("--problems", str(challenges(shared_dir) / name))],
                          "--agent", "rule", "--out", str(tmp_path))
    assert status == 0, err
    rows = pq.read_table(tmp_path / "boards.parquet").to_pylist()
    assert pq.ParquetFile(tmp_path / "boards.parquet").metadata.row_group(0).column(0).compression == "ZSTD"  # write_table's
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert "CTC_mayjun20.pbn" in (tmp_path / "report.txt").read_text()
    for name in files:
        problems = {problem.board: problem for problem in facit.read_problems(challenges(shared_dir) / name).problems}
        logged = [row for row in rows if row["file"] == name]
        assert [row["board"] for row in logged] == sorted(problems)
        for row in logged:
            problem = problems[row["board"]]
            contract = replay(problem.dealer, parse_auction(row["auction"])).contract()
            assert row["points"] == (facit.award_points(problem.table, contract.level, contract.strain,
                                                        contract.doubled, contract.declarer) if contract else 0)
            assert row["kind"] == ("scripted" if problem.script else "uncontested")
            assert row["top_points"] == facit.top_points(problem.table)
            for index, call in enumerate(problem.script):  # N/S's forced calls and E/W's made where legal
                if call != facit.OUR_CALL and not row["substitutions"]:
                    assert parse_auction(row["auction"])[index] == parse_call(call)
        totals = metrics["files"][name]["rule"]
        assert totals["all"]["points"] == sum(row["points"] for row in logged)
        assert totals["all"]["max"] == sum(facit.top_points(problem.table) for problem in problems.values())
        assert totals["all"]["percent"] == pytest.approx(facit.percent([row["points"] for row in logged],
                                                                       [problem.table for problem in problems.values()]))
        assert totals["scripted"]["boards"] == sum(bool(problem.script) for problem in problems.values()) > 0
        assert totals["uncontested"]["points"] + totals["scripted"]["points"] == totals["all"]["points"]

        written = tmp_path / pbn_name(name, "rule")
        results = facit.read_results(written).boards
        assert [(board.board, board.facit_score) for board in results] == [(row["board"], row["points"]) for row in logged]
        assert [board.table for board in results] == [problems[row["board"]].table for row in logged]
        assert results[-1].running_score == totals["all"]["points"]
        records = [validate.check(record) for record in pbn.parse_pbn(written.read_bytes(), str(written))]
        assert all(isinstance(record, BoardRecord) for record in records)
        assert [(record.contract_level, record.contract_strain, record.contract_doubled, record.declarer)
                for record in records] == [(board.level, board.strain, board.doubled, board.declarer) for board in results]
        assert [names(record.auction) for record in records] == [row["auction"] for row in logged]


def test_every_two_agents_get_a_paired_bootstrap_interval(shared_dir, tmp_path, capsys):
    """An untrained toy BSM against the rule bidder: the difference in percent and its interval,
    the same from the same seed; the search (toy BSM and NN-DDA) plays too."""
    torch.manual_seed(0)
    bsm = BSM(BSMConfig(hidden=16, layers=1, embed=8))
    torch.save({"model_config": asdict(bsm.config), "model": bsm.state_dict()}, tmp_path / "model.pt")
    nndda = NNDDA(NNDDAConfig(hidden=16, layers=1))
    torch.save({"model_config": asdict(nndda.config), "model": nndda.state_dict()}, tmp_path / "nndda.pt")
    argv = ["challenge", "--problems", str(challenges(shared_dir) / "CTC_mayjun20.pbn"), "--agent", "rule",
            "--agent", "bsm", "--agent", "search", "--bsm", str(tmp_path / "model.pt"),
            "--nndda", str(tmp_path / "nndda.pt"), "--set", "search.samples=2"]
    runs = []
    for out in ("first", "second"):
        status, err = run_cli(capsys, *argv, "--out", str(tmp_path / out))
        assert status == 0, err
        runs.append(json.loads((tmp_path / out / "metrics.json").read_text())["paired"]["rule - bsm"])
    paired = runs[0]
    files = json.loads((tmp_path / "first" / "metrics.json").read_text())["files"]["CTC_mayjun20.pbn"]
    assert paired["all"]["difference"] == pytest.approx(files["rule"]["all"]["percent"] - files["bsm"]["all"]["percent"])
    assert paired["all"]["low"] <= paired["all"]["difference"] <= paired["all"]["high"]
    assert paired["all"]["boards"] == 20 and runs[0] == runs[1]
    assert sorted(path.name for path in (tmp_path / "first").glob("*.pbn")) == [
        "CTC_mayjun20-bsm.pbn", "CTC_mayjun20-rule.pbn", "CTC_mayjun20-search.pbn"]
    assert set(files) == {"rule", "bsm", "search"} and files["search"]["all"]["boards"] == 20


@pytest.mark.parametrize("options, named", [
    (["--problems", "no/such.pbn", "--agent", "rule"], "problem file (--problems) no/such.pbn: no such file"),
    (["--problems", "EMPTY_FOLDER", "--agent", "rule"], "no *.pbn file in it"),
    (["--problems", "BW", "--agent", "gib"], "--agent unknown agent 'gib'"),
    (["--problems", "BW", "--agent", "ben@model.pt"], "BEN takes no @CHECKPOINT"),
    (["--problems", "BW", "--agent", "rule", "--compare", "RESULTS"], "--compare"),
    (["--problems", "BW", "--agent", "rule", "--agent", "rule"], "--agent names one agent twice"),
    (["--problems", "BW", "--agent", "bsm", "--bsm", "no/model.pt"], "BSM no/model.pt: no such file"),
    (["--problems", "BW", "--agent", "rule", "--set", "boards=3"], "--set takes search params only"),
    (["--problems", "BW", "--agent", "rule", "--set", "search.sample=3"], "unknown search params: ['sample']"),
])
def test_bad_arguments_are_one_line_errors(shared_dir, tmp_path, capsys, options, named):
    results = challenges(shared_dir) / "Results" / "CTC_mayjun20-GIB-BBO-8712.pbn"  # not BW's boards
    (tmp_path / "folder").mkdir()
    options = [{"BW": str(challenges(shared_dir) / "BW.pbn"), "RESULTS": str(results),
                "EMPTY_FOLDER": str(tmp_path / "folder")}.get(option, option) for option in options]
    status, err = run_cli(capsys, "challenge", *options, "--out", str(tmp_path / "out"))
    assert status == 2
    assert named in one_line_error(err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("deal, auction, reason", [
    (DEAL, '[Auction "E"]\nAC 1H\n', "Auction: an AC falls on East or West"),
    ("", "", "Deal: not four hands of 13 cards"),
    ("N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876", "", "Deal: 3 hands, not 4"),
    ("N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.543Z", "", "Deal: hand '2.5432.5432.543Z'"),
])
def test_a_bad_problem_is_skipped_and_listed_and_the_others_are_scored(tmp_path, capsys, deal, auction, reason):
    path = tmp_path / "problems.pbn"
    path.write_text(f'[Board "7"]\n[Dealer "E"]\n[Vulnerable "None"]\n[Deal "{deal}"]\n[Scoring "Facit"]\n'
                    f'{{ 4H 10 }}\n{auction}\n[Board "8"]\n[Dealer "N"]\n[Vulnerable "None"]\n[Deal "{DEAL}"]\n'
                    '[Scoring "Facit"]\n{ 4H 10 }\n')
    status, err = run_cli(capsys, "challenge", "--problems", str(path), "--agent", "rule", "--out", str(tmp_path / "out"))
    assert status == 0, err
    metrics = json.loads((tmp_path / "out/metrics.json").read_text())
    assert [row["board"] for row in pq.read_table(tmp_path / "out/boards.parquet").to_pylist()] == [8]
    assert metrics["files"]["problems.pbn"]["rule"]["all"]["boards"] == 1
    assert (metrics["read"]["problems"], metrics["read"]["skipped"]) == (1, 1)
    skipped, = metrics["read"]["files"]["problems.pbn"]["skipped"]
    assert (skipped["board"], skipped["line"]) == (7, 1) and skipped["reason"].startswith(reason)
    assert f"problems.pbn board 7 (line 1): skipped: {reason}" in (tmp_path / "out/report.txt").read_text()


def test_an_empty_file_is_a_warning_not_the_end_of_the_run(tmp_path, capsys):
    empty = tmp_path / "empty.pbn"
    empty.write_text("")
    status, err = run_cli(capsys, "challenge", "--problems", str(empty), "--agent", "rule", "--out", str(tmp_path / "out"))
    assert status == 0, err
    assert "empty.pbn: 0 problems read, 0 skipped, 0 repaired; warning: empty: no game" in (
        tmp_path / "out/report.txt").read_text()
    assert pq.read_table(tmp_path / "out/boards.parquet").num_rows == 0
    assert paired_interval([], [], 0) == {"difference": 0.0, "low": 0.0, "high": 0.0, "boards": 0}


def test_challenge_over_real_files_with_typos_scores_every_readable_problem(shared_dir, tmp_path, capsys):
    """A folder of BEN's files with the typos of tests/test_facit.py (and his file without tables,
    an empty file, BW-Result with a typo and a bad board): every readable problem is bid as from
    the clean files, the rest listed with file, board and reason; the totals count them."""
    runs = {}
    for kind in ("clean", "typos"):
        _, results = challenge_files(shared_dir, tmp_path / kind, typos=kind == "typos")
        status, err = run_cli(capsys, "challenge", "--problems", str(tmp_path / kind), "--agent", "rule",
                              "--compare", str(results), "--out", str(tmp_path / f"{kind}-out"))
        assert status == 0, err
        out = tmp_path / f"{kind}-out"
        runs[kind] = ({(row["file"], row["board"]): row for row in pq.read_table(out / "boards.parquet").to_pylist()},
                      json.loads((out / "metrics.json").read_text()), (out / "report.txt").read_text())
    (clean, _, _), (rows, metrics, report) = runs["clean"], runs["typos"]
    unreadable = {(name, board): reason for name, board, _, _, reason in UNREADABLE}
    assert set(rows) == set(clean) - set(unreadable) and len(rows) == metrics["read"]["problems"] == 36 + 20 + 40
    bw = {problem.board: problem for problem in facit.read_problems(tmp_path / "typos/BW.pbn").problems}
    for key, row in rows.items():
        if key in CHANGED_TABLES:  # a P entry added: the same auction, scored with the new table
            contract = replay(row["dealer"], parse_auction(row["auction"])).contract()
            assert row["auction"] == clean[key]["auction"] and row["points"] == facit.award_points(
                bw[key[1]].table, contract.level, contract.strain, contract.doubled, contract.declarer)
        else:
            assert row == clean[key], key
    assert metrics["read"]["skipped"] == len(unreadable) == 4
    for (name, board), reason in unreadable.items():
        assert f"{name} board {board} (line " in report and f"skipped: {reason}" in report
    assert metrics["read"]["repaired"] == len(REPAIRED)
    for (name, board), repairs in REPAIRED.items():
        assert f"{name} board {board}: repaired: {', '.join(repairs)}" in report
    files = metrics["read"]["files"]
    assert (files["empty.pbn"]["warning"], files["aug_sep_jan_feb.pbn"]["warning"]) == (
        "empty: no game", "no problem: none of its 40 games has a Facit award table")
    compared = metrics["comparisons"]["BW-Result"]["rule"]
    assert compared["boards"] == 40 - 4 - 1 and [(item["board"], item["reason"]) for item in compared["skipped"]] == [
        (2, "Contract '4Z6H' is not a contract")] + [(board, "its problem was not read") for board in (10, 11, 12, 13)]
    assert "BW-Result board 2 (line " in report and "BW-Result board 10: not compared: its problem was not read" in report
    assert compared["repaired"] == [{"board": 1, "repairs": ["facit_nt_in_table"]}]
    assert "BW-Result board 1: repaired: facit_nt_in_table" in report


def test_first_difference():
    assert first_difference(["P", "1S", "P"], ["P", "1S", "P"], 0) is None
    assert first_difference(["P", "1S", "P"], ["P", "2C", "P"], 3) == {
        "call": 2, "seat": "N", "ours": "1S", "theirs": "2C"}
    assert first_difference(["1S", "P", "P", "P"], ["1S", "P", "P"], 1)["ours"] == "P"
    assert first_difference(["1S", "P", "P"], ["1S", "P", "P", "P"], 1)["ours"] == "-"


def test_compare_sets_auctions_beside_a_results_file(shared_dir, tmp_path, capsys):
    """The rule bidder beside GIB-BBO's CTC_mayjun20: per board the first difference (None exactly
    where the auctions are the same), both totals, the share of the same auctions; and timings."""
    results = challenges(shared_dir) / "Results" / "CTC_mayjun20-GIB-BBO-8712.pbn"
    status, err = run_cli(capsys, "challenge", "--problems", str(challenges(shared_dir) / "CTC_mayjun20.pbn"),
                          "--agent", "rule", "--compare", str(results), "--out", str(tmp_path))
    assert status == 0, err
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    compared = metrics["comparisons"][results.stem]["rule"]
    theirs = {board.board: board for board in facit.read_results(results).boards}
    rows = {row["board"]: row for row in pq.read_table(tmp_path / "boards.parquet").to_pylist()}
    assert compared["problems"] == "CTC_mayjun20.pbn" and compared["boards"] == len(theirs) == 20
    for board in compared["per_board"]:
        assert board["their_auction"] == " ".join(theirs[board["board"]].auction)
        assert (board["first_difference"] is None) == (rows[board["board"]]["auction"] == board["their_auction"])
    assert compared["identical_auctions"] == sum(board["first_difference"] is None for board in compared["per_board"])
    # GIB-BBO-8712 bid boards 11 and 19 (`[ Auction "E"]`) as uncontested: E passed, not the scripted 1D / 1S.
    assert [board["board"] for board in compared["per_board"] if not board["their_script_kept"]] == [11, 19]
    assert compared["boards_script_kept"] == 18
    assert compared["their_points"] == theirs[20].running_score == 115
    assert compared["points"] == metrics["files"]["CTC_mayjun20.pbn"]["rule"]["all"]["points"]
    assert f"rule vs {results.stem}: {compared['identical_auctions']}/20 identical auctions" in (tmp_path / "report.txt").read_text()
    our_calls = sum((row["dealer"] + index) % 2 == 0 for row in rows.values()
                    for index, _ in enumerate(row["auction"].split()))  # N/S's, a few scripted
    assert our_calls - 10 < metrics["time_per_decision"]["rule"]["decisions"] <= our_calls


def test_ben_nosearch_takes_the_challenge(ben_dir, tmp_path, capsys):
    """`--agent ben-nosearch` bids every problem; its time per decision has BEN's own next to it."""
    status, err = run_cli(capsys, "challenge", "--problems", str(challenges(ben_dir.parents[1]) / "CTC_mayjun20.pbn"),
                          "--agent", "ben-nosearch", "--out", str(tmp_path))
    assert status == 0, err
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["files"]["CTC_mayjun20.pbn"]["ben-nosearch"]["all"]["boards"] == 20
    timing = metrics["time_per_decision"]["ben-nosearch"]
    assert timing["engine"]["decisions"] == timing["decisions"] > 20
    assert timing["engine"]["mean_ms"] <= timing["mean_ms"]


def test_kept_script_follows_bens_rule():
    """Scripted E/W calls are made if legal, else Pass; our side's calls are free."""
    scripted = problem(0, "AC P AC 1S")
    assert kept_script(scripted, ["1C", "P", "1D", "1S", "P", "P", "P"]) is True
    assert kept_script(scripted, ["1C", "P", "1D", "P", "P", "P"]) is False  # W's 1S was legal
    assert kept_script(scripted, ["2C", "P", "2D", "P", "2H", "P", "P", "P"]) is True  # 1S was not
    assert kept_script(scripted, ["2C", "P", "2D", "2S", "P", "P", "P"]) is False
    assert kept_script(scripted, ["1C", "X", "1D", "1S", "P", "P", "P"]) is False
    with pytest.raises(ValueError):
        kept_script(scripted, ["1C", "P", "1C"])


def test_compare_with_a_results_file_of_some_boards(shared_dir, tmp_path, capsys):
    """A Results file may hold only some boards of its problem file: the others say so in the report."""
    source = (challenges(shared_dir) / "Results" / "CTC_mayjun20-GIB-BBO-8712.pbn").read_text()
    games = source.split("\n[BCFlags ")
    partial = tmp_path / "partial.pbn"
    partial.write_text("\n[BCFlags ".join(games[:4]) + "\n")
    kept = len(facit.read_results(partial).boards)
    assert 0 < kept < 20
    status, err = run_cli(capsys, "challenge", "--problems", str(challenges(shared_dir) / "CTC_mayjun20.pbn"),
                          "--agent", "rule", "--compare", str(partial), "--out", str(tmp_path / "out"))
    assert status == 0, err
    assert json.loads((tmp_path / "out/metrics.json").read_text())["comparisons"]["partial"]["rule"]["boards"] == kept
    assert (tmp_path / "out/report.txt").read_text().count("partial: not on this board") == 20 - kept
