"""A trained BSM as a bidder: next-call probabilities and beliefs for the player to call.

Batched first, since Monte Carlo search asks thousands of times per decision: a batch of (hand,
auction, vulnerability, dealer) queries is encoded with vectorised numpy and answered in one
forward pass. Seats in the beliefs are relative to the player to call (OTHERS = LHO, partner,
RHO); cards are ours (suit * 13 + rank)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from bridgeflow.dataset.auction import auction_status
from bridgeflow.dataset.errors import InputError
from bridgeflow.training.model_files import load_model_state, model_file

from . import keycards
from .bsm_data import encode
from .bsm_model import BSM, OTHERS, BSMConfig, arithmetic, check_precision

__all__ = ["Beliefs", "Bidder", "CallStreams", "OTHERS", "ReplayStreams"]


@dataclass
class Beliefs:
    """What the player to call believes; a leading batch axis in the batched form."""

    partner_hcp: np.ndarray  # [..., 38] P(partner has h HCP), h = 0..37
    suit_lengths: np.ndarray  # [..., 3, 4, 14] P(other k has n cards in suit s): k = LHO, partner, RHO; s = C, D, H, S
    cards: np.ndarray  # [..., 52, 4] P(card held by me, LHO, partner, RHO)


class Bidder:
    """`keycards`: answers to 4NT and the asker's next call by rule (keycards.py), the network's
    call probabilities everywhere else. `precision`: bf16 runs the network's matrix products in
    bfloat16 (its kernels twice as fast on CPUs with AVX512-BF16 or AMX, a searched decision 1.5x;
    probabilities move by about 1%, so near-ties may fall the other way); fp32 is exact to the
    trained weights."""

    def __init__(self, model: BSM, device: str = "cpu", keycards: bool = True, precision: str = "fp32"):
        check_precision(precision, device)
        self.model = model.to(device).eval()
        self.device = device
        self.keycards = keycards
        self.precision = precision

    def arithmetic(self) -> torch.autocast:
        """The context every forward pass of the network runs in (bsm_model.arithmetic)."""
        return arithmetic(self.precision, self.device)

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu", keycards: bool = True, precision: str = "fp32") -> "Bidder":
        """`path`: a training out folder (reads model.pt) or a model.pt / ckpt.pt file."""
        path = model_file(path, "BSM")
        saved, _ = load_model_state(path, "BSM")
        try:
            model = BSM(BSMConfig(**saved["model_config"]))
            model.load_state_dict(saved["model"])
        except (TypeError, RuntimeError) as error:  # another model's file, or weights of another shape
            raise InputError(f"BSM {path}: not a BSM model file ({str(error).splitlines()[0][:200]})") from None
        return cls(model.to(device), device, keycards, precision)

    @torch.inference_mode()
    def predict(self, hands, auctions: Sequence[Sequence[int]], dealer, vul) -> dict[str, np.ndarray]:
        """Batched: hands [B, 13] card ids, B auctions (calls from dealer, not yet finished), dealer and
        vul scalars or [B]. Returns call [B, 38] (0 for illegal calls), partner_hcp [B, 38],
        suit_lengths [B, 3, 4, 14], cards [B, 52, 4]."""
        hands = np.asarray(hands, dtype=np.int64)
        if hands.ndim != 2 or hands.shape[1] != 13 or hands.min() < 0 or hands.max() > 51:
            raise ValueError("hands must be [B, 13] card ids in 0..51")
        size = len(hands)
        if len(auctions) != size:
            raise ValueError(f"{size} hands but {len(auctions)} auctions")
        dealer = np.broadcast_to(np.asarray(dealer, np.int64), (size,))
        vul = np.broadcast_to(np.asarray(vul, np.int64), (size,))
        length = np.array([len(a) for a in auctions], np.int64)
        calls = np.full((size, int(length.max(initial=0)) + 1), -1, np.int16)
        for row, auction in enumerate(auctions):
            calls[row, :len(auction)] = auction
        legal, finished = auction_status(calls, dealer)
        if not (legal & ~finished).all():
            row = int(np.flatnonzero(~(legal & ~finished))[0])
            raise ValueError(f"auction {row} ({list(auctions[row])}, dealer {dealer[row]}) is illegal or already finished")
        hand = np.zeros((size, 52), bool)
        hand[np.arange(size)[:, None], hands] = True
        if not (hand.sum(axis=1) == 13).all():
            raise ValueError("a hand holds the same card twice")
        decision = np.zeros(calls.shape, bool)
        decision[np.arange(size), length] = True
        batch = encode(hand, (dealer + length) % 4, dealer, vul, calls, decision, self.model.config.arch == "mlp")
        tensors = {k: torch.from_numpy(v).to(self.device) for k, v in batch.items() if k not in ("row", "position")}
        with self.arithmetic():
            out = self.model(tensors)
        call = out["call"].float().softmax(-1).cpu().numpy()
        return {
            "call": keycards.apply(call, hand, auctions) if self.keycards else call,
            "partner_hcp": out["hcp"].float().softmax(-1).cpu().numpy(),
            "suit_lengths": out["lengths"].float().softmax(-1).cpu().numpy(),
            "cards": out["cards"].float().softmax(-1).cpu().numpy(),
        }

    def streams(self, hands: np.ndarray, seats: np.ndarray, dealer: int, vul: int,
                prefix: Sequence[int]) -> "CallStreams | ReplayStreams":
        """N auctions that start with `prefix`, row n seen by seats[n] holding hands[n] (bool[N, 52]),
        to be asked for their next calls as the auctions go on (`call_probs`)."""
        if self.model.config.arch == "mlp":
            return ReplayStreams(self, hands, seats, dealer, vul, prefix)
        return CallStreams(self, hands, seats, dealer, vul, prefix)

    def next_call_batch(self, hands, auctions, dealer, vul) -> np.ndarray:
        return self.predict(hands, auctions, dealer, vul)["call"]

    def beliefs_batch(self, hands, auctions, dealer, vul) -> Beliefs:
        out = self.predict(hands, auctions, dealer, vul)
        return Beliefs(out["partner_hcp"], out["suit_lengths"], out["cards"])

    def next_call(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> np.ndarray:
        """[38] probabilities of the next call by seat (dealer + len(auction)) % 4 holding `hand`."""
        return self.next_call_batch([hand], [auction], dealer, vul)[0]

    def beliefs(self, hand: Sequence[int], auction: Sequence[int], dealer: int, vul: int) -> Beliefs:
        b = self.beliefs_batch([hand], [auction], dealer, vul)
        return Beliefs(b.partner_hcp[0], b.suit_lengths[0], b.cards[0])


class CallStreams:
    """N auctions that start alike, each seen by one seat through a recurrent BSM: the trunk's
    state after the calls a stream has read is kept, so a question reads only the calls made since
    that seat's last one (the search's rollouts: each call read once per seat, instead of the
    whole auction at every step)."""

    @torch.inference_mode()
    def __init__(self, bidder: Bidder, hands: np.ndarray, seats: np.ndarray, dealer: int, vul: int,
                 prefix: Sequence[int]):
        self.model, self.device, self.dealer, self.keycards = bidder.model, bidder.device, dealer, bidder.keycards
        self.arithmetic = bidder.arithmetic
        size = len(hands)
        self.seats = np.asarray(seats, np.int64)
        calls = np.tile(np.append(np.asarray(prefix, np.int16), -1).astype(np.int16), (size, 1))  # step t reads call t-1
        batch = encode(hands, self.seats, np.full(size, dealer), np.full(size, vul), calls, np.zeros(calls.shape, bool), False)
        self.mine = torch.from_numpy(np.asarray(hands, bool)).to(self.device)
        with self.arithmetic():
            self.static = self.model.static_inputs(torch.from_numpy(batch["static"]).to(self.device))
            out, self.state = self.model.recurrent_steps(torch.from_numpy(batch["tokens"]).to(self.device), self.static,
                                                         torch.from_numpy(batch["turn"]).to(self.device))
        self.last = out[:, -1]  # the output after the latest call read: what the next decision reads
        self.steps = np.full(size, calls.shape[1], np.int64)  # recurrent steps taken: START, then one per call read

    def tile(self, copies: int) -> "CallStreams":
        """The N streams `copies` times over (copy-major): the prefix read once for every candidate."""
        self.seats, self.steps = np.tile(self.seats, copies), np.tile(self.steps, copies)
        self.mine, self.static, self.last = (x.repeat(copies, 1) for x in (self.mine, self.static, self.last))
        self.state = _map_state(self.state, lambda x: x.repeat(1, copies, 1))
        return self

    @torch.inference_mode()
    def call_probs(self, rows: np.ndarray, calls: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """[len(rows), 38] next-call probabilities, as `Bidder.predict`'s, of the streams in `rows`,
        whose auctions are now `calls` (int[len(rows), n], the prefix included; each row's seat is
        to call, `legal` bool[len(rows), 38] its legal calls)."""
        rows = np.asarray(rows, np.int64)
        length = calls.shape[1]
        for start in np.unique(self.steps[rows]):  # one recurrent pass per group of streams in step
            at = np.flatnonzero(self.steps[rows] == start)
            if start > length:
                continue
            index = torch.from_numpy(rows[at]).to(self.device)
            tokens = torch.from_numpy(calls[at, start - 1:].astype(np.int64)).to(self.device)
            turn = torch.from_numpy((self.dealer + np.arange(start, length + 1)[None] - self.seats[rows[at], None]) % 4)
            with self.arithmetic():
                out, state = self.model.recurrent_steps(tokens, self.static[index], turn.to(self.device),
                                                        _map_state(self.state, lambda x: x[:, index]))
            for kept, new in zip(_state_parts(self.state), _state_parts(state)):
                kept[:, index] = new
            self.last[index] = out[:, -1]
            self.steps[rows[at]] = length + 1
        index = torch.from_numpy(rows).to(self.device)
        with self.arithmetic():
            h = torch.cat([self.model.drop(self.last[index]), self.static[index]], dim=1)
            out = self.model.heads(h, {"mine": self.mine[index], "legal": torch.from_numpy(legal).to(self.device)})
        probs = out["call"].float().softmax(-1).cpu().numpy()
        return keycards.apply(probs, self.mine[index].cpu().numpy(), calls) if self.keycards else probs


class ReplayStreams:
    """CallStreams' interface for a BSM without recurrent state (the OpenSpiel-feature MLP), or any
    object with `predict`: every question reads the whole auction."""

    def __init__(self, bidder, hands: np.ndarray, seats: np.ndarray, dealer: int, vul: int, prefix: Sequence[int]):
        self.bidder, self.dealer, self.vul = bidder, dealer, vul
        self.hands = np.nonzero(np.asarray(hands, bool))[1].reshape(len(hands), 13)

    def tile(self, copies: int) -> "ReplayStreams":
        self.hands = np.tile(self.hands, (copies, 1))
        return self

    def call_probs(self, rows: np.ndarray, calls: np.ndarray, legal: np.ndarray) -> np.ndarray:
        return self.bidder.predict(self.hands[rows], calls.tolist(), self.dealer, self.vul)["call"]


def _state_parts(state) -> tuple[torch.Tensor, ...]:
    """An LSTM's (h, c) or a GRU's / RNN's h, as a tuple of [layers, N, hidden] tensors."""
    return state if isinstance(state, tuple) else (state,)


def _map_state(state, function):
    parts = tuple(function(x) for x in _state_parts(state))
    return parts if isinstance(state, tuple) else parts[0]
