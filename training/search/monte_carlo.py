"""Monte Carlo bidding search (BSM paper, Algorithm 4; DeepMind's extended Borel search as options),
and the `bridgeflow bid` command:

    bridgeflow bid --hand K843.Q92.A75.J64 --auction '1H P' --dealer N --vul none \
        --bsm data/bsm --nndda data/nndda [--params params.yaml] [--set key=value ...] [--json]

For the player to call: sample K deals consistent with the auction (sampling.py), and for each
candidate call (the BSM's top k, every legal call, or the likeliest up to a share of the prior)
roll the auction out to its end on every deal with the BSM in all four seats (greedy or sampled;
one batched BSM call per step over candidates x deals, each seat's recurrent state kept so that it
reads only the calls since its last), score the final contract double dummy for the player's side
(`dd: nndda`, every table in one NN-DDA pass; or `dd: dds`, exact DDS in a child process for the
contracts reached only; or NN-DDA, then exact DDS for the `exact_top` best), and turn scores into
IMPs against a datum per deal:

- `imps_vs: mean` (default): the mean score of all candidates on that deal, as a Butler datum;
  the BSM paper only says imp() of the final contract's score, and a datum shared by every
  candidate keeps their IMPs comparable;
- `best`: the best other candidate on that deal (IMPs lost to hindsight);
- `prior`: the BSM's own first choice (how much the search gains over the raw policy).

The call chosen maximises mean IMPs plus a bonus for the BSM's belief in it: by default BEN's,
prior_weight x P_BSM(call) (smaller once the opponents have bid); or prior_temperature x log
P_BSM(call) (`prior: log`): 0 replaces the prior (BSM paper), > 0 is DeepMind's soft update
pi'(a) ~ pi(a) exp(Q(a) / T) (`improved_policy`, the self-play target). Calls the BSM gives less
than `min_prior` are not searched (BEN's threshold). Every candidate's mean IMPs, standard error,
number of deals and final-contract distribution come back as evidence. A caller may give the prior (self-play gives a
tempered one, `tempered_prior`) and a second BSM for the partner's calls in sampling and rollouts
(DeepMind's "compatible" setting: the partner's own policy, not the searcher's); `opponents` names
a BSM for the opponents' calls there (a model of how they bid, not of how we do). With `last_look`,
when Pass could be our last call the cheapest bid of each strain and X/XX are compared too (as
BEN's check_final_contract looks before a final Pass). With `left_in`, a redouble is worth, deal by
deal, the worse of its rollout and the contract redoubled and passed out: the opponents may always
leave it in."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np
import torch

from bridgeflow.dataset.auction import AuctionBatch, AuctionState, Contract, parse_decision, replay
from bridgeflow.dataset.encodings import (
    DOUBLE,
    NUM_CALLS,
    PASS,
    REDOUBLE,
    SEATS,
    VUL_BOTH,
    VUL_EW,
    VUL_NAMES,
    VUL_NS,
    call_name,
)
from bridgeflow.dataset.scoring import contract_scores, imps_array
from bridgeflow.training.bidding import keycards
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_model import check_precision
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.dd.exact_dd import ExactDD
from bridgeflow.training.model_files import DEFAULT_HELP, shipped_model
from bridgeflow.training.params import ParamsArguments

from .sampling import SELECTIONS, Samples, categorical, sample_deals


@dataclass
class SearchConfig:
    """The `search:` section of params.yaml."""

    samples: int = 64  # K deals kept per decision
    oversample: int = 5  # candidates generated = oversample x samples (BSM paper: 5)
    gamma: float = 0.9  # discount of later calls in the likelihood score (0 < gamma <= 1)
    selection: str = "top"  # top: the K most likely (BSM paper) | proportional: drawn ~ likelihood (DeepMind)
    min_call_prob: float = 0.001  # a deal fits when the BSM gives every earlier call at least this
    min_fitting: int = 1  # fewer fitting deals than this: play the BSM's own call, no search
    resample: int = 2  # fewer than K fit: generate oversample x K more deals, up to this many times
    relax: int = 1  # still fewer than K fit: leave the least likely earlier calls out of the fit test, up to this many
    candidates: str = "mass"  # topk: the BSM's k likeliest calls | all: every legal call | mass: the likeliest up to `mass`
    topk: int = 3
    mass: float = 0.99  # candidates=mass: the likeliest calls until they hold this share of the prior (at least 2)
    max_candidates: int = 8  # candidates=mass: at most this many
    min_prior: float = 0.05  # calls the BSM gives less than this are no candidates (BEN: 0.10 .. 0.03); one left: no search
    last_look: bool = True  # our Pass may be our last call: compare the cheapest bid of each strain and X/XX too
    last_look_prior: float = 0.05  # their prior counts as at least this in the choice (lower: a rescue needs more IMPs)
    rollout: str = "greedy"  # greedy | sample: the BSM's calls in the rollouts
    dd: str = "nndda"  # nndda | dds: exact DDS of the contracts reached, in a child process
    nndda_scores: str = "expected"  # dd=nndda: argmax (the score of the likeliest trick count) | expected (over its distribution)
    exact_top: int = 0  # dd=nndda: rescore this many best candidates with exact DDS on the same deals (0: none)
    left_in: bool = True  # our redouble scores, deal by deal, the worse of its rollout and the contract redoubled and passed out
    imps_vs: str = "mean"  # mean | best | prior: the datum each candidate's score is IMPed against
    prior_temperature: float = 2.0  # IMPs per nat of log P_BSM(call) (prior=log, and self-play's soft update); 0: none
    prior: str = "linear"  # log: prior_temperature x log P | linear: prior_weight x P (BEN's bonus for the network's calls)
    prior_weight: float = 5.0  # prior=linear: IMPs for a sure call when only our side has bid (BEN: 200 points / 25 = 8)
    prior_weight_contested: float = 2.4  # prior=linear: the same once they have bid (BEN: 60 points / 25)
    keycards: bool = True  # BSM-based agents (bsm, search): 4NT's answers, the asker's next call and 5NT's answers by rule (keycards.py)
    opponents: str = ""  # a BSM (folder or model.pt) for the opponents' calls in sampling and rollouts; "": the searcher's own
    precision: str = "fp32"  # BSM-based agents: fp32 | bf16, the BSMs' matrix products in bfloat16 (Bidder.arithmetic)
    seed: int = 0

    def __post_init__(self):
        choices = {"selection": SELECTIONS, "candidates": ("topk", "all", "mass"), "rollout": ("greedy", "sample"),
                   "dd": ("nndda", "dds"), "nndda_scores": ("argmax", "expected"), "imps_vs": ("mean", "best", "prior"),
                   "prior": ("log", "linear")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"search.{name} must be one of {allowed}, not {getattr(self, name)!r}")
        if self.samples < 1 or self.oversample < 1 or self.topk < 1 or not 0 < self.gamma <= 1:
            raise ValueError("search: samples, oversample, topk >= 1 and 0 < gamma <= 1")
        if not 0 < self.mass <= 1 or self.max_candidates < 2 or not 0 < self.last_look_prior <= 1:
            raise ValueError("search: 0 < mass <= 1, max_candidates >= 2 and 0 < last_look_prior <= 1")
        if not 0 <= self.min_prior < 1:
            raise ValueError(f"search.min_prior must be in [0, 1), not {self.min_prior}")
        if min(self.resample, self.relax, self.exact_top) < 0 or self.exact_top == 1:
            raise ValueError("search: resample, relax >= 0; exact_top 0 (none) or >= 2 (the candidates compared exactly)")
        check_precision(self.precision)


class DDScorer(Protocol):
    def tricks(self, owners: np.ndarray, deal: np.ndarray, declarer: np.ndarray, strain: np.ndarray) -> np.ndarray:
        """int[n]: double-dummy tricks of declarer[i] in strain[i] on deal owners[deal[i]]."""


class EstimatedDD:
    """NN-DDA: every deal's 20-cell table in one batched forward pass."""

    def __init__(self, estimator: DDEstimator):
        self.estimator = estimator

    def tricks(self, owners, deal, declarer, strain) -> np.ndarray:
        return self.estimator.tables(owners)[deal, declarer, strain]

    def trick_probabilities(self, owners, deal, declarer, strain) -> np.ndarray:
        """float[n, 14]: P(declarer[i] takes k tricks in strain[i] on deal owners[deal[i]])."""
        return self.estimator.trick_distributions(owners)[deal, declarer, strain]


@dataclass
class Candidate:
    call: int
    prior: float  # P_BSM(call)
    mean_imps: float
    se_imps: float
    samples: int
    mean_score: float  # raw points for the player's side
    contracts: dict[str, int]  # final contract ('4SX-N', 'Pass') -> deals
    exact_imps: float | None = None  # exact_top: mean IMPs against the finalists' datum, exact DD scores
    last_look: bool = False  # added by the last look or the grand slam check, not among the prior's candidates


@dataclass
class SearchResult:
    call: int
    prior_call: int  # the BSM's most likely call
    candidates: list[Candidate]
    samples: int  # deals rolled out
    fitting: int  # sampled candidates that fit the auction
    generated: int  # 0: the sampler did not run (one candidate call)
    unfitting: int  # deals the sampler kept that do not fit the auction: its fallback when under K fit
    fallback: str | None  # why the search did not run (the BSM's call was played), or None
    seconds: float
    relaxed: int = 0  # earlier calls the sampler left out of its fit test (`relax`)
    position: str = ""  # position_kind: opening | uncontested | defending | competitive

    @property
    def sampler_fell_back(self) -> bool:
        """Too few sampled deals fit the auction: the sampler filled in with deals that do not."""
        return self.unfitting > 0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["call"], out["prior_call"] = call_name(self.call), call_name(self.prior_call)
        for c in out["candidates"]:
            c["call"] = call_name(c["call"])
        return out

    def format(self) -> str:
        lines = [f"call: {call_name(self.call)}   (BSM alone: {call_name(self.prior_call)})",
                 f"deals: {self.samples} rolled out; {self.fitting} of {self.generated} sampled fit the auction;"
                 f" {self.seconds * 1000:.0f} ms" if self.generated else f"no deals sampled; {self.seconds * 1000:.0f} ms"]
        if self.sampler_fell_back:
            lines.append(f"sampler fallback: {self.unfitting} of the deals kept do not fit the auction")
        if self.relaxed:
            lines.append(f"sampler: the {self.relaxed} least likely earlier calls left out of the fit test")
        if self.fallback:
            lines.append(f"fallback: {self.fallback}")
        if self.candidates:
            lines.append(f"{'call':>5} {'prior':>6} {'IMPs':>7} {'se':>5} {'n':>4} {'score':>7}  contracts")
        for c in self.candidates:
            top = ", ".join(f"{name} {n}" for name, n in list(c.contracts.items())[:5])
            lines.append(f"{call_name(c.call):>5} {c.prior:6.3f} {c.mean_imps:7.2f} {c.se_imps:5.2f} {c.samples:4d}"
                         f" {c.mean_score:7.0f}  {top}")
        return "\n".join(lines)


def contract_label(state: AuctionState) -> str:
    return label(state.contract())


def label(contract: Contract | None) -> str:
    """'4SX-N', or 'Pass' for a passed-out board."""
    return "Pass" if contract is None else f"{contract}-{SEATS[contract.declarer]}"


def contract_labels(auctions: AuctionBatch) -> list[str]:
    """label() of every row's final contract."""
    return [label(Contract(*map(int, row)) if row[0] else None) for row in zip(*auctions.contracts())]


def tempered_prior(prior: np.ndarray, temperature: float = 1.0, floor: float = 0.0) -> np.ndarray:
    """float[38]: pi^(1 / temperature) renormalised over the legal calls (prior > 0), then mixed
    with `floor` of the uniform over them. A near-deterministic BSM (call NLL 0.03) leaves the soft
    update nothing to move; a temperature > 1 or a floor lets the search's Q values count."""
    legal = prior > 0
    tempered = np.where(legal, np.power(np.where(legal, prior, 1.0), 1.0 / temperature), 0.0)
    tempered /= tempered.sum()
    return (1.0 - floor) * tempered + floor * legal / legal.sum()


def improved_policy(prior: np.ndarray, imps: np.ndarray, temperature: float) -> np.ndarray:
    """float[n]: DeepMind's soft update over n candidate calls, pi'(a) ~ pi(a) exp(Q(a) / T), with
    `prior` their pi and `imps` their Q; T = 0 puts all the mass on the best Q (the likelier on ties)."""
    if temperature == 0:
        return np.eye(len(imps))[int(np.argmax(imps))]
    logits = np.log(prior) + np.asarray(imps, float) / temperature
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


class MonteCarloSearch:
    """Search with one BSM (sampling, rollouts in all seats; or others for the searcher's partner
    and for the opponents) and one DD scorer."""

    def __init__(self, bidder: Bidder, dd: DDScorer, config: SearchConfig = SearchConfig(),
                 partner: Bidder | None = None, exact: DDScorer | None = None, opponents: Bidder | None = None):
        """`exact`: the exact scorer of `exact_top` (None: one of its own, started when first
        needed; `close` ends it). `opponents`: the BSM that bids for LHO and RHO (None: `bidder`)."""
        self.bidder = bidder
        self.dd = dd
        self.config = config
        self.partner = partner
        self.opponents = opponents
        self.exact, self.owns_exact = exact, exact is None
        self.rng = np.random.default_rng(config.seed)

    def close(self) -> None:
        if self.owns_exact and isinstance(self.exact, ExactDD):
            self.exact.close()

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def candidates(self, prior: np.ndarray) -> np.ndarray:
        """Calls to evaluate, likeliest first: all legal calls, or the top k by prior, or the likeliest
        until they hold `mass` of the prior (at least 2, at most max_candidates), of these the BSM's
        own call and those it gives at least `min_prior`."""
        cfg = self.config
        legal = np.flatnonzero(prior > 0)
        order = legal[np.argsort(-prior[legal], kind="stable")]
        if cfg.candidates == "all":
            return order
        if cfg.candidates == "topk":
            order = order[:cfg.topk]
        else:
            covered = np.cumsum(prior[order]) >= cfg.mass * prior[order].sum() * (1 - 1e-9)
            order = order[:min(max(int(np.argmax(covered)) + 1, 2), cfg.max_candidates)]
        return order[(prior[order] >= cfg.min_prior) | (np.arange(len(order)) == 0)]

    def rollout(self, owners: np.ndarray, auction: Sequence[int], dealer: int, vul: int,
                first_calls: Sequence[int]) -> AuctionBatch:
        """The finished auctions, row c * K + d for candidate c on deal d: `auction` + the candidate,
        then the BSM for every seat (the partner's BSM for the searcher's partner, if given). Each
        (candidate, deal, seat) keeps its BSM state (Bidder.streams: the auction before the
        candidate is read once, then each seat reads only the calls since its last), and every step
        is one batched BSM call over the unfinished auctions (all of one length: one seat to call)."""
        deals, size = len(owners), len(first_calls) * len(owners)
        hands = np.arange(4)[None, :, None] == np.asarray(owners)[:, None, :]  # bool[deal, seat, 52]
        player = (dealer + len(auction)) % 4
        if (hands[:, player] != hands[:1, player]).any():
            raise ValueError("the deals of a rollout must give the player to call one hand")
        seat_rows = {}  # seat -> (its streams, width, column): auction a's stream is a * width + column
        # The player holds the same hand on every deal: its stream reads the auction once, for all.
        seat_rows[player] = (self.bidder.streams(hands[:1, player], [player], dealer, vul, auction).tile(size), 1, 0)
        for bidder, seats in self.seat_bidders(player):
            group = bidder.streams(hands[:, seats].reshape(-1, 52), np.tile(seats, deals), dealer, vul, auction)
            group.tile(len(first_calls))
            seat_rows |= {seat: (group, len(seats), column) for column, seat in enumerate(seats)}
        auctions = AuctionBatch.replay(dealer, auction, size)
        active, made = np.arange(size), np.repeat(np.asarray(first_calls, np.int16), deals)
        while True:
            step = np.full(size, -1, np.int16)
            step[active] = made
            auctions.add(step)
            active = active[~auctions.finished[active]]
            if not len(active):
                return auctions
            seat = int(auctions.to_call[active[0]])
            group, width, column = seat_rows[seat]
            so_far, legal, rows = np.stack(auctions.calls, axis=1)[active], auctions.legal()[active], active * width + column
            if seat == player:  # one hand on every deal: equal auctions, equal answers; ask once per auction
                _, first, inverse = np.unique(so_far, axis=0, return_index=True, return_inverse=True)
                probs = group.call_probs(rows[first], so_far[first], legal[first])[inverse.reshape(-1)]
            else:
                probs = group.call_probs(rows, so_far, legal)
            made = probs.argmax(axis=1) if self.config.rollout == "greedy" else categorical(probs, self.rng)

    def seat_bidders(self, player: int) -> list[tuple[Bidder, list[int]]]:
        """(BSM, the seats it bids for) over the three seats other than `player`'s: the partner's
        and the opponents' BSMs where given, `bidder` for the rest."""
        partner_seat, opponent_seats = (player + 2) % 4, [(player + 1) % 4, (player + 3) % 4]
        own = ([partner_seat] if self.partner is None else []) + (opponent_seats if self.opponents is None else [])
        return [(bidder, sorted(seats)) for bidder, seats in
                [(self.bidder, own), (self.partner, [partner_seat]), (self.opponents, opponent_seats)]
                if bidder is not None and seats]

    def redouble_left_in(self, auctions: AuctionBatch, owners: np.ndarray, auction: Sequence[int], dealer: int,
                         vul: int, candidate: int) -> AuctionBatch:
        """`auctions` with the rollout of our redouble (candidate `candidate`) replaced, on each deal
        where it scores worse for us, by the contract redoubled and passed out. The opponents can
        always leave a redouble in; in the rollouts, the BSM, which has rarely seen one, has them
        run from it on deals where they should not (and our partner pull it as if for rescue)."""
        player, deals = (dealer + len(auction)) % 4, len(owners)
        left = AuctionBatch.replay(dealer, [*auction, REDOUBLE, PASS, PASS, PASS], len(auctions.length))
        rows = np.array([candidate])
        worse = np.zeros((len(auctions.length) // deals, deals), bool)
        worse[candidate] = self.scores(left, owners, vul, player, rows)[0] < self.scores(auctions, owners, vul, player, rows)[0]
        return auctions.where(worse.reshape(-1), left)

    def scores(self, auctions: AuctionBatch, owners: np.ndarray, vul: int, player: int,
               candidates: np.ndarray | None = None, deals: np.ndarray | None = None,
               dd: DDScorer | None = None) -> np.ndarray:
        """float[candidate, deal]: each final contract's DD score for the player's side (rows of
        `auctions` candidate-major, as `rollout` returns them), by `dd` (default: the search's
        scorer), for the `candidates` and `deals` (indices) given (default: all)."""
        candidates = np.arange(len(auctions.length) // len(owners)) if candidates is None else candidates
        deals = np.arange(len(owners)) if deals is None else deals
        level, strain, doubled, declarer = (x.reshape(-1, len(owners))[np.ix_(candidates, deals)]
                                            for x in auctions.contracts())
        played, scorer = level > 0, dd or self.dd
        vulnerable = np.where(declarer % 2 == 0, vul in (VUL_NS, VUL_BOTH), vul in (VUL_EW, VUL_BOTH))
        on_deal = deals[np.nonzero(played)[1]]
        if self.config.nndda_scores == "expected" and isinstance(scorer, EstimatedDD):
            # The score averaged over NN-DDA's trick distribution: a contract it thinks 50:50 to make
            # scores between making and failing, not whichever side of the line the argmax fell.
            probs = scorer.trick_probabilities(owners, on_deal, declarer[played], strain[played])
            outcomes = contract_scores(*(x[played][:, None] for x in (level, strain, doubled, vulnerable)), np.arange(14))
            points = np.zeros(level.shape)
            points[played] = (probs * outcomes).sum(axis=1)
        else:
            tricks = np.zeros(level.shape, np.int64)
            tricks[played] = scorer.tricks(owners, on_deal, declarer[played], strain[played])
            points = contract_scores(level, strain, doubled, vulnerable, tricks).astype(float)
        return np.where(declarer % 2 == player % 2, points, -points)

    def imps(self, scores: np.ndarray) -> np.ndarray:
        """float[candidate, deal] IMPs of each candidate against the configured datum on that deal."""
        if self.config.imps_vs == "mean":
            datum = scores.mean(axis=0, keepdims=True)
        elif self.config.imps_vs == "prior":
            datum = scores[:1]  # candidates come likeliest first
        else:
            others = np.where(np.eye(len(scores), dtype=bool)[..., None], -np.inf, scores[None])
            datum = others.max(axis=1) if len(scores) > 1 else scores
        return imps_array(scores - datum).astype(float)

    def search(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int,
               prior: np.ndarray | None = None) -> SearchResult:
        """The searched call and its evidence; `prior` (float[38], 0 = illegal) replaces the BSM's
        own call probabilities as the candidates' order and pi of the soft update."""
        started = time.perf_counter()
        cfg = self.config
        player = (dealer + len(auction)) % 4
        if prior is None:
            prior = self.bidder.next_call(list(hand), list(auction), dealer, vul)
        calls = self.candidates(prior)
        prior_call = int(calls[0])
        added = np.zeros(0, np.int64)
        if cfg.last_look and PASS in calls and pass_may_be_last(state := replay(dealer, auction)):
            added = alternatives(state)
        if self.bidder.keycards:  # after the king answer (or the queen's) the grand is the question: always compared
            held = np.zeros(52, bool)
            held[list(hand)] = True
            added = np.union1d(added, keycards.grand_slams(held, list(auction))).astype(np.int64)
        if len(added):
            added = np.setdiff1d(added, calls)
            calls = np.concatenate([calls, added])
            calls = calls[np.argsort(-prior[calls], kind="stable")]  # still likeliest first
        choice_prior = np.where(np.isin(calls, added), np.maximum(prior[calls], cfg.last_look_prior), prior[calls])

        def done(call: int, candidates: list[Candidate], k: int, why: str | None, sampled: Samples | None = None):
            fitting, generated, unfitting, relaxed = (
                (sampled.fitting, sampled.generated, len(sampled.owners) - sampled.kept_fitting, sampled.relaxed)
                if sampled else (0, 0, 0, 0))
            return SearchResult(call, prior_call, candidates, k, fitting, generated, unfitting, why,
                                time.perf_counter() - started, relaxed, position_kind(auction, dealer))

        if len(calls) == 1:
            runner_up = np.sort(prior)[-2]
            cut = f" (every other call under min_prior {cfg.min_prior:g})" if 0 < runner_up < cfg.min_prior else ""
            return done(prior_call, [], 0, "one candidate call" + cut)
        sampled = sample_deals(self.bidder, hand, auction, dealer, vul, cfg.samples, self.rng, cfg.oversample,
                               cfg.gamma, cfg.selection, cfg.min_call_prob, self.seat_bidders(player), cfg.resample,
                               cfg.relax)
        if sampled.fitting < cfg.min_fitting:
            return done(prior_call, [], 0,
                        f"{sampled.fitting} sampled deals fit the auction (min_fitting {cfg.min_fitting})", sampled)
        auctions = self.rollout(sampled.owners, auction, dealer, vul, calls)
        if cfg.left_in and REDOUBLE in calls:
            auctions = self.redouble_left_in(auctions, sampled.owners, auction, dealer, vul, list(calls).index(REDOUBLE))
        scores = self.scores(auctions, sampled.owners, vul, player)
        labels = np.array(contract_labels(auctions), object).reshape(len(calls), -1)
        imps = self.imps(scores)
        k = scores.shape[1]
        se = imps.std(axis=1, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(len(calls))
        candidates = [
            Candidate(int(call), float(prior[call]), float(imps[i].mean()), float(se[i]), k, float(scores[i].mean()),
                      dict(Counter(labels[i]).most_common()), last_look=bool(call in added))
            for i, call in enumerate(calls)
        ]
        bonus = prior_bonus(cfg, choice_prior, position_kind(auction, dealer))
        value = imps.mean(axis=1) + bonus
        if cfg.exact_top and cfg.dd == "nndda":  # NN-DDA screens, exact DDS decides between the finalists
            finalists = np.sort(np.argsort(-value, kind="stable")[:cfg.exact_top])  # likeliest first, as calls
            # Where every finalist reaches one contract their scores are equal, whatever the tricks
            # (IMPs 0 against their datum): only the other deals need DDS.
            reached = np.stack([x.reshape(len(calls), -1)[finalists] for x in auctions.contracts()])
            differ = np.flatnonzero((reached != reached[:, :1]).any(axis=(0, 1)))
            if self.exact is None:
                self.exact = ExactDD()
            exact_scores = scores[finalists]
            exact_scores[:, differ] = self.scores(auctions, sampled.owners, vul, player, finalists, differ, self.exact)
            exact = self.imps(exact_scores).mean(axis=1)
            for i, exact_imps in zip(finalists, exact):
                candidates[i].exact_imps = float(exact_imps)
            value = np.full(len(calls), -np.inf)
            value[finalists] = exact + bonus[finalists]
        best = int(calls[int(np.argmax(value))])  # ties: the likelier call (argmax takes the first)
        return done(best, candidates, k, None, sampled)


def prior_bonus(cfg: SearchConfig, prior: np.ndarray, kind: str) -> np.ndarray:
    """IMPs added to each candidate's mean IMPs for the BSM's belief in it: `prior_temperature` x
    log P (the soft update), or BEN's bonus, linear in P and larger while only our side has bid."""
    if cfg.prior == "log":
        return cfg.prior_temperature * np.log(prior)
    return (cfg.prior_weight if kind in ("opening", "uncontested") else cfg.prior_weight_contested) * prior


def position_kind(auction: Sequence[int], dealer: int) -> str:
    """Who has bid so far, seen by the player to call: nobody (opening), only our side
    (uncontested), only theirs (defending), both (competitive): where the sampler falls back."""
    player = (dealer + len(auction)) % 4
    sides = {(dealer + t - player) % 2 for t, call in enumerate(auction) if call > REDOUBLE}  # 0 ours, 1 theirs
    return {frozenset(): "opening", frozenset({0}): "uncontested", frozenset({1}): "defending"}.get(frozenset(sides), "competitive")


def pass_may_be_last(state: AuctionState) -> bool:
    """Our Pass ends the auction, or passes after it would before we call again (LHO's, then
    partner's): the last look's moment (BEN's check_final_contract looks before a final Pass)."""
    return state.last_bid >= 0 or state.passes_in_row == 3


def alternatives(state: AuctionState) -> np.ndarray:
    """The last look's calls: the cheapest legal bid in each strain, and double or redouble when legal."""
    legal = state.legal_mask()
    bids = [next((call for call in range(3 + strain, NUM_CALLS, 5) if legal[call]), None) for strain in range(5)]
    found = {call for call in bids if call is not None} | set(np.flatnonzero(legal[[DOUBLE, REDOUBLE]]) + DOUBLE)
    return np.array(sorted(found), np.int64)  # int even when empty (after 7NT: no bid, no X/XX)


def load_bidder(path: str | Path, config: SearchConfig) -> Bidder:
    """A BSM as the search and the bsm agent use it: keycards and precision from `search:`."""
    return Bidder.load(path, keycards=config.keycards, precision=config.precision)


def load_scorer(kind: str, nndda: str | Path | None) -> DDScorer:
    """NN-DDA from a file or its training folder (nndda.pt; None: the shipped one), or exact DDS."""
    if kind == "dds":
        return ExactDD()
    return EstimatedDD(DDEstimator.load(nndda or shipped_model("NN-DDA", "--nndda, or --set dd=dds for exact DDS")))




def run(argv: list[str] | None = None) -> SearchResult:
    parser = argparse.ArgumentParser(prog="bridgeflow bid", description="Monte Carlo bidding search for one decision.")
    parser.add_argument("--hand", required=True, help="the hand, PBN order S.H.D.C: K843.Q92.A75.J64")
    parser.add_argument("--auction", default="", help="calls so far from the dealer: '1H P' ('' = none)")
    parser.add_argument("--dealer", required=True, help="N, E, S or W")
    parser.add_argument("--vul", default="none", help="none, ns, ew or both")
    parser.add_argument("--bsm", help="BSM checkpoint (training folder or model.pt); " + DEFAULT_HELP["BSM"])
    parser.add_argument("--nndda", help="NN-DDA model (folder with nndda.pt, or the file); default: models/nndda")
    params = ParamsArguments(parser, ["search"], bare="search")
    parser.add_argument("--json", action="store_true", help="print the evidence as JSON")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # small batches in sequence: one thread beats two on a busy machine
    config = params.parsed(args).load(SearchConfig, "search")
    try:
        decision = parse_decision(args.hand, args.auction, args.dealer, args.vul)
    except ValueError as error:
        parser.error(str(error))
    hand, auction, dealer, vul, state = (decision.hand, decision.auction, decision.dealer, decision.vulnerability,
                                         decision.state)
    bidder = load_bidder(args.bsm or shipped_model("BSM", "--bsm"), config)
    opponents = load_bidder(config.opponents, config) if config.opponents else None
    scorer = load_scorer(config.dd, args.nndda)
    try:
        result = MonteCarloSearch(bidder, scorer, config, opponents=opponents).search(hand, auction, dealer, vul)
    finally:
        if isinstance(scorer, ExactDD):
            scorer.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(f"{SEATS[state.to_call]} to call, dealer {SEATS[dealer]}, vulnerable: {VUL_NAMES[vul]}")
        print(result.format())
    return result
