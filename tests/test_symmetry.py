"""The 96 DD symmetries: group structure, and exactness against DDS itself (a rotated or
suit-permuted deal's DDS table is the permuted table of the original deal)."""

from __future__ import annotations

import numpy as np
import pytest

from bridgeflow.dataset.dd import Solver
from bridgeflow.dataset.encodings import hands_from_owner
from bridgeflow.training.dd import symmetry


def random_owners(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(np.repeat(np.arange(4), 13)) for _ in range(n)]).astype(np.int8)


def dds_tables(owners: np.ndarray) -> np.ndarray:
    """DDS (in dataset/dd.py's solver process) -> int8[n, 4, 5]."""
    pytest.importorskip("endplay")
    with Solver(threads=0) as solver:
        results = solver.solve(list(owners))
    return np.stack(results).reshape(-1, 4, 5)


def test_group_is_96_distinct_transforms_with_identity_first():
    owners = random_owners(1, 0)
    moved = {symmetry.transform_owners(owners, g).tobytes() for g in range(symmetry.NUM)}
    assert symmetry.NUM == 96 and len(moved) == 96
    assert np.array_equal(symmetry.transform_owners(owners, 0), owners)
    assert np.array_equal(symmetry.CELL_SRC[0], np.arange(20))


def test_each_seat_keeps_13_cards_and_hands_move_whole():
    owners = random_owners(8, 1)
    for g in (1, 30, 95):
        moved = symmetry.transform_owners(owners, g)
        assert (np.stack([(moved == s).sum(1) for s in range(4)]) == 13).all()
        # the hand of seat s is now the hand of seat s + rot, with suits renamed
        perm = symmetry.PERMS[g % 24]
        for s in range(4):
            old = hands_from_owner(owners[0])[s]
            new = hands_from_owner(moved[0])[(s + symmetry.ROT[g]) % 4]
            assert sorted(perm[c // 13] * 13 + c % 13 for c in old) == new


def test_rotation_moves_declarers_and_suit_permutation_moves_strains():
    table = np.arange(20).reshape(1, 4, 5)
    g = 1 * 24 + symmetry.PERMS.index((1, 0, 2, 3))  # rotate one seat, swap clubs and diamonds
    moved = symmetry.transform_cells(table.reshape(1, 20), g).reshape(4, 5)
    assert moved[1, 1] == table[0, 0, 0]  # N's clubs -> E's diamonds
    assert moved[1, 4] == table[0, 0, 4]  # N's NT -> E's NT
    assert moved[0, 3] == table[0, 3, 3]  # W's spades -> N's spades


def test_untransform_inverts_transform_per_row():
    cells = np.random.default_rng(2).random((96, 20, 14)).astype(np.float32)
    g = np.arange(96)
    assert np.array_equal(symmetry.untransform_cells(symmetry.transform_cells(cells, g), g), cells)


def test_one_transform_for_all_rows_agrees_with_one_per_row_numpy_and_torch():
    torch = pytest.importorskip("torch")
    owners = random_owners(6, 4)
    cells = np.random.default_rng(5).random((6, 20, 14))
    for g in (0, 25, 71):
        per_row = np.full(6, g)
        assert np.array_equal(symmetry.transform_owners(owners, g), symmetry.transform_owners(owners, per_row))
        assert np.array_equal(symmetry.transform_owners(torch.from_numpy(owners), g).numpy(),
                              symmetry.transform_owners(owners, per_row))
        assert np.array_equal(symmetry.transform_cells(cells, g), symmetry.transform_cells(cells, per_row))
        assert np.array_equal(symmetry.untransform_cells(cells, g), symmetry.untransform_cells(cells, per_row))


def test_subgroups():
    assert [len(symmetry.GROUPS[k]) for k in ("id", "rot", "suits", "all")] == [1, 4, 24, 96]
    assert (symmetry.ROT[symmetry.GROUPS["rot"]] == np.arange(4)).all()


# 10 DDS tables: a few CPU-seconds
def test_symmetries_are_exact_under_dds():
    owners = random_owners(2, 3)
    gs = np.array([1 * 24 + 0, 0 * 24 + 13, 2 * 24 + 7, 3 * 24 + 23])  # a rotation, a suit permutation, both
    base = dds_tables(owners)
    moved_owners = np.concatenate([symmetry.transform_owners(owners, g) for g in gs])
    moved = dds_tables(moved_owners).reshape(len(gs), 2, 20)
    for k, g in enumerate(gs):
        expected = symmetry.transform_cells(base.reshape(2, 20), g)
        assert np.array_equal(moved[k], expected), f"transform {g} is not a DD symmetry"
    # and the test has teeth: the transformed tables differ from the originals
    assert not any(np.array_equal(moved[k], base.reshape(2, 20)) for k in range(len(gs)))
