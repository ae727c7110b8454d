"""The synthetic corpus: board i is a pure function of (seed, i), what synth writes the ingest
job reads back unchanged, in PBN and in LIN, every record names its bidder, and a rerun resumes.
BEN as the bidder: tests/test_synth_ben.py."""

from __future__ import annotations

from pathlib import Path

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import deal_id
from bridgeflow.dataset.errors import InputError
from bridgeflow.pipelines import ingest, synth

from test_pools import alive


def test_board_is_a_pure_function_of_seed_and_index():
    bidder = synth.CorpusBidder("rule")
    first = synth.synth_board(7, 123, bidder)
    again = synth.synth_board(7, 123, bidder)
    assert (first.owner == again.owner).all() and first.auction == again.auction
    assert not (synth.synth_board(8, 123).owner == first.owner).all()
    assert not (synth.synth_board(7, 124).owner == first.owner).all()
    assert sorted(np.bincount(first.owner).tolist()) == [13, 13, 13, 13]
    # dealer and vulnerability rotate as in duplicate: board 124 is board 12 of the cycle: W deals, NS vulnerable
    assert (first.board, first.dealer, first.vulnerability) == (124, 3, 1)


def test_auctions_are_complete_and_contracts_match():
    for board in synth.synth_boards(3, 0, 50):
        state = replay(board.dealer, board.auction)
        assert state.finished
        contract = state.contract()
        if contract is None:
            assert board.contract_level == 0
        else:
            assert (board.contract_level, board.contract_strain, board.declarer) == (
                contract.level, contract.strain, contract.declarer)


def _ingested(folder: Path, out: Path) -> list[dict]:
    manifest = ingest.run(["--input", str(folder), "--out", str(out), "--workers", "1"])
    assert manifest["quarantined"] == 0, manifest["quarantined_by_reason"]
    rows = [row for p in sorted((out / "records").glob("*.parquet")) for row in pq.read_table(p).to_pylist()]
    return sorted(rows, key=lambda row: row["board"])


@pytest.mark.parametrize("format_name", ["pbn", "lin"])
def test_ingest_reads_the_corpus_back_unchanged(tmp_path, format_name):
    synth.write_corpus(tmp_path / "corpus", 60, seed=5, format_name=format_name, boards_per_file=25, explain=True)
    assert len(list((tmp_path / "corpus").glob(f"*.{format_name}"))) == 3
    rows = _ingested(tmp_path / "corpus", tmp_path / "out")
    assert len(rows) == 60
    for row, board in zip(rows, synth.synth_boards(5, 0, 60, explain=True)):
        assert row["deal_id"] == deal_id(board.owner)
        assert row["owner"] == board.owner.tolist()
        assert (row["board"], row["dealer"], row["vulnerability"]) == (board.board, board.dealer, board.vulnerability)
        assert row["auction"] == board.auction and row["auction_complete"]
        assert row["explanations"] == board.explanations
        assert (row["contract_level"], row["contract_strain"], row["declarer"]) == (
            board.contract_level, board.contract_strain, board.declarer)


@pytest.mark.parametrize("auction", [False, True])
def test_file_split_and_workers_do_not_change_the_boards(tmp_path, auction):
    synth.write_corpus(tmp_path / "a", 30, seed=9, format_name="pbn", boards_per_file=30, auction=auction)
    synth.write_corpus(tmp_path / "b", 30, seed=9, format_name="pbn", boards_per_file=7, auction=auction, workers=2)
    a = _ingested(tmp_path / "a", tmp_path / "out_a")
    b = _ingested(tmp_path / "b", tmp_path / "out_b")
    assert [(r["deal_id"], r["auction"], r["players"], r["event"]) for r in a] == [
        (r["deal_id"], r["auction"], r["players"], r["event"]) for r in b]
    assert all((r["auction"] is None) == (not auction) for r in a)


def test_every_record_names_its_bidder_and_version(tmp_path):
    version = synth.bidder_version("rule")
    assert len(version) == 16 and version == synth.bidder_version("rule")
    synth.write_corpus(tmp_path / "corpus", 12, seed=3, format_name="lin", boards_per_file=12)
    synth.write_corpus(tmp_path / "plain", 12, seed=3, format_name="pbn", boards_per_file=12, auction=False)
    for row in _ingested(tmp_path / "corpus", tmp_path / "out"):
        assert row["players"] == ["rule"] * 4
        assert row["event"] == f"bridgeflow synth seed 3; bidder rule {version}"
    for row in _ingested(tmp_path / "plain", tmp_path / "out_plain"):
        assert row["players"] is None and row["event"] == "bridgeflow synth seed 3"


def test_the_rule_bidders_version_covers_every_module_of_it(monkeypatch):
    hashed = []
    monkeypatch.setattr(synth, "files_hash", lambda files: hashed.extend(files.values()) or "0" * 16)
    synth.bidder_version("rule")
    bidder = [module for name, module in sys.modules.items()
              if name.startswith(("bridgeflow.training.bidding.rule_bidder", "bridgeflow.training.bidding.rule_system"))]
    assert len(bidder) > 2 and {Path(module.__file__) for module in bidder} <= set(hashed)


def _files(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """name -> (inode, mtime, bytes) of the corpus files: which were written again, and what they hold."""
    return {path.name: (os.stat(path).st_ino, os.stat(path).st_mtime_ns, path.read_bytes())
            for path in sorted(folder.glob("synth-*"))}


def test_a_rerun_keeps_the_files_written_and_writes_the_rest(tmp_path):
    out = tmp_path / "corpus"
    synth.write_corpus(out, 40, seed=4, format_name="pbn", boards_per_file=10)
    whole = _files(out)
    plan = json.loads((out / synth.PLAN).read_text())
    assert plan["bidder"] == "rule" and plan["bidder_version"] == synth.bidder_version("rule") and plan["deals"] == 40
    # killed while writing the third file: it is missing, half of it lies in its temporary file
    (out / "synth-00002.pbn").unlink()
    (out / ".synth-00002.pbn.tmp-99999").write_text(whole["synth-00002.pbn"][2].decode()[:500])
    synth.write_corpus(out, 40, seed=4, format_name="pbn", boards_per_file=10, workers=2)
    resumed = _files(out)
    assert {name: entry[2] for name, entry in resumed.items()} == {name: entry[2] for name, entry in whole.items()}
    assert all(resumed[name][:2] == whole[name][:2] for name in whole if name != "synth-00002.pbn")  # not rewritten
    assert not list(out.glob(".synth-*.tmp*"))
    # other settings: every file is replaced (and none of the old run's is left)
    synth.write_corpus(out, 15, seed=5, format_name="pbn", boards_per_file=10)
    assert sorted(_files(out)) == ["synth-00000.pbn", "synth-00001.pbn"]
    assert b"seed 5" in (out / "synth-00000.pbn").read_bytes()
    assert json.loads((out / synth.PLAN).read_text())["seed"] == 5


def test_explain_needs_the_rule_bidder(tmp_path):
    with pytest.raises(InputError, match="--explain needs the rule bidder"):
        synth.write_corpus(tmp_path, 2, seed=0, format_name="pbn", boards_per_file=2, explain=True, bidder="ben-nosearch")


def test_cli_rejects_unknown_format_and_bidder(tmp_path):
    with pytest.raises(SystemExit):
        synth.run(["--deals", "1", "--out", str(tmp_path), "--format", "xml"])
    with pytest.raises(SystemExit):
        synth.run(["--deals", "1", "--out", str(tmp_path), "--bidder", "gib"])
    with pytest.raises(InputError, match="--bidder must be one of rule, ben, ben-nosearch"):
        synth.write_corpus(tmp_path, 1, seed=0, format_name="pbn", boards_per_file=1, bidder="gib")


def test_a_killed_run_leaves_no_worker_behind(tmp_path):
    """The workers of a killed synth stop within seconds instead of writing on through their files."""
    argv = ["--deals", "400000", "--boards-per-file", "100000", "--workers", "2", "--out", str(tmp_path / "out")]
    parent = subprocess.Popen([sys.executable, "-c", f"from bridgeflow.pipelines import synth; synth.run({argv!r})"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = Path(f"/proc/{parent.pid}/task/{parent.pid}/children")
    deadline = time.monotonic() + 120
    while len(children.read_text().split()) < 3 and time.monotonic() < deadline:  # 2 workers, the resource tracker
        time.sleep(0.2)
    time.sleep(3)  # the workers are writing their first files
    workers = [int(pid) for pid in children.read_text().split()]
    parent.send_signal(signal.SIGKILL)
    parent.wait()

    deadline = time.monotonic() + 10
    while any(map(alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(workers) >= 2 and [pid for pid in workers if alive(pid)] == []
