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

from .bsm_data import encode
from .bsm_model import BSM, OTHERS, BSMConfig

__all__ = ["Beliefs", "Bidder", "OTHERS"]


@dataclass
class Beliefs:
    """What the player to call believes; a leading batch axis in the batched form."""

    partner_hcp: np.ndarray  # [..., 38] P(partner has h HCP), h = 0..37
    suit_lengths: np.ndarray  # [..., 3, 4, 14] P(other k has n cards in suit s): k = LHO, partner, RHO; s = C, D, H, S
    cards: np.ndarray  # [..., 52, 4] P(card held by me, LHO, partner, RHO)


class Bidder:
    def __init__(self, model: BSM, device: str = "cpu"):
        self.model = model.to(device).eval()
        self.device = device

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> "Bidder":
        """`path`: a training out folder (reads model.pt) or a model.pt / ckpt.pt file."""
        path = model_file(path, "model.pt", "BSM")
        saved, _ = load_model_state(path, "BSM")
        try:
            model = BSM(BSMConfig(**saved["model_config"]))
            model.load_state_dict(saved["model"])
        except (TypeError, RuntimeError) as error:  # another model's file, or weights of another shape
            raise InputError(f"BSM {path}: not a BSM model file ({str(error).splitlines()[0][:200]})") from None
        return cls(model.to(device), device)

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
        out = self.model(tensors)
        return {
            "call": out["call"].softmax(-1).cpu().numpy(),
            "partner_hcp": out["hcp"].softmax(-1).cpu().numpy(),
            "suit_lengths": out["lengths"].softmax(-1).cpu().numpy(),
            "cards": out["cards"].softmax(-1).cpu().numpy(),
        }

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
