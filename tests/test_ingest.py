"""The ingest Beam job: planning, the parse DoFn under TestPipeline, and whole runs."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from bridgeflow.dataset import encodings
from bridgeflow.pipelines import ingest
from bridgeflow.pipelines.ingest import InputChunk, ParseChunk

FIXTURES = Path(__file__).resolve().parent

GOOD_BOARD = """[Event "fixture"]
[Board "1"]
[Dealer "N"]
[Vulnerable "None"]
[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"]
[Declarer "N"]
[Contract "7NT"]
[Result "13"]
[Auction "N"]
7NT Pass Pass Pass
"""

BAD_BOARD = """[Event "fixture"]
[Board "2"]
[Dealer "E"]
[Vulnerable "NS"]
[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.543"]
"""


def test_literal_prefix():
    assert ingest.literal_prefix("data/**/*.pbn") == "data"
    assert ingest.literal_prefix("data/real/x*.lin") == "data/real"
    assert ingest.literal_prefix("data/real/a.pbn") == "data/real"
    assert ingest.literal_prefix("*.pbn") == ""


def test_line_based_files_are_split_with_positions(tmp_path):
    path = tmp_path / "big.txt"
    lines = [f"line {i}" for i in range(1000)]
    path.write_text("\n".join(lines) + "\n")
    chunks, skipped = ingest.plan_inputs([str(path)], split_bytes=500)
    assert not skipped
    assert len(chunks) > 5
    data = path.read_bytes()
    assert b"".join(data[c.start:c.end] for c in chunks) == data
    for chunk in chunks:
        first_line_text = data[chunk.start:chunk.end].split(b"\n", 1)[0].decode()
        assert first_line_text == f"line {chunk.first_line - 1}"
        assert chunk.first_position == chunk.first_line - 1


def test_unknown_extensions_are_reported_not_read(tmp_path):
    (tmp_path / "notes.md").write_text("hello")
    (tmp_path / "a.pbn").write_text(GOOD_BOARD)
    chunks, skipped = ingest.plan_inputs([str(tmp_path)], split_bytes=1 << 20)
    assert [c.relative_path for c in chunks] == ["a.pbn"]
    assert skipped == [{"file": str(tmp_path / "notes.md"), "why": "no parser for this file extension"}]


def test_parse_dofn_splits_good_and_bad_records(tmp_path):
    path = tmp_path / "mixed.pbn"
    path.write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    chunk = InputChunk(str(tmp_path), "mixed.pbn", str(path), "pbn")
    with TestPipeline(runner="FnApiRunner") as pipeline:
        parsed = (
            pipeline
            | beam.Create([chunk])
            | beam.ParDo(ParseChunk()).with_outputs(ParseChunk.QUARANTINE, ParseChunk.STATS, main="records")
        )
        assert_that(
            parsed.records | "Accepted" >> beam.Map(lambda r: (r["board"], r["contract"], r["tricks"], r["score_ns"])),
            equal_to([(1, "7NT", 13, 1520)]),
            label="records",
        )
        assert_that(
            parsed.quarantine | "Rejected" >> beam.Map(lambda r: (r["source_position"], r["reason"], r["field"])),
            equal_to([(1, "wrong_hand_size", "Deal")]),
            label="quarantine",
        )
        assert_that(
            parsed.stats,
            equal_to([(str(path), "pbn", {"accepted": 1, "wrong_hand_size": 1})]),
            label="stats",
        )


def _rows(folder: Path) -> list[dict]:
    rows = []
    for shard in sorted(folder.glob("*.parquet")):
        rows.extend(pq.read_table(shard).to_pylist())
    return sorted(rows, key=lambda row: row["record_id"])


def test_local_worker_processes_log_warnings_only(tmp_path, capfd, monkeypatch):
    """FnApiRunner's worker processes log at INFO unless told otherwise (it passes them no options)."""
    monkeypatch.delenv("PIPELINE_OPTIONS_FILE", raising=False)
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.pbn").write_text(GOOD_BOARD)
    ingest.run(["--input", str(inputs), "--out", str(tmp_path / "out"), "--workers", "2"])
    err = capfd.readouterr().err
    assert "sdk harness starting" not in err and "INFO:apache_beam" not in err, err


def test_run_writes_shards_and_manifest_and_reruns_identically(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.pbn").write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    (inputs / "b.pbn").write_text(GOOD_BOARD.replace('"1"', '"3"'))
    out = tmp_path / "out"
    manifest = ingest.run(["--input", str(inputs), "--out", str(out), "--workers", "2"])
    assert (manifest["read"], manifest["accepted"], manifest["quarantined"]) == (3, 2, 1)
    assert manifest["per_file"][str(inputs / "a.pbn")]["quarantined"] == {"wrong_hand_size": 1}
    assert json.loads((out / "manifest.json").read_text())["accepted"] == 2
    first = _rows(out / "records")
    assert {row["board"] for row in first} == {1, 3}
    assert len({row["record_id"] for row in first}) == 2
    assert first[0]["deal_id"] == encodings.deal_id(first[0]["owner"])
    quarantine = _rows(out / "quarantine")
    assert quarantine[0]["raw_text"].startswith("[Event")
    assert not list(out.glob(".staging-*"))

    ingest.run(["--input", str(inputs), "--out", str(out), "--workers", "1"])
    assert _rows(out / "records") == first
