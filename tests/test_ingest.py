"""The ingest Beam job: planning, the parse DoFn under TestPipeline, whole runs, and resuming a
killed run."""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from bridgeflow.dataset import encodings
from bridgeflow.dataset.errors import InputError
from bridgeflow.pipelines import ingest
from bridgeflow.pipelines.ingest import InputChunk, ParseChunk
from bridgeflow.pipelines.shards import lock_output

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


def test_parse_dofn_commits_good_and_bad_records_of_a_chunk(tmp_path):
    path = tmp_path / "mixed.pbn"
    path.write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    chunk = InputChunk(str(tmp_path), "mixed.pbn", str(path), "pbn", path.stat().st_size, path.stat().st_mtime_ns)
    work = tmp_path / "work"
    stats = (str(path), "pbn", {"accepted": 1, "wrong_hand_size": 1}, {})
    with TestPipeline(runner="FnApiRunner") as pipeline:
        parsed = pipeline | beam.Create([(3, chunk)]) | beam.ParDo(ParseChunk(str(work)))
        assert_that(parsed, equal_to([3]))
    records = pq.read_table(work / "parts" / "3-records.parquet").to_pylist()
    assert [(r["board"], r["contract"], r["tricks"], r["score_ns"]) for r in records] == [(1, "7NT", 13, 1520)]
    quarantine = pq.read_table(work / "parts" / "3-quarantine.parquet").to_pylist()
    assert [(r["source_position"], r["reason"], r["field"]) for r in quarantine] == [(1, "wrong_hand_size", "Deal")]
    assert json.loads((work / "done" / "3.json").read_text()) == list(stats)
    assert ingest.done_chunks(work) == {3}


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


def test_manifest_counts_repairs_and_placeholder_results(tmp_path):
    """Boards that validate repairs are accepted, listed per record and counted per file."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    extra_pass = GOOD_BOARD.replace("7NT Pass Pass Pass", "7NT Pass Pass Pass Pass")
    placeholder = GOOD_BOARD.replace('"13"', '"0"').replace('"1"', '"2"')  # 7NT, Result "0", no play
    (inputs / "a.pbn").write_text(extra_pass + "\n" + placeholder + "\n" + GOOD_BOARD.replace('"1"', '"3"'))
    (inputs / "b.pbn").write_text(placeholder)
    out = tmp_path / "out"
    manifest = ingest.run(["--input", str(inputs), "--out", str(out), "--workers", "1"])
    entry = manifest["per_file"][str(inputs / "a.pbn")]
    assert (entry["accepted"], entry["placeholder_results"]) == (3, 1)
    assert entry["repairs"] == {"trailing_passes_dropped": 1, "placeholder_result_dropped": 1}
    assert manifest["per_file"][str(inputs / "b.pbn")]["repairs"] == {"placeholder_result_dropped": 1}
    assert manifest["repairs"] == {"placeholder_result_dropped": 2, "trailing_passes_dropped": 1}
    assert manifest["placeholder_results"] == 2
    rows = {(Path(row["source_file"]).name, row["board"]): row for row in _rows(out / "records")}
    assert rows["a.pbn", 1]["repairs"] == ["trailing_passes_dropped"] and len(rows["a.pbn", 1]["auction"]) == 4
    assert (rows["a.pbn", 1]["tricks"], rows["a.pbn", 1]["score_ns"]) == (13, 1520)
    assert rows["a.pbn", 2]["repairs"] == ["placeholder_result_dropped"]
    assert (rows["a.pbn", 2]["tricks"], rows["a.pbn", 2]["score_ns"]) == (None, None)
    assert rows["a.pbn", 3]["repairs"] is None


def openspiel_line(seed: int) -> str:
    """A passed-out board: a shuffled deal (52 card ids) and four passes (id 52)."""
    deal = list(range(52))
    random.Random(seed).shuffle(deal)
    return " ".join(map(str, deal + [52] * 4))


@pytest.fixture()
def inputs(tmp_path) -> Path:
    """A 40-line OpenSpiel file (one bad line) that --split-bytes 600 cuts into 10 chunks, and a PBN
    file with a good and a bad board: 11 chunks."""
    folder = tmp_path / "in"
    folder.mkdir()
    lines = [openspiel_line(seed) for seed in range(40)]
    lines[13] = "not a trajectory"
    (folder / "deals.txt").write_text("\n".join(lines) + "\n")
    (folder / "mixed.pbn").write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    return folder


CHUNKS = 11


def ingest_argv(inputs: Path, out: Path, workers: int = 1) -> list[str]:
    return ["--input", str(inputs), "--out", str(out), "--split-bytes", "600", "--rows-per-shard", "7",
            "--workers", str(workers)]


class Killed(Exception):
    pass


PARSER_FOR = ingest.parser_for
WRITE_JSON = ingest.write_json


def count_chunks(monkeypatch, kill_at_marker: int | None = None) -> list[str]:
    """Patches the parse DoFn (in this process: --workers 1) to record the chunks it parses, and to
    raise instead of committing marker number `kill_at_marker`, as a kill after writing that
    chunk's parts would."""
    parsed, markers = [], []

    def parser_for(format_name):
        parse = PARSER_FOR(format_name)

        def counted(data, source_file, *carried_tags):
            parsed.append(source_file)
            return parse(data, source_file, *carried_tags)
        return counted

    def write_json(path, value):
        if len(markers) == kill_at_marker:
            raise Killed
        markers.append(path)
        WRITE_JSON(path, value)

    monkeypatch.setattr(ingest, "parser_for", parser_for)
    monkeypatch.setattr(ingest, "write_json", write_json)
    return parsed


def kill_after(monkeypatch, inputs: Path, out: Path, chunks: int) -> None:
    """A run of `inputs` into `out` killed when `chunks` chunks are committed."""
    count_chunks(monkeypatch, kill_at_marker=chunks)
    with pytest.raises(RuntimeError, match="Killed"):  # Beam wraps what a DoFn raised
        ingest.run(ingest_argv(inputs, out))
    monkeypatch.undo()


def output(out: Path) -> dict:
    """Everything a run writes, byte for byte, less the seconds it took."""
    files = {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}
    for name in ("manifest.json", "summary.json"):
        content = json.loads(files[name])
        del content["seconds"]
        files[name] = content
    return files


def test_killed_run_resumes_to_the_output_of_an_uninterrupted_one(inputs, tmp_path, monkeypatch, caplog):
    whole = ingest.run(ingest_argv(inputs, tmp_path / "whole"))
    assert (whole["accepted"], whole["quarantined_by_reason"]) == (40, {"unknown_format": 1, "wrong_hand_size": 1})
    assert len(list((tmp_path / "whole" / "records").glob("*.parquet"))) == 6  # 40 rows, 7 per shard

    out = tmp_path / "killed"
    kill_after(monkeypatch, inputs, out, 4)
    assert not (out / "manifest.json").exists() and not (out / "records").exists()
    (work,) = (out / "_work").iterdir()
    assert len(list((work / "done").glob("*.json"))) == 4
    assert len(list((work / "parts").glob("*-records.parquet"))) == 5  # the 5th chunk's parts, uncommitted

    parsed = count_chunks(monkeypatch)
    with caplog.at_level(logging.INFO, logger="bridgeflow.ingest"):
        resumed = ingest.run(ingest_argv(inputs, out))
    assert f"resuming: 4 of {CHUNKS} chunks already parsed" in caplog.messages
    assert len(parsed) == CHUNKS - 4
    assert {key: value for key, value in resumed.items() if key != "seconds"} == \
        {key: value for key, value in whole.items() if key != "seconds"}
    assert output(out) == output(tmp_path / "whole")
    assert not (out / "_work").exists()


def test_a_run_killed_while_compacting_resumes_without_beam(inputs, tmp_path, monkeypatch):
    ingest.run(ingest_argv(inputs, tmp_path / "whole"))
    out = tmp_path / "out"
    compact = ingest.compact

    def killed_while_compacting(parts, directory, *args):
        compact(parts[:3], directory, *args)
        raise Killed

    monkeypatch.setattr(ingest, "compact", killed_while_compacting)
    with pytest.raises(Killed):
        ingest.run(ingest_argv(inputs, out))
    monkeypatch.undo()
    assert list(out.glob(".staging-*"))

    def build(*args):
        raise AssertionError("every chunk is committed: nothing for Beam to do")

    monkeypatch.setattr(ingest, "build", build)
    ingest.run(ingest_argv(inputs, out))
    assert output(out) == output(tmp_path / "whole")
    assert not list(out.glob(".staging-*")) and not (out / "_work").exists()


def test_a_resumed_run_writes_the_same_output_whatever_its_workers(inputs, tmp_path, monkeypatch):
    kill_after(monkeypatch, inputs, tmp_path / "one", 6)
    shutil.copytree(tmp_path / "one", tmp_path / "two")
    ingest.run(ingest_argv(inputs, tmp_path / "one", workers=1))
    ingest.run(ingest_argv(inputs, tmp_path / "two", workers=2))
    ingest.run(ingest_argv(inputs, tmp_path / "whole", workers=2))
    assert output(tmp_path / "one") == output(tmp_path / "two") == output(tmp_path / "whole")


def test_a_changed_input_discards_the_stale_work(inputs, tmp_path, monkeypatch):
    chunks, _ = ingest.plan_inputs([str(inputs)], 600)
    key = ingest.work_key(chunks, 7)
    assert ingest.work_key(chunks, 7) == key
    assert ingest.work_key(chunks, 8) != key
    pbn = inputs / "mixed.pbn"
    os.utime(pbn, ns=(pbn.stat().st_atime_ns, pbn.stat().st_mtime_ns + 1))
    chunks, _ = ingest.plan_inputs([str(inputs)], 600)
    assert ingest.work_key(chunks, 7) != key
    key = ingest.work_key(chunks, 7)
    with monkeypatch.context() as patch:
        patch.setattr(ingest, "code_fingerprint", lambda: "another parser version")
        assert ingest.work_key(chunks, 7) != key

    out = tmp_path / "out"
    kill_after(monkeypatch, inputs, out, 4)
    (stale,) = (out / "_work").iterdir()
    (out / ".staging-1234" / "records").mkdir(parents=True)  # what a run killed while compacting leaves
    pbn.write_text(GOOD_BOARD)  # the bad board is gone
    kill_after(monkeypatch, inputs, out, 0)
    (work,) = (out / "_work").iterdir()
    assert work.name != stale.name and not list(out.glob(".staging-*"))

    parsed = count_chunks(monkeypatch)
    manifest = ingest.run(ingest_argv(inputs, out))
    assert len(parsed) == CHUNKS  # nothing of the stale work is kept
    assert manifest["quarantined_by_reason"] == {"unknown_format": 1}


def test_one_run_per_output_folder(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.pbn").write_text(GOOD_BOARD)
    out = tmp_path / "out"
    out.mkdir()
    with lock_output(out, "ingest"), pytest.raises(InputError, match=f"another ingest run is writing {out}"):
        ingest.run(["--input", str(inputs), "--out", str(out), "--workers", "1"])  # while a run holds the folder
    assert ingest.run(["--input", str(inputs), "--out", str(out), "--workers", "1"])["accepted"] == 1
