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

from bridgeflow.dataset import catalog, encodings, schema, scoring
from bridgeflow.dataset.encodings import hcp_by_seat
from bridgeflow.pipelines import ingest, synth
from bridgeflow.dataset.atomic import write_table


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


def test_score_ns_agrees_with_python_scoring_and_a_passed_out_board_scores_zero():
    db = duckdb.connect()
    db.execute(catalog.MACROS)
    grid = list(itertools.product(range(1, 8), range(5), range(3), range(4), range(4), range(14)))
    got = db.sql("SELECT score_ns(g[1], g[2], g[3], g[4], g[5], g[6]) FROM (SELECT unnest(?) AS g)",
                 params=[[list(g) for g in grid]]).fetchall()
    assert [r[0] for r in got] == [scoring.score_ns(*g) for g in grid]
    # a passed-out board has no strain, declarer or tricks (the shards store NULL): it scores 0
    assert db.execute("SELECT contract_score(0, NULL, NULL, NULL, NULL), score_ns(0, NULL, NULL, NULL, NULL, NULL)").fetchone() == (0, 0)


def test_encoding_macros_agree_with_python_encodings():
    db = duckdb.connect()
    db.execute(catalog.MACROS)
    assert db.execute("SELECT [call_name(c) FOR c IN range(38)]").fetchone()[0] == [encodings.call_name(c) for c in range(38)]
    assert db.execute("SELECT [seat_name(s) FOR s IN range(4)]").fetchone()[0] == list(encodings.SEATS)
    assert db.execute("SELECT [strain_name(s) FOR s IN range(5)]").fetchone()[0] == list(encodings.STRAINS)
    pairs = list(itertools.product(range(4), range(4)))
    got = db.execute("SELECT [is_vulnerable(p[1], p[2]) FOR p IN ?]", [[list(p) for p in pairs]]).fetchone()[0]
    assert got == [encodings.is_vulnerable(vul, seat) for vul, seat in pairs]
    table = [(k * 3) % 14 for k in range(20)]
    cells = list(itertools.product(range(4), range(5)))
    got = db.execute("SELECT [dd_tricks_for(?::TINYINT[], c[1], c[2]) FOR c IN ?]",
                     [table, [list(c) for c in cells]]).fetchone()[0]
    assert got == [table[declarer * 5 + strain] for declarer, strain in cells]


def test_hand_macros_count_only_known_cards_of_a_partial_deal():
    owner = np.repeat(np.arange(4), 13)[np.random.default_rng(5).permutation(52)].astype(np.int8)
    owner[owner == 1] = -1  # East's hand unknown (a PBN '-' hand)
    db = duckdb.connect()
    db.execute(catalog.MACROS)
    hcp, lengths = db.execute("SELECT [hcp(o, s) FOR s IN range(4)], [[suit_length(o, s, u) FOR u IN range(4)] FOR s IN range(4)] "
                              "FROM (SELECT ?::TINYINT[] AS o)", [owner.tolist()]).fetchone()
    assert hcp == hcp_by_seat(owner).tolist()
    assert lengths == encodings.suit_lengths(owner).tolist()


# Arguments outside docs/conventions.md's encodings (seats 0-3, strains 0-4, suits 0-3, levels 1-7, doubled
# 0-2, tricks 0-13, calls 0-37, vulnerability 0-3, a 52-card owner of seats -1..3, a 20-cell DD
# table of 0-13 tricks), or NULL: every macro must answer NULL, never a plausible number. (A
# fractional seat, strain or call is a DuckDB type error in the macros that index a list or a range.)
OWNER = "[c // 13 FOR c IN range(52)]"
DD = "[7 FOR c IN range(20)]"
BAD_CALLS = [
    *(f"{macro}({owner}, {seat})" for macro in ("hcp", "shape", "pattern")
      for owner, seat in [("NULL", 0), ("OWNER", "NULL"), ("OWNER", 9), ("OWNER", 4), ("OWNER", 7), ("OWNER", -1),
                          ("OWNER", 1.5), ("OWNER[2:52]", 0), ("list_concat(OWNER, [0])", 0),
                          ("list_concat([4], OWNER[2:52])", 0), ("list_concat([-2], OWNER[2:52])", 0),
                          ("list_concat([NULL], OWNER[2:52])", 0), ("OWNER", 9223372036854775807)]),
    "suit_length(NULL, 0, 0)", "suit_length(OWNER, 0, 4)", "suit_length(OWNER, 0, -1)", "suit_length(OWNER, 0, NULL)",
    "suit_length(OWNER, 4, 0)", "suit_length(OWNER, NULL, 0)", "suit_length(OWNER[1:13], 0, 0)",
    *(f"seat_name({seat})" for seat in ("NULL", 4, -1, -2, -4, 9223372036854775807)),
    *(f"strain_name({strain})" for strain in ("NULL", 5, -1, -2, -5)),
    *(f"call_name({call})" for call in ("NULL", 38, 99, -1, -3, 9223372036854775807)),
    *(f"is_vulnerable({vul}, {seat})" for vul, seat in [(9, 0), (4, 1), (-1, 0), ("NULL", 0), (1.5, 0), (0, 4),
                                                        (3, -1), (3, "NULL"), (3, 0.5)]),
    *(f"dd_tricks_for({dd}, {declarer}, {strain})" for dd, declarer, strain in
      [("DD", -1, 0), ("DD", 4, 0), ("DD", "NULL", 0), ("DD", 0, 5), ("DD", 0, -1), ("DD", 0, "NULL"),
       ("NULL", 0, 0), ("DD[1:19]", 0, 0), ("list_concat(DD, [7])", 0, 0), ("list_concat([14], DD[2:20])", 1, 0),
       ("list_concat([NULL], DD[2:20])", 1, 0)]),
    *(f"contract_score({args})" for args in [
        "8, 4, 0, false, 14", "8, 4, 0, false, 13", "-1, 4, 0, false, 7", "NULL, 4, 0, false, 7", "1.5, 4, 0, false, 7",
        "1, 5, 0, false, 7", "1, -1, 0, false, 7", "1, NULL, 0, false, 7",
        "1, 4, 5, false, 7", "1, 4, 3, false, 7", "1, 4, -1, false, 7", "1, 4, NULL, false, 7",
        "1, 4, 0, NULL, 7", "1, 4, 0, false, 20", "1, 4, 0, false, 14", "1, 4, 0, false, -1", "1, 4, 0, false, NULL",
        "127::TINYINT, 4::TINYINT, 0::TINYINT, false, 13::TINYINT", "2147483648, 4, 0, false, 13"]),
    *(f"score_ns({args})" for args in [
        "8, 4, 0, 0, 0, 14", "1, 5, 0, 0, 0, 7", "1, 4, 3, 0, 0, 7", "1, 4, 0, 0, 0, 20", "NULL, 4, 0, 0, 0, 7",
        "1, 4, 0, 4, 0, 7", "1, 4, 0, -1, 0, 7", "1, 4, 0, NULL, 0, 7", "1, 4, 0, 0, 4, 7", "1, 4, 0, 0, -1, 7",
        "1, 4, 0, 0, NULL, 7", "1, 4, 0, 0, 0, NULL", "1, 4, 0, 0.5, 0, 7"]),
    "imps(NULL)",
]


def bad_calls_query() -> str:
    """The indices of BAD_CALLS that do not give NULL."""
    cases = " UNION ALL ".join(f"SELECT {i} AS i, ({call.replace('OWNER', OWNER).replace('DD', DD)}) IS NULL AS is_null"
                               for i, call in enumerate(BAD_CALLS))
    return f"SELECT i FROM ({cases}) WHERE NOT is_null ORDER BY i"


def test_macros_give_null_for_bad_arguments_in_python_duckdb(built):
    with duckdb.connect(str(built), read_only=True) as db:
        not_null = [BAD_CALLS[i] for (i,) in db.execute(bad_calls_query()).fetchall()]
    assert not_null == []


def test_macros_give_null_for_bad_arguments_in_the_duckdb_cli(built):
    cli = Path(sys.executable).with_name("duckdb")
    result = subprocess.run([str(cli), "-readonly", "-csv", str(built), "-c", bad_calls_query()],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    header, *indices = result.stdout.split()
    assert header == "i"
    assert [BAD_CALLS[int(i)] for i in indices] == []


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


def test_a_damaged_shard_is_left_out_and_listed_and_the_good_ones_catalogued(built, tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    source = built.parents[1] / "ingest" / "records"
    for path in source.glob("*.parquet"):
        (records / path.name).write_bytes(path.read_bytes())
    (records / "part-99999.parquet").write_bytes((records / "part-00000.parquet").read_bytes()[:500])  # truncated
    out = tmp_path / "bridge.duckdb"
    catalog.run(["--records", str(records), "--quarantine", str(built.parents[1] / "ingest" / "quarantine"),
                 "--out", str(out)])
    with duckdb.connect(str(out), read_only=True) as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 40
        ((view, file, why),) = db.execute("SELECT * FROM skipped_shards").fetchall()
    assert (view, file) == ("records", str(records / "part-99999.parquet"))
    assert why.startswith("not a readable Parquet file")


def test_a_quarantine_shard_among_the_records_is_refused_naming_it(built, tmp_path, capsys):
    from bridgeflow.cli import main

    records = tmp_path / "records"
    records.mkdir()
    for path in (built.parents[1] / "ingest" / "records").glob("*.parquet"):
        (records / path.name).write_bytes(path.read_bytes())
    odd = records / "from-quarantine.parquet"
    odd.write_bytes(next((built.parents[1] / "ingest" / "quarantine").glob("*.parquet")).read_bytes())
    status = main(["catalog", "--records", str(records), "--quarantine", str(built.parents[1] / "ingest" / "quarantine"),
                   "--out", str(tmp_path / "bridge.duckdb")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith(f"bridgeflow catalog: error: --records {records}: 1 of 2 Parquet files are not records "
                          f"shards: {odd} (no column ")
    assert not (tmp_path / "bridge.duckdb").exists()
