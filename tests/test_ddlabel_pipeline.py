"""The ddlabel job: one label per distinct deal, nothing solved twice (reruns, --store, after a
SIGKILL), source DD tables cross-checked, bad deals quarantined, crash-safe compaction."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
from test_dd import SORTED, cheap_deals

from bridgeflow.dataset import dd, labels
from bridgeflow.dataset.encodings import deal_id
from bridgeflow.dataset.record import BoardRecord
from bridgeflow.dataset.schema import DD_LABELS, RECORDS, SCHEMA_VERSION, record_id, records_row
from bridgeflow.dataset.scoring import par_all
from bridgeflow.dataset.splits import split_of
from bridgeflow.pipelines import ddlabel
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig

REPO = Path(__file__).resolve().parents[1]


def write_records(path: Path, deals, dd_tables=None, owners_override=None) -> list[int]:
    """A records shard as the ingest writes it; returns the record_ids."""
    rows = []
    for position, owner in enumerate(deals):
        record = BoardRecord(path.name, "pbn", position, position + 1, owner=owner)
        if dd_tables and position in dd_tables:
            record.dd_tricks = dd_tables[position]
        rows.append(records_row(record, record_id(str(path.parent), path.name, position)))
    for position, (owner, forced_id) in (owners_override or {}).items():
        rows[position]["owner"], rows[position]["deal_id"] = owner.tolist(), forced_id
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORDS), path)
    return [row["record_id"] for row in rows]


def label(records: Path, out: Path, *extra: str, workers: int = 1) -> dict:
    return ddlabel.run(["--records", str(records), "--out", str(out), "--runner", "FnApiRunner",
                        "--workers", str(workers), *extra])


def labels_of(out: Path) -> dict[int, dict]:
    table = pa.concat_tables([pq.read_table(path) for path in (out / "labels").glob("*.parquet")])
    rows = table.to_pylist()
    assert len(rows) == len({row["deal_id"] for row in rows}), "a deal is labelled twice"
    return {row["deal_id"]: row for row in rows}


def read_folder(folder: Path) -> list[dict]:
    files = sorted(folder.glob("*.parquet"))
    return pa.concat_tables([pq.read_table(path) for path in files]).to_pylist() if files else []


@pytest.fixture(scope="module")
def reference():
    """Tables straight from the solver for the deals used below."""
    deals = cheap_deals(30, seed=11)
    with dd.Solver() as solver:
        tables = solver.solve(deals)
    return deals, {deal_id(owner): table for owner, table in zip(deals, tables)}


def test_one_label_per_distinct_deal_with_cross_check_and_quarantine(tmp_path, reference):
    deals, tables = reference
    deals = deals[:12]
    wrong = tables[deal_id(deals[2])].tolist()
    wrong[7] = (wrong[7] + 1) % 14  # E diamonds off by one
    partial = [None] * 20
    partial[19] = int(tables[deal_id(deals[3])][19])  # W NT only, right
    long_hand = SORTED.copy()
    long_hand[0] = 1  # E 14 cards: a deal_id, but not a deal
    stolen = deals[0]  # a deal_id that is not its owner's hash
    records = deals + [deals[2], deals[5], deals[5], long_hand, stolen]
    record_ids = write_records(
        tmp_path / "records" / "a.parquet", records,
        dd_tables={2: wrong, 3: partial, 12: tables[deal_id(deals[2])].tolist()},
        owners_override={15: (long_hand, deal_id(long_hand)), 16: (stolen, 12345)},
    )
    no_deal = BoardRecord("b.parquet", "pbn", 0, 1)  # a record without a deal
    pq.write_table(pa.Table.from_pylist([records_row(no_deal, 1)], schema=RECORDS), tmp_path / "records" / "b.parquet")

    summary = label(tmp_path / "records", tmp_path / "dd", workers=2)

    found = labels_of(tmp_path / "dd")
    assert set(found) == {deal_id(owner) for owner in deals}
    for deal, row in found.items():
        assert row["dd_tricks"] == tables[deal].tolist()
        pars = par_all(np.array(row["dd_tricks"]).reshape(4, 5))
        assert row["par_score"] == [par.score for par in pars]
        assert len(row["par_contracts"]) == 16 and all(row["par_contracts"])
        assert (row["solver"], row["solver_version"]) == ("dds", summary["solver_version"])
    mismatches = read_folder(tmp_path / "dd" / "mismatches")
    assert [(row["record_id"], row["cells"]) for row in mismatches] == [(record_ids[2], [7])]
    assert mismatches[0]["given"] == wrong and mismatches[0]["dd_tricks"] == tables[deal_id(deals[2])].tolist()
    quarantine = {row["deal_id"]: row for row in read_folder(tmp_path / "dd" / "quarantine")}
    assert quarantine[deal_id(long_hand)]["reason"] == "wrong_hand_size"
    assert quarantine[12345]["reason"] == "deal_id_mismatch"
    assert summary["records_read"] == 18 and summary["records_without_deal_id"] == 1
    assert summary["deals_in"] == 14 and summary["to_solve"] == summary["solved"] == 12
    assert summary["quarantined_by_reason"] == {"deal_id_mismatch": 1, "wrong_hand_size": 1}
    assert summary["mismatched_records"] == 1 and summary["already_labelled"] == 0
    assert summary["solver_calls"] >= 1 and summary["startup_seconds"] > 0
    assert json.loads((tmp_path / "dd" / "summary.json").read_text()) == summary
    assert summary["schema_version"] == SCHEMA_VERSION
    for path in (tmp_path / "dd").glob("*/*.parquet"):  # labels, quarantine, mismatches
        assert pq.read_schema(path).metadata[b"bridgeflow_schema_version"] == str(SCHEMA_VERSION).encode(), path


def test_dds_never_sees_an_invalid_deal(tmp_path, reference):
    """Owner rows written straight into a records shard, past ingest's checks: each is quarantined
    with a reason, the good deals beside them are labelled and the job finishes."""
    deals, tables = reference
    good = deals[:3]
    seat_seven = SORTED.copy()
    seat_seven[10] = 7
    unknown_card = SORTED.copy()
    unknown_card[51] = -1
    all_north = np.zeros(52, np.int8)
    bad = {"seat_seven": seat_seven, "unknown_card": unknown_card, "all_north": all_north,
           "short": SORTED[:51], "long": np.concatenate([SORTED, [0]]).astype(np.int8)}
    forced_ids = {name: 1000 + k for k, name in enumerate(bad)}
    write_records(tmp_path / "records" / "a.parquet", [*good, *[SORTED] * len(bad)],
                  owners_override={len(good) + k: (owner, forced_ids[name]) for k, (name, owner) in enumerate(bad.items())})

    summary = label(tmp_path / "records", tmp_path / "dd", workers=2)

    assert set(labels_of(tmp_path / "dd")) == {deal_id(owner) for owner in good}
    quarantined = {row["deal_id"]: row for row in read_folder(tmp_path / "dd" / "quarantine")}
    assert sorted(quarantined) == sorted(forced_ids.values())
    assert all(row["reason"] and row["message"] for row in quarantined.values())
    assert summary["solved"] == len(good) and sum(summary["quarantined_by_reason"].values()) == len(bad)


def test_reruns_solve_only_new_deals(tmp_path, reference):
    deals, tables = reference
    write_records(tmp_path / "records" / "a.parquet", deals[:10])
    first = label(tmp_path / "records", tmp_path / "dd")
    assert first["solved"] == 10

    again = label(tmp_path / "records", tmp_path / "dd")
    assert (again["solved"], again["solver_calls"], again["already_labelled"]) == (0, 0, 10)
    assert again["solver_version"] is None  # no solver process was started

    wrong = tables[deal_id(deals[6])].tolist()
    wrong[0] = 13 - wrong[0]  # N clubs: never 6.5, so always wrong
    write_records(tmp_path / "records" / "b.parquet", deals[5:14], dd_tables={1: wrong})  # deals[6]
    third = label(tmp_path / "records", tmp_path / "dd")
    assert (third["deals_in"], third["already_labelled"], third["solved"]) == (14, 10, 4)
    assert third["mismatched_records"] == 1  # checked against the stored label, not re-solved
    assert set(labels_of(tmp_path / "dd")) == {deal_id(owner) for owner in deals[:14]}
    assert len(list((tmp_path / "dd" / "labels").glob("*.parquet"))) == 1  # compacted


def test_store_labels_are_reused_and_copied(tmp_path, reference):
    deals, tables = reference
    write_records(tmp_path / "first" / "a.parquet", deals[:6])
    label(tmp_path / "first", tmp_path / "store")
    write_records(tmp_path / "second" / "a.parquet", deals[3:9], dd_tables={0: [0] * 20})
    summary = label(tmp_path / "second", tmp_path / "dd", "--store", str(tmp_path / "store"))
    assert (summary["copied_from_store"], summary["solved"]) == (3, 3)
    assert summary["mismatched_records"] == 1  # a store label is cross-checked like our own
    found = labels_of(tmp_path / "dd")
    assert set(found) == {deal_id(owner) for owner in deals[3:9]}
    assert all(found[deal]["dd_tricks"] == tables[deal].tolist() for deal in found)
    assert len(labels.read_labels(tmp_path / "dd", tmp_path / "store")) == 9


def test_a_compact_frozen_version_is_a_store_whose_copied_rows_get_their_par_back(tmp_path, reference):
    """Frozen versions keep owner and table only; ddlabel --store derives deal_id and recomputes par."""
    deals, tables = reference
    write_records(tmp_path / "first" / "a.parquet", deals[:4])
    label(tmp_path / "first", tmp_path / "store")
    labels.freeze([tmp_path / "store"], "test", tmp_path / "frozen")
    write_records(tmp_path / "second" / "a.parquet", deals[:4])
    summary = label(tmp_path / "second", tmp_path / "dd", "--store", str(tmp_path / "frozen"))
    assert (summary["copied_from_store"], summary["solved"]) == (4, 0)
    original, copied = labels_of(tmp_path / "store"), labels_of(tmp_path / "dd")
    assert copied.keys() == original.keys()
    for deal, row in copied.items():
        assert {k: row[k] for k in ("dd_tricks", "par_score", "par_contracts")} == \
               {k: original[deal][k] for k in ("dd_tricks", "par_score", "par_contracts")}


def test_sigkill_mid_run_loses_no_committed_batch(tmp_path):
    deals = cheap_deals(60, swaps=24, seed=7)  # tens of ms each: long enough to be killed mid-run
    write_records(tmp_path / "records" / "a.parquet", deals)
    out = tmp_path / "dd"
    command = [sys.executable, "-m", "bridgeflow.pipelines.ddlabel", "--records", str(tmp_path / "records"),
               "--out", str(out), "--workers", "2", "--max-batch", "1"]
    process = subprocess.Popen(command, cwd=REPO, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while len(list(out.glob("labels/part-*.parquet"))) < 5 and process.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)  # the driver, its Beam workers and their DDS processes
    process.wait()
    assert not (out / "summary.json").exists(), "the run finished before it could be killed"
    committed = labels.read_labels(out)
    assert 5 <= committed.num_rows < len(deals)
    for path in (out / "labels").glob("*.parquet"):  # whatever is visible is whole
        assert pq.read_table(path).num_rows > 0

    resumed = label(tmp_path / "records", out, workers=2)
    assert resumed["already_labelled"] >= committed.num_rows
    assert resumed["solved"] == len(deals) - resumed["already_labelled"] < len(deals)
    uninterrupted = label(tmp_path / "records", tmp_path / "reference")
    assert uninterrupted["solved"] == len(deals)
    assert labels_of(out) == labels_of(tmp_path / "reference")  # same rows, each deal once
    assert sorted(path.name.split("-")[0] for path in (out / "labels").glob("*")) == ["shard"]


def fake_labels(ids, solver: str = "dds") -> pa.Table:
    rows = [{"deal_id": i, "owner": SORTED.tolist(), "dd_tricks": [7] * 20, "par_score": [0] * 16,
             "par_contracts": ["pass"] * 16, "solver": solver, "solver_version": "test"} for i in ids]
    return pa.Table.from_pylist(rows, schema=DD_LABELS)


def test_compaction_is_atomic_under_a_kill_at_any_step(tmp_path, monkeypatch):
    store = labels.LabelStore(tmp_path)
    store.recover()
    for name, ids in (("part-a.parquet", [1, 2]), ("part-b.parquet", [2, 3])):
        pq.write_table(fake_labels(ids), store.dir / name)
    assert sorted(labels.read_labels(tmp_path).column("deal_id").to_pylist()) == [1, 2, 3]

    # Killed after the new shards are written, before the journal is committed: nothing changes.
    real_replace = os.replace

    def killed_at_commit(source, target):
        if Path(target).name == labels.LabelStore.JOURNAL:
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(labels.os, "replace", killed_at_commit)
    with pytest.raises(KeyboardInterrupt):
        store.compact(store.parts(), 2)
    monkeypatch.undo()
    assert len(list(store.dir.glob(".*"))) == 3  # two new shards and the journal, all temporary
    store.recover()
    assert [path.name for path in store.files()] == ["part-a.parquet", "part-b.parquet"]
    assert not list(store.dir.glob(".*"))

    # Killed after the journal commits, half-way through applying it: recovery finishes the job.
    store.compact(store.parts(), 2)
    shards = store.files()
    assert [path.name[:6] for path in shards] == ["shard-", "shard-"]
    assert pa.concat_tables([pq.read_table(path) for path in shards]).column("deal_id").to_pylist() == [1, 2, 3]
    pq.write_table(fake_labels([1, 2]), store.dir / "part-a.parquet")  # an old part not yet deleted
    os.replace(shards[1], store.dir / f".{shards[1].name}.tmp")  # a new shard not yet renamed in
    journal = {"new": [path.name for path in shards], "old": ["part-a.parquet", "part-b.parquet"]}
    (store.dir / ".compaction.json").write_text(json.dumps(journal))
    store.recover()
    assert store.files() == shards
    assert labels.read_labels(tmp_path).column("deal_id").to_pylist() == [1, 2, 3]


def test_compacting_the_same_labels_gives_the_same_files(tmp_path):
    """Shards are named by their content, so a rerun of the stage leaves DVC's folder hash alone."""
    names = []
    for run, order in (("one", (("part-a", [1, 2]), ("part-b", [2, 3]))), ("two", (("part-x", [3]), ("part-y", [2, 1])))):
        store = labels.LabelStore(tmp_path / run)
        store.recover()
        for name, ids in order:
            pq.write_table(fake_labels(ids), store.dir / f"{name}.parquet")
        store.compact(store.parts(), 2)
        names.append([(path.name, path.read_bytes()) for path in store.files()])
    assert names[0] == names[1] and len(names[0]) == 2
    other = labels.LabelStore(tmp_path / "three")
    other.recover()
    pq.write_table(fake_labels([1, 2, 3], solver="nn-dda"), other.dir / "part-a.parquet")
    other.compact(other.parts(), 2)
    assert not {path.name for path in other.files()} & {name for name, _ in names[0]}  # other labels, other names


def test_an_exact_label_supersedes_an_estimate_of_the_same_deal(tmp_path):
    store = labels.LabelStore(tmp_path)
    store.recover()
    pq.write_table(fake_labels([1, 2], solver="nn-dda"), store.dir / "part-a.parquet")  # read first
    pq.write_table(fake_labels([2, 3]), store.dir / "part-b.parquet")
    expected = {1: "nn-dda", 2: "dds", 3: "dds"}
    assert {row["deal_id"]: row["solver"] for row in labels.read_labels(tmp_path).to_pylist()} == expected
    store.compact(store.parts(), 10)
    assert {row["deal_id"]: row["solver"] for row in labels_of(tmp_path).values()} == expected


@pytest.fixture(scope="module")
def nndda_model(tmp_path_factory) -> Path:
    """An untrained NN-DDA saved as the trainer saves one: its estimates are wrong, which shows
    they are never taken for exact tables."""
    folder = tmp_path_factory.mktemp("nndda")
    torch.manual_seed(0)
    model = NNDDA(NNDDAConfig(hidden=16, layers=1))
    torch.save({"model_config": vars(model.config), "model": model.state_dict()}, folder / "nndda.pt")
    return folder


def test_estimates_are_marked_not_cross_checked_and_superseded_by_an_exact_run(tmp_path, reference, nndda_model):
    deals, tables = reference
    deals = deals[:6]
    source = tables[deal_id(deals[0])].tolist()  # right
    wrong = tables[deal_id(deals[1])].tolist()
    wrong[0] = 13 - wrong[0]
    write_records(tmp_path / "records" / "a.parquet", deals, dd_tables={0: source, 1: wrong})
    estimate = ("--estimator", "nn", "--nndda", str(nndda_model))
    estimator = DDEstimator.load(nndda_model / "nndda.pt")
    guesses = estimator.tables(np.stack(deals)).reshape(-1, 20)
    assert guesses[0].tolist() != source

    first = label(tmp_path / "records", tmp_path / "dd", *estimate)
    assert (first["estimated"], first["solved"], first["solver_calls"]) == (6, 0, 0)
    assert first["deals_per_second"] > 0  # estimates per second of the whole job
    assert (first["solver"], first["solver_version"]) == ("nn-dda", estimator.solver_version)
    found = labels_of(tmp_path / "dd")
    for owner, guess in zip(deals, guesses):
        row = found[deal_id(owner)]
        assert (row["solver"], row["solver_version"]) == ("nn-dda", estimator.solver_version)
        assert row["dd_tricks"] == guess.tolist()
        assert row["par_score"] == [par.score for par in par_all(guess.reshape(4, 5))]
    assert first["mismatched_records"] == 0 and not read_folder(tmp_path / "dd" / "mismatches")

    again = label(tmp_path / "records", tmp_path / "dd", *estimate)
    assert (again["estimated"], again["already_estimated"], again["already_labelled"]) == (0, 6, 0)

    exact = label(tmp_path / "records", tmp_path / "dd")
    assert (exact["solved"], exact["already_labelled"], exact["mismatched_records"]) == (6, 0, 1)
    assert {deal: (row["solver"], row["dd_tricks"]) for deal, row in labels_of(tmp_path / "dd").items()} == {
        deal_id(owner): ("dds", tables[deal_id(owner)].tolist()) for owner in deals}

    after = label(tmp_path / "records", tmp_path / "dd", *estimate)
    assert (after["estimated"], after["already_labelled"], after["mismatched_records"]) == (0, 6, 1)


def test_split_labels_only_that_splits_deals(tmp_path, reference):
    deals, tables = reference
    in_test = {deal_id(owner) for owner in deals if split_of(deal_id(owner)) == "test"}
    assert 0 < len(in_test) < len(deals)
    long_hand = SORTED.copy()
    long_hand[0] = 1  # not a deal, but outside the split: not quarantined
    write_records(tmp_path / "records" / "a.parquet", deals + [long_hand],
                  owners_override={len(deals): (long_hand, 1005)})
    summary = label(tmp_path / "records", tmp_path / "dd", "--split", "test")
    assert set(labels_of(tmp_path / "dd")) == in_test
    assert (summary["split"], summary["solved"]) == ("test", len(in_test))
    assert summary["deals_outside_split"] == len(deals) + 1 - len(in_test)
    assert summary["quarantined"] == 0 and not read_folder(tmp_path / "dd" / "quarantine")


def test_progress_line_names_deals_rate_and_eta(tmp_path, caplog):
    store = labels.LabelStore(tmp_path)
    store.recover()
    work = tmp_path / "_work" / "run1"
    work.mkdir(parents=True)
    plan = work / "plan.json"
    plan.write_text(json.dumps({"deals": 1000, "batches": 25}))
    os.utime(plan, (time.time() - 100, time.time() - 100))  # solving started 100 s ago
    monitor = ddlabel.Monitor(store, work, rows_per_shard=1000, interval=60)
    # the first poll comes an interval after the start: the rate counts from the plan, not from it
    pq.write_table(fake_labels(range(200)), store.dir / "part-run1-0000000-n200.parquet")
    pq.write_table(fake_labels(range(200, 400)), store.dir / "part-run1-0000001-n200.parquet")
    with caplog.at_level(logging.INFO, logger="bridgeflow.ddlabel"):
        monitor.poll()
    line = caplog.records[-1].getMessage()
    assert "400/1000 deals solved" in line and "4.00 deals/s" in line and "ETA 150 s" in line


def test_progress_line_of_an_nn_run_without_a_plan(tmp_path, caplog):
    store = labels.LabelStore(tmp_path)
    store.recover()
    work = tmp_path / "_work" / "run1"
    work.mkdir(parents=True)
    monitor = ddlabel.Monitor(store, work, rows_per_shard=100000, interval=60)
    with caplog.at_level(logging.INFO, logger="bridgeflow.ddlabel"):
        monitor.poll()  # nothing committed yet: no line
        assert not caplog.records
        pq.write_table(fake_labels(range(3000)), store.dir / "part-run1-0000000-n3000.parquet")
        monitor.started -= 2
        monitor.poll()
    line = caplog.records[-1].getMessage()
    assert "3000 deals estimated" in line and "ETA" not in line


@pytest.mark.parametrize("damage", ["truncated", "not parquet", "empty file"])
def test_a_damaged_records_shard_is_skipped_and_listed_and_the_good_ones_labelled(tmp_path, reference, damage):
    deals, tables = reference
    write_records(tmp_path / "records" / "a.parquet", deals[:3])
    write_records(tmp_path / "records" / "b.parquet", deals[3:6])
    bad = tmp_path / "records" / "b.parquet"
    data = bad.read_bytes()
    bad.write_bytes({"truncated": data[:len(data) // 2], "not parquet": b"an error page, not a shard\n" * 40,
                     "empty file": b""}[damage])
    summary = label(tmp_path / "records", tmp_path / "dd")
    assert set(labels_of(tmp_path / "dd")) == {deal_id(owner) for owner in deals[:3]}
    (skipped,) = summary["skipped_files"]
    assert skipped["file"] == str(bad) and skipped["why"].startswith("not a readable Parquet file: ")
    assert summary["records_read"] == 3
    assert json.loads((tmp_path / "dd" / "summary.json").read_text())["skipped_files"] == [skipped]


def test_a_shard_of_another_schema_among_the_records_is_refused_naming_it(tmp_path, reference, capsys):
    from bridgeflow.cli import main
    from bridgeflow.dataset.schema import QUARANTINE

    deals, _ = reference
    write_records(tmp_path / "records" / "a.parquet", deals[:3])
    pq.write_table(QUARANTINE.empty_table(), tmp_path / "records" / "q.parquet")
    status = main(["ddlabel", "--records", str(tmp_path / "records"), "--out", str(tmp_path / "dd"), "--workers", "1"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(
        f"bridgeflow ddlabel: error: --records: 1 of 2 Parquet files are not records shards: "
        f"{tmp_path / 'records' / 'q.parquet'} (no column ")
    assert not (tmp_path / "dd").exists()


def test_a_shard_damaged_inside_is_listed_and_the_run_finishes(tmp_path, reference):
    """Its footer reads (the check before the job passes it), a data page does not: the job lists
    it with why instead of failing, and labels every other shard."""
    deals, _ = reference
    write_records(tmp_path / "records" / "a.parquet", deals[:3])
    damaged = tmp_path / "records" / "b.parquet"
    write_records(damaged, deals[3:6])
    data = bytearray(damaged.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    for offset in range(4, len(data) - footer):  # every data page overwritten, the footer kept
        data[offset] = 0x55
    damaged.write_bytes(bytes(data))
    summary = label(tmp_path / "records", tmp_path / "dd")
    assert set(labels_of(tmp_path / "dd")) == {deal_id(owner) for owner in deals[:3]}
    (skipped,) = summary["skipped_files"]
    assert skipped["file"] == str(damaged) and skipped["why"].startswith("not readable Parquet after 0 records")
