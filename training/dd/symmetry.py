"""The exact symmetries of double dummy, as index tables for batched numpy (and torch) code.

Rotating the seats rotates the declarers; permuting the four suits permutes the suit strains and
leaves NT alone. Together they form a group of 4 x 24 = 96 transforms, so every labelled deal is
worth 96 training examples, and averaging a model over the group makes it exactly equivariant.

Transform g = rot * 24 + k applies seat rotation `rot` (seat s -> s + rot) and the k-th suit
permutation of itertools.permutations(range(4)) (`perm[old suit] = new suit`); g = 0 is the
identity. With CARD_SRC, CELL_SRC of g:
    new_owner[c] = (owner[CARD_SRC[g, c]] + ROT[g]) % 4
    new_table.flat[j] = table.flat[CELL_SRC[g, j]]     (table flattened declarer-major, 20 cells)
"""

from __future__ import annotations

import itertools

import numpy as np

PERMS = tuple(itertools.permutations(range(4)))  # identity first
NUM = 4 * len(PERMS)


def _index_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rot = np.zeros(NUM, dtype=np.int64)
    card_src = np.zeros((NUM, 52), dtype=np.int64)
    cell_src = np.zeros((NUM, 20), dtype=np.int64)
    for r in range(4):
        for k, perm in enumerate(PERMS):
            g = r * len(PERMS) + k
            rot[g] = r
            strain = list(perm) + [4]  # NT stays NT
            for suit in range(4):
                for rank in range(13):
                    card_src[g, perm[suit] * 13 + rank] = suit * 13 + rank
            for declarer in range(4):
                for s in range(5):
                    cell_src[g, (declarer + r) % 4 * 5 + strain[s]] = declarer * 5 + s
    return rot, card_src, cell_src


ROT, CARD_SRC, CELL_SRC = _index_tables()
CELL_INV = np.argsort(CELL_SRC, axis=1)  # maps a transformed table back: table = new[CELL_INV[g]]

# Named subgroups for test-time averaging.
GROUPS = {
    "id": np.array([0]),
    "rot": np.arange(4) * len(PERMS),
    "suits": np.arange(len(PERMS)),
    "all": np.arange(NUM),
}


def transform_owners(owners, g):
    """owners int[n, 52] -> transformed owners, same dtype. g is one transform for all rows (then
    owners may be a numpy array or a torch tensor) or int[n], one per row (numpy only)."""
    if np.ndim(g) == 0:
        return (owners[:, CARD_SRC[g]] + int(ROT[g])) % 4
    moved = np.take_along_axis(owners, CARD_SRC[g], axis=1)
    return ((moved + ROT[g][:, None]) % 4).astype(owners.dtype)


def transform_cells(cells, g):
    """cells [n, 20, ...] (tables or per-cell distributions) -> transformed; g as above."""
    if np.ndim(g) == 0:
        return cells[:, CELL_SRC[g]]
    index = CELL_SRC[g].reshape(g.shape + (20,) + (1,) * (cells.ndim - 2))
    return np.take_along_axis(cells, index, axis=1)


def untransform_cells(cells, g):
    """Inverse of transform_cells: predictions made on transformed deals, back to the originals."""
    if np.ndim(g) == 0:
        return cells[:, CELL_INV[g]]
    index = CELL_INV[g].reshape(g.shape + (20,) + (1,) * (cells.ndim - 2))
    return np.take_along_axis(cells, index, axis=1)
