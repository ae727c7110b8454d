"""The ingest run as a whole never stops for one file: text Arrow cannot hold, a broken link, a
file deleted meanwhile, a parser that raises; and an --input that matches nothing is a one-line
error that writes nothing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_ingest import BAD_BOARD, GOOD_BOARD, _rows, output

from bridgeflow.dataset import schema
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.record import Reason, Rejected
from bridgeflow.pipelines import ingest
from bridgeflow.pipelines.shards import ParquetFileWriter

ROOT = Path(__file__).resolve().parents[1]


def argv(inputs: Path, out: Path) -> list[str]:
    return ["--input", str(inputs), "--out", str(out), "--workers", "1"]


@pytest.fixture()
def inputs(tmp_path) -> Path:
    """Two good PBN files and one with a good and a bad board."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.pbn").write_text(GOOD_BOARD)
    (folder / "b.pbn").write_text(GOOD_BOARD.replace('"1"', '"3"'))
    (folder / "mixed.pbn").write_text(GOOD_BOARD + "\n" + BAD_BOARD)
    return folder


def test_rows_with_lone_surrogates_are_written_escaped(tmp_path):
    """Text decoded with surrogateescape holds lone surrogates, which UTF-8 cannot encode."""
    rejected = Rejected("x.lin", "lin", 0, 1, "md|3S\udc81\udc9dK|\ud800", Reason.UNDECODABLE_BYTES,
                        "bytes that are not UTF-8", "md")
    path = tmp_path / "q.parquet"
    writer = ParquetFileWriter(path, schema.QUARANTINE)
    writer.add(schema.quarantine_row(rejected, 1))
    writer.add(schema.quarantine_row(Rejected("x.lin", "lin", 1, 2, "clean", Reason.SYNTAX, "m", "f"), 2))
    writer.close()
    rows = pq.read_table(path).to_pylist()
    assert [row["raw_text"] for row in rows] == ["md|3S\\x81\\x9dK|\\ud800", "clean"]


def test_a_lin_record_with_bytes_that_are_not_utf8_is_quarantined_and_the_run_finishes(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.pbn").write_text(GOOD_BOARD)
    (inputs / "flipped.lin").write_bytes(b"pn|A,B,C,D|st||md|1SQ982H\x818DKQ763CT,SJ643HKJ7653DCAQ4,SK5HADAJT52CJ9762,|"
                                         b"rh||ah|Board 15|sv|n|mb|p|mb|p|mb|p|mb|p|pg||\n")
    out = tmp_path / "out"
    manifest = ingest.run(argv(inputs, out))
    assert (manifest["read"], manifest["accepted"], manifest["failed_files"]) == (2, 1, [])
    (row,) = _rows(out / "quarantine")
    assert "md|1SQ982H\\x818DKQ" in row["raw_text"]


def test_a_file_name_that_is_not_utf8_is_ingested(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    name = os.fsdecode(b"caf\xe9.pbn")  # as os.listdir and glob give it: with a lone surrogate
    (inputs / name).write_text(GOOD_BOARD)
    out = tmp_path / "out"
    manifest = ingest.run(argv(inputs, out))
    assert (manifest["accepted"], manifest["failed_files"]) == (1, [])
    (row,) = _rows(out / "records")
    assert row["source_file"] == str(inputs / "caf\\xe9.pbn")
    assert row["record_id"] == schema.record_id(str(inputs), name, 0)


def test_row_groups_depend_on_the_rows_not_on_how_they_came(tmp_path):
    """The same rows handed in as batches of other sizes make the same file, byte for byte."""
    rows = [schema.quarantine_row(Rejected("f", "pbn", i, i, "t", Reason.SYNTAX, "m", "f"), i) for i in range(100)]
    files = []
    for cuts in ([0, 100], [0, 40, 88, 100], [0, 7, 14, 99, 100]):
        parts = tmp_path / f"parts-{len(files)}"
        for start, end in zip(cuts, cuts[1:]):
            part = ParquetFileWriter(parts / f"{start:03d}.parquet", schema.QUARANTINE)
            for row in rows[start:end]:
                part.add(row)
            part.close()
        shard = ParquetFileWriter(tmp_path / f"shard-{len(files)}.parquet", schema.QUARANTINE, row_group_rows=32)
        for part in sorted(parts.glob("*.parquet")):
            for batch in pq.ParquetFile(part).iter_batches():
                shard.write(batch)
        shard.close()
        files.append(shard.path.read_bytes())
    assert pq.ParquetFile(tmp_path / "shard-0.parquet").metadata.num_row_groups == 4  # 32, 32, 32, 4
    assert files[0] == files[1] == files[2]


def test_a_broken_link_is_a_skipped_file(inputs, tmp_path):
    (inputs / "gone.pbn").symlink_to(tmp_path / "nowhere.pbn")
    manifest = ingest.run(argv(inputs, tmp_path / "out"))
    assert manifest["skipped_files"] == [
        {"file": str(inputs / "gone.pbn"), "why": f"unreadable: a broken symbolic link (to {tmp_path / 'nowhere.pbn'})"}]
    assert (manifest["files"], manifest["accepted"], manifest["failed_files"]) == (3, 3, [])


def test_a_file_deleted_while_the_job_runs_is_a_skipped_file(inputs, tmp_path, monkeypatch):
    build = ingest.build

    def delete_then_build(pipeline, todo, work):  # after planning, before any chunk is read
        (inputs / "b.pbn").unlink()
        return build(pipeline, todo, work)

    monkeypatch.setattr(ingest, "build", delete_then_build)
    out = tmp_path / "out"
    manifest = ingest.run(argv(inputs, out))
    assert manifest["skipped_files"] == [{"file": str(inputs / "b.pbn"), "why": "unreadable: No such file or directory"}]
    assert sorted(manifest["per_file"]) == [str(inputs / "a.pbn"), str(inputs / "mixed.pbn")]
    assert {row["board"] for row in _rows(out / "records")} == {1}
    assert manifest["accepted"] == len(_rows(out / "records")) == 2
    assert not (out / "_work").exists()


@pytest.mark.parametrize("kind", ["fifo", "socket", "link to /dev/zero"])
def test_a_special_file_is_skipped_and_never_opened(inputs, tmp_path, kind):
    """A FIFO would wait for a writer, /dev/zero never ends: both are skipped, named, before any read."""
    special = inputs / "special.lin"
    if kind == "fifo":
        os.mkfifo(special)
        why = "not a regular file: a FIFO (named pipe)"
    elif kind == "socket":
        listening = socket.socket(socket.AF_UNIX)
        listening.bind(str(special))
        why = "not a regular file: a socket"
    else:
        special.symlink_to("/dev/zero")
        why = "not a regular file: a character device, through a symbolic link to /dev/zero"
    manifest = ingest.run(["--input", str(inputs), "--input", str(special), "--out", str(tmp_path / "out"),
                           "--workers", "1"])
    assert manifest["skipped_files"] == [{"file": str(special), "why": why}]
    assert (manifest["files"], manifest["accepted"], manifest["failed_files"]) == (3, 3, [])


def test_a_special_file_put_in_a_files_place_after_planning_is_skipped_not_waited_on(inputs, tmp_path, monkeypatch):
    build = ingest.build

    def replace_then_build(pipeline, todo, work):
        (inputs / "b.pbn").unlink()
        os.mkfifo(inputs / "b.pbn")
        return build(pipeline, todo, work)

    monkeypatch.setattr(ingest, "build", replace_then_build)
    manifest = ingest.run(argv(inputs, tmp_path / "out"))
    assert manifest["skipped_files"] == [{"file": str(inputs / "b.pbn"), "why": "not a regular file: a FIFO (named pipe)"}]
    assert manifest["accepted"] == 2


@pytest.mark.parametrize("change, why", [
    ("append", "changed since it was planned (size {size} -> {grown} bytes)"),
    ("truncate", "changed since it was planned (size {size} -> 40 bytes)"),
    ("touch", "changed since it was planned (modified, same size)"),
])
def test_a_file_changed_after_planning_is_failed_never_read_in_part(inputs, tmp_path, monkeypatch, change, why):
    """Split into pieces, a file that grew or shrank after planning would give fragments: it fails
    with why, contributes no row, and the run exits non-zero after writing the others."""
    changed = inputs / "mixed.pbn"
    size = changed.stat().st_size
    build = ingest.build

    def change_then_build(pipeline, todo, work):
        if change == "append":
            with open(changed, "a") as handle:
                handle.write("\n" + GOOD_BOARD.replace('"1"', '"9"'))
        elif change == "truncate":
            os.truncate(changed, 40)
        else:
            os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 1000))
        return build(pipeline, todo, work)

    monkeypatch.setattr(ingest, "build", change_then_build)
    out = tmp_path / "out"
    with pytest.raises(SystemExit, match="1 file\\(s\\) failed"):
        ingest.run([*argv(inputs, out), "--split-bytes", "100"])  # mixed.pbn in two pieces
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["failed_files"] == [
        {"file": str(changed), "why": why.format(size=size, grown=changed.stat().st_size)
         + ": not read, a rerun reads it as it is now"}]
    assert sorted(manifest["per_file"]) == [str(inputs / "a.pbn"), str(inputs / "b.pbn")]
    assert {row["board"] for row in _rows(out / "records")} == {1, 3}
    monkeypatch.undo()
    assert ingest.run(argv(inputs, out))["failed_files"] == []  # a rerun plans and reads the file as it is


def test_a_file_cut_while_read_is_failed(tmp_path):
    path = tmp_path / "a.pbn"
    path.write_text(GOOD_BOARD)
    (chunk,) = ingest.plan_inputs([str(path)], 1 << 20)[0]
    status = path.stat()
    os.truncate(path, 10)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))  # the size alone tells
    with pytest.raises(ingest.ChangedFile, match="size"):
        ingest.read_planned(chunk)


def test_a_file_whose_parser_raises_is_failed_and_the_rest_is_written(inputs, tmp_path, monkeypatch):
    parser_for = ingest.parser_for

    def raising_for_mixed(format_name):
        parse = parser_for(format_name)

        def parse_or_raise(data, source_file):
            for item in parse(data, source_file):
                yield item  # a first record reaches the part file before the error
                if source_file.endswith("mixed.pbn"):
                    raise ZeroDivisionError("a bug in the parser")
        return parse_or_raise

    clean = tmp_path / "clean"
    (inputs / "mixed.pbn").rename(tmp_path / "mixed.pbn")
    ingest.run(argv(inputs, clean))
    (tmp_path / "mixed.pbn").rename(inputs / "mixed.pbn")

    monkeypatch.setattr(ingest, "parser_for", raising_for_mixed)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        ingest.run(argv(inputs, out))
    assert str(exit_info.value) == (
        f"bridgeflow ingest: 1 file(s) failed, listed in {out / 'manifest.json'} (failed_files); the first: "
        f"{inputs / 'mixed.pbn'}: parsing failed: ZeroDivisionError: a bug in the parser")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["failed_files"] == [
        {"file": str(inputs / "mixed.pbn"), "why": "parsing failed: ZeroDivisionError: a bug in the parser"}]
    assert sorted(manifest["per_file"]) == [str(inputs / "a.pbn"), str(inputs / "b.pbn")]
    # the failed file left no row: the output is that of a run without it
    assert {name: files for name, files in output(out).items() if "parquet" in name} == \
        {name: files for name, files in output(clean).items() if "parquet" in name}
    assert not (out / "_work").exists()

    monkeypatch.undo()  # the parser is fixed: a rerun ingests every file
    assert ingest.run(argv(inputs, out))["failed_files"] == []


def test_an_input_that_matches_nothing_is_a_one_line_error(tmp_path, inputs):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "bridgeflow.cli", "ingest", "--input", str(inputs),
                           "--input", str(tmp_path / "typo" / "*.pbn"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip() == f"bridgeflow ingest: error: --input {str(tmp_path / 'typo' / '*.pbn')!r} matches no file"
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_a_folder_without_files_matches_nothing(tmp_path):
    (tmp_path / "in" / "empty").mkdir(parents=True)
    with pytest.raises(InputError, match="matches no file"):
        ingest.run(argv(tmp_path / "in", tmp_path / "out"))
    assert not (tmp_path / "out").exists()
