"""NN-DDA: an MLP from the full deal to the 20-cell double-dummy table (BSM paper, section 4.3).

Small on purpose: it must score >= 100k deals/s on two CPU cores, because its use is labelling
the millions of deals a Monte Carlo bidder samples, where DDS manages a few per second."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

TRICKS = 14  # 0..13


@dataclass
class NNDDAConfig:
    hidden: int = 256
    layers: int = 3  # hidden layers
    head: str = "ce"  # "ce": a distribution over 0..13 per cell; "mse": regression of the tricks

    def __post_init__(self):
        if self.head not in ("ce", "mse") or self.layers < 1 or self.hidden < 1:
            raise ValueError(f"bad NN-DDA config {asdict(self)}")


class NNDDA(nn.Module):
    def __init__(self, config: NNDDAConfig):
        super().__init__()
        self.config = config
        hidden = config.hidden
        # Linear layer on the 4x52 (seat, card) one-hot, as a sum of 52 looked-up rows: no one-hot
        # tensor to build, and 4x fewer multiply-adds than the dense layer.
        self.cards = nn.EmbeddingBag(4 * 52, hidden, mode="sum")
        nn.init.normal_(self.cards.weight, std=52**-0.5)
        self.bias = nn.Parameter(torch.zeros(hidden))
        body = [nn.ReLU()]
        for _ in range(config.layers - 1):
            body += [nn.Linear(hidden, hidden), nn.ReLU()]
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(hidden, 20 * TRICKS if config.head == "ce" else 20)
        if config.head == "mse":
            nn.init.constant_(self.head.bias, 6.5)
        self.register_buffer("card_index", torch.arange(52), persistent=False)

    def forward(self, owners: torch.Tensor) -> torch.Tensor:
        """owners int[B, 52] (seat per card) -> logits [B, 20, 14] ("ce") or tricks [B, 20] ("mse"),
        cells declarer-major [declarer N,E,S,W][strain C,D,H,S,NT]."""
        h = self.cards(owners.long() * 52 + self.card_index) + self.bias
        out = self.head(self.body(h))
        return out.view(-1, 20, TRICKS) if self.config.head == "ce" else out

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
