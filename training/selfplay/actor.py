"""One self-play board: a complete auction by the current network in all four seats (or, in the
"compatible" setting, the network at N and E with the rule-based bidder as each one's partner; or,
with `against`, the network at N and S against another agent at E and W),
every network decision searched with the network as prior, sampler and rollout policy, and
recorded with the improved policy pi' it was drawn from (Lockhart et al., 3.3).

At each network decision: the prior pi is tempered (`tempered_prior`: the shipped BSM is so
sure of itself, call NLL 0.03, that pi' would stay pi); where the network's own top call has
`skip_above` or more (with `skip_on: tempered`, the tempered prior's), the search is skipped and pi'
is the tempered prior over the candidates;
else pi'(a) ~ pi(a) exp(Q(a) / T) with Q the search's mean IMPs and T = search.prior_temperature.
The call played is drawn from pi'.

The training target is the same update on the network's own prior with T / tempering:
log pi^(1/t) + Q / T = (log pi + t Q / T) / t, so it ranks the candidates as pi' does (exactly,
with no floor) but keeps the network's sharpness where the search is skipped or indifferent. pi'
itself would flatten the network every generation: unsearched, it is the tempered prior, and
repeated tempering tends to the uniform. A board is a pure function of (seed, generation, board): its
deal, its draws and the search's are all seeded from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.encodings import (
    deal_id,
    duplicate_dealer,
    duplicate_vulnerability,
    hands_from_owner,
    random_owner,
)
from bridgeflow.dataset.splits import split_of
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.rule_bidder import RuleBidder
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, improved_policy, tempered_prior
from bridgeflow.training.search.sampling import categorical

PARTNERS = ("self", "rule")
SKIP_ON = ("tempered", "prior")
TARGETS = ("soft", "search")
# the selfplay params that decide the generated decisions (the rest are the loop's other steps')
GENERATE_KEYS = ("base", "nndda", "deals", "seed", "partner", "against", "tempering", "floor", "skip_above",
                 "skip_on", "target", "search", "boards_per_task")
NETWORK_SEATS = {"self": (0, 1, 2, 3), "rule": (0, 1)}  # N and E: each with the rule bidder as partner
AGAINST_SEATS = (0, 2)  # `against`: the network N-S, the other agent E-W
NEAR_CERTAIN = "near_certain"


@dataclass
class SelfPlayConfig:
    """The `selfplay:` section of params.yaml (every stage of the loop reads it; dvc.yaml passes the
    paths and the generation list to the verbs)."""

    base: str = "data/bsm"  # generation 0: the imitation BSM the loop starts from
    nndda: str = "data/nndda"  # NN-DDA that scores the rollouts' contracts
    generations: list = field(default_factory=lambda: [{"gen": 1, "prev": 0, "init": "data/bsm"}])  # dvc.yaml's foreach
    deals: int = 24  # fresh train-split deals per generation
    seed: int = 7000  # generation g plays the deals of synth seed `seed + g`
    partner: str = "self"  # self: the network in all four seats | rule: the rule bidder partners it (compatible)
    against: str = ""  # "": the network bids E-W too | an agent (rule, ben-nosearch, bsm@FILE) bids E-W
    tempering: float = 3.0  # the prior of the soft update is pi^(1 / tempering), renormalised
    floor: float = 0.02  # ... mixed with this much of the uniform over the legal calls
    skip_above: float = 0.95  # no search where the top call has at least this ...
    skip_on: str = "prior"  # ... of the network's own prior | tempered: of the tempered prior
    target: str = "soft"  # soft: pi' ~ pi exp(Q / T), drawn from | search: the search's own call, played and learned
    search: dict = field(default_factory=dict)  # overrides of the `search:` section while generating
    boards_per_task: int = 4  # boards per unit of work (and of resumption)
    workers: int = 2  # generate: local worker processes
    imitation_records: str = "data/ingest/records"  # train: the imitation corpus (what base was trained on)
    imitation_fraction: float = 0.3  # train: share of the training auctions drawn from the imitation corpus
    train_steps: int = 100  # train: bsm steps per generation (from --init, a new lr schedule)
    train_lr: float = 3e-4  # train: its peak lr (the bsm section's, 3e-3, unlearns the imitation)
    train_warmup: int = 10
    train_anchor: float = 0.0  # train: bsm w_anchor, KL to the previous generation (0: none)
    train_gate: float = 0.0  # train: bsm --target-gate, the search's Q kept only beyond this many se (0: all)
    train_confirm: float = 0.0  # train: bsm --target-confirm, the favourite alone where the search clearly agrees
    eval_dd: str = "data/dd"  # evaluate: the DD store with the exact tables of the boards
    eval_boards: str = "40"  # evaluate: a board-list file, or N = the store's first N test-split deals
    eval_seed: int = 0
    eval_flags: dict = field(default_factory=dict)  # evaluate: more flags, e.g. {"facit": [FILE.pbn, ...]}

    def __post_init__(self):
        if self.partner not in PARTNERS:
            raise ValueError(f"selfplay.partner must be one of {PARTNERS}, not {self.partner!r}")
        if self.against and self.partner != "self":
            raise ValueError("selfplay.against goes with partner: self (the network N-S, the other agent E-W)")
        if self.skip_on not in SKIP_ON:
            raise ValueError(f"selfplay.skip_on must be one of {SKIP_ON}, not {self.skip_on!r}")
        if self.target not in TARGETS:
            raise ValueError(f"selfplay.target must be one of {TARGETS}, not {self.target!r}")
        if self.tempering <= 0 or not 0 <= self.floor < 1 or not 0 < self.skip_above <= 1:
            raise ValueError("selfplay: tempering > 0, 0 <= floor < 1, 0 < skip_above <= 1")
        if not 0 <= self.imitation_fraction < 1:
            raise ValueError("selfplay.imitation_fraction must be in [0, 1)")


def train_deals(seed: int, count: int) -> Iterator[tuple[int, np.ndarray]]:
    """The first `count` train-split deals (deal_id % 100 < 80) of synth seed `seed`: (synth
    index, owner). Board k + 1 of a generation is the k-th of them."""
    index = found = 0
    while found < count:
        owner = random_owner(seed, index)
        if split_of(deal_id(owner)) == "train":
            yield index, owner
            found += 1
        index += 1


class Actor:
    """Plays self-play boards; `search` holds the network (and, compatible, the partner's BSM);
    `opponent`, with `against`, is the agent at E-W (anything with next_call and reseed)."""

    def __init__(self, network: Bidder, search: MonteCarloSearch, config: SelfPlayConfig, opponent=None):
        if bool(config.against) != (opponent is not None):
            raise ValueError("selfplay.against names the agent at E-W: give it as `opponent` (and only then)")
        self.network, self.search, self.config, self.opponent = network, search, config, opponent
        self.seats = AGAINST_SEATS if config.against else NETWORK_SEATS[config.partner]
        # who bids the other seats, and the actor their rows name
        self.other, self.other_actor = (RuleBidder(), "rule") if config.partner == "rule" else (opponent, "opponent")

    def play(self, generation: int, board: int, owner: np.ndarray) -> list[dict]:
        """The SELFPLAY_DECISIONS rows of one board (1-based `board`), one per call in order."""
        cfg = self.config
        rng = np.random.default_rng([cfg.seed, generation, board])
        self.search.reseed(int(rng.integers(2 ** 63)))
        if self.opponent is not None:
            self.opponent.reseed(int(rng.integers(2 ** 63)))
        dealer, vul = duplicate_dealer(board), duplicate_vulnerability(board)
        hands = hands_from_owner(owner)
        state = AuctionState.start(dealer)
        base = {"generation": generation, "board": board, "deal_id": deal_id(owner), "owner": owner.tolist(),
                "dealer": dealer, "vulnerability": vul}
        rows = []
        while not state.finished:
            seat = state.to_call
            where = base | {"position": len(state.calls), "seat": seat, "auction": list(state.calls)}
            if seat in self.seats:
                row = where | self.decide(hands[seat], list(state.calls), dealer, vul, rng)
            else:
                call = self.other.next_call(hands[seat], list(state.calls), dealer, vul)
                row = where | fixed_decision(call, self.other_actor)
            rows.append(row)
            state.add(row["call"])
        return rows

    def decide(self, hand: list[int], auction: list[int], dealer: int, vul: int, rng: np.random.Generator) -> dict:
        """One network decision: searched unless near-certain, pi' and the call drawn from it."""
        cfg = self.config
        prior = self.network.next_call(hand, auction, dealer, vul)
        if cfg.target == "search":
            return self.search_decision(hand, auction, dealer, vul, prior)
        tempered = tempered_prior(prior, cfg.tempering, cfg.floor)
        candidates = self.search.candidates(tempered)
        q = se = None
        samples, skipped = 0, None
        if self.near_certain(prior, tempered):
            skipped = NEAR_CERTAIN
        else:
            result = self.search.search(hand, auction, dealer, vul, prior=tempered)
            skipped = result.fallback
            if skipped is None:
                candidates = np.array([c.call for c in result.candidates])
                q = np.array([c.mean_imps for c in result.candidates])
                se = [c.se_imps for c in result.candidates]
                samples = result.samples
        pi = tempered[candidates] / tempered[candidates].sum()
        policy = pi if q is None else improved_policy(pi, q, self.search.config.prior_temperature)
        own = prior[candidates] / prior[candidates].sum()
        target = own if q is None else improved_policy(own, q, self.search.config.prior_temperature / cfg.tempering)
        call = int(candidates[categorical(policy[None], rng)[0]])
        return {"actor": "bsm", "searched": q is not None, "skipped": skipped,
                "candidates": candidates.tolist(), "prior": prior[candidates].tolist(), "tempered": pi.tolist(),
                "q": None if q is None else q.tolist(), "se": se, "samples": samples, "policy": policy.tolist(),
                "target": target.tolist(), "call": call, "prior_best": int(np.argmax(prior)), "policy_best": int(candidates[np.argmax(policy)])}

    def near_certain(self, prior: np.ndarray, tempered: np.ndarray) -> bool:
        """The skip test: the top call holds `skip_above` of the prior `skip_on` names."""
        return (prior if self.config.skip_on == "prior" else tempered).max() >= self.config.skip_above

    def search_decision(self, hand: list[int], auction: list[int], dealer: int, vul: int, prior: np.ndarray) -> dict:
        """`target: search` (expert iteration): the call the search itself makes at test time (its
        candidates, prior bonus and last look over the network's own prior) is played and is the
        target, one-hot; where it is skipped (near-certain) or falls back, the network's top call is
        played and its own prior is the target, so its sureness stays where the search is silent."""
        cfg = self.config
        candidates = self.search.candidates(prior)
        tempered = tempered_prior(prior, cfg.tempering, cfg.floor)
        call, q, se, samples, skipped = int(np.argmax(prior)), None, None, 0, NEAR_CERTAIN
        if not self.near_certain(prior, tempered):
            result = self.search.search(hand, auction, dealer, vul, prior=prior)
            skipped = result.fallback
            if skipped is None:
                call = result.call
                candidates = np.array([c.call for c in result.candidates])
                q = np.array([c.mean_imps for c in result.candidates])
                se = [c.se_imps for c in result.candidates]
                samples = result.samples
        own = prior[candidates] / prior[candidates].sum()
        chosen = (candidates == call).astype(float)
        target = own if q is None else chosen
        tempered = tempered[candidates]
        return {"actor": "bsm", "searched": q is not None, "skipped": skipped,
                "candidates": candidates.tolist(), "prior": prior[candidates].tolist(),
                "tempered": (tempered / tempered.sum()).tolist(), "q": None if q is None else q.tolist(), "se": se,
                "samples": samples, "policy": chosen.tolist(), "target": target.tolist(), "call": call,
                "prior_best": int(np.argmax(prior)), "policy_best": call}


def fixed_decision(call: int, actor: str) -> dict:
    """A call of another agent (the rule-bidder partner, the `against` opponent) as a decision row:
    its only candidate, played for sure, and never trained on."""
    return {"actor": actor, "searched": False, "skipped": actor, "candidates": [call], "prior": [1.0],
            "tempered": [1.0], "q": None, "se": None, "samples": 0, "policy": [1.0], "target": [1.0], "call": call,
            "prior_best": call, "policy_best": call}
