"""The synthetic corpus: board i is a pure function of (seed, i), and what synth writes the ingest
job reads back unchanged, in PBN and in LIN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import deal_id
from bridgeflow.pipelines import ingest, synth
from bridgeflow.training.bidding.rule_bidder import RuleBidder


def test_board_is_a_pure_function_of_seed_and_index():
    bidder = RuleBidder()
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


def test_file_split_does_not_change_the_boards(tmp_path):
    synth.write_corpus(tmp_path / "a", 30, seed=9, format_name="pbn", boards_per_file=30, auction=False)
    synth.write_corpus(tmp_path / "b", 30, seed=9, format_name="pbn", boards_per_file=7, auction=False, workers=2)
    a = _ingested(tmp_path / "a", tmp_path / "out_a")
    b = _ingested(tmp_path / "b", tmp_path / "out_b")
    assert [r["deal_id"] for r in a] == [r["deal_id"] for r in b]
    assert all(r["auction"] is None for r in a)


def test_cli_rejects_unknown_format(tmp_path):
    with pytest.raises(SystemExit):
        synth.run(["--deals", "1", "--out", str(tmp_path), "--format", "xml"])
