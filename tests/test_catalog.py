"""The DuckDB catalog: views over the shards from any working directory, macros that agree with
the Python scoring and encodings, and a file the duckdb CLI from PyPI (1.5.x) opens."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from bridgeflow.dataset import catalog, schema, scoring
from bridgeflow.dataset.encodings import hcp_by_seat
from bridgeflow.pipelines import ingest, synth
from bridgeflow.pipelines.shards import write_table


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """40 synthetic boards ingested, a DD store with made-up tables (one deal also with an NN-DDA
    estimate in a second file), and the catalog over them."""
    root = tmp_path_factory.mktemp("catalog")
    synth.write_corpus(root / "corpus", 40, seed=11, format_name="pbn", boards_per_file=40)
    ingest.run(["--input", str(root / "corpus"), "--out", str(root / "ingest"), "--workers", "1"])
    deals = duckdb.sql(f"SELECT DISTINCT deal_id, owner FROM '{root}/ingest/records/*.parquet'").fetchall()
    rows = [{"deal_id": deal, "owner": owner, "dd_tricks": [(deal >> k) % 14 for k in range(20)],
             "par_score": list(range(16)), "par_contracts": ["x"] * 16, "solver": "dds", "solver_version": "1"}
            for deal, owner in deals]
    estimate = {**rows[0], "dd_tricks": [13] * 20, "solver": "nn-dda", "solver_version": "0"}  # sorts first
    write_table(pa.Table.from_pylist(rows, schema=schema.DD_LABELS), root / "dd" / "labels" / "part-00000.parquet")
    write_table(pa.Table.from_pylist([estimate], schema=schema.DD_LABELS), root / "dd" / "labels" / "part-00001.parquet")
    write_table(schema.DD_QUARANTINE.empty_table(), root / "dd" / "quarantine" / "empty.parquet")
    write_table(schema.DD_MISMATCHES.empty_table(), root / "dd" / "mismatches" / "empty.parquet")
    out = root / "db" / "bridge.duckdb"
    catalog.run(["--records", str(root / "ingest/records"), "--quarantine", str(root / "ingest/quarantine"),
                 "--dd", str(root / "dd"), "--out", str(out)])
    return out


def test_views_count_the_shards(built):
    with duckdb.connect(str(built), read_only=True) as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 40
        assert db.execute("SELECT count(*) FROM quarantine").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM deals").fetchone()[0] == 40
        assert db.execute("SELECT count(*) FROM dd").fetchone()[0] == 40  # the twice-written deal once
        assert db.execute("SELECT count(*) FROM dd WHERE solver <> 'dds'").fetchone()[0] == 0  # exact row wins
        assert db.execute("SELECT count(DISTINCT dd_solver) FROM contract_vs_dd").fetchone()[0] == 1


def test_macros_agree_with_precomputed_columns(built):
    with duckdb.connect(str(built), read_only=True) as db:
        rows = db.sql("SELECT owner, hcp, [hcp(owner, s) FOR s IN range(4)], shape(owner, 2), pattern(owner, 2) "
                      "FROM records").fetchall()
    for owner, hcp, macro_hcp, shape, pattern in rows:
        assert macro_hcp == hcp == hcp_by_seat(np.array(owner)).tolist()
        south = np.array(owner).reshape(4, 13) == 2
        lengths = south.sum(axis=1)[::-1]  # S, H, D, C
        assert shape == "-".join(map(str, lengths))
        assert pattern == "".join(map(str, sorted(lengths, reverse=True)))


def test_score_and_imp_macros_agree_with_python_scoring_everywhere():
    db = duckdb.connect()
    db.execute(catalog.MACROS)
    grid = list(itertools.product(range(1, 8), range(5), range(3), (False, True), range(14)))
    got = db.sql("SELECT contract_score(g[1], g[2], g[3], g[4], g[5]) FROM (SELECT unnest(?) AS g)",
                 params=[[list(g) for g in grid]]).fetchall()
    assert [r[0] for r in got] == [scoring.contract_score(*g) for g in grid]
    # the shards' int8 columns must not overflow: 7NTXX= vulnerable
    assert db.cursor().execute("SELECT contract_score(7::TINYINT, 4::TINYINT, 2::TINYINT, true, 13::TINYINT)").fetchone()[0] == 2980
    differences = list(range(-5000, 5001, 10))
    got = db.sql("SELECT imps(d) FROM (SELECT unnest(?) AS d)", params=[differences]).fetchall()
    assert [r[0] for r in got] == [scoring.imps(d) for d in differences]


def test_contract_vs_dd_uses_the_declarers_cell(built):
    with duckdb.connect(str(built), read_only=True) as db:
        rows = db.sql("SELECT c.declarer, c.contract_strain, c.dd_tricks, d.dd_tricks, c.vulnerability, c.dealer, "
                      "c.par_score_ns FROM contract_vs_dd c JOIN dd d USING (deal_id) WHERE c.contract_level > 0").fetchall()
    assert rows
    for declarer, strain, tricks, table, vul, dealer, par in rows:
        assert tricks == table[declarer * 5 + strain]
        assert par == dealer * 4 + vul


def test_duckdb_cli_opens_it_from_another_directory(built, tmp_path):
    cli = Path(sys.executable).with_name("duckdb")
    result = subprocess.run([str(cli), "-readonly", "-csv", str(built), "-c", "SELECT count(*) AS n FROM records"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["n", "40"]
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True).stdout
    assert version.startswith("v1.5")
