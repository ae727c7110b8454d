"""A toy deterministic bidder and a records writer: complete auctions for the BSM tests, the
benchmark and smoke runs, before the project's rule-based corpus exists.

Not a bridge system: a few natural rules whose calls are a pure function of (hand, auction), so a
model can learn them, and whose bids carry information worth believing (an opening shows 12+ HCP
and the longest suit). Every player makes at most one non-pass call, so auctions stay short."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import (
    CARD_HCP,
    DOUBLE,
    NT,
    PASS,
    REDOUBLE,
    bid_index,
    bid_strain,
    deal_id,
    deal_to_pbn,
    duplicate_dealer,
    duplicate_vulnerability,
    is_bid,
    random_owner,
)
from bridgeflow.dataset.schema import RECORDS


def _cheapest(state: AuctionState, strain: int) -> int | None:
    """The lowest legal bid in `strain` (None above 7)."""
    for level in range(1, 8):
        call = bid_index(level, strain)
        if call > state.last_bid:
            return call
    return None


def toy_call(cards: np.ndarray, state: AuctionState) -> int:
    """The toy system's call for the player to act holding `cards` (card indices)."""
    seat = state.to_call
    hcp = int(CARD_HCP[cards].sum())
    lengths = np.bincount(np.asarray(cards) // 13, minlength=4)
    longest = 3 - int(np.argmax(lengths[::-1]))  # ties go to the higher suit
    seats = [(state.dealer + i) % 4 for i in range(len(state.calls))]
    if any(call != PASS and who == seat for call, who in zip(state.calls, seats)):
        return PASS
    legal = state.legal_mask()
    if state.last_bid < 0:
        if hcp < 12:
            return PASS
        balanced = lengths.min() >= 2 and lengths.max() <= 5
        return bid_index(1, NT) if balanced and 15 <= hcp <= 17 else bid_index(1, longest)
    partner_bids = [c for c, who in zip(state.calls, seats) if is_bid(c) and who == (seat + 2) % 4]
    opponents_bid = any(is_bid(c) and who % 2 != seat % 2 for c, who in zip(state.calls, seats))
    if state.doubled == 1 and legal[REDOUBLE] and hcp >= 10:
        return REDOUBLE
    if partner_bids and not opponents_bid:
        if hcp < 6:
            return PASS
        strain = bid_strain(partner_bids[0])
        if strain != NT and lengths[strain] >= 3:
            call = _cheapest(state, strain)
        elif lengths[longest] >= 4 and longest != strain:
            call = _cheapest(state, longest)
        else:
            call = _cheapest(state, NT)
        return call if call is not None else PASS
    if opponents_bid and not partner_bids:
        if legal[DOUBLE] and hcp >= 13:
            return DOUBLE
        call = _cheapest(state, longest)
        if hcp >= 10 and lengths[longest] >= 5 and call is not None and call < bid_index(3, 0):
            return call
    return PASS


def toy_auction(owner: np.ndarray, dealer: int) -> list[int]:
    """The complete auction the toy system bids on this deal."""
    state = AuctionState.start(dealer)
    hands = [np.flatnonzero(owner == seat) for seat in range(4)]
    while not state.finished:
        state.add(toy_call(hands[state.to_call], state))
    return state.calls


def toy_rows(deals: int, seed: int, source_format: str = "pbn", start: int = 0) -> list[dict]:
    """RECORDS rows for boards start..start+deals-1 (deal, dealer, vulnerability, toy auction)."""
    rows = []
    for index in range(start, start + deals):
        owner = random_owner(seed, index)
        dealer, vul = duplicate_dealer(index + 1), duplicate_vulnerability(index + 1)
        rows.append({
            "record_id": index, "deal_id": deal_id(owner), "owner": owner.tolist(), "deal": deal_to_pbn(owner),
            "dealer": dealer, "vulnerability": vul, "board": index + 1,
            "auction": toy_auction(owner, dealer), "auction_complete": True,
            "source_file": f"toy-{seed}", "source_format": source_format, "source_position": index, "source_line": 0,
        })
    return rows


def write_toy_records(folder: Path, deals: int, seed: int = 0, shards: int = 1, source_format: str = "pbn") -> list[Path]:
    """Write `deals` toy boards as `shards` Parquet files with the RECORDS schema."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, deals, shards + 1).astype(int)
    paths = []
    for shard, (first, last) in enumerate(zip(bounds[:-1], bounds[1:])):
        rows = toy_rows(int(last - first), seed, source_format, start=int(first))
        path = folder / f"toy-{seed}-{source_format}-{shard:03d}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=RECORDS), path)
        paths.append(path)
    return paths
