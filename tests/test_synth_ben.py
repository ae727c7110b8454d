"""A corpus bid by BEN (`bridgeflow synth --bidder ben-nosearch`): a whole auction in one request
gives the calls of one request per call; the corpus holds the same deals as the rule bidder's,
board by board; after ingest DuckDB tells the two apart, and the BSM's cache selects either.

Needs BEN's folder in ../shared (skipped without it, failed under BRIDGEFLOW_REQUIRE_SHARED); the
BEN virtualenv is built in the session if it is missing (pip, about 15 s)."""

from __future__ import annotations

import json
import os

import duckdb
import numpy as np
import pytest

from bridgeflow.dataset.encodings import random_owner
from bridgeflow.pipelines import ingest, synth
from bridgeflow.training.bidding.bsm_data import SPLITS, load_corpus
from bridgeflow.training.evaluation import ben
from bridgeflow.training.evaluation.table import play

BOARDS = 8


@pytest.fixture(scope="module")
def agent(ben_dir):
    assert ben.ben_home() == ben_dir or "BRIDGEFLOW_BEN" in os.environ
    ben.ensure_venv()
    server = ben.BenServer()
    yield ben.BenAgent("ben-nosearch", server)
    server.stop()


def test_a_whole_auction_in_one_request_is_the_auction_call_by_call(agent):
    for index in range(BOARDS):
        owner, dealer, vul = random_owner(41, index), index % 4, (index // 4) % 4
        per_call = play([agent] * 4, owner, dealer, vul, {"ben-nosearch": []}).calls
        assert agent.bid_deal(owner, dealer, vul) == list(per_call)
    with pytest.raises(ben.BenFailed, match="hands"):
        agent.server.bid({"hands": ["AKQ"], "dealer": 0, "vulnerability": [False, False]})
    with pytest.raises(ben.BenFailed, match="dealer"):
        agent.bid_deal(random_owner(41, 0), 7, 0)


@pytest.fixture(scope="module")
def corpora(ben_dir, tmp_path_factory):
    """The rule bidder's and ben-nosearch's corpora of one seed (BEN's by two workers, so two
    servers), ingested together."""
    root = tmp_path_factory.mktemp("synth_ben")
    synth.write_corpus(root / "corpora" / "rule", BOARDS, seed=13, format_name="pbn", boards_per_file=BOARDS)
    synth.write_corpus(root / "corpora" / "ben", BOARDS, seed=13, format_name="pbn", boards_per_file=BOARDS // 2,
                       workers=2, bidder="ben-nosearch")
    manifest = ingest.run(["--input", str(root / "corpora"), "--out", str(root / "ingest"), "--workers", "1"])
    assert manifest["quarantined"] == 0, manifest["quarantined_by_reason"]
    return root


def test_duckdb_tells_the_corpora_apart_and_pairs_their_boards(corpora):
    records = f"'{corpora}/ingest/records/*.parquet'"
    by_bidder = duckdb.sql(f"SELECT players[1] AS bidder, count(*), count(DISTINCT event) FROM {records} "
                           "GROUP BY bidder ORDER BY bidder").fetchall()
    assert by_bidder == [("ben-nosearch", BOARDS, 1), ("rule", BOARDS, 1)]
    events = duckdb.sql(f"SELECT DISTINCT event FROM {records} WHERE players[1] = 'ben-nosearch'").fetchall()
    assert events[0][0] == f"bridgeflow synth seed 13; bidder ben-nosearch {synth.bidder_version('ben-nosearch')}"
    plan = json.loads((corpora / "corpora" / "ben" / synth.PLAN).read_text())
    assert (plan["bidder"], plan["bidder_version"]) == ("ben-nosearch", synth.bidder_version("ben-nosearch"))
    pairs = duckdb.sql(f"""SELECT count(*), count(*) FILTER (WHERE r.auction <> b.auction)
        FROM {records} r JOIN {records} b ON r.board = b.board
        WHERE r.players[1] = 'rule' AND b.players[1] = 'ben-nosearch'
          AND r.deal_id = b.deal_id AND r.dealer = b.dealer AND r.vulnerability = b.vulnerability""").fetchall()
    assert pairs[0][0] == BOARDS and pairs[0][1] > 0  # the same boards, bid differently


def test_the_corpus_holds_bens_auctions(corpora, agent):
    rows = duckdb.sql(f"SELECT owner, dealer, vulnerability, auction FROM '{corpora}/ingest/records/*.parquet' "
                      "WHERE players[1] = 'ben-nosearch' ORDER BY board").fetchall()
    for owner, dealer, vul, auction in rows:
        assert auction == agent.bid_deal(np.array(owner), dealer, vul)


def test_the_bsm_selects_either_corpus_or_both(corpora, tmp_path):
    corpus = load_corpus(corpora / "ingest" / "records", tmp_path / "cache")
    assert corpus.meta["bidders"] == ["ben-nosearch", "rule"]
    counts = {bidders if isinstance(bidders, str) else ",".join(bidders):
              sum(len(corpus.sequences(split, bidders=bidders)) for split in SPLITS)
              for bidders in ("all", ["rule"], ["ben-nosearch"], ["rule", "ben-nosearch"])}
    assert counts == {"all": 8 * BOARDS, "rule": 4 * BOARDS, "ben-nosearch": 4 * BOARDS, "rule,ben-nosearch": 8 * BOARDS}
