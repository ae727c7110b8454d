"""The bidding system model (BSM): a trunk that reads what the player to call knows, and heads that
say what to call and what the player believes about the hidden hands.

Trunks: a stacked recurrent net (LSTM / GRU / vanilla RNN) over the auction, as in the BSM paper
(3 x 512, call embedding 128) and its GRU variant; or OpenSpiel's fixed 480-feature encoding
through an MLP (4 x 1024), the imitation baseline of Lockhart et al., for comparison.

Heads, per decision point: the next call (38, illegal calls at -inf so they get probability 0),
partner's HCP (0..37), each other player's length in each suit (0..13), and for each card who
holds it (me, LHO, partner, RHO; my own cards are certain, so only the unseen 39 are learnt). As
in the BSM the call head may also read the beliefs (detached, so the call loss cannot bend what
the model says it believes) and the legal-call vector.

The recurrent trunk hands the heads its state together with the player's own inputs (cards,
vulnerability, seat), so facts that follow from the hand alone need not survive the recurrence;
on the toy corpus this lifted 250-step call accuracy from 0.87 to 0.98 and brought the suit-length
and card beliefs below their priors. With `hand_features` the own hand also comes as HCP and
suit-length thermometers (the thresholds bidding rules test): on the 300k-auction rule-based
corpus the LSTM then reached a given validation accuracy in about half the steps."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from bridgeflow.dataset.encodings import CARD_HCP, NUM_CALLS

from .bsm_data import OPENSPIEL_FEATURES, OUR_CARD_IN_OPENSPIEL, PAD, STATIC

RECURRENT = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}
HCP_CLASSES = 38  # 0..37
LENGTH_CLASSES = 14  # 0..13
OTHERS = ("LHO", "partner", "RHO")  # relative seats 1, 2, 3
BELIEF_WIDTH = HCP_CLASSES + 3 * 4 * LENGTH_CLASSES + 52 * 3
HAND_SUMMARY = 37 + 4 * 13  # thermometers: HCP >= 1..37, each suit's length >= 1..13


PRECISIONS = ("fp32", "bf16")  # the arithmetic of the BSM's matrix products (Bidder.arithmetic, bsm.precision)


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX512-BF16 or AMX). Without it PyTorch's
    CPU kernels emulate bf16, 2-3x slower than fp32, and its LSTM has none on AVX2 alone."""
    return any(getattr(torch.cpu, probe, lambda: False)()
               for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))


def check_precision(precision: str, device: str = "cpu") -> None:
    """ValueError unless `precision` is one of PRECISIONS and this machine runs it natively."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    if precision == "bf16" and torch.device(device).type == "cpu" and not native_bf16():
        raise ValueError("precision bf16 needs a CPU with native bfloat16 (AVX512-BF16 or AMX); "
                         "this one would run it slower than fp32, or fail: use fp32")


def arithmetic(precision: str, device: str = "cpu") -> torch.autocast:
    """The context a forward pass runs in: autocast to bfloat16 for bf16, none for fp32. Outputs
    may then be bfloat16: read them through `.float()`."""
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=precision == "bf16")


@dataclass
class BSMConfig:
    arch: str = "lstm"  # lstm | gru | rnn | mlp
    layers: int = 2  # recurrent layers (BSM paper: 3)
    hidden: int = 256  # recurrent width (BSM paper: 512)
    embed: int = 64  # call embedding (BSM paper: 128)
    mlp_layers: int = 4  # arch=mlp: OpenSpiel-feature MLP (Lockhart et al.: 4 x 1024)
    mlp_hidden: int = 1024
    dropout: float = 0.1
    call_uses_beliefs: bool = True  # the call head also reads the beliefs and the legal-call vector
    hand_features: bool = False  # add HCP and suit-length thermometers of the own hand to the inputs


def hand_summary(cards: torch.Tensor) -> torch.Tensor:
    """[N, HAND_SUMMARY] thermometer bits of a hand's HCP and suit lengths from its 52 card bits:
    bidding rules are thresholds on these ("12+ HCP", "5+ spades"), each then one input bit."""
    hcp = cards @ torch.as_tensor(CARD_HCP, dtype=cards.dtype, device=cards.device)
    lengths = cards.view(-1, 4, 13).sum(-1)
    hcp_bits = hcp[:, None] >= torch.arange(1, 38, device=cards.device)
    length_bits = lengths[..., None] >= torch.arange(1, 14, device=cards.device)
    return torch.cat([hcp_bits, length_bits.flatten(1)], dim=1).to(cards.dtype)


def head(width_in: int, width: int, width_out: int) -> nn.Module:
    return nn.Sequential(nn.Linear(width_in, width), nn.ReLU(), nn.Linear(width, width_out))


class BSM(nn.Module):
    def __init__(self, config: BSMConfig):
        super().__init__()
        self.config = config
        if config.arch in RECURRENT:
            static = STATIC + (HAND_SUMMARY if config.hand_features else 0)
            self.embed = nn.Embedding(PAD + 1, config.embed)
            self.rnn = RECURRENT[config.arch](
                config.embed + static + 4, config.hidden, config.layers, batch_first=True,
                dropout=config.dropout if config.layers > 1 else 0.0,
            )
            width, inner = config.hidden + static, config.hidden
        elif config.arch == "mlp":
            layers, width_in = [], OPENSPIEL_FEATURES + (HAND_SUMMARY if config.hand_features else 0)
            self.register_buffer("card_order", torch.as_tensor(OUR_CARD_IN_OPENSPIEL), persistent=False)
            for _ in range(config.mlp_layers):
                layers += [nn.Linear(width_in, config.mlp_hidden), nn.ReLU(), nn.Dropout(config.dropout)]
                width_in = config.mlp_hidden
            self.mlp = nn.Sequential(*layers)
            width = inner = config.mlp_hidden
        else:
            raise ValueError(f"arch must be one of {sorted(RECURRENT) + ['mlp']}, not {config.arch!r}")
        self.drop = nn.Dropout(config.dropout)
        self.hcp_head = head(width, inner, HCP_CLASSES)
        self.length_head = head(width, inner, 3 * 4 * LENGTH_CLASSES)
        self.card_head = head(width, inner, 52 * 4)
        extra = BELIEF_WIDTH + NUM_CALLS if config.call_uses_beliefs else 0
        self.call_head = head(width + extra, inner, NUM_CALLS)

    def trunk(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """[N, width]: one state per decision point (recurrent: the state, then the static inputs)."""
        if self.config.arch == "mlp":
            x = batch["x480"]
            if self.config.hand_features:  # OpenSpiel's last 52 features are the hand, in its card order
                x = torch.cat([x, hand_summary(x[:, -52:][:, self.card_order])], dim=1)
            return self.mlp(x)
        static = self.static_inputs(batch["static"])
        states, _ = self.recurrent_steps(batch["tokens"], static, batch["turn"])
        row = batch["decision"].nonzero()[:, 0]
        return torch.cat([self.drop(states[batch["decision"]]), static[row]], dim=1)

    def static_inputs(self, static: torch.Tensor) -> torch.Tensor:
        """[N, width] what the recurrent trunk reads at every step besides the call: encode's
        `static`, with the hand's thermometers when `hand_features`."""
        return torch.cat([static, hand_summary(static[:, :52])], dim=1) if self.config.hand_features else static

    def recurrent_steps(self, tokens: torch.Tensor, static: torch.Tensor, turn: torch.Tensor, state=None):
        """(outputs [N, S, hidden], state): the recurrent trunk over S more steps of N sequences
        from `state` (None: the start). Fed one step at a time from the state it returns, it gives
        the outputs of one pass over the whole sequence (a rollout then costs a step per call)."""
        x = torch.cat([self.embed(tokens), static[:, None, :].expand(-1, tokens.shape[1], -1),
                       F.one_hot(turn, 4).float()], dim=2)
        return self.rnn(x, state)

    def forward(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return self.heads(self.trunk(batch), batch)

    def heads(self, h: torch.Tensor, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The belief heads and the call head over the trunk's states `h` (DMC's prior reuses it)."""
        n = h.shape[0]
        mine = batch["mine"]
        cards = self.card_head(h).view(n, 52, 4)
        holder_allowed = torch.cat([mine[..., None], (~mine)[..., None].expand(-1, -1, 3)], dim=2)
        out = {
            "hcp": self.hcp_head(h),
            "lengths": self.length_head(h).view(n, 3, 4, LENGTH_CLASSES),
            "cards": cards.masked_fill(~holder_allowed, float("-inf")),
        }
        call_in = h
        if self.config.call_uses_beliefs:
            beliefs = torch.cat([
                out["hcp"].softmax(-1),
                out["lengths"].softmax(-1).flatten(1),
                out["cards"].softmax(-1)[..., 1:].flatten(1),
            ], dim=1).detach()
            call_in = torch.cat([h, beliefs, batch["legal"].float()], dim=1)
        out["call"] = self.call_head(call_in).masked_fill(~batch["legal"], float("-inf"))
        return out


def losses(out: dict[str, torch.Tensor], batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Mean cross-entropy of each head; the card loss counts only the 39 cards the player cannot see.
    With soft call targets (a self-play batch: `target`, and `trained` marking the decision points
    that have one) the call loss is the cross-entropy to them over the trained points."""
    unseen = ~batch["mine"]
    if "target" in batch:
        logp = out["call"].log_softmax(-1).masked_fill(~batch["legal"], 0.0)  # targets are 0 on illegal calls
        per_point = -(batch["target"] * logp).sum(-1)
        call = (per_point * batch["trained"]).sum() / batch["trained"].sum().clamp(min=1)
    else:
        call = F.cross_entropy(out["call"], batch["call"])
    return {
        "call": call,
        "hcp": F.cross_entropy(out["hcp"], batch["partner_hcp"]),
        "lengths": F.cross_entropy(out["lengths"].reshape(-1, LENGTH_CLASSES), batch["lengths"].reshape(-1)),
        "cards": F.cross_entropy(out["cards"][unseen], batch["holder"][unseen]),
    }
