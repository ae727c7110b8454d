"""The DDS boundary: deals are checked before DDS sees them, DDS's strain-major table comes out in
our layout, and a solver that rejects or dies on a deal costs that deal only."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from bridgeflow.dataset import dd
from bridgeflow.dataset.encodings import owner_from_hands, parse_pbn_hand
from bridgeflow.dataset.record import Reason, RecordError

# DDS's hands/list2.txt, first deal, and its TABLE line (strain-major S,H,D,C,NT; N,E,S,W within).
LIST2_DEAL = "QJ6.K652.J85.T98 873.J97.AT764.Q4 K5.T83.KQ9.A7652 AT942.AQ4.32.KJ3"
LIST2_TABLE = "5 8 5 8 6 6 6 6 5 7 5 7 7 5 7 5 6 6 6 6"
# The same, written out by hand in our layout: rows N,E,S,W; columns C,D,H,S,NT.
LIST2_OURS = [[7, 5, 6, 5, 6], [5, 7, 6, 8, 6], [7, 5, 6, 5, 6], [5, 7, 6, 8, 6]]

SORTED = np.repeat(np.arange(4), 13).astype(np.int8)  # N all clubs, E diamonds, S hearts, W spades


def cheap_deals(count: int, swaps: int = 8, seed: int = 0) -> list[np.ndarray]:
    """Distinct deals close to SORTED: DDS solves them in milliseconds."""
    rng = np.random.default_rng(seed)
    deals, seen = [], set()
    while len(deals) < count:
        owner = SORTED.copy()
        for _ in range(swaps):
            a, b = rng.integers(0, 52, 2)
            owner[a], owner[b] = owner[b], owner[a]
        if owner.tobytes() not in seen and owner.tobytes() != SORTED.tobytes():
            seen.add(owner.tobytes())
            deals.append(owner)
    return deals


def list2_owner() -> np.ndarray:
    return owner_from_hands([parse_pbn_hand(hand) for hand in LIST2_DEAL.split()])


# Fault injection: the solver process imports these by name (tests/ is on its sys.path).
def crash_on_sorted(owners: np.ndarray) -> np.ndarray:
    if any((owner == SORTED).all() for owner in owners):
        os._exit(1)  # what DDS does on some inputs: the process is gone
    return dd.calc_tables(owners)


def reject_sorted(owners: np.ndarray) -> np.ndarray:
    import endplay._dds as _dds

    if any((owner == SORTED).all() for owner in owners):
        raise _dds.DDSError("Injected rejection")
    return dd.calc_tables(owners)


@pytest.fixture(scope="module")
def solver():
    with dd.Solver() as solver:
        yield solver


def test_check_deal_accepts_a_full_deal_and_names_every_fault():
    assert dd.check_deal(list2_owner()).dtype == np.int8
    partial = SORTED.copy()
    partial[[0, 13, 26, 39]] = -1  # a 12-card-per-hand position
    long_short = SORTED.copy()
    long_short[0] = 1  # E 14 cards, N 12
    bad_value = SORTED.copy()
    bad_value[5] = 4
    cases = [(partial, Reason.NOT_A_DEAL), (long_short, Reason.WRONG_HAND_SIZE),
             (bad_value, Reason.BAD_CARD), (SORTED[:51], Reason.NOT_A_DEAL)]
    for owner, reason in cases:
        with pytest.raises(RecordError) as error:
            dd.check_deal(owner)
        assert error.value.reason == reason


def test_table_from_dds_reads_strain_major_into_declarer_major():
    values = [int(value) for value in LIST2_TABLE.split()]
    table = dd.table_from_dds(lambda strain, seat: values[strain * 4 + seat])
    assert table.reshape(4, 5).tolist() == LIST2_OURS


def test_solver_reproduces_a_dds_regression_table(solver):
    [table] = solver.solve([list2_owner()])
    assert table.dtype == np.int8
    assert table.reshape(4, 5).tolist() == LIST2_OURS
    assert solver.version.startswith("2.9.0 (endplay 0.5.12")


def test_rotating_the_deal_rotates_the_table(solver):
    deal = cheap_deals(1, swaps=12, seed=3)[0]
    rotated = (deal + 1) % 4  # every hand moves one seat clockwise
    table, turned = solver.solve([deal, rotated])
    assert np.array_equal(np.roll(table.reshape(4, 5), 1, axis=0), turned.reshape(4, 5))


def test_malformed_deals_never_reach_dds():
    short = SORTED.copy()
    short[0] = 1  # DDS itself would answer this with a made-up table
    with dd.Solver() as solver:
        results = solver.solve([short, SORTED[:51]])
        assert results == [("wrong_hand_size", "hands N,E,S,W hold [12, 14, 13, 13] cards"),
                           ("not_a_deal", "owner has shape (51,), not (52,)")]
        assert solver.calls == 0 and solver._process is None  # the solver was not even started


def test_batches_are_split_at_forty_deals(solver):
    deals = cheap_deals(45, seed=1)
    calls = solver.calls
    tables = solver.solve(deals)
    assert solver.calls - calls == 2
    assert all(isinstance(table, np.ndarray) and table.shape == (20,) for table in tables)
    again = solver.solve(deals[40:])
    assert all(np.array_equal(a, b) for a, b in zip(tables[40:], again))


@pytest.mark.parametrize("fault, reason, text", [
    (crash_on_sorted, dd.SOLVER_CRASHED, "exit code 1"),
    (reject_sorted, dd.SOLVER_ERROR, "Injected rejection"),
])
def test_a_deal_the_solver_refuses_costs_only_that_deal(solver, fault, reason, text):
    deals = cheap_deals(9, seed=2)
    deals.insert(6, SORTED.copy())
    expected = solver.solve(deals[:6] + deals[7:])
    with dd.Solver(solve=fault) as faulty:
        results = faulty.solve(deals)
        assert results[6][0] == reason and text in results[6][1]
        solved = results[:6] + results[7:]
        assert all(np.array_equal(a, b) for a, b in zip(solved, expected))
        assert faulty.calls > 1  # bisected
        [again] = faulty.solve([deals[0]])  # a crashed solver is restarted
        assert np.array_equal(again, expected[0])


def test_two_threads_share_one_solver(solver):
    deals = cheap_deals(12, seed=4)
    expected = solver.solve(deals)
    results: dict[int, list] = {}

    def work(half: int):
        results[half] = solver.solve(deals[half * 6:(half + 1) * 6])

    threads = [threading.Thread(target=work, args=(half,)) for half in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(np.array_equal(a, b) for a, b in zip(results[0] + results[1], expected))
