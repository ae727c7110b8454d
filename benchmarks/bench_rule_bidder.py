"""Speed and sanity of the rule-based bidder on random deals (single core).

    python benchmarks/bench_rule_bidder.py [--deals 2000] [--seed 0] [--repeat 3] [--profile]

Reports boards/s for whole auctions (deal generation excluded; CPU time is the fairer figure on a
shared machine), then the distribution of final contracts: passed out, partscore, game, slam,
doubled, average auction length, how often the fallback rule fired, how often a side with 25+ HCP
and an 8-card major fit reached game, and how many games were bid on under 23 HCP."""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections import Counter

import numpy as np

from bridgeflow.dataset.auction import replay
from bridgeflow.dataset.encodings import (
    duplicate_dealer,
    duplicate_vulnerability,
    hcp_by_seat,
    random_owner,
    suit_lengths,
)
from bridgeflow.training.bidding.rule_bidder import RuleBidder


def _boards(deals: int, seed: int) -> list[tuple[np.ndarray, int, int]]:
    return [(random_owner(seed, i), duplicate_dealer(i + 1), duplicate_vulnerability(i + 1)) for i in range(deals)]


def bid_all(bidder: RuleBidder, boards) -> tuple[list, float, float]:
    """Auctions plus wall and CPU seconds (CPU time is the fairer figure on a shared machine)."""
    wall, cpu = time.perf_counter(), time.process_time()
    auctions = [bidder.bid_deal(owner, dealer, vul) for owner, dealer, vul in boards]
    return auctions, time.perf_counter() - wall, time.process_time() - cpu


def contract_stats(boards, auctions) -> dict[str, float]:
    n = len(boards)
    kinds: Counter[str] = Counter()
    length = fallback = doubled = 0
    game_chances = games_bid = light_games = 0
    for (owner, dealer, _), decisions in zip(boards, auctions):
        calls = [d.call for d in decisions]
        state = replay(dealer, calls)  # raises on an illegal call
        assert state.finished
        length += len(calls)
        fallback += sum(d.rule == "fallback_pass" for d in decisions)
        contract = state.contract()
        hcp, lens = hcp_by_seat(owner), suit_lengths(owner)
        for side in (0, 1):
            major_fit = max(lens[side, s] + lens[side + 2, s] for s in (2, 3))
            if hcp[side] + hcp[side + 2] >= 25 and major_fit >= 8:
                game_chances += 1
                games_bid += contract is not None and contract.declarer % 2 == side and (
                    contract.level >= (3 if contract.strain == 4 else 4 if contract.strain >= 2 else 5))
        if contract is None:
            kinds["passed out"] += 1
            continue
        doubled += contract.doubled > 0
        game_level = 3 if contract.strain == 4 else 4 if contract.strain >= 2 else 5
        side = contract.declarer % 2
        light_games += contract.level >= game_level and hcp[side] + hcp[side + 2] < 23
        kinds["slam" if contract.level >= 6 else "game" if contract.level >= game_level else "partscore"] += 1
    stats = {f"{k} %": 100 * kinds[k] / n for k in ("passed out", "partscore", "game", "slam")}
    stats["doubled %"] = 100 * doubled / n
    stats["average auction length (calls)"] = length / n
    stats["fallback calls per board"] = fallback / n
    stats["game reached with 25+ HCP and an 8-card major fit %"] = 100 * games_bid / max(game_chances, 1)
    games = kinds["game"] + kinds["slam"]
    stats["games and slams bid with under 23 HCP (% of them)"] = 100 * light_games / max(games, 1)
    return stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timing passes; the fastest is reported")
    parser.add_argument("--profile", action="store_true", help="print the top functions by own time")
    args = parser.parse_args(argv)

    boards = _boards(args.deals, args.seed)
    bidder = RuleBidder()
    bid_all(bidder, boards[:50])  # warm-up
    runs = [bid_all(bidder, boards) for _ in range(args.repeat)]
    auctions = runs[0][0]
    wall, cpu = min(run[1] for run in runs), min(run[2] for run in runs)
    print(f"{len(boards)} boards: {len(boards) / cpu:,.0f} boards/s of CPU time ({cpu:.2f} s), "
          f"{len(boards) / wall:,.0f} boards/s wall clock (single core, best of {args.repeat})")
    for key, value in contract_stats(boards, auctions).items():
        print(f"  {key:55s} {value:6.2f}")
    rules = Counter(d.rule for decisions in auctions for d in decisions)
    print("  most used rules:", ", ".join(f"{name} {count}" for name, count in rules.most_common(12)))
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        bid_all(bidder, boards)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
