"""compare_runs pairs two runs board by board with the statistic the verbs use within one run."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

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
                             "imps": [imps_by_deal[d] for d in deals] + [50]}), folder / "boards.parquet")
    return folder


def challenge_run(folder, agent: str, points: list[int], top: list[int]):
    folder.mkdir()
    boards = list(range(1, len(points) + 1))
    pq.write_table(pa.table({"file": ["BW.pbn"] * len(points), "board": boards, "agent": [agent] * len(points),
                             "points": points, "top_points": top}), folder / "boards.parquet")
    return folder


def test_evaluate_runs_pair_by_deal_id_whatever_the_row_order(tmp_path):
    first = evaluate_run(tmp_path / "a", "search:ben-nosearch", {10: 3, 20: -1, 30: 0, 40: 6})
    second = evaluate_run(tmp_path / "b", "search:ben-nosearch", {40: 2, 30: 1, 20: -1, 10: 0})
    result = compare_runs.compare(f"{first}:search:ben-nosearch", f"{second}:search:ben-nosearch")
    assert result["kind"] == "evaluate"
    assert result["paired"] == summary([3, 0, -1, 4])  # by deal_id 10, 20, 30, 40
    assert result["paired"]["mean_imps"] == pytest.approx(1.5) and result["paired"]["boards"] == 4


def test_challenge_runs_pair_as_challenge_does(tmp_path):
    first = challenge_run(tmp_path / "a", "search", [10, 4, 7, 0], [10, 10, 8, 5])
    second = challenge_run(tmp_path / "b", "search", [6, 4, 8, 5], [10, 10, 8, 5])
    result = compare_runs.compare(f"{first}:search", f"{second}:search")
    rows = lambda pts: [{"points": p, "top_points": t} for p, t in zip(pts, [10, 10, 8, 5])]  # noqa: E731
    assert result["kind"] == "challenge"
    assert result["paired"] == paired_interval(rows([10, 4, 7, 0]), rows([6, 4, 8, 5]), compare_runs.CHALLENGE_SEED)
    assert result["paired"]["difference"] == pytest.approx(100 * (4 + 0 - 1 - 5) / 33)


def test_runs_on_other_boards_or_without_the_name_are_one_line_errors(tmp_path, capsys):
    first = evaluate_run(tmp_path / "a", "bsm:rule", {1: 0, 2: 1})
    second = evaluate_run(tmp_path / "b", "bsm:rule", {1: 0, 3: 1})
    with pytest.raises(InputError, match="not on the same boards .1 only in the first, 1 only in the second"):
        compare_runs.compare(f"{first}:bsm:rule", f"{second}:bsm:rule")
    with pytest.raises(InputError, match=r"no match 'search:rule' in its boards.parquet \(it has bsm:rule, other:rule\)"):
        compare_runs.compare(f"{first}:search:rule", f"{second}:bsm:rule")
    challenge = challenge_run(tmp_path / "c", "bsm", [1], [2])
    with pytest.raises(InputError, match="comes from challenge, .* from evaluate: nothing to pair"):
        compare_runs.compare(f"{challenge}:bsm", f"{first}:bsm:rule")
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


def test_a_file_that_is_no_boards_parquet_is_one_line(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "boards.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        compare_runs.compare(f"{broken}:bsm:rule", f"{broken}:bsm:rule")
    other = tmp_path / "other"
    other.mkdir()
    pq.write_table(pa.table({"agent": ["bsm"], "board": [1]}), other / "boards.parquet")
    with pytest.raises(InputError, match="not an evaluate or challenge boards.parquet .no file, points, top_points"):
        compare_runs.compare(f"{other}:bsm", f"{other}:bsm")
