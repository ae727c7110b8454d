"""Exact double-dummy tricks for the contracts a search reaches, from DDS in a child process.

Kept apart from search.py so the child imports only this module (no torch): DDS crashes when two
threads call it and can take its process down, so it never runs in the caller."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from bridgeflow.dataset.encodings import deal_to_pbn
from bridgeflow.training.pools import spawn_pool

MAX_DEALS = 40  # deals per call to the child (DDS's batch limit: 40 deals x 5 strains)


def solve_cells(owners: np.ndarray, cells: list[tuple[int, int, int]]) -> list[int]:
    """Exact DD tricks for (deal, declarer, strain) cells: one DDS SolveBoard with the declarer's
    LHO on lead per cell, or one table per deal that needs more than 4 cells (a table costs about
    as much as 4 single solves). Runs only inside ExactDD's child process."""
    from endplay.dds import solve_board
    from endplay.types import Deal, Denom, Player

    from bridgeflow.dataset.dd import DDS_STRAIN, calc_tables

    per_deal = Counter(deal for deal, _, _ in cells)
    tables = {deal: calc_tables(owners[deal][None])[0].reshape(4, 5) for deal, n in per_deal.items() if n > 4}
    out = []
    for deal, declarer, strain in cells:
        if deal in tables:
            out.append(int(tables[deal][declarer, strain]))
            continue
        board = Deal(deal_to_pbn(owners[deal]))
        board.first, board.trump = Player((declarer + 1) % 4), Denom(DDS_STRAIN[strain])
        out.append(13 - max(tricks for _, tricks in solve_board(board)))
    return out


class ExactDD:
    """Exact DDS for the contracts reached only, in a child process: DDS crashes when two threads
    call it, and a crash must not take the search down (the child is restarted once)."""

    def __init__(self):
        self.pool: ProcessPoolExecutor | None = None

    def tricks(self, owners, deal, declarer, strain) -> np.ndarray:
        """The cells asked, solved at most MAX_DEALS deals per call to the child."""
        cells = sorted(set(zip(deal.tolist(), declarer.tolist(), strain.tolist())))
        deals = sorted({cell[0] for cell in cells})
        solved = {}
        for start in range(0, len(deals), MAX_DEALS):
            chunk = set(deals[start:start + MAX_DEALS])
            part = [cell for cell in cells if cell[0] in chunk]
            solved |= dict(zip(part, self._solve(np.asarray(owners, np.int8), part)))
        return np.array([solved[cell] for cell in zip(deal.tolist(), declarer.tolist(), strain.tolist())])

    def _solve(self, owners: np.ndarray, cells: list[tuple[int, int, int]]) -> list[int]:
        for attempt in range(2):
            if self.pool is None:
                self.pool = spawn_pool(1)
            try:
                return self.pool.submit(solve_cells, owners, cells).result()
            except BrokenProcessPool:
                self.close()
                if attempt:
                    raise RuntimeError("the DDS child process died twice on these deals") from None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
