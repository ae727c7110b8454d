"""NN-DDA: a network from the full deal to the 20-cell double-dummy table (BSM paper, section 4.3).

Small on purpose: it must score >= 100k deals/s on two CPU cores, because its use is labelling
the millions of deals a Monte Carlo bidder samples, where DDS manages a few per second.

Two architectures (NNDDAConfig.arch):
  mlp    the paper's dense network on the 4x52 (seat, card) one-hot.
  suits  built on the suit symmetry of double dummy: one shared encoder per suit (its 13 cards and
         who holds each), layers that mix each suit with the mean of all four (a DeepSets layer),
         the four suit strains read from their own suit's features and NT from the suits' mean and
         max. Permuting the suits permutes its outputs exactly, so none of its capacity goes to
         learning that."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

TRICKS = 14  # 0..13


@dataclass
class NNDDAConfig:
    hidden: int = 128  # mlp: units per layer; suits: units per suit
    layers: int = 3  # hidden layers
    head: str = "ce"  # "ce": a distribution over 0..13 per cell; "mse": regression of the tricks
    arch: str = "suits"  # "suits" | "mlp" (see the module docstring)
    nt_hidden: int = 128  # suits: a hidden layer of this size between the pooled suits and NT's cells (0: none)
    nt_pool: str = "meanmax"  # suits: how NT sees the four suits: "meanmax" (mean and max side by side) or "mean"

    # What model files saved before a field existed meant by it (see DDEstimator.load).
    LEGACY = {"arch": "mlp", "nt_hidden": 0, "nt_pool": "mean"}

    def __post_init__(self):
        if (self.head not in ("ce", "mse") or self.arch not in ("mlp", "suits") or self.nt_pool not in ("mean", "meanmax")
                or min(self.layers, self.hidden) < 1 or self.nt_hidden < 0):
            raise ValueError(f"bad NN-DDA config {asdict(self)}")
        if self.arch == "mlp":
            self.nt_hidden = 0  # the MLP reads every cell from its last layer: no NT layer

    @property
    def outputs_per_cell(self) -> int:
        return TRICKS if self.head == "ce" else 1


class SuitMix(nn.Module):
    """A permutation-equivariant layer over the 4 suits: each suit's features plus the mean's."""

    def __init__(self, hidden: int):
        super().__init__()
        self.own = nn.Linear(hidden, hidden)
        self.pooled = nn.Linear(hidden, hidden, bias=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # [B, 4, hidden]
        # In place: on CPU the elementwise passes over [B, 4, hidden], not the matrix products,
        # take most of the time (benchmarks/bench_nndda.py); autograd allows it, as neither the
        # product's nor the sum's gradient needs its output.
        out = self.own(h)
        out += self.pooled(h.mean(1, keepdim=True))
        return out.relu_()


class NNDDA(nn.Module):
    def __init__(self, config: NNDDAConfig):
        super().__init__()
        self.config = config
        hidden, per_cell = config.hidden, config.outputs_per_cell
        if config.arch == "mlp":
            # Linear layer on the 4x52 (seat, card) one-hot, as a sum of 52 looked-up rows: no
            # one-hot tensor to build, and 4x fewer multiply-adds than the dense layer.
            self.cards = nn.EmbeddingBag(4 * 52, hidden, mode="sum")
            nn.init.normal_(self.cards.weight, std=52**-0.5)
            body = [nn.ReLU()]
            for _ in range(config.layers - 1):
                body += [nn.Linear(hidden, hidden), nn.ReLU()]
            self.body = nn.Sequential(*body)
            self.head = nn.Linear(hidden, 20 * per_cell)
            self.register_buffer("card_index", torch.arange(52), persistent=False)
        else:
            # One (seat, rank) table shared by the four suits: a suit's encoding is the sum of its 13 rows.
            self.cards = nn.EmbeddingBag(4 * 13, hidden, mode="sum")
            nn.init.normal_(self.cards.weight, std=13**-0.5)
            self.mix = nn.Sequential(*[SuitMix(hidden) for _ in range(config.layers - 1)])
            self.trump_head = nn.Linear(hidden, 4 * per_cell)  # a suit strain's 4 declarers, from that suit
            # NT's 4 declarers, from the suits pooled (a max sees "some suit runs" that a mean blurs)
            pooled = hidden * (2 if config.nt_pool == "meanmax" else 1)
            if config.nt_hidden:
                self.nt_head = nn.Sequential(nn.Linear(pooled, config.nt_hidden), nn.ReLU(), nn.Linear(config.nt_hidden, 4 * per_cell))
            else:
                self.nt_head = nn.Linear(pooled, 4 * per_cell)
            self.register_buffer("card_index", torch.arange(13), persistent=False)
        self.bias = nn.Parameter(torch.zeros(hidden))
        if config.head == "mse":
            for head in (self.head,) if config.arch == "mlp" else (self.trump_head, self.nt_head):
                nn.init.constant_((head[-1] if isinstance(head, nn.Sequential) else head).bias, 6.5)

    def forward(self, owners: torch.Tensor) -> torch.Tensor:
        """owners int[B, 52] (seat per card) -> logits [B, 20, 14] ("ce") or tricks [B, 20] ("mse"),
        cells declarer-major [declarer N,E,S,W][strain C,D,H,S,NT]."""
        if self.config.arch == "mlp":
            h = self.cards(owners.long() * 52 + self.card_index) + self.bias
            out = self.head(self.body(h))
        else:
            n = owners.shape[0]
            per_suit = owners.long().view(n * 4, 13) * 13 + self.card_index
            h = self.cards(per_suit).view(n, 4, -1)
            h += self.bias
            h = self.mix(h.relu_())
            pooled = h.mean(1, keepdim=True)
            if self.config.nt_pool == "meanmax":
                pooled = torch.cat([pooled, h.amax(1, keepdim=True)], 2)
            strains = torch.cat([self.trump_head(h), self.nt_head(pooled)], 1)  # [B, strain, 4 * per_cell]
            out = strains.view(n, 5, 4, -1).transpose(1, 2).reshape(n, -1)
        return out.view(-1, 20, TRICKS) if self.config.head == "ce" else out

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
