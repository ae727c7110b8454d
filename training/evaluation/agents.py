"""One protocol for every bidder the evaluation seats at a table, and adapters for ours.

Every bidder takes (hand, auction, dealer, vul); `RuleBidder.next_call` returns a call but
`Bidder.next_call` a probability vector, so the evaluation only talks to `Agent`, whose
`next_call` always returns a call.

`reseed` makes a table reproducible on its own: the evaluation reseeds every agent before every
table from (seed, board, table), so a board's result does not depend on which boards ran before."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.rule_bidder import RuleBidder
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, SearchResult
from bridgeflow.training.search.sampling import categorical


class Agent(Protocol):
    name: str

    def next_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> int:
        """The call (0..37) of the player to act, (dealer + len(auction)) % 4, holding `hand`."""

    def reseed(self, seed: int) -> None:
        """Restart the agent's random stream (deterministic agents ignore it)."""


class RuleAgent:
    """The deterministic SAYC-style rule bidder."""

    def __init__(self, bidder: RuleBidder | None = None, name: str = "rule"):
        self.bidder = bidder or RuleBidder()
        self.name = name

    def next_call(self, hand, auction, dealer, vul) -> int:
        return self.bidder.next_call(list(hand), list(auction), dealer, vul)

    def reseed(self, seed: int) -> None:
        pass


class BSMAgent:
    """The BSM's own policy: its likeliest call (greedy) or a call drawn from its distribution."""

    def __init__(self, bidder: Bidder, greedy: bool = True, name: str = "bsm", seed: int = 0):
        self.bidder = bidder
        self.greedy = greedy
        self.name = name
        self.rng = np.random.default_rng(seed)

    def next_call(self, hand, auction, dealer, vul) -> int:
        probs = self.bidder.next_call(list(hand), list(auction), dealer, vul)
        return int(probs.argmax()) if self.greedy else int(categorical(probs[None], self.rng)[0])

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)


class SearchAgent:
    """Monte Carlo search on top of the BSM; keeps the evidence of its last decision."""

    def __init__(self, search: MonteCarloSearch, name: str = "search"):
        self.search = search
        self.name = name
        self.last: SearchResult | None = None

    def next_call(self, hand, auction, dealer, vul) -> int:
        self.last = self.search.search(list(hand), list(auction), dealer, vul)
        return self.last.call

    def reseed(self, seed: int) -> None:
        self.search.reseed(seed)
