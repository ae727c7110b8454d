"""Deals consistent with an auction, seen by the player to call (BSM paper, Algorithms 1-3).

1. Partner's hand from the BSM's beliefs (Algorithm 1): HCP first, then a set of honours worth
   exactly that (drawn among all such sets, in proportion to the card beliefs), then suit lengths
   that fit those honours, then spot cards.
2. The other 26 cards split between the opponents by the card-ownership beliefs (Algorithm 2),
   exactly 13 each.
3. `oversample` x K candidates are generated and scored by the BSM's confidence in the calls
   actually made: sum over earlier calls t of gamma^t * log P(call t | the caller's sampled hand),
   so later calls weigh less (Algorithm 3's discount). Kept: the K best ("top", the BSM paper) or K
   drawn in proportion to exp(score) with replacement ("proportional", DeepMind's particle filter).

The paper's "fail, go to 2" rejections become exact conditioning where possible: HCP values no
honour set can make get probability 0; an honour set is kept with probability proportional to the
length mass compatible with it (what the paper's restarts amount to); lengths are drawn from the
belief product conditioned on summing to 13 within what the honours and the free cards allow (a
dynamic programme over suits); exact-count card choices are conditional Bernoulli draws (the
beliefs' odds conditioned on the count). The player's own earlier calls are not scored: the hand
is the same in every sample, so they add a constant.

Fallback when too few candidates fit (a deal fits when the BSM gives every earlier call of the
other players at least `min_call_prob`): "top" ranks fitting deals first and fills up with the
best-scoring others; "proportional" draws from the fitting deals, or from all when none fits.
Before that, as options: more rounds of candidates (`resample`), then the least likely earlier
calls left out of the fit test and the score (`relax`), so that fewer decisions fall back.
`Samples.fitting` says how many fitted, so a caller can refuse to search on too few, and
`Samples.kept_fitting` how many of the deals returned fit (fewer than K: the fallback filled in)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from bridgeflow.dataset.encodings import CARD_HCP
from bridgeflow.training.bidding import keycards
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_data import encode

HONOUR = np.tile(np.arange(13) >= 9, 4)  # J, Q, K, A of each suit
SELECTIONS = ("top", "proportional")
KEYCARD_MISMATCH = 1e-6  # P of a keycard call the rule would not make with that hand: no deal it is in fits
_CLIP = 8.0  # |log-odds| bound: keeps the conditional-Bernoulli sums finite in float64


@dataclass
class Samples:
    owners: np.ndarray  # int8[K, 52] seat per card
    score: np.ndarray  # float[K] discounted log-likelihood of the earlier calls
    fitting: int  # candidates that fit the auction (every earlier call >= min_call_prob)
    generated: int  # candidates generated
    kept_fitting: int  # of the K deals returned, those that fit (the rest are the fallback's)
    relaxed: int = 0  # earlier calls left out of the fit test and the score (`relax`)


def conditional_bernoulli(log_odds: np.ndarray, allowed: np.ndarray, k: np.ndarray,
                          rng: np.random.Generator) -> np.ndarray:
    """bool[N, n]: exactly k[i] allowed items of row i, a set S drawn with P(S) proportional to the
    product of its items' odds (independent Bernoullis conditioned on the count). Exact, by
    elementary symmetric sums: e[i, r] = weight of choosing r among items i.. of the row."""
    rows, n = log_odds.shape
    k = np.asarray(k, np.int64)
    if (allowed.sum(axis=1) < k).any():
        raise ValueError("a row has fewer allowed items than it must choose")
    odds = np.where(allowed, np.exp(np.clip(log_odds, -_CLIP, _CLIP)), 0.0)
    top = int(k.max(initial=0))
    e = np.zeros((rows, n + 1, top + 1))
    e[:, n, 0] = 1.0
    for i in range(n - 1, -1, -1):
        e[:, i] = e[:, i + 1]
        e[:, i, 1:] += odds[:, i, None] * e[:, i + 1, :-1]
    chosen = np.zeros((rows, n), bool)
    need = k.copy()
    index = np.arange(rows)
    u = rng.random((rows, n))
    for i in range(n):
        take_weight = odds[:, i] * e[index, i + 1, np.maximum(need - 1, 0)] * (need > 0)
        take = u[:, i] * e[index, i, need] < take_weight
        chosen[:, i] = take
        need -= take
    return chosen


def categorical(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int[N]: one index per row of non-negative `weights` [N, n], drawn in proportion to them."""
    cdf = np.cumsum(weights, axis=1)
    return (rng.random(len(weights))[:, None] * cdf[:, -1:] >= cdf).sum(axis=1)


def _bounded(prior: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """[M, 4, 14] the length prior with the mass outside low <= length <= high removed."""
    lengths = np.arange(14)
    return np.where((lengths >= low[..., None]) & (lengths <= high[..., None]), prior[None], 0.0)


def _ways(weight: np.ndarray) -> np.ndarray:
    """[M, 5, 14]: ways[m, s, r] = mass of the length choices of suits s.. that sum to r."""
    out = np.zeros((len(weight), 5, 14))
    out[:, 4, 0] = 1.0
    for s in range(3, -1, -1):
        for length in range(14):
            out[:, s, length:] += weight[:, s, length, None] * out[:, s + 1, :14 - length]
    return out


def length_mass(prior: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """float[M]: the prior mass of the suit-length vectors within the bounds that sum to 13."""
    return _ways(_bounded(prior, low, high))[:, 0, 13]


def sample_lengths(prior: np.ndarray, low: np.ndarray, high: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int[M, 4] suit lengths summing to 13, drawn from the product of `prior` [4, 14] restricted
    to low <= length <= high ([M, 4]) and conditioned on the sum. Rows the prior cannot fill
    (all its mass outside the bounds) fall back to a flat prior within the bounds."""
    weight = _bounded(prior, low, high)
    table = _ways(weight)
    dead = table[:, 0, 13] <= 0
    if dead.any():
        weight[dead] = _bounded(np.ones((4, 14)), low[dead], high[dead])
        table[dead] = _ways(weight[dead])
    chosen = np.zeros(low.shape, np.int64)
    left = np.full(len(low), 13)
    rows = np.arange(len(low))
    for s in range(4):
        rest = left[:, None] - np.arange(14)
        p = weight[:, s] * np.where(rest >= 0, table[rows[:, None], s + 1, np.clip(rest, 0, 13)], 0.0)
        chosen[:, s] = categorical(p, rng)
        left -= chosen[:, s]
    return chosen


def _log_odds(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def _suits(cards: np.ndarray) -> np.ndarray:
    """bool[..., 52] -> int[rows, 4] cards per suit."""
    return cards.reshape(-1, 4, 13).sum(axis=2)


def sample_partner(partner_hcp: np.ndarray, lengths: np.ndarray, p_card: np.ndarray, mine: np.ndarray,
                   count: int, rng: np.random.Generator, tries: int = 100) -> np.ndarray:
    """bool[count, 52] partner hands (Algorithm 1). partner_hcp [38], lengths [4, 14] (partner's
    suits C..S), p_card [52] P(partner holds the card), mine bool[52].

    The paper draws HCP, honours and lengths, and starts again when they conflict; the joint it
    samples weights each honour set by the length mass compatible with it. Here an honour set is
    accepted with probability (that mass) / (the mass without honour bounds), the same joint
    without wasted length draws; after `tries` rounds the last honour sets are kept."""
    free_honours = np.flatnonzero(HONOUR & ~mine)
    n = len(free_honours)
    members = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1 == 1  # every subset of the free honours
    members = members[members.sum(axis=1) <= 13]
    subset_hcp = members @ CARD_HCP[free_honours].astype(np.int64)
    subset_weight = members @ _log_odds(p_card[free_honours])  # log product of odds: the Bernoulli model given the HCP
    possible = np.bincount(subset_hcp, minlength=38)[:38] > 0
    p_hcp = partner_hcp * possible
    p_hcp = p_hcp / p_hcp.sum() if p_hcp.sum() > 0 else possible / possible.sum()
    free_spots = _suits(~mine & ~HONOUR)  # [1, 4]
    unbounded = length_mass(lengths, np.zeros((1, 4)), 13 - _suits(mine))[0]

    def draw_honours(rows: int) -> np.ndarray:
        hcp = rng.choice(38, size=rows, p=p_hcp)
        drawn = np.zeros((rows, 52), bool)
        for value in np.unique(hcp):
            at = np.flatnonzero(hcp == value)
            options = np.flatnonzero(subset_hcp == value)
            w = np.exp(subset_weight[options] - subset_weight[options].max())
            picked = options[rng.choice(len(options), size=len(at), p=w / w.sum())]
            drawn[at[:, None], free_honours[None]] = members[picked]
        return drawn

    honours = np.zeros((count, 52), bool)
    todo = np.arange(count)
    for _ in range(tries):
        drawn = draw_honours(len(todo))
        low = _suits(drawn)
        mass = length_mass(lengths, low, low + free_spots)
        honours[todo] = drawn
        todo = todo[(rng.random(len(todo)) * unbounded >= mass) & (unbounded > 0)]
        if not len(todo):
            break

    low = _suits(honours)
    suit_length = sample_lengths(lengths, low, low + free_spots, rng)  # its honours plus any free spot cards
    spots_free = np.broadcast_to(~mine & ~HONOUR, (count, 52)).reshape(-1, 13)
    spot_odds = np.broadcast_to(_log_odds(p_card), (count, 52)).reshape(-1, 13)
    spots = conditional_bernoulli(spot_odds, spots_free, (suit_length - low).reshape(-1), rng)
    return honours | spots.reshape(count, 52)


def sample_opponents(p_lho: np.ndarray, p_rho: np.ndarray, free: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """bool[M, 52] the LHO's hand: 13 of the `free` cards (bool[M, 52], 26 per row), drawn by the
    odds P(LHO) / P(RHO) of each card (Algorithm 2, with the count fixed at 13); RHO gets the rest."""
    log_odds = np.log(np.clip(p_lho, 1e-6, None)) - np.log(np.clip(p_rho, 1e-6, None))
    return conditional_bernoulli(np.broadcast_to(log_odds, free.shape), free, np.full(len(free), 13), rng)


def call_log_likelihoods(bidder: Bidder, owners: np.ndarray, auction: Sequence[int], dealer: int, vul: int,
                         player: int, seat_bidders: Sequence[tuple[Bidder, Sequence[int]]] | None = None) -> np.ndarray:
    """float[M, len(auction)]: log P(call t | the caller's hand in deal m) for every earlier call of
    the other three players (0 at the player's own calls), by `bidder`, or, with `seat_bidders`
    ((BSM, its seats) over the other three seats), by the BSM given for the caller's seat."""
    if seat_bidders is None:
        seat_bidders = [(bidder, [seat for seat in range(4) if seat != player])]
    return sum(_seat_log_likelihoods(by, owners, auction, dealer, vul, {0, 1, 2, 3} - set(seats))
               for by, seats in seat_bidders)


@torch.inference_mode()
def _seat_log_likelihoods(bidder: Bidder, owners: np.ndarray, auction: Sequence[int], dealer: int, vul: int,
                          skipped: set[int]) -> np.ndarray:
    """call_log_likelihoods of the seats not in `skipped` (0 at the others' calls). One BSM pass
    per seat: one sequence per deal, up to that seat's last call, answering at each of its calls."""
    owners = np.asarray(owners)
    count, length = len(owners), len(auction)
    out = np.zeros((count, length))
    callers = (dealer + np.arange(length)) % 4
    for seat in np.unique(callers):
        if seat in skipped:
            continue
        last = int(np.flatnonzero(callers == seat)[-1]) + 1  # a seat's sequence ends at its last call
        calls = np.tile(np.asarray(auction[:last], np.int16), (count, 1))
        decision = np.tile(callers[:last] == seat, (count, 1))
        batch = encode(owners == seat, np.full(count, seat), np.full(count, dealer), np.full(count, vul),
                       calls, decision, bidder.model.config.arch == "mlp")
        tensors = {k: torch.from_numpy(v).to(bidder.device) for k, v in batch.items() if k not in ("row", "position")}
        with bidder.arithmetic():
            logits = bidder.model(tensors)["call"]
        logp = logits.float().log_softmax(-1).cpu().numpy()
        row, position = batch["row"], batch["position"]
        out[row, position] = logp[np.arange(len(row)), calls[row, position]]
        if bidder.keycards:  # a keycard answer or sign-off by rule: it tells the deals apart exactly
            for t in np.flatnonzero(callers[:last] == seat):
                if keycards.situation(auction[:t]) is None:
                    continue
                for i in np.flatnonzero(position == t):
                    probs = keycards.ruled(np.exp(logp[i]), owners[row[i]] == seat, list(auction[:t]))
                    out[row[i], t] = np.log(max(float(probs[auction[t]]), KEYCARD_MISMATCH))
    return out


def sample_deals(bidder: Bidder, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int, samples: int,
                 rng: np.random.Generator, oversample: int = 5, gamma: float = 0.9, selection: str = "top",
                 min_call_prob: float = 1e-3, seat_bidders: Sequence[tuple[Bidder, Sequence[int]]] | None = None,
                 resample: int = 0,
                 relax: int = 0) -> Samples:
    """K = `samples` deals for the player to call (dealer + len(auction)) % 4 holding `hand`: every
    deal gives that player exactly `hand` and every seat 13 cards. With `seat_bidders` ((BSM, its
    seats) over the other three seats), each seat's calls are scored by its BSM (the player's
    beliefs still come from `bidder`).

    When fewer than K fit: up to `resample` more rounds of oversample x K deals, then up to `relax`
    earlier calls left out of the fit test and the score, the least likely first (the call the
    fewest deals explain: typically an opponent's call the BSM cannot read)."""
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, not {selection!r}")
    if samples < 1 or oversample < 1 or resample < 0 or relax < 0:
        raise ValueError("samples and oversample must be >= 1, resample and relax >= 0")
    player = (dealer + len(auction)) % 4
    mine = np.zeros(52, bool)
    mine[list(hand)] = True
    if mine.sum() != 13:
        raise ValueError("the hand must be 13 distinct cards")
    beliefs = bidder.predict([list(hand)], [list(auction)], dealer, vul)
    cards = beliefs["cards"][0]  # [52, 4]: me, LHO, partner, RHO
    count = samples * oversample

    def draw() -> tuple[np.ndarray, np.ndarray]:
        partner = sample_partner(beliefs["partner_hcp"][0], beliefs["suit_lengths"][0, 1], cards[:, 2], mine, count, rng)
        lho = sample_opponents(cards[:, 1], cards[:, 3], ~mine & ~partner, rng)
        owners = np.full((count, 52), (player + 3) % 4, np.int8)
        owners[:, mine] = player
        owners[partner] = (player + 2) % 4
        owners[lho] = (player + 1) % 4
        return owners, call_log_likelihoods(bidder, owners, auction, dealer, vul, player, seat_bidders)

    owners, logp = draw()
    for _ in range(resample):
        if (np.exp(logp) >= min_call_prob).all(axis=1).sum() >= samples:
            break
        more_owners, more_logp = draw()
        owners, logp = np.concatenate([owners, more_owners]), np.concatenate([logp, more_logp])
    explained = np.exp(logp) >= min_call_prob  # [deal, call]
    tested = np.ones(len(auction), bool)  # the calls in the fit test and the score
    while explained[:, tested].all(axis=1).sum() < samples and (~tested).sum() < relax and tested.any():
        worst = np.lexsort((logp.mean(axis=0), explained.sum(axis=0)))  # fewest deals explain it, then least likely
        tested[next(int(t) for t in worst if tested[t])] = False
    score = np.where(tested, logp, 0.0) @ gamma ** np.arange(len(auction), dtype=float)
    fits = explained[:, tested].all(axis=1)
    if selection == "top":
        keep = np.lexsort((-score, ~fits))[:samples]  # fitting first, then by score
    else:
        pool = np.flatnonzero(fits) if fits.any() else np.arange(len(owners))
        weight = np.exp(score[pool] - score[pool].max())
        keep = rng.choice(pool, size=samples, p=weight / weight.sum())
    return Samples(owners[keep], score[keep], int(fits.sum()), len(owners), int(fits[keep].sum()), int((~tested).sum()))
