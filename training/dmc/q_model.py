"""The DMC value network Q(state, call): the BSM's trunk reads the state (hand, auction,
vulnerability, seat; hand features), each of the 38 calls is encoded by its own features, and an
MLP over (state, call features) gives one value per call, all 38 in one batched pass (illegal calls
at -inf).

The call features (CALL_FEATURES wide), as DouZero encodes an action by what it is rather than by
its index: pass / double / redouble / bid, the bid's level and strain one-hot, and its jump (levels
above the cheapest legal bid in that strain, 0..6). The jump depends on the auction, so it is read
off the legality mask: the cheapest legal bid of a strain is its first legal one.

Variant: the state and the call features are concatenated into the MLP (DouZero's), computed as
A h + B f so the trunk runs once per state and only the call half per call. The alternative, a dot
product of a state embedding and a call embedding, is cheaper per call but can only rank calls
linearly in a shared space; with 38 calls the MLP's extra cost is small next to the trunk's. The
trunk starts from the imitation BSM's (`from_bsm`), the value head from scratch.

With `prior` w > 0, the imitation BSM's call head is kept and calls are chosen by
head(s, a) + w * log pi_BSM(a | s), while the learner fits the head alone to the returns: a fresh
head (outputs near zero) plays the BSM's calls from the first batch, and a call the BSM ranks lower
is played only once the head rates it more than w IMPs per nat of log-probability above. (Fitting
the sum instead, the variant tried first, makes the head cancel the prior's offsets, and its errors
in doing so cost -0.79 IMPs/board against the BSM after 3,000 updates: docs/dmc.md.) With prior 0
(DouZero's plain Q) the fresh head starts from a near-arbitrary policy. With `candidates` k > 0,
only the BSM's k likeliest legal calls get a finite Q (as the search's candidates): play and
exploration stay within them (docs/dmc.md: why)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from bridgeflow.dataset.encodings import NUM_CALLS
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.bidding.bsm_data import encode
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.model_files import FILE_OF, load_model_state, model_file

LEVELS, STRAINS, JUMPS = 7, 5, 7
CALL_FEATURES = 4 + LEVELS + STRAINS + JUMPS  # kind (pass, X, XX, bid), level, strain, jump
HEADS = ("hcp_head", "length_head", "card_head", "call_head")  # the BSM's heads: Q keeps the trunk only
Q_FILE = FILE_OF["DMC Q network"]


def static_call_features() -> torch.Tensor:
    """float[38, 4 + LEVELS + STRAINS]: what each call is, whatever the auction."""
    features = torch.zeros(NUM_CALLS, 4 + LEVELS + STRAINS)
    features[0, 0] = features[1, 1] = features[2, 2] = 1  # pass, double, redouble
    for call in range(3, NUM_CALLS):
        level, strain = divmod(call - 3, 5)
        features[call, 3] = 1
        features[call, 4 + level] = 1
        features[call, 4 + LEVELS + strain] = 1
    return features


def jump_features(legal: torch.Tensor) -> torch.Tensor:
    """float[N, 38, JUMPS]: one-hot of each legal bid's jump, levels above the cheapest legal bid
    of its strain (0 = the cheapest); zero for pass, double, redouble and illegal calls."""
    bids = legal[:, 3:].view(-1, LEVELS, STRAINS)
    cheapest = bids.float().argmax(dim=1, keepdim=True)  # first legal level per strain
    jump = (torch.arange(LEVELS, device=legal.device)[None, :, None] - cheapest).clamp(0, JUMPS - 1)
    one_hot = nn.functional.one_hot(jump, JUMPS).float() * bids[..., None]
    out = torch.zeros(legal.shape[0], NUM_CALLS, JUMPS, device=legal.device)
    out[:, 3:] = one_hot.view(-1, LEVELS * STRAINS, JUMPS)
    return out


def call_features(legal: torch.Tensor) -> torch.Tensor:
    """float[N, 38, CALL_FEATURES] for the states whose legal-call masks are `legal` [N, 38]."""
    static = static_call_features().to(legal.device).expand(legal.shape[0], -1, -1)
    return torch.cat([static, jump_features(legal)], dim=2)


@dataclass
class QConfig:
    bsm: dict = field(default_factory=dict)  # the trunk's BSMConfig fields
    hidden: int = 256  # value head width
    prior: float = 0.0  # weight of the imitation BSM's log-policy in Q (IMPs per nat); 0 = none
    candidates: int = 0  # only the BSM's this many likeliest calls get a finite Q; 0 = every legal call

    @property
    def uses_bsm_policy(self) -> bool:
        return bool(self.prior or self.candidates)


class QNetwork(nn.Module):
    def __init__(self, config: QConfig):
        super().__init__()
        self.config = config
        self.trunk = BSM(BSMConfig(**config.bsm))
        width = self.trunk.hcp_head[0].in_features  # what the trunk hands its heads
        if not config.uses_bsm_policy:
            for name in HEADS:
                delattr(self.trunk, name)
        self.state_in = nn.Linear(width, config.hidden)
        self.call_in = nn.Linear(CALL_FEATURES, config.hidden, bias=False)
        self.value = nn.Sequential(nn.ReLU(), nn.Linear(config.hidden, config.hidden), nn.ReLU(),
                                   nn.Linear(config.hidden, 1))

    def forward(self, batch: dict[str, torch.Tensor], restrict: bool = True, with_prior: bool = True) -> torch.Tensor:
        """float[N, 38]: the score of every call at each decision point, -inf where illegal (and,
        with `candidates` and `restrict`, outside the BSM's likeliest calls; the learner fits a
        call played before a learning trunk moved them, so it does not restrict). With `with_prior`
        (play) the head's value plus prior x the BSM's log-policy; without (what the learner fits
        to the returns) the head's value alone."""
        h = self.trunk.trunk(batch)
        state = self.state_in(h)  # [N, H]
        calls = self.call_in(call_features(batch["legal"]))  # [N, 38, H]
        q = self.value(state[:, None, :] + calls)[..., 0]
        allowed = batch["legal"]
        if self.config.uses_bsm_policy:
            log_policy = self.trunk.heads(h, batch)["call"].log_softmax(dim=1)
            if with_prior:
                q = q + self.config.prior * log_policy.masked_fill(~allowed, 0.0)
            if self.config.candidates and restrict:
                likeliest = log_policy.topk(min(self.config.candidates, NUM_CALLS), dim=1).indices
                allowed = allowed & torch.zeros_like(allowed).scatter_(1, likeliest, True)
        return q.masked_fill(~allowed, float("-inf"))

    @torch.inference_mode()
    def values(self, hands: np.ndarray, calls: np.ndarray, dealer: np.ndarray, vul: np.ndarray) -> np.ndarray:
        """Batched, for actors and agents: hands bool[B, 52] of the players to call, their auctions
        calls int[B, T] (-1 padded), dealer and vul int[B]. Returns float[B, 38] (-inf illegal)."""
        return self(decision_batch(hands, calls, dealer, vul, self.config.bsm.get("arch") == "mlp")).numpy()

    def save(self, path: Path, extra: dict | None = None) -> None:
        torch.save({"model": self.state_dict(), "model_config": asdict(self.config)} | (extra or {}), path)


def decision_batch(hands: np.ndarray, calls: np.ndarray, dealer: np.ndarray, vul: np.ndarray,
                   features480: bool) -> dict[str, torch.Tensor]:
    """The BSM's encoding (bsm_data.encode) of one decision per row: the player to call holds
    hands[i] after the calls[i] made so far (padded with -1)."""
    calls = np.concatenate([calls, np.full((len(calls), 1), -1, calls.dtype)], axis=1)
    length = (calls >= 0).sum(axis=1)
    decision = np.zeros(calls.shape, bool)
    decision[np.arange(len(calls)), length] = True
    dealer, vul = np.asarray(dealer, np.int64), np.asarray(vul, np.int64)
    batch = encode(np.asarray(hands, bool), (dealer + length) % 4, dealer, vul, calls, decision, features480)
    return {key: torch.from_numpy(value) for key, value in batch.items() if key not in ("row", "position")}


def from_bsm(path: str | Path, hidden: int, prior: float = 0.0, candidates: int = 0) -> QNetwork:
    """A Q network whose trunk is the imitation BSM's at `path` (folder or model.pt); with `prior`
    or `candidates`, its heads too (the BSM's policy)."""
    file = model_file(path, "BSM")
    saved, _ = load_model_state(file, "BSM")
    try:
        network = QNetwork(QConfig(bsm=dict(saved["model_config"]), hidden=hidden, prior=prior, candidates=candidates))
        keep_heads = network.config.uses_bsm_policy
        trunk = {key: value for key, value in saved["model"].items() if keep_heads or not key.startswith(HEADS)}
        network.trunk.load_state_dict(trunk)
    except (TypeError, RuntimeError) as error:
        raise InputError(f"BSM {file}: not a BSM model file ({str(error).splitlines()[0][:200]})") from None
    return network


def load_q(path: str | Path) -> QNetwork:
    """A trained Q network: the DMC out folder (q.pt), q.pt itself or the resumable ckpt.pt."""
    file = model_file(path, "DMC Q network")
    saved, _ = load_model_state(file, "DMC Q network")
    try:
        network = QNetwork(QConfig(**saved["model_config"]))
        network.load_state_dict(saved["model"])
    except (TypeError, RuntimeError) as error:
        raise InputError(f"DMC Q network {file}: not a Q network file ({str(error).splitlines()[0][:200]})") from None
    return network.eval()


def greedy_calls(q: np.ndarray) -> np.ndarray:
    """int[B]: the best call per row (illegal calls are -inf)."""
    return q.argmax(axis=1)


def epsilon_greedy(q: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """int[B]: the greedy call, or with probability epsilon a uniformly drawn legal one."""
    calls = greedy_calls(q)
    explore = rng.random(len(q)) < epsilon
    for row in np.flatnonzero(explore):
        calls[row] = rng.choice(np.flatnonzero(np.isfinite(q[row])))
    return calls


class DMCAgent:
    """The greedy Q policy at the table (the evaluation's Agent protocol; agent.py registers it as `dmc`)."""

    def __init__(self, network: QNetwork, name: str = "dmc"):
        self.network = network.eval()
        self.name = name

    def next_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> int:
        bits = np.zeros((1, 52), bool)
        bits[0, list(hand)] = True
        calls = np.array([list(auction) or [-1]], np.int16)
        return int(greedy_calls(self.network.values(bits, calls, np.array([dealer]), np.array([vul])))[0])

    def reseed(self, seed: int) -> None:
        pass
