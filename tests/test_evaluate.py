"""The duplicate evaluation: board selection, scoring and IMP signs of team and partner matches
(with any partner), statistics, the sampler's fallbacks, reproducibility under a seed, the files
`bridgeflow evaluate` writes (matches.pbn read back by our reader and ingest) and resuming a
killed run."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import deal_id, duplicate_dealer, duplicate_vulnerability, parse_call, random_owner
from bridgeflow.dataset.labels import dd_store_table
from bridgeflow.dataset.pbn import parse_pbn
from bridgeflow.dataset.record import BoardRecord
from bridgeflow.dataset.scoring import imps, score_ns
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines import ingest
from bridgeflow.training.evaluation import evaluate as ev
from bridgeflow.training.evaluation.agents import AgentFactory, RuleAgent
from bridgeflow.training.evaluation.boards import load_boards
from bridgeflow.training.evaluation.matches import match_agents, paired, partner_match, seat_names, summary, team_match
from bridgeflow.training.evaluation.resume import Progress
from bridgeflow.training.evaluation.table import SAMPLER_COUNTS, count_sampling, play_board, sampler_summary
from bridgeflow.training.search.monte_carlo import SearchConfig, SearchResult

torch.set_num_threads(1)
ONE_NT = parse_call("1NT")
PLAY_BOARD = play_board


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A DD store of random deals, 8 of them in the test split (tables random: only scoring reads them)."""
    folder = tmp_path_factory.mktemp("dd")
    owners, ids = [], []
    index = 0
    while sum(i % 100 >= 90 for i in ids) < 8:
        owner = random_owner(11, index)
        owners.append(owner)
        ids.append(deal_id(owner))
        index += 1
    tables = np.random.default_rng(0).integers(0, 14, (len(ids), 4, 5))
    pq.write_table(dd_store_table(np.array(ids, np.uint64), np.stack(owners), tables), folder / "labels.parquet")
    estimated = [random_owner(12, i) for i in range(40)]
    estimated = [o for o in estimated if deal_id(o) % 100 >= 90]  # estimated tables: never boards
    pq.write_table(dd_store_table(np.array([deal_id(o) for o in estimated], np.uint64), np.stack(estimated),
                                  np.zeros((len(estimated), 4, 5)), solver="nn-dda"), folder / "estimated.parquet")
    return folder



class Opener:
    """Stub agent: opens 1NT when nobody has bid yet, passes otherwise."""

    name = "opener"

    def next_call(self, hand, auction, dealer, vul):
        return ONE_NT if all(c == 0 for c in auction) else 0

    def reseed(self, seed):
        pass


class Passer(Opener):
    name = "passer"

    def next_call(self, hand, auction, dealer, vul):
        return 0


def test_boards_are_the_first_test_split_ids(store):
    boards = load_boards(store, 5)
    ids = [int(d) for d in boards.deal_ids]
    assert len(ids) == 5 and all(d % 100 >= 90 for d in ids) and ids == sorted(ids)
    everything = load_boards(store, 100)
    assert len(everything.deal_ids) == 8 and list(everything.deal_ids[:5]) == ids
    assert boards.owners.shape == (5, 52) and boards.tables.shape == (5, 4, 5)
    assert [deal_id(o) for o in boards.owners] == ids


def test_board_file_fixes_the_list(store, tmp_path):
    chosen = [int(d) for d in load_boards(store, 8).deal_ids[[6, 1]]]
    (tmp_path / "list.json").write_text(json.dumps(chosen))
    assert [int(d) for d in load_boards(store, 3, tmp_path / "list.json").deal_ids] == chosen
    (tmp_path / "bad.json").write_text(json.dumps({"deal_ids": [chosen[0], 12345]}))
    with pytest.raises(ValueError, match="no exact DD table"):
        load_boards(store, 3, tmp_path / "bad.json")


def test_boards_take_the_exact_table_of_a_deal_that_also_has_an_estimate(tmp_path):
    owners = [owner for owner in (random_owner(13, i) for i in range(80)) if deal_id(owner) % 100 >= 90][:3]
    ids = np.array([deal_id(owner) for owner in owners], np.uint64)
    exact = np.random.default_rng(1).integers(0, 14, (len(ids), 4, 5))
    pq.write_table(dd_store_table(ids, np.stack(owners), np.zeros((len(ids), 4, 5)), solver="nn-dda"),
                   tmp_path / "a-estimated.parquet")  # read first
    pq.write_table(dd_store_table(ids, np.stack(owners), exact), tmp_path / "b-exact.parquet")
    boards = load_boards(tmp_path, 5)
    order = np.argsort(ids)
    assert boards.deal_ids.tolist() == ids[order].tolist()
    assert boards.tables.tolist() == exact[order].tolist()


def test_team_match_scores_both_tables_and_imps_for_team_a(store):
    boards = load_boards(store, 6)
    rows = team_match("opener:passer", Opener(), Passer(), boards, 0)
    for index, row in enumerate(rows):
        dealer, vul = duplicate_dealer(index + 1), duplicate_vulnerability(index + 1)
        assert (row["board"], row["dealer"], row["vul"]) == (index + 1, dealer, vul)
        expected = []
        for table, side in enumerate((0, 1)):  # the opener's side: NS at table 1, EW at table 2
            declarer = next(s for s in ((dealer + k) % 4 for k in range(4)) if s % 2 == side)
            tricks = int(boards.tables[index, declarer, 4])
            expected.append(score_ns(1, 4, 0, declarer, vul, tricks))
            assert row["tricks"][table] == tricks
        assert row["scores_ns"] == expected
        assert row["imps"] == imps(expected[0] - expected[1])


def test_rule_bidders_tie_against_themselves(store):
    boards = load_boards(store, 4)
    config = ev.EvalConfig(matches=["rule:rule", "partner:rule"])
    metrics, rows = ev.evaluate(config, boards, AgentFactory(None, None, SearchConfig()))
    assert all(r["imps"] == 0 for r in rows)
    assert metrics["matches"]["rule:rule"]["mean_imps"] == 0
    partner_rows = [r for r in rows if r["match"] == "partner:rule"]
    assert all(len(r["auctions"]) == 5 and len(set(map(tuple, r["auctions"]))) == 1 for r in partner_rows)
    assert all(replay(r["dealer"], r["auctions"][0]).finished for r in rows)


def test_a_checkpoint_against_itself_ties(store, models):
    boards = load_boards(store, 3)
    factory = AgentFactory(None, None, SearchConfig())
    _, rows = ev.evaluate(ev.EvalConfig(matches=[f"bsm@{models / 'model.pt'}:bsm@{models}"]), boards, factory)
    assert [r["imps"] for r in rows] == [0, 0, 0] and all(r["auctions"][0] == r["auctions"][1] for r in rows)
    assert list(factory.checkpoints) == [str(models / "model.pt")]


def test_partner_setting_averages_the_seats_for_the_agents_side(store):
    boards = load_boards(store, 3)
    rows = partner_match("partner:opener", Opener(), RuleAgent(), boards, 0)
    for row in rows:
        base, *seated = row["scores_ns"]
        gains = [imps(seated[s] - base) * (1 if s % 2 == 0 else -1) for s in range(4)]
        assert row["imps"] == pytest.approx(np.mean(gains))


def test_summary_and_paired_differences():
    s = summary([1.0, 2.0, 3.0, 6.0])
    assert s["mean_imps"] == 3.0 and s["se"] == pytest.approx(np.std([1, 2, 3, 6], ddof=1) / 2)
    assert s["ci95"] == pytest.approx([3 - 1.959964 * s["se"], 3 + 1.959964 * s["se"]])
    results = {"x:rule": [{"imps": v} for v in (3, 0, 2)], "y:rule": [{"imps": v} for v in (1, 1, 1)],
               "x:y": [{"imps": 5}] * 3}
    pairs = paired(results)
    assert list(pairs) == ["x:rule - y:rule", "x:rule - x:y"]  # y:rule and x:y share no agent's role
    assert pairs["x:rule - y:rule"]["mean_imps"] == pytest.approx(2 / 3)
    assert pairs["x:rule - y:rule"]["se"] == pytest.approx(np.std([2, -1, 1], ddof=1) / np.sqrt(3))
    assert pairs["x:rule - x:y"]["mean_imps"] == pytest.approx(-10 / 3)
    assert list(paired({"partner:x+rule": results["x:rule"], "partner:x+y": results["x:y"]})) == []
    assert summary([4.0])["se"] is None


def test_same_seed_same_boards_other_seed_other_auctions(store, models):
    boards = load_boards(store, 2)
    search = SearchConfig(samples=2, oversample=2, topk=2, rollout="sample", selection="proportional")

    def play(seed):
        factory = AgentFactory(models, models, search)
        _, rows = ev.evaluate(ev.EvalConfig(seed=seed, matches=["bsm-sample:rule", "search:bsm"]), boards, factory)
        return rows

    first = play(1)
    assert play(1) == first
    assert play(2) != first


def test_run_writes_log_metrics_and_a_replayable_board_list(store, models, tmp_path):
    out = tmp_path / "eval"
    argv = ["--dd", str(store), "--bsm", str(models), "--nndda", str(models), "--out", str(out),
            "--params", os.devnull, "--set", "boards=3", "--set", "matches=[search:rule, bsm:rule]",
            "--set", "search.samples=2", "--set", "search.oversample=1", "--set", "search.topk=2"]
    metrics = ev.run(argv)
    log = pq.read_table(out / "boards.parquet").to_pylist()
    assert len(log) == 6 and {r["match"] for r in log} == {"search:rule", "bsm:rule"}
    assert pq.ParquetFile(out / "boards.parquet").metadata.row_group(0).column(0).compression == "ZSTD"  # write_table's
    listed = json.loads((out / "boards.json").read_text())
    assert listed["deal_ids"] == metrics["boards"]["deal_ids"] and listed["hash"] == metrics["boards"]["hash"]
    written = json.loads((out / "metrics.json").read_text())
    assert written["config"]["search"]["samples"] == 2 and written["seed"] == 0
    assert set(written["checkpoints"]) == {str(models / "model.pt"), str(models / "nndda.pt")}
    by_match = {m: [r["imps"] for r in log if r["match"] == m] for m in ("search:rule", "bsm:rule")}
    headline = written["headline"]
    assert headline["mean_imps"] == pytest.approx(np.mean(by_match["search:rule"]) - np.mean(by_match["bsm:rule"]))
    timing = written["matches"]["search:rule"]["time_per_decision"]
    assert set(timing) == {"search", "rule"} and timing["search"]["decisions"] > 0
    assert timing["search"]["p95_ms"] >= 0

    again = tmp_path / "again"
    ev.run(argv[:7] + [str(again), "--boards", str(out / "boards.json")] + argv[8:] + ["--set", "boards=1"])
    assert pq.read_table(again / "boards.parquet").equals(pq.read_table(out / "boards.parquet"))


def eval_argv(store, models, out, *sets):
    return ["--dd", str(store), "--bsm", str(models), "--nndda", str(models), "--out", str(out),
            "--params", os.devnull, "--set", "boards=3", *sum((["--set", s] for s in sets), [])]


class Killed(Exception):
    pass


def count_boards(monkeypatch, kill_after=None):
    """Patches play_board to count the boards played, and to raise after `kill_after` of them, as a kill would."""
    played = []

    def play_board(*args):
        if len(played) == kill_after:
            raise Killed
        played.append(args[3])
        return PLAY_BOARD(*args)

    monkeypatch.setattr("bridgeflow.training.evaluation.matches.play_board", play_board)  # the serial path
    return played


def without_timings(metrics):
    """metrics.json less what a resumed run measures differently: seconds, mean and p95 time per decision."""
    metrics = json.loads(json.dumps(metrics))
    del metrics["seconds"]
    for match in metrics["matches"].values():
        for timing in match["time_per_decision"].values():
            del timing["mean_ms"], timing["p95_ms"]
    return metrics


@pytest.mark.parametrize("commit_seconds", [0, 3600])
def test_interrupted_run_resumes_to_the_results_of_an_uninterrupted_one(store, models, tmp_path, monkeypatch,
                                                                         commit_seconds):
    """Whatever stops a run (Ctrl-C, SIGTERM, a failed agent), its finished boards are committed,
    however long before the next commit was due; the rerun plays only the others."""
    sets = ["matches=[bsm-sample:rule, search:rule]", "search.samples=2", "search.oversample=1", "search.topk=2"]
    whole = ev.run(eval_argv(store, models, tmp_path / "whole", *sets))
    monkeypatch.setattr("bridgeflow.training.evaluation.resume.COMMIT_SECONDS", commit_seconds)
    count_boards(monkeypatch, kill_after=4)  # all 3 boards of the first match, 1 of the second
    with pytest.raises(Killed):
        ev.run(eval_argv(store, models, tmp_path / "killed", *sets))
    assert not (tmp_path / "killed" / "boards.parquet").exists()
    assert list((tmp_path / "killed" / "_progress").glob("*/part-*.parquet"))

    played = count_boards(monkeypatch)
    resumed = ev.run(eval_argv(store, models, tmp_path / "killed", *sets))
    assert len(played) == 2  # only the 2 boards never played
    assert pq.read_table(tmp_path / "killed" / "boards.parquet").equals(
        pq.read_table(tmp_path / "whole" / "boards.parquet"))
    assert without_timings(resumed) == without_timings(whole)
    assert resumed["matches"]["search:rule"]["time_per_decision"]["search"]["decisions"] > 0
    assert not (tmp_path / "killed" / "_progress").exists()


def test_workers_play_exactly_the_boards_of_one_process(store, models, tmp_path, monkeypatch):
    """Boards played by two spawned processes, in whatever order they finish, give the same log and
    metrics as one process; and a rerun with another worker count resumes the same progress."""
    sets = ["matches=[bsm-sample:rule, partner:bsm-sample, search:rule]", "search.samples=2", "search.oversample=1",
            "search.topk=2", "boards=4"]
    one = ev.run(eval_argv(store, models, tmp_path / "one", *sets))
    played_here = count_boards(monkeypatch)  # patched in this process only, not in the spawned workers
    two = ev.run(eval_argv(store, models, tmp_path / "two", *sets, "workers=2"))
    assert played_here == []
    assert pq.read_table(tmp_path / "two" / "boards.parquet").equals(pq.read_table(tmp_path / "one" / "boards.parquet"))
    assert two["config"]["evaluate"].pop("workers") == 2 and one["config"]["evaluate"].pop("workers") == 1
    assert without_timings(two) == without_timings(one)
    factory = AgentFactory("a", "b", SearchConfig())
    boards = load_boards(store, 3)
    assert ev.run_key(ev.EvalConfig(workers=2), boards, factory) == ev.run_key(ev.EvalConfig(), boards, factory)


def test_parallel_boards_are_kept_as_they_finish_not_in_order(store, monkeypatch):
    """A slow board (BEN's search) must not hold back the boards after it, or a kill would lose
    them all: board 1 takes longest and is kept last."""
    kept = []
    monkeypatch.setattr(ev, "spawned_workers", lambda workers, initializer, initargs: ThreadPoolExecutor(workers))
    monkeypatch.setattr(ev, "_play_in_worker", lambda task: time.sleep(1.0 if task[1] == 0 else 0.05) or
                        {"match": task[0], "board": task[1] + 1})
    monkeypatch.setattr(Progress, "add", lambda self, row: kept.append(row["board"]))
    ev.play_in_parallel(ev.EvalConfig(matches=["rule:rule"], workers=2), load_boards(store, 4),
                        AgentFactory("a", "b", SearchConfig()), Progress())
    assert kept == [2, 3, 4, 1]


def test_progress_of_another_key_is_not_resumed(store, tmp_path, monkeypatch):
    monkeypatch.setattr("bridgeflow.training.evaluation.resume.COMMIT_SECONDS", 0)
    count_boards(monkeypatch, kill_after=2)
    with pytest.raises(Killed):
        ev.run(eval_argv(store, store, tmp_path / "out", "matches=[rule:rule]"))
    played = count_boards(monkeypatch)
    ev.run(eval_argv(store, store, tmp_path / "out", "matches=[rule:rule]", "seed=1"))
    assert played == [0, 1, 2]
    assert not (tmp_path / "out" / "_progress").exists()  # the stale progress is cleared too


def test_run_key_changes_with_whatever_decides_the_boards(store):
    boards = load_boards(store, 3)
    factory = AgentFactory("a", "b", SearchConfig())
    factory.checkpoints = {"a/model.pt": "0123"}
    key = ev.run_key(ev.EvalConfig(), boards, factory)
    assert ev.run_key(ev.EvalConfig(), boards, factory) == key
    assert ev.run_key(ev.EvalConfig(seed=1), boards, factory) != key
    assert ev.run_key(ev.EvalConfig(), load_boards(store, 2), factory) != key
    factory.checkpoints = {"a/model.pt": "4567"}
    assert ev.run_key(ev.EvalConfig(), boards, factory) != key
    assert ev.run_key(ev.EvalConfig(), boards, AgentFactory("a", "b", SearchConfig(samples=2))) != key


def test_a_null_match_prints_its_zero_standard_error(store, tmp_path, capsys):
    ev.run(eval_argv(store, store, tmp_path / "out", "matches=[rule:rule]"))
    assert "rule:rule: +0.00 IMPs/board, se 0.00, 3 boards" in capsys.readouterr().out


def test_partner_matches_name_their_partner(store, models):
    """`partner:A+B`: A in each seat with three B's, against the table of four B's; A = B is a null
    match; `partner:A` is `partner:A+rule`; only partner matches with the same B are paired."""
    assert match_agents("partner:bsm") == ("partner", "bsm", "rule")
    assert match_agents("partner:bsm@a+b/model.pt+ben") == ("partner", "bsm@a+b/model.pt", "ben")
    assert match_agents("search:ben-nosearch") == ("team", "search", "ben-nosearch")
    assert seat_names("partner:rule+bsm") == [["bsm"] * 4, ["rule", "bsm", "bsm", "bsm"], ["bsm", "rule", "bsm", "bsm"],
                                                 ["bsm", "bsm", "rule", "bsm"], ["bsm", "bsm", "bsm", "rule"]]
    with pytest.raises(ValueError, match="partner:A\\+B"):
        match_agents("bsm")
    boards = load_boards(store, 3)
    matches = ["partner:bsm+bsm", "partner:rule+rule", "partner:rule+bsm", "partner:bsm"]
    metrics, rows = ev.evaluate(ev.EvalConfig(matches=matches), boards, AgentFactory(models, models, SearchConfig()))
    by_match = {match: [row for row in rows if row["match"] == match] for match in matches}
    for match in ("partner:bsm+bsm", "partner:rule+rule"):
        assert [row["imps"] for row in by_match[match]] == [0.0] * 3
        assert all(len(set(map(tuple, row["auctions"]))) == 1 for row in by_match[match])
    for with_bsm, with_rule in zip(by_match["partner:rule+bsm"], by_match["partner:bsm"]):
        assert with_bsm["auctions"][0] == by_match["partner:bsm+bsm"][with_bsm["board"] - 1]["auctions"][0]
        assert with_rule["auctions"][0] == by_match["partner:rule+rule"][with_rule["board"] - 1]["auctions"][0]
    assert set(metrics["paired"]) == {"partner:bsm+bsm - partner:rule+bsm", "partner:rule+rule - partner:bsm"}


def test_counts_of_sampling_per_decision():
    def result(generated, fitting, unfitting, samples, fallback=None):
        return SearchResult(0, 0, [], samples, fitting, generated, unfitting, fallback, 0.0)

    counts = dict.fromkeys(SAMPLER_COUNTS, 0)
    for decision in (result(0, 0, 0, 0, "one candidate call"), result(10, 10, 0, 4), result(10, 3, 1, 4),
                     result(10, 0, 4, 0, "0 sampled deals fit the auction (min_fitting 1)")):
        count_sampling(counts, decision)
    assert counts == {"decisions": 4, "sampled": 3, "sampler_fallback": 2, "bsm_fallback": 1, "deals": 8, "unfitting": 1}
    assert sampler_summary(counts) == {"decisions": 4, "sampled": 3, "sampler_fallback": 2 / 3, "bsm_fallback": 1 / 3,
                                          "unfitting_deals": 1 / 8}
    assert sampler_summary(dict.fromkeys(SAMPLER_COUNTS, 0))["sampler_fallback"] is None


def test_metrics_report_how_often_the_sampler_fell_back(store, models, tmp_path):
    """No call of another player is ever that likely (min_call_prob 1): every decision after the
    first call falls back (and plays the BSM's call); an opening fits (nothing to fit). The search
    opens at one table of each of the 3 boards."""
    sets = ["matches=[search:rule, bsm:rule]", "search.samples=2", "search.oversample=1", "search.candidates=topk",
            "search.topk=2", "search.min_prior=0", "search.min_call_prob=1.0", "search.resample=0", "search.relax=0"]
    metrics = ev.run(eval_argv(store, models, tmp_path / "out", *sets))
    match = metrics["matches"]["search:rule"]
    decisions = match["time_per_decision"]["search"]["decisions"]
    assert match["sampler"] == {"search": {"decisions": decisions, "sampled": decisions,
                                           "sampler_fallback": (decisions - 3) / decisions,
                                           "bsm_fallback": (decisions - 3) / decisions, "unfitting_deals": 0.0}}
    assert "sampler" not in metrics["matches"]["bsm:rule"]


def test_every_table_is_written_as_pbn_that_ingest_reads_back(store, models, tmp_path):
    """matches.pbn: a game per table (2 per board of a team match, 5 of a partner match) that
    parse_pbn accepts with its auction, contract, DD result, score, seats and DD table; and
    `bridgeflow ingest` reads every game with its auction and contract."""
    out = tmp_path / "out"
    ev.run(eval_argv(store, models, out, "matches=[bsm:rule, partner:rule+bsm]"))
    text = (out / "matches.pbn").read_text()
    records = [check(record) for record in parse_pbn(text.encode(), "matches.pbn")]
    assert all(isinstance(record, BoardRecord) and not record.repairs for record in records), records
    log = pq.read_table(out / "boards.parquet").to_pylist()
    boards = load_boards(store, 3)
    tables = [(row, table) for row in log for table in range(len(row["auctions"]))]
    assert len(records) == len(tables) == 3 * 2 + 3 * 5
    for record, (row, table) in zip(records, tables):
        assert (record.event, record.board, record.dealer, record.vulnerability) == (
            row["match"], row["board"], row["dealer"], row["vul"])
        assert record.auction == row["auctions"][table] and record.auction_complete
        contract = replay(row["dealer"], record.auction).contract()
        assert row["contracts"][table] == ("Pass" if contract is None else f"{contract}-{'NESW'[contract.declarer]}")
        assert (record.contract_level, record.declarer) == ((0, None) if contract is None else
                                                            (contract.level, contract.declarer))
        assert record.tricks == (None if contract is None else row["tricks"][table])
        assert record.source_score == f"NS {row['scores_ns'][table]}"
        assert record.players == seat_names(row["match"])[table]
        assert np.array_equal(record.owner, boards.owners[row["board"] - 1])
        assert record.dd_tricks == boards.tables[row["board"] - 1].reshape(-1).tolist()
    assert [record.room for record in records[:2]] == ["open", "closed"]
    assert [records[6].room, records[7].room] == ["Table 1", "Table 2"] and "ScoreIMP" not in records[6].tags
    first = log[0]
    assert records[0].tags["ScoreIMP"] == f"NS {imps(first['scores_ns'][0] - first['scores_ns'][1])}"

    manifest = ingest.run(["--input", str(out / "matches.pbn"), "--out", str(tmp_path / "ingested"), "--workers", "1"])
    assert (manifest["read"], manifest["accepted"]) == (len(tables), len(tables))
    ingested = sorted((row for shard in sorted((tmp_path / "ingested" / "records").glob("*.parquet"))
                       for row in pq.read_table(shard).to_pylist()), key=lambda row: row["source_position"])
    assert [row["auction"] for row in ingested] == [row["auctions"][table] for row, table in tables]
    assert [row["contract_level"] for row in ingested] == [record.contract_level for record in records]
