"""The labeller against known DD results (shared/data/oracle, see its README): DDS's own regression
tables and Xue's independent solver must come out exactly; endgame positions are not deals; a
hand record whose tables were corrupted (Camrose boards 33-160) is flagged board by board.

CI runs a stratified sample of ~300 oracle deals (all of largest.txt) plus the 160 Camrose
boards; `pytest -m slow tests/test_dd_oracle.py` checks all ~7,700 deals (tens of CPU-minutes)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset import ddformats
from bridgeflow.dataset.encodings import deal_id, owner_from_hands
from bridgeflow.dataset.labels import read_labels
from bridgeflow.dataset.pbn import parse_pbn
from bridgeflow.dataset.record import BoardRecord, Reason, RecordError, Rejected
from bridgeflow.dataset.schema import RECORDS, record_id, records_row
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines import ddlabel

# Every oracle source with the number of deals the CI sample takes from it (None: all).
SAMPLE = {
    "dds_hands/largest.txt": None,
    "dds_hands/list1.txt": None,
    "dds_hands/list2.txt": None,
    "dds_hands/list10.txt": None,
    "dds_hands/list100.txt": 20,
    "dds_hands/list300.txt": 30,
    "dds_hands/list1000.txt": 60,
    "dds_hands/sol10.txt": None,
    "macroxue_bridge_solver/comparison/results.5k_deals.txt": 80,
    "macroxue_bridge_solver/1k_deals": 30,
    "macroxue_bridge_solver/new_deals": 15,
    "macroxue_bridge_solver/fixed_deals": 5,
    # By name, the quickest: the others take DDS 3 s to minutes each (all are in the slow test).
    "macroxue_bridge_solver/hard_deals": ("deal.1", "deal.3", "deal.5", "deal.8", "deal.18"),
    "macroxue_bridge_solver/long_deals": ("deal.01", "deal.02", "deal.07"),
    "macroxue_bridge_solver/old_deals": None,
}
ALL = dict.fromkeys([*SAMPLE, "dds_hands/thomas1.txt"])  # thomas2.txt: DDS needs > 5 minutes
ENTRIES = {  # what each source holds (records + not-a-deal positions)
    "dds_hands/largest.txt": 21, "dds_hands/list1.txt": 1, "dds_hands/list2.txt": 2, "dds_hands/list10.txt": 10,
    "dds_hands/list100.txt": 100, "dds_hands/list300.txt": 300, "dds_hands/list1000.txt": 1000,
    "dds_hands/sol10.txt": 10, "dds_hands/thomas1.txt": 1,
    "macroxue_bridge_solver/comparison/results.5k_deals.txt": 5000, "macroxue_bridge_solver/1k_deals": 1000,
    "macroxue_bridge_solver/new_deals": 200, "macroxue_bridge_solver/fixed_deals": 25,
    "macroxue_bridge_solver/hard_deals": 19, "macroxue_bridge_solver/long_deals": 14,
    "macroxue_bridge_solver/old_deals": 19,
}
CAMROSE = "pbn_with_dd/lorserker_ben/Camrose24_1.pbn"


def load_source(oracle: Path, name: str) -> list[BoardRecord | Rejected]:
    return list(ddformats.load(oracle / name, source_file=name))


def pick(records: list[BoardRecord], choice: int | tuple[str, ...] | None) -> list[BoardRecord]:
    """`choice` records spread evenly over the list, the named files, or all of them (None)."""
    if isinstance(choice, tuple):
        return [record for record in records if Path(record.source_file).name in choice]
    if choice is None or choice >= len(records):
        return records
    return [records[int(index)] for index in np.linspace(0, len(records) - 1, choice)]


def partial_owner(path: Path) -> np.ndarray | None:
    """An endgame position as an owner (-1 for cards not in it), if its diagram is regular."""
    try:
        return owner_from_hands(ddformats.parse_diagram(path.read_text(encoding="utf-8").splitlines()))
    except RecordError:
        return None


def build_records(oracle: Path, sources: dict, path: Path) -> dict:
    """Records Parquet of the chosen oracle deals, the Camrose boards and the endgame positions
    (given a deal_id as if an upstream stage had let them through); returns what went in."""
    rows, oracle_records, camrose, positions = [], {}, {}, {}

    def add(record: BoardRecord, forced_deal_id: int | None = None) -> int:
        row = records_row(record, record_id("oracle", record.source_file, record.source_position))
        if forced_deal_id is not None:
            row["deal_id"] = forced_deal_id
        rows.append(row)
        return row["record_id"]

    for name, choice in sources.items():
        records = [item for item in load_source(oracle, name) if isinstance(item, BoardRecord)]
        for record in pick(records, choice):
            oracle_records[add(record)] = record
    for item in parse_pbn((oracle / CAMROSE).read_bytes(), CAMROSE):
        record = check(item) if isinstance(item, BoardRecord) else item
        assert isinstance(record, BoardRecord), str(record)
        camrose[add(record)] = record.board
    for file in sorted((oracle / "macroxue_bridge_solver/old_deals").glob("squeeze.*")):
        owner = partial_owner(file)
        if owner is not None:
            record = BoardRecord(f"old_deals/{file.name}", "macroxue", 0, 1, owner=owner)
            positions[deal_id(owner)] = add(record, forced_deal_id=deal_id(owner))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORDS), path)
    return {"oracle": oracle_records, "camrose": camrose, "positions": positions}


def run_labeller(tmp: Path, oracle: Path, sources: dict) -> dict:
    given = build_records(oracle, sources, tmp / "records" / "oracle.parquet")
    summary = ddlabel.run(["--records", str(tmp / "records"), "--out", str(tmp / "dd"),
                           "--workers", str(os.cpu_count() or 1)])
    labels = {row["deal_id"]: row for row in read_labels(tmp / "dd").to_pylist()}
    mismatches = [row for path in sorted((tmp / "dd" / "mismatches").glob("*.parquet"))
                  for row in pq.read_table(path).to_pylist()]
    quarantine = [row for path in sorted((tmp / "dd" / "quarantine").glob("*.parquet"))
                  for row in pq.read_table(path).to_pylist()]
    return {**given, "summary": summary, "labels": labels, "mismatches": mismatches, "quarantine": quarantine}


def assert_reproduced(result: dict) -> None:
    """Every oracle table equals the labeller's, cell for cell, and no oracle record mismatches."""
    for rid, record in result["oracle"].items():
        label = result["labels"][deal_id(record.owner)]
        assert label["dd_tricks"] == record.dd_tricks, f"{record.source_file} #{record.source_position}"
    assert not [row for row in result["mismatches"] if row["record_id"] in result["oracle"]]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory, oracle_data):
    return run_labeller(tmp_path_factory.mktemp("oracle"), oracle_data, SAMPLE)


def test_loaders_read_every_oracle_source(oracle_data):
    for name, entries in ENTRIES.items():
        items = load_source(oracle_data, name)
        assert len(items) == entries, name
        records = [item for item in items if isinstance(item, BoardRecord)]
        assert all(len(record.dd_tricks) == 20 and None not in record.dd_tricks for record in records), name
        rejected = [item for item in items if isinstance(item, Rejected)]
        if name.endswith("old_deals"):
            assert sorted(Path(item.source_file).name for item in rejected) == [f"squeeze.{n}" for n in range(1, 6)]
            assert {item.reason for item in rejected} == {Reason.NOT_A_DEAL}
        else:
            assert not rejected, [str(item) for item in rejected]


def test_sample_of_oracle_tables_is_reproduced_exactly(sample_run):
    assert len(sample_run["oracle"]) >= 290
    files = {record.source_file for record in sample_run["oracle"].values()}
    assert all(any(file == name or file.startswith(name + "/") for file in files) for name in SAMPLE)
    assert sum(record.source_file == "dds_hands/largest.txt" for record in sample_run["oracle"].values()) == 21
    assert_reproduced(sample_run)


def test_par_matches_dds_dealer_par(sample_run):
    """DDS's PAR2 line: North-South's par score for the listed dealer and vulnerability."""
    checked = 0
    for record in sample_run["oracle"].values():
        if "PAR2" in record.tags:
            score = int(record.tags["PAR2"].split('"')[1])
            label = sample_run["labels"][deal_id(record.owner)]
            assert label["par_score"][record.dealer * 4 + record.vulnerability] == score, record.raw_text
            checked += 1
    assert checked >= 100


def test_endgame_positions_are_quarantined_as_not_a_deal(sample_run):
    assert len(sample_run["positions"]) >= 3  # the regular diagrams; the loader rejects all five
    quarantined = {row["deal_id"]: row["reason"] for row in sample_run["quarantine"]}
    assert {deal: quarantined.get(deal) for deal in sample_run["positions"]} == dict.fromkeys(
        sample_run["positions"], "not_a_deal")
    assert not set(sample_run["positions"]) & set(sample_run["labels"])


def test_camrose_corrupted_tables_are_flagged_board_by_board(sample_run):
    flagged = {sample_run["camrose"][row["record_id"]] for row in sample_run["mismatches"]
               if row["record_id"] in sample_run["camrose"]}
    assert flagged == set(range(33, 161))
    for row in sample_run["mismatches"]:  # every flagged cell is one the corruption set to 1
        assert all(row["given"][cell] == 1 and row["dd_tricks"][cell] < 7 for cell in row["cells"])


@pytest.mark.slow
def test_every_oracle_table_is_reproduced(tmp_path, oracle_data):
    result = run_labeller(tmp_path, oracle_data, ALL)
    assert len(result["oracle"]) == sum(ENTRIES.values()) - 5
    assert_reproduced(result)
