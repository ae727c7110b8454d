"""BSM decision points: the cache, deal-disjoint splits, source and bidder filters, and the vectorised encodings
checked against the one-at-a-time rules (auction.AuctionState, OpenSpiel's observation tensor)."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import (
    PASS,
    hcp_by_seat,
    is_vulnerable,
    random_owner,
    suit_lengths,
)
from bridgeflow.dataset.schema import RECORDS
from bridgeflow.dataset.splits import split_of
from bridgeflow.training.bidding import bsm_data
from bridgeflow.training.bidding.bsm_data import (
    OUR_CARD_IN_OPENSPIEL,
    SPLITS,
    Corpus,
    batch_rows,
    build_cache,
    load_corpus,
)
from bsm_toy import toy_rows, write_toy_records


def random_auction(rng: np.random.Generator, dealer: int) -> list[int]:
    """A random legal complete auction that reaches doubles, redoubles and high bids now and then."""
    state = AuctionState.start(dealer)
    while not state.finished:
        legal = np.flatnonzero(state.legal_mask())
        others = legal[legal != PASS][:6]
        state.add(int(rng.choice(others)) if len(others) and rng.random() < 0.45 else PASS)
    return state.calls


def random_rows(count: int, seed: int, source_format: str = "pbn") -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = toy_rows(count, seed, source_format)
    for row in rows:
        row["auction"] = random_auction(rng, row["dealer"])
    return rows


def write_rows(path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=RECORDS), path)


def openspiel_reference(hand, auction, dealer, player, vul) -> np.ndarray:
    """OpenSpiel's WriteObservationTensor (auction phase, without the 4 phase bits), call by call."""
    values = np.zeros(480)
    values[int(is_vulnerable(vul, player))] = 1
    values[2 + int(is_vulnerable(vul, (player + 1) % 4))] = 1
    history = values[4:428]
    last_bid = 0
    for i, call in enumerate(auction):
        relative = (dealer + i - player) % 4
        if last_bid == 0 and call == PASS:
            history[relative] = 1
        if call == 1:
            history[4 + (last_bid - 3) * 12 + 4 + relative] = 1
        elif call == 2:
            history[4 + (last_bid - 3) * 12 + 8 + relative] = 1
        elif call != PASS:
            last_bid = call
            history[4 + (last_bid - 3) * 12 + relative] = 1
    for card in hand:
        values[428 + 4 * (card % 13) + card // 13] = 1
    return values


@pytest.fixture(scope="module")
def random_corpus(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("random")
    write_rows(root / "records" / "a.parquet", random_rows(150, seed=1))
    return load_corpus(root / "records", root / "cache")


def test_counts_and_memory_map(random_corpus):
    meta = random_corpus.meta
    assert meta["auctions"] == 150 and meta["rejected_illegal"] == 0
    assert meta["decision_points"] == len(random_corpus.calls) == random_corpus.offsets[-1]
    assert isinstance(random_corpus.calls, np.memmap) and isinstance(random_corpus.owner, np.memmap)
    ids = np.concatenate([random_corpus.sequences(split) for split in SPLITS])
    assert sorted(ids) == list(range(4 * 150))  # every auction, four players, each in one split
    batch = random_corpus.batch(np.sort(ids))
    assert len(batch["call"]) == meta["decision_points"]  # each call is one player's decision


def test_legal_masks_and_targets_match_the_rules(random_corpus):
    ids = np.arange(4 * 150)
    batch = random_corpus.batch(ids)
    for n, (row, t) in enumerate(zip(batch["row"], batch["position"])):
        auction, player = divmod(int(ids[row]), 4)
        start = random_corpus.offsets[auction]
        calls = random_corpus.calls[start:random_corpus.offsets[auction + 1]].tolist()
        dealer = int(random_corpus.dealer[auction])
        state = AuctionState.start(dealer)
        for call in calls[:t]:
            state.add(call)
        assert state.to_call == player
        np.testing.assert_array_equal(batch["legal"][n], state.legal_mask())
        assert batch["call"][n] == calls[t]
        owner = np.asarray(random_corpus.owner[auction])
        np.testing.assert_array_equal(batch["mine"][n], owner == player)
        assert batch["partner_hcp"][n] == hcp_by_seat(owner)[(player + 2) % 4]
        np.testing.assert_array_equal(batch["lengths"][n], suit_lengths(owner)[[(player + k) % 4 for k in (1, 2, 3)]])
        np.testing.assert_array_equal(batch["holder"][n], (owner - player) % 4)


def test_openspiel_features_match_reference(random_corpus):
    ids = np.arange(4 * 150)
    batch = random_corpus.batch(ids, features480=True)
    assert batch["x480"].shape == (len(batch["call"]), 480)
    for n, (row, t) in enumerate(zip(batch["row"], batch["position"])):
        auction, player = divmod(int(ids[row]), 4)
        calls = random_corpus.calls[random_corpus.offsets[auction]:random_corpus.offsets[auction + 1]].tolist()
        owner = np.asarray(random_corpus.owner[auction])
        expected = openspiel_reference(np.flatnonzero(owner == player), calls[:t], int(random_corpus.dealer[auction]),
                                       player, int(random_corpus.vul[auction]))
        np.testing.assert_array_equal(batch["x480"][n], expected)
    # the MLP's hand features read the hand back in our card order
    np.testing.assert_array_equal(batch["x480"][:, 428:][:, OUR_CARD_IN_OPENSPIEL], batch["static"][batch["row"], :52])


def test_unusable_records_are_dropped(tmp_path):
    rows = toy_rows(6, seed=2)
    rows[0]["auction_complete"] = False
    rows[1]["auction"] = [3, 3, 0, 0, 0]  # illegal, though marked complete
    rows[2]["owner"] = rows[2]["deal_id"] = None
    rows[3]["auction"] = None
    write_rows(tmp_path / "records" / "a.parquet", rows)
    corpus = load_corpus(tmp_path / "records", tmp_path / "cache")
    assert corpus.meta["auctions"] == 2
    assert corpus.meta["rejected_illegal"] == 1  # the illegal auction; the rest never reach the check
    assert sorted(int(d) for d in corpus.deal_id) == sorted(r["deal_id"] for r in rows[4:])


def test_cache_is_reused_and_keyed_by_files(tmp_path, monkeypatch):
    paths = write_toy_records(tmp_path / "records", 40, seed=3, shards=2)
    first = build_cache(tmp_path / "records", tmp_path / "cache")

    def no_parse(path):
        raise AssertionError("records re-parsed although the cache is valid")

    with monkeypatch.context() as patch:
        patch.setattr(bsm_data, "_read_auctions", no_parse)
        assert build_cache(tmp_path / "records", tmp_path / "cache") == first
    stat = paths[0].stat()
    os.utime(paths[0], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = build_cache(tmp_path / "records", tmp_path / "cache")
    assert second != first and (second / "meta.json").exists()


def test_splits_are_deal_disjoint_and_stable(tmp_path):
    rows = toy_rows(300, seed=4)
    other_room = []
    for row in rows:  # the same deal bid in another room, with another auction
        twin = dict(row, record_id=row["record_id"] + 10_000, room="closed", dealer=(row["dealer"] + 1) % 4,
                    auction=[PASS] * 4)
        other_room.append(twin)
    write_rows(tmp_path / "one" / "a.parquet", rows + other_room)
    for k in range(3):  # the same boards, sharded differently
        write_rows(tmp_path / "three" / f"{k}.parquet", (rows + other_room)[k::3])
    corpora = [load_corpus(tmp_path / name, tmp_path / "cache") for name in ("one", "three")]
    for corpus in corpora:
        by_deal = {}
        for deal, split in zip(corpus.deal_id.tolist(), corpus.split.tolist()):
            assert SPLITS[split] == split_of(deal)
            by_deal.setdefault(deal, set()).add(split)
        assert len(by_deal) == 300 and all(len(s) == 1 for s in by_deal.values())
        assert set(corpus.split.tolist()) == {0, 1, 2}
    pairs = [sorted(zip(c.deal_id.tolist(), c.split.tolist())) for c in corpora]
    assert pairs[0] == pairs[1]


def test_source_filter(tmp_path):
    write_toy_records(tmp_path / "records", 60, seed=5, source_format="pbn")
    write_toy_records(tmp_path / "records", 40, seed=6, source_format="lin")
    corpus = load_corpus(tmp_path / "records", tmp_path / "cache")
    assert corpus.meta["sources"] == ["lin", "pbn"]
    everything = sum(len(corpus.sequences(s)) for s in SPLITS)
    lin = sum(len(corpus.sequences(s, ["lin"])) for s in SPLITS)
    assert everything == 4 * 100 and lin == 4 * 40
    assert sum(len(corpus.sequences(s, ["openspiel"])) for s in SPLITS) == 0
    chosen = corpus.sequences("train", ["lin"]) // 4
    assert (corpus.source[chosen] == corpus.meta["sources"].index("lin")).all()


def test_bidder_filter(tmp_path):
    """The bidder is the one name at all four seats (synth's --bidder); people, mixed seats and no
    players are no bidder, kept by "all" only. The same deals in two corpora stay apart."""
    named = {"rule": toy_rows(50, 5), "ben-nosearch": toy_rows(30, 5)}  # the same 30 deals bid twice
    rows = [row | {"players": [name] * 4} for name, part in named.items() for row in part]
    rows += [row | {"players": ["Ann", "Bob", "Cy", "Di"]} for row in toy_rows(20, 6)]
    rows += [row | {"players": ["rule", "rule", "rule", None]} for row in toy_rows(5, 7)] + toy_rows(5, 8)
    write_rows(tmp_path / "records" / "a.parquet", rows)
    corpus = load_corpus(tmp_path / "records", tmp_path / "cache")
    assert corpus.meta["bidders"] == ["ben-nosearch", "rule"]

    def auctions(**selection) -> int:
        return sum(len(corpus.sequences(split, **selection)) for split in SPLITS) // 4

    assert auctions() == 110 and auctions(bidders=["rule"]) == 50 and auctions(bidders=["ben-nosearch"]) == 30
    assert auctions(bidders=["rule", "ben-nosearch"]) == 80 and auctions(bidders=["gib"]) == 0
    assert auctions(sources=["lin"], bidders=["rule"]) == 0 and auctions(sources=["pbn"], bidders=["rule"]) == 50
    chosen = corpus.sequences("train", bidders=["ben-nosearch"]) // 4
    assert (corpus.bidder[chosen] == corpus.meta["bidders"].index("ben-nosearch")).all()


def test_batch_rows_is_a_pure_function_of_seed_and_step():
    n, size = 37, 8
    seen = np.concatenate([batch_rows(n, size, seed=1, step=s) for s in range(37)])  # 8 epochs exactly
    assert all(sorted(seen[e * n:(e + 1) * n]) == list(range(n)) for e in range(8))
    np.testing.assert_array_equal(batch_rows(n, size, 1, 5), batch_rows(n, size, 1, 5))
    assert not np.array_equal(batch_rows(n, size, 1, 5), batch_rows(n, size, 2, 5))


def test_random_owner_is_a_full_deal():
    # The toy corpus reuses synth deals: 13 cards each, so hands and targets are well formed.
    assert np.bincount(random_owner(0, 7), minlength=4).tolist() == [13] * 4
