"""Auction legality and the contract an auction reaches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridgeflow.dataset.auction import AuctionBatch, IllegalCall, auction_scan, auction_status, legal_masks, replay
from bridgeflow.dataset.encodings import NUM_CALLS, parse_call


def calls(text: str) -> list[int]:
    return [parse_call(c) for c in text.split()]


def test_simple_contract_and_declarer_is_first_to_name_the_strain():
    # N opens 1H, S raises to 4H: declarer is N (first of the side to name hearts)
    state = replay(0, calls("1H P 2H P 4H P P P"))
    assert state.finished
    contract = state.contract()
    assert (contract.level, contract.strain, contract.doubled, contract.declarer) == (4, 2, 0, 0)
    assert str(contract) == "4H"


def test_doubled_and_redoubled():
    state = replay(1, calls("1S X XX P P P"))  # E opens, S doubles, W redoubles
    contract = state.contract()
    assert (contract.level, contract.strain, contract.doubled, contract.declarer) == (1, 3, 2, 1)
    assert str(contract) == "1SXX"


def test_passed_out_and_unfinished():
    assert replay(2, calls("P P P P")).finished
    assert replay(2, calls("P P P P")).contract() is None
    assert not replay(2, calls("P P P")).finished
    assert not replay(0, calls("1C P P")).finished


@pytest.mark.parametrize(
    "auction, message",
    [
        ("1H 1D", "not higher"),
        ("1H P X", "double only"),  # doubling partner
        ("X", "double only"),
        ("1H X P XX", "redouble only"),  # redoubling an opponent's double of own... by the doubler's partner
        ("1H P P P P", "already ended"),
        ("1H X X", "double only"),
    ],
)
def test_illegal_calls_are_named(auction, message):
    with pytest.raises(IllegalCall, match=message):
        replay(0, calls(auction))


def test_legal_mask_after_opponent_bid():
    state = replay(0, calls("1NT"))
    mask = state.legal_mask()
    assert mask[0] and mask[1] and not mask[2]  # pass, double; no redouble
    assert not mask[parse_call("1S")] and mask[parse_call("2C")]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 3), st.lists(st.integers(0, 37), max_size=60))
def test_replaying_legal_calls_always_terminates_with_consistent_mask(dealer, choices):
    state = replay(dealer, [])
    for choice in choices:
        if state.finished:
            break
        legal = state.legal_mask().nonzero()[0]
        state.add(int(legal[choice % len(legal)]))
    if state.finished:
        assert not state.legal_mask().any()
    else:
        assert state.legal_mask()[0]


def test_auction_status_flags_illegal_and_unfinished():
    calls = np.array([
        [3, 0, 0, 0, -1],   # 1C P P P: legal, finished
        [3, 0, 0, -1, -1],  # unfinished
        [3, 3, 0, 0, 0],    # 1C 1C: insufficient
        [0, 1, 0, 0, 0],    # double with no bid
        [3, 1, 2, 0, 0],    # 1C X XX: legal, unfinished
    ], np.int16)
    legal, finished = auction_status(calls, np.zeros(5, np.int64))
    assert legal.tolist() == [True, True, False, False, True]
    assert finished[[0, 1, 4]].tolist() == [True, False, False]


def _random_auctions(rng: np.random.Generator, count: int) -> tuple[list[list[int]], np.ndarray]:
    """Legal auctions heavy in doubles and redoubles, some cut off before their end."""
    dealers = rng.integers(0, 4, count)
    auctions = []
    for dealer in dealers:
        state = replay(int(dealer), [])
        stop = rng.integers(0, 30)
        while not state.finished and len(state.calls) < stop:
            kind = rng.random()
            bid = max(state.last_bid, 2) + 1 + int(rng.integers(0, 6))
            call = 0 if kind < 0.35 else 1 if kind < 0.55 else 2 if kind < 0.7 else bid
            state.add(call if state.is_legal(call) else 0)
        auctions.append(state.calls)
    return auctions, dealers


def test_scalar_and_batched_legality_agree_on_random_auctions():
    auctions, dealers = _random_auctions(np.random.default_rng(37), 1000)
    steps = max(map(len, auctions)) + 2  # every prefix, and a step after the end of each finished auction
    calls = np.full((len(auctions), steps), -1, np.int16)
    for row, auction in enumerate(auctions):
        calls[row, :len(auction)] = auction
    scanned = auction_scan(calls, dealers)
    batched = legal_masks(scanned, (dealers[:, None] + np.arange(steps)) % 4)
    compared = 0
    for row, auction in enumerate(auctions):
        state = replay(int(dealers[row]), [])
        for step in range(len(auction) + 1):
            scalar = [state.is_legal(call) for call in range(NUM_CALLS)]
            assert batched[row, step].tolist() == state.legal_mask().tolist() == scalar, (auction, step)
            assert scanned["finished"][row, step] == state.finished
            assert not state.is_legal(-1) and not state.is_legal(NUM_CALLS)
            compared += 1
            if step < len(auction):
                state.add(auction[step])
    assert compared > 8000
    assert {1, 2} <= {call for auction in auctions for call in auction}  # doubles and redoubles were tried
    assert sum(replay(int(d), a).finished for a, d in zip(auctions, dealers)) > 100


def test_batched_status_of_random_calls_is_the_scalar_replay():
    rng = np.random.default_rng(38)
    calls = rng.choice([-1, 0, 0, 0, 1, 2, 3, 5, 9, 14, 20], size=(2000, 8)).astype(np.int16)
    calls[:, 0] = np.where(calls[:, 0] < 0, 0, calls[:, 0])
    calls = np.where(np.cumsum(calls < 0, axis=1) > 0, -1, calls)  # padding only at the end
    dealers = rng.integers(0, 4, len(calls))
    legal, finished = auction_status(calls, dealers)
    for row, dealer in enumerate(dealers):
        state, ok = replay(int(dealer), []), True
        for call in calls[row][calls[row] >= 0]:
            ok = ok and state.is_legal(int(call))
            if ok:
                state.add(int(call))
        assert legal[row] == ok
        if ok:
            assert finished[row] == state.finished
    assert 200 < legal.sum() < len(calls) - 200


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, 37), min_size=1, max_size=40)), min_size=1, max_size=8))
def test_an_auction_batch_follows_auction_state_row_by_row(games):
    """Each row of AuctionBatch is AuctionState: the legal calls at every step, finished, and the
    contract with its declarer (rows that ended make no more calls: -1)."""
    states = [replay(dealer, []) for dealer, _ in games]
    batch = AuctionBatch(np.array([dealer for dealer, _ in games]))
    for step in range(40):
        assert batch.legal().tolist() == [s.legal_mask().tolist() for s in states]
        assert batch.finished.tolist() == [s.finished for s in states]
        calls = np.full(len(games), -1, np.int16)
        for row, (state, (_, choices)) in enumerate(zip(states, games)):
            if not state.finished:
                legal = state.legal_mask().nonzero()[0]
                calls[row] = legal[choices[step % len(choices)] % len(legal)]
                state.add(int(calls[row]))
        batch.add(calls)
    level, strain, doubled, declarer = batch.contracts()
    for row, state in enumerate(states):
        contract = state.contract()
        expected = (0, 0, 0, 0) if contract is None else (contract.level, contract.strain, contract.doubled, contract.declarer)
        assert (level[row], strain[row], doubled[row], declarer[row]) == expected
        assert batch.auction(row) == state.calls


def test_where_takes_each_row_from_one_batch_or_the_other():
    """Rows of different lengths mix: each keeps its calls, state and contract."""
    short = AuctionBatch.replay(0, [parse_call(c) for c in "1H X XX P P P".split()], 3)
    long = AuctionBatch.replay(0, [parse_call(c) for c in "1H X XX 2C P P 2H X P P P".split()], 3)
    mixed = long.where(np.array([False, True, False]), short)
    assert [mixed.auction(row) for row in range(3)] == [long.auction(0), short.auction(0), long.auction(0)]
    assert [c.tolist() for c in mixed.contracts()] == [[2, 1, 2], [2, 2, 2], [1, 2, 1], [0, 0, 0]]  # 2HX, 1HXX, 2HX by N
    assert mixed.finished.all() and mixed.length.tolist() == [11, 6, 11]
    assert mixed.where(np.ones(3, bool), long).auction(1) == long.auction(1)
