"""One board at its tables: the agents call in turn (`play`), each table's contract is scored with
the board's exact DD tricks, and every agent is reseeded before every table (`table_seed`), so a
board's result does not depend on which boards ran before it or in which process."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Sequence

import numpy as np
import pyarrow as pa

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.digests import seed_of
from bridgeflow.dataset.encodings import duplicate_dealer, duplicate_vulnerability, hands_from_owner
from bridgeflow.dataset.scoring import score_ns
from bridgeflow.training.search.monte_carlo import SearchResult, contract_label

from .agents import Agent, SearchAgent
from .boards import Boards


def table_seed(seed: int, match: str, deal_id: int, table: int) -> int:
    return seed_of(seed, match, deal_id, table)


def play(seats: Sequence[Agent], owner: np.ndarray, dealer: int, vul: int, timings: dict[str, list],
         sampler: dict[str, dict[str, int]] | None = None) -> AuctionState:
    """One table: the agent in each seat (N, E, S, W) calls in turn until the auction ends. Each
    decision's seconds go to `timings`, and a search agent's sampling to `sampler` (count_sampling)."""
    hands = hands_from_owner(owner)
    state = AuctionState.start(dealer)
    while not state.finished:
        agent = seats[state.to_call]
        started = time.perf_counter()
        call = agent.next_call(hands[state.to_call], list(state.calls), dealer, vul)
        timings[agent.name].append(time.perf_counter() - started)
        if sampler is not None and isinstance(agent, SearchAgent):
            count_sampling(sampler.setdefault(agent.name, dict.fromkeys(SAMPLER_COUNTS, 0)), agent.last)
        state.add(call)  # an illegal call raises IllegalCall
    return state


# Per search agent and board: its decisions; those it sampled deals for (more than one candidate);
# those where under K sampled deals fit the auction, so the sampler filled in with deals that do
# not; those where under min_fitting fit, so the BSM's call was played; deals rolled out, and of
# those the ones that do not fit.
SAMPLER_COUNTS = ("decisions", "sampled", "sampler_fallback", "bsm_fallback", "deals", "unfitting")


def count_sampling(counts: dict[str, int], result: SearchResult) -> None:
    sampled = result.generated > 0
    counts["decisions"] += 1
    counts["sampled"] += sampled
    counts["sampler_fallback"] += result.sampler_fell_back
    counts["bsm_fallback"] += sampled and result.fallback is not None
    counts["deals"] += result.samples
    counts["unfitting"] += result.unfitting if result.samples else 0


def sampler_summary(counts: dict[str, int]) -> dict:
    """How often the search's sampler fell back, as shares of the decisions it sampled for."""
    sampled, deals = counts["sampled"], counts["deals"]
    return {"decisions": counts["decisions"], "sampled": sampled,
            "sampler_fallback": counts["sampler_fallback"] / sampled if sampled else None,
            "bsm_fallback": counts["bsm_fallback"] / sampled if sampled else None,
            "unfitting_deals": counts["unfitting"] / deals if deals else None}


def table_result(state: AuctionState, table: np.ndarray, vul: int) -> tuple[int, int]:
    """(NS score, declarer's DD tricks or -1 when passed out)."""
    contract = state.contract()
    if contract is None:
        return 0, -1
    tricks = int(table[contract.declarer, contract.strain])
    return score_ns(contract.level, contract.strain, contract.doubled, contract.declarer, vul, tricks), tricks


def play_board(match: str, line_ups: list[list[Agent]], boards: Boards, index: int, seed: int) -> dict:
    """Every table of one board: its log row, without the IMPs, plus the seconds of each agent's
    decisions and each search agent's sampling counts (kept with the board, so that a resumed run
    still reports them)."""
    deal = int(boards.deal_ids[index])
    dealer, vul = duplicate_dealer(index + 1), duplicate_vulnerability(index + 1)
    timings = defaultdict(list)
    row = {"match": match, "board": index + 1, "deal_id": deal, "dealer": dealer, "vul": vul,
           "auctions": [], "contracts": [], "tricks": [], "scores_ns": [], "seconds": timings, "sampler": {}}
    for number, seats in enumerate(line_ups):
        for agent in {id(a): a for a in seats}.values():
            agent.reseed(table_seed(seed, match, deal, number))
        state = play(seats, boards.owners[index], dealer, vul, timings, row["sampler"])
        score, tricks = table_result(state, boards.tables[index], vul)
        row["auctions"].append(state.calls)
        row["contracts"].append(contract_label(state))
        row["tricks"].append(tricks)
        row["scores_ns"].append(score)
    return row


# A board's log row (boards.parquet), the IMPs added by its match.
LOG_SCHEMA = pa.schema([
    pa.field("match", pa.string()), pa.field("board", pa.int32()), pa.field("deal_id", pa.uint64()),
    pa.field("dealer", pa.int8()), pa.field("vul", pa.int8()), pa.field("auctions", pa.list_(pa.list_(pa.int8()))),
    pa.field("contracts", pa.list_(pa.string())), pa.field("tricks", pa.list_(pa.int8())),
    pa.field("scores_ns", pa.list_(pa.int32())), pa.field("imps", pa.float64()),
])
