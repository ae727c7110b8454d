"""One protocol for every bidder the evaluation seats at a table, adapters for ours, and the
registry that makes agents from their specs (`AgentFactory.make`).

Every bidder takes (hand, auction, dealer, vul); `RuleBidder.next_call` returns a call but
`Bidder.next_call` a probability vector, so the evaluation only talks to `Agent`, whose
`next_call` always returns a call.

A spec is KIND or KIND@CHECKPOINT. Each kind has a maker, registered with `agent_kind`: this
module's for rule | bsm | bsm-sample | search and BEN's kinds, and, for a kind another package
makes (dmc), that package's module named in REGISTERED_BY, imported by name on first use, so the
evaluation imports no package that itself imports the evaluation.

`reseed` makes a table reproducible on its own: the evaluation reseeds every agent before every
table from (seed, board, table), so a board's result does not depend on which boards ran before."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from bridgeflow.dataset.digests import file_digest
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.rule_bidder import RuleBidder
from bridgeflow.training.dd.exact_dd import ExactDD
from bridgeflow.training.model_files import model_file, shipped_model
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, SearchConfig, SearchResult, load_bidder, load_scorer
from bridgeflow.training.search.sampling import categorical

from . import ben


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


# ---------------------------------------------------------------- the registry
# kind -> make(factory, kind, checkpoint, spec) -> Agent; `checkpoint` is what follows `@` ('' if none).
Maker = Callable[["AgentFactory", str, str, str], Agent]
MAKERS: dict[str, Maker] = {}
# Kinds made by a package the evaluation does not import: the module named here registers its kind
# (with `agent_kind`) when it is imported, which `AgentFactory.make` does the first time a spec names it.
REGISTERED_BY = {"dmc": "bridgeflow.training.dmc.agent"}
AGENT_KINDS = ("rule", "bsm", "bsm-sample", "search", *REGISTERED_BY, *ben.AGENTS)


def agent_kind(*kinds: str) -> Callable[[Maker], Maker]:
    """Registers the decorated maker for `kinds`."""
    def register(make: Maker) -> Maker:
        MAKERS.update(dict.fromkeys(kinds, make))
        return make
    return register


def maker(kind: str) -> Maker | None:
    """The maker of `kind`, importing the module that registers it the first time; None when no
    agent has that kind."""
    if kind not in MAKERS and kind in REGISTERED_BY:
        importlib.import_module(REGISTERED_BY[kind])
    return MAKERS.get(kind)


class AgentFactory:
    """Builds agents from names like `search`, `bsm@path/model.pt` or `ben`; loads each model once
    (and starts this process's BEN server once), and keeps the hash of every checkpoint it loads."""

    def __init__(self, bsm: str | Path | None, nndda: str | Path | None, search: SearchConfig):
        self.bsm, self.nndda, self.search_config = bsm, nndda, search
        self.bidders: dict[Path, Bidder] = {}
        self.scorer = None
        self.checkpoints: dict[str, str] = {}  # file -> hash
        self.searches: list[MonteCarloSearch] = []

    def loaded(self, file: Path) -> Path:
        """Notes the hash of a checkpoint an agent loads; returns `file`."""
        self.checkpoints[str(file)] = file_digest(file)
        return file

    def bidder(self, path: str | Path | None) -> Bidder:
        file = model_file(path or shipped_model("BSM", "--bsm"), "BSM")
        if file not in self.bidders:
            self.bidders[file] = load_bidder(self.loaded(file), self.search_config)
        return self.bidders[file]

    def make(self, spec: str) -> Agent:
        kind, _, checkpoint = spec.partition("@")
        make = maker(kind)
        if make is None:
            raise InputError(f"unknown agent {spec!r}: one of {AGENT_KINDS}, optionally @CHECKPOINT")
        return make(self, kind, checkpoint, spec)

    def close(self) -> None:
        if isinstance(self.scorer, ExactDD):
            self.scorer.close()
        for search in self.searches:  # their exact_top DDS children
            search.close()
        ben.close_server()


@agent_kind("rule")
def rule_agent(factory: AgentFactory, kind: str, checkpoint: str, spec: str) -> Agent:
    return RuleAgent(name=spec)


@agent_kind(*ben.AGENTS)
def ben_agent(factory: AgentFactory, kind: str, checkpoint: str, spec: str) -> Agent:
    if checkpoint:
        raise InputError(f"agent {spec!r}: BEN takes no @CHECKPOINT (its models are BEN's onnx.conf)")
    for file in ben.ben_files().values():
        factory.loaded(file)
    return ben.BenAgent(kind)


@agent_kind("bsm", "bsm-sample")
def bsm_agent(factory: AgentFactory, kind: str, checkpoint: str, spec: str) -> Agent:
    return BSMAgent(factory.bidder(checkpoint or factory.bsm), greedy=kind == "bsm", name=spec)


@agent_kind("search")
def search_agent(factory: AgentFactory, kind: str, checkpoint: str, spec: str) -> Agent:
    bidder = factory.bidder(checkpoint or factory.bsm)
    if factory.scorer is None:
        factory.scorer = load_scorer(factory.search_config.dd, factory.nndda)
        if factory.search_config.dd == "nndda":
            factory.loaded(model_file(factory.nndda or shipped_model("NN-DDA", "--nndda"), "NN-DDA"))
    opponents = factory.bidder(factory.search_config.opponents) if factory.search_config.opponents else None
    factory.searches.append(MonteCarloSearch(bidder, factory.scorer, factory.search_config, opponents=opponents))
    return SearchAgent(factory.searches[-1], name=spec)
