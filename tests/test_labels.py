"""The DD label store's frozen versions: named by their hash, exact rows only, each deal once
across versions, readable as a store and by DuckDB."""

from __future__ import annotations

import hashlib

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset.encodings import deal_id, random_owner
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.labels import FROZEN_COMPACT_SCHEMA, dd_store_table, freeze, main, read_label_file, read_labels


def store(folder, owners, solver="dds"):
    folder.mkdir(parents=True)
    ids = np.array([deal_id(owner) for owner in owners], np.uint64)
    tables = np.arange(len(owners) * 20).reshape(-1, 4, 5) % 14
    pq.write_table(dd_store_table(ids, np.stack(owners), tables, solver=solver), folder / "labels.parquet")
    return folder


def test_a_frozen_version_is_named_by_its_hash_and_never_repeats_a_deal(tmp_path):
    owners = [random_owner(5, index) for index in range(6)]
    exact = store(tmp_path / "exact", owners[:4])
    estimated = store(tmp_path / "estimated", owners[4:], solver="nn-dda")
    out = tmp_path / "frozen"

    first = freeze([exact, estimated], "synth --seed 5", out)
    data = first.read_bytes()
    assert first.name == f"dd_labels-{hashlib.sha256(data).hexdigest()[:12]}.parquet"
    table = pq.read_table(first)
    assert table.schema.equals(FROZEN_COMPACT_SCHEMA)  # owner and table: deal_id and par are derived
    assert set(table.column("source").to_pylist()) == {"synth --seed 5"}
    read = read_label_file(first)
    ids = read.column("deal_id").to_pylist()
    assert ids == sorted(deal_id(owner) for owner in owners[:4])  # estimates are never frozen
    assert read.column("dd_tricks").to_pylist() == read_labels(exact).sort_by("deal_id").column("dd_tricks").to_pylist()
    assert read.column("par_score").null_count == 4  # ddlabel computes par when it copies a row

    assert freeze([exact], "synth --seed 5", out) is None  # nothing new
    more = store(tmp_path / "more", owners[2:5])  # two deals frozen already, one new
    second = freeze([more], "synth --seed 5, more", out)
    assert read_label_file(second).column("deal_id").to_pylist() == [deal_id(owners[4])]

    assert len(read_labels(out)) == 5  # the versions read together as one store
    with duckdb.connect() as db:
        assert db.execute(f"SELECT count(DISTINCT owner) FROM read_parquet('{out}/*.parquet', union_by_name=true)").fetchone()[0] == 5


def test_freezing_a_missing_store_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        main(["--store", str(tmp_path / "missing"), "--source", "x", "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
