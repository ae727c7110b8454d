"""The return of every call of a self-play deal, and the DD tables it is scored with.

`duplicate` (the default, as DouZero evaluates): each deal is played at two tables with the sides
swapped. Team A sits NS at table 0 and EW at table 1, team B the other seats; team A's result is
IMP(NS score at table 0 - NS score at table 1), team B's its negative, and every call returns its
side's result. With the network in all four seats the other table is the baseline each call is
measured against, as a Butler datum is, so a board both tables bid alike returns 0.
`par`: each table alone, IMPs of the NS score against the deal's par (DD par for that dealer and
vulnerability), +/- for the side to act: no second table, but it rewards reaching par whatever the
opponents did, so it teaches the opponents' mistakes less than a duplicate does.

Tables (`DealTables`): the exact DDS table where the DD store labels the deal, else NN-DDA's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.dd import SOLVER_NAME
from bridgeflow.dataset.errors import InputError, existing
from bridgeflow.dataset.labels import read_labels
from bridgeflow.dataset.scoring import imps, imps_array, par, score_ns
from bridgeflow.training.dd.dd_estimator import DDEstimator

REWARDS = ("duplicate", "par")
TABLES = 2  # duplicate: every deal at two tables, sides swapped


@dataclass
class Played:
    """A lockstep batch of self-play: deal d at tables 0 and 1 is states[2 d], states[2 d + 1]."""

    owners: np.ndarray  # int8[D, 52]
    deal_ids: np.ndarray  # uint64[D]
    dealers: np.ndarray  # int[D]
    vuls: np.ndarray  # int[D]
    states: list[AuctionState]


def exact_store(dd_store: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(deal_ids uint64[n], owners int8[n, 52], tables int8[n, 4, 5]) of the store's exact rows."""
    labels = read_labels(existing(dd_store, "DD store (dmc.dd)"))
    labels = labels.filter(pc.equal(labels.column("solver"), SOLVER_NAME))
    return (labels.column("deal_id").to_numpy().astype(np.uint64),
            np.array(labels.column("owner").to_pylist(), np.int8).reshape(-1, 52),
            np.array(labels.column("dd_tricks").to_pylist(), np.int8).reshape(-1, 4, 5))


class DealTables:
    """DD tables by deal: exact where `exact` (deal_id -> table) has the deal, else NN-DDA."""

    def __init__(self, exact: dict[int, np.ndarray], estimator: DDEstimator | None):
        self.exact, self.estimator = exact, estimator
        self.counts = {"exact": 0, "nndda": 0}

    def tables(self, owners: np.ndarray, deal_ids: np.ndarray) -> np.ndarray:
        out = np.zeros((len(owners), 4, 5), np.int8)
        known = np.array([int(d) in self.exact for d in deal_ids], bool)
        for row in np.flatnonzero(known):
            out[row] = self.exact[int(deal_ids[row])]
        if (~known).any():
            if self.estimator is None:
                raise InputError(f"deal_id {int(deal_ids[~known][0])} has no exact DD table and no NN-DDA is given (dmc.nndda)")
            out[~known] = self.estimator.tables(owners[~known])
        self.counts["exact"] += int(known.sum())
        self.counts["nndda"] += int((~known).sum())
        return out


def ns_score(state: AuctionState, table: np.ndarray, vul: int) -> int:
    contract = state.contract()
    if contract is None:
        return 0
    tricks = int(table[contract.declarer, contract.strain])
    return score_ns(contract.level, contract.strain, contract.doubled, contract.declarer, vul, tricks)


def side_sign(state: AuctionState, table: int, reward: str) -> np.ndarray:
    """+1 / -1 per call of `state`: whether its caller's side gets the table's value or its negative
    (duplicate: team A, NS at table 0 and EW at table 1; par: NS)."""
    seats = (state.dealer + np.arange(len(state.calls))) % 4
    team_b = (seats % 2) ^ (table if reward == "duplicate" else 0)
    return np.where(team_b == 1, -1.0, 1.0)


class BridgeReward:
    """Returns of every call of a Played batch: duplicate IMPs or IMPs against par (module docstring)."""

    def __init__(self, reward: str, tables: DealTables):
        if reward not in REWARDS:
            raise ValueError(f"dmc.reward must be one of {REWARDS}, not {reward!r}")
        self.reward, self.deal_tables = reward, tables

    def returns(self, played: Played) -> list[np.ndarray]:
        """float[calls] per state, in played.states' order."""
        tables = self.deal_tables.tables(played.owners, played.deal_ids)
        out = []
        for deal, (dealer, vul) in enumerate(zip(played.dealers, played.vuls)):
            pair = played.states[TABLES * deal:TABLES * deal + TABLES]
            scores = [ns_score(state, tables[deal], int(vul)) for state in pair]
            if self.reward == "duplicate":
                values = [imps(scores[0] - scores[1])] * TABLES  # team A's, at both tables
            else:
                par_ns = par(tables[deal], int(dealer), int(vul)).score
                values = list(imps_array(np.array(scores) - par_ns))
            out += [side_sign(state, table, self.reward) * values[table] for table, state in enumerate(pair)]
        return out
