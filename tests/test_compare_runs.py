"""compare_runs pairs two runs board by board with the statistic the verbs use within one run."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset.encodings import parse_auction
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.evaluation import compare_runs
from bridgeflow.training.evaluation.matches import summary
from bridgeflow.training.evaluation.problem_scores import paired_interval


def evaluate_run(folder, match: str, imps_by_deal: dict[int, int]):
    """A boards.parquet as evaluate writes it (the columns compare_runs reads), in a shuffled order."""
    folder.mkdir()
    deals = sorted(imps_by_deal, reverse=True)
    pq.write_table(pa.table({"match": [match] * len(deals) + ["other:rule"], "board": list(range(len(deals) + 1)),
                             "deal_id": pa.array(deals + [999], pa.uint64()),
                             "imps": [imps_by_deal[d] for d in deals] + [50], "dealer": [0] * (len(deals) + 1),
                             "auctions": [[[0] * 4] * 2] * (len(deals) + 1),
                             "contracts": [["Pass", "Pass"]] * (len(deals) + 1)}), folder / "boards.parquet")
    return folder


def challenge_run(folder, agent: str, points: list[int], top: list[int], contracts: list[str] | None = None):
    folder.mkdir()
    boards = list(range(1, len(points) + 1))
    pq.write_table(pa.table({"file": ["BW.pbn"] * len(points), "board": boards, "agent": [agent] * len(points),
                             "contract": contracts or ["N4S"] * len(points), "points": points, "top_points": top,
                             "top_contract": ["4S"] * len(points)}), folder / "boards.parquet")
    return folder


def test_evaluate_runs_pair_by_deal_id_whatever_the_row_order(tmp_path):
    first = evaluate_run(tmp_path / "a", "search:ben-nosearch", {10: 3, 20: -1, 30: 0, 40: 6})
    second = evaluate_run(tmp_path / "b", "search:ben-nosearch", {40: 2, 30: 1, 20: -1, 10: 0})
    result = compare_runs.compare([f"{first}:search:ben-nosearch"], [f"{second}:search:ben-nosearch"])
    assert result["kind"] == "evaluate"
    assert result["paired"] == summary([3, 0, -1, 4])  # by deal_id 10, 20, 30, 40
    assert result["paired"]["mean_imps"] == pytest.approx(1.5) and result["paired"]["boards"] == 4


def test_challenge_runs_pair_as_challenge_does(tmp_path):
    first = challenge_run(tmp_path / "a", "search", [10, 4, 7, 0], [10, 10, 8, 5])
    second = challenge_run(tmp_path / "b", "search", [6, 4, 8, 5], [10, 10, 8, 5])
    result = compare_runs.compare([f"{first}:search"], [f"{second}:search"])
    rows = lambda pts: [{"points": p, "top_points": t} for p, t in zip(pts, [10, 10, 8, 5])]  # noqa: E731
    assert result["kind"] == "challenge"
    assert result["paired"] == paired_interval(rows([10, 4, 7, 0]), rows([6, 4, 8, 5]), compare_runs.CHALLENGE_SEED)
    assert result["paired"]["difference"] == pytest.approx(100 * (4 + 0 - 1 - 5) / 33)


def test_runs_on_other_boards_or_without_the_name_are_one_line_errors(tmp_path, capsys):
    first = evaluate_run(tmp_path / "a", "bsm:rule", {1: 0, 2: 1})
    second = evaluate_run(tmp_path / "b", "bsm:rule", {1: 0, 3: 1})
    with pytest.raises(InputError, match="not on the same boards .1 only in the first, 1 only in the second"):
        compare_runs.compare([f"{first}:bsm:rule"], [f"{second}:bsm:rule"])
    with pytest.raises(InputError, match=r"no match 'search:rule' in its boards.parquet \(it has bsm:rule, other:rule\)"):
        compare_runs.compare([f"{first}:search:rule"], [f"{second}:bsm:rule"])
    challenge = challenge_run(tmp_path / "c", "bsm", [1], [2])
    with pytest.raises(InputError, match="comes from challenge, .* from evaluate: nothing to pair"):
        compare_runs.compare([f"{challenge}:bsm"], [f"{first}:bsm:rule"])
    with pytest.raises(SystemExit) as stopped:
        compare_runs.run(["--first", str(first), "--second", f"{second}:bsm:rule"])
    assert stopped.value.code == 2
    assert "expected RUN:NAME" in capsys.readouterr().err


def test_the_cli_writes_the_comparison(tmp_path, capsys):
    first = evaluate_run(tmp_path / "a", "bsm:rule", {1: 2, 2: 4})
    second = evaluate_run(tmp_path / "b", "bsm:rule", {1: 0, 2: 0})
    out = tmp_path / "deep" / "paired.json"
    compare_runs.run(["--first", f"{first}:bsm:rule", "--second", f"{second}:bsm:rule", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["paired"]["mean_imps"] == pytest.approx(3.0)
    assert json.loads(capsys.readouterr().out) == written["paired"]


def test_evaluate_runs_say_which_changed_calls_the_difference_came_from(tmp_path, capsys):
    def run(folder, boards):  # boards: (deal_id, dealer, [table 1 auction, table 2 auction], imps)
        folder.mkdir()
        pq.write_table(pa.table({
            "match": ["search:rule"] * len(boards), "deal_id": pa.array([b[0] for b in boards], pa.uint64()),
            "dealer": pa.array([b[1] for b in boards], pa.int8()),
            "auctions": pa.array([[parse_auction(a) for a in b[2]] for b in boards], pa.list_(pa.list_(pa.int8()))),
            "contracts": [b[4] for b in boards], "board": [b[0] for b in boards],
            "imps": [b[3] for b in boards]}), folder / "boards.parquet")
        return f"{folder}:search:rule"

    new = run(tmp_path / "new", [
        (1, 0, ["1H P 2H P P P", "1S P P P"], 5, ["2H-N", "1S-N"]),  # table 1: N raised where it passed before
        (2, 1, ["1C X P P P", "1D 2D P P P"], -2, ["1CX-E", "2D-S"]),  # both tables differ: W's pass, S's higher bid
        (3, 0, ["P P P P", "P P P P"], 0, ["Pass", "Pass"])])
    old = run(tmp_path / "old", [
        (1, 0, ["1H P P P", "1S P P P"], 1, ["1H-N", "1S-N"]),
        (2, 1, ["1C X 1S P P P", "1D 2C P P P"], 2, ["1S-W", "2C-S"]),  # E opened, S doubled or overcalled: contested
        (3, 0, ["P P P P", "P P P P"], 0, ["Pass", "Pass"])])
    result = compare_runs.compare([new], [old], swings=2)
    where = result["differences"]
    assert (where["boards"], where["tables"]) == (3, 3)
    assert where["by_change"] == [
        {"change": "Pass -> bid", "contested": False, "tables": 1, "imps": 4.0, "won": 1, "lost": 0},
        {"change": "bid -> Pass", "contested": True, "tables": 1, "imps": -2.0, "won": 0, "lost": 1},
        {"change": "higher bid", "contested": True, "tables": 1, "imps": -2.0, "won": 0, "lost": 1}]
    assert result["swings"] == [  # the largest differences first, ties in deal order: board 1 (+4), board 2 (-4)
        {"deal_id": 1, "board": 1, "dealer": "N", "imps": [1, 5],
         "tables": [{"table": 1, "second": "1H P P P", "first": "1H P 2H P P P", "contracts": ["1H-N", "2H-N"]}]},
        {"deal_id": 2, "board": 2, "dealer": "E", "imps": [2, -2],
         "tables": [{"table": 1, "second": "1C X 1S P P P", "first": "1C X P P P", "contracts": ["1S-W", "1CX-E"]},
                    {"table": 2, "second": "1D 2C P P P", "first": "1D 2D P P P", "contracts": ["2C-S", "2D-S"]}]}]
    assert compare_runs.compare([new], [old], swings=0)["swings"] == []
    compare_runs.run(["--first", new, "--second", old])
    err = capsys.readouterr().err
    assert "3 tables of 3 boards bid differently" in err
    assert "  table 2: 1D 2C P P P (2C-S) -> 1D 2D P P P (2D-S)" in err
    with pytest.raises(SystemExit):
        compare_runs.run(["--first", new, "--second", old, "--swings", "-1"])
    assert "--swings must be >= 0" in capsys.readouterr().err
    assert [line.split()[-6:] for line in err.splitlines() if line.startswith("Pass -> bid")] == [
        ["no", "1", "+4.0", "+1.333", "1", "0"]]


def test_challenge_runs_list_the_problems_bid_to_another_contract(tmp_path, capsys):
    first = challenge_run(tmp_path / "a", "search", [10, 4, 7], [10, 10, 8], ["N4S", "S6S", "N3N"])
    second = challenge_run(tmp_path / "b", "search", [6, 4, 7], [10, 10, 8], ["N4H", "S6S", "S3N"])
    changed = [{"file": "BW.pbn", "board": 1, "second": "N4H", "first": "N4S", "points": [6, 10], "top": ["4S", 10]},
               {"file": "BW.pbn", "board": 3, "second": "S3N", "first": "N3N", "points": [7, 7], "top": ["4S", 8]}]
    assert compare_runs.compare([f"{first}:search"], [f"{second}:search"])["differences"] == changed
    compare_runs.run(["--first", f"{first}:search", "--second", f"{second}:search"])
    assert "BW.pbn board 1: N4H -> N4S, 6 -> 10 of 10 (4S)" in capsys.readouterr().err


def test_a_file_that_is_no_boards_parquet_is_one_line(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "boards.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        compare_runs.compare([f"{broken}:bsm:rule"], [f"{broken}:bsm:rule"])
    other = tmp_path / "other"
    other.mkdir()
    pq.write_table(pa.table({"agent": ["bsm"], "board": [1]}), other / "boards.parquet")
    with pytest.raises(InputError, match="not an evaluate or challenge boards.parquet .no contract, file, points, top_contract, top_points"):
        compare_runs.compare([f"{other}:bsm"], [f"{other}:bsm"])


def test_several_seeds_pair_in_order_and_average_each_board(tmp_path, capsys):
    """The board, its difference averaged over the seeds, stays the unit of the interval."""
    new0 = evaluate_run(tmp_path / "new0", "search:rule", {1: 4, 2: 0, 3: -2})
    old0 = evaluate_run(tmp_path / "old0", "search:rule", {1: 0, 2: 0, 3: 0})
    new1 = evaluate_run(tmp_path / "new1", "search:rule", {1: 1, 2: 3, 3: 0})
    old1 = evaluate_run(tmp_path / "old1", "search:rule", {1: 1, 2: -1, 3: 2})
    result = compare_runs.compare([f"{new0}:search:rule", f"{new1}:search:rule"],
                                  [f"{old0}:search:rule", f"{old1}:search:rule"])
    assert result["paired"] == summary([2.0, 2.0, -2.0])  # (4 + 0) / 2, (0 + 4) / 2, (-2 - 2) / 2
    assert result["paired"]["boards"] == 3
    with pytest.raises(InputError, match="2 --first and 1 --second: give them in pairs"):
        compare_runs.compare([f"{new0}:search:rule", f"{new1}:search:rule"], [f"{old0}:search:rule"])
    elsewhere = evaluate_run(tmp_path / "elsewhere", "search:rule", {1: 0, 2: 0, 4: 0})
    with pytest.raises(InputError, match=r"new0:search:rule and .*elsewhere:search:rule are not on the same boards"):
        compare_runs.compare([f"{new0}:search:rule", f"{new1}:search:rule"],
                             [f"{old0}:search:rule", f"{elsewhere}:search:rule"])
    with pytest.raises(SystemExit) as stopped:
        compare_runs.run(["--first", f"{new0}:search:rule", "--first", f"{new1}:search:rule",
                          "--second", f"{old0}:search:rule"])
    assert stopped.value.code == 2 and "give them in pairs" in capsys.readouterr().err


def test_several_seeds_sum_the_changed_calls_and_average_their_imps(tmp_path, capsys):
    def run(folder, auction, imps):  # one board, dealer N, table 1 bid as given
        folder.mkdir()
        pq.write_table(pa.table({
            "match": ["search:rule"], "deal_id": pa.array([7], pa.uint64()), "dealer": pa.array([0], pa.int8()),
            "auctions": pa.array([[parse_auction(auction), parse_auction("P P P P")]], pa.list_(pa.list_(pa.int8()))),
            "contracts": [["2H-N", "Pass"]], "board": [7], "imps": [imps]}), folder / "boards.parquet")
        return f"{folder}:search:rule"

    pairs = [(run(tmp_path / "new0", "1H P 2H P P P", 6), run(tmp_path / "old0", "1H P P P", 0)),
             (run(tmp_path / "new1", "1H P 2H P P P", 2), run(tmp_path / "old1", "1H P P P", 0))]
    where = compare_runs.compare([new for new, _ in pairs], [old for _, old in pairs])["differences"]
    assert (where["boards"], where["pairs"], where["tables"]) == (1, 2, 2)
    assert where["by_change"] == [{"change": "Pass -> bid", "contested": False, "tables": 2, "imps": 4.0,
                                   "won": 2, "lost": 0}]  # (6 + 2) / 2: the per-board column adds up to the mean
    compare_runs.run(["--first", pairs[0][0], "--first", pairs[1][0], "--second", pairs[0][1], "--second", pairs[1][1]])
    assert "2 tables of 1 boards x 2 pairs bid differently" in capsys.readouterr().err


def test_several_seeds_of_challenge_runs_average_the_points(tmp_path):
    top = [10, 10, 8]
    new0 = challenge_run(tmp_path / "new0", "search", [10, 4, 7], top, ["N4S", "S6S", "N3N"])
    old0 = challenge_run(tmp_path / "old0", "search", [6, 4, 7], top, ["N4H", "S6S", "N3N"])
    new1 = challenge_run(tmp_path / "new1", "search", [10, 2, 7], top, ["N4S", "S5S", "N3N"])
    old1 = challenge_run(tmp_path / "old1", "search", [10, 4, 7], top, ["N4S", "S6S", "N3N"])
    result = compare_runs.compare([f"{new0}:search", f"{new1}:search"], [f"{old0}:search", f"{old1}:search"])
    rows = lambda pts: [{"points": p, "top_points": t} for p, t in zip(pts, top)]  # noqa: E731
    assert result["paired"] == paired_interval(rows([10, 3, 7]), rows([8, 4, 7]), compare_runs.CHALLENGE_SEED)
    assert result["paired"]["difference"] == pytest.approx(100 * (2 - 1) / 28)
    assert [(row["pair"], row["board"]) for row in result["differences"]] == [(1, 1), (2, 2)]
