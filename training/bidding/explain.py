"""`bridgeflow explain`: show what a trained BSM would call and what it believes about the hidden
hands, as a PNG and a text summary.

    bridgeflow explain --hand 'K843.Q92.A75.J64' --auction '1H P' --dealer N --vul none \\
        --checkpoint data/bsm --out f.png

The player to call is seat (dealer + number of calls) % 4; beliefs are about the other three."""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bridgeflow.dataset.auction import parse_decision, replay  # noqa: E402
from bridgeflow.dataset.errors import output_file  # noqa: E402
from bridgeflow.dataset.encodings import (  # noqa: E402
    CARD_HCP,
    RANKS,
    SEATS,
    SUITS,
    VUL_NAMES,
    call_name,
    hand_to_pbn,
)

from bridgeflow.training.model_files import DEFAULT_HELP, shipped_model  # noqa: E402

from .bidder import OTHERS, Bidder  # noqa: E402

SUIT_ROWS = (3, 2, 1, 0)  # display suits S, H, D, C top-down
RANK_COLUMNS = tuple(range(12, -1, -1))  # A ... 2




def explain(bidder: Bidder, hand: list[int], auction: list[int], vul: int, dealer: int, top: int = 5) -> dict:
    """The model's view of one decision, as arrays plus a text summary."""
    replay(dealer, auction)  # raises IllegalCall naming the bad call
    out = {k: v[0] for k, v in bidder.predict([hand], [auction], dealer, vul).items()}
    seat = (dealer + len(auction)) % 4
    others = [SEATS[(seat + k) % 4] for k in (1, 2, 3)]
    order = np.argsort(-out["call"], kind="stable")[:top]
    hcp = out["partner_hcp"]
    lengths_mean = (out["suit_lengths"] * np.arange(14)).sum(-1)  # [3, 4]
    auction_text = " ".join(call_name(c) for c in auction) or "(none)"
    lines = [
        f"hand: {hand_to_pbn(hand)} ({int(CARD_HCP[hand].sum())} HCP), {SEATS[seat]} to call after: {auction_text}"
        f" (dealer {SEATS[dealer]}, vul {VUL_NAMES[vul]})",
        "top calls: " + " ".join(f"{call_name(c)}={out['call'][c]:.3f}" for c in order),
        f"partner ({others[1]}) HCP: mean={(hcp * np.arange(len(hcp))).sum():.2f} mode={int(hcp.argmax())}",
        "partner HCP distribution: " + " ".join(f"{h}={p:.3f}" for h, p in enumerate(hcp) if p >= 0.005),
    ]
    for k, name in enumerate(OTHERS):
        lines.append(f"suit lengths {others[k]} ({name}), expected: "
                     + " ".join(f"{SUITS[s]}={lengths_mean[k, s]:.2f}" for s in SUIT_ROWS))
        for s in SUIT_ROWS:
            lines.append(f"  {SUITS[s]}  " + " ".join(f"{n}:{p:.2f}" for n, p in enumerate(out["suit_lengths"][k, s]) if p >= 0.01))
    for k, name in enumerate(OTHERS):
        lines.append(f"cards {others[k]} ({name}), P(holds) in %:   " + "  ".join(f"{RANKS[r]:>2}" for r in RANK_COLUMNS))
        for s in SUIT_ROWS:
            cells = ["--" if s * 13 + r in hand else f"{100 * out['cards'][s * 13 + r, k + 1]:2.0f}" for r in RANK_COLUMNS]
            lines.append(f"  {SUITS[s]}  " + "  ".join(f"{c:>2}" for c in cells))
    return {**out, "seat": seat, "others": others, "top_calls": [(call_name(c), float(out["call"][c])) for c in order],
            "suit_length_mean": lengths_mean, "text": "\n".join(lines)}


def render(summary: dict, path: Path) -> None:
    """Calls, partner's HCP, suit lengths and a 4x13 card grid per other player, in one PNG."""
    fig = plt.figure(figsize=(15, 11), dpi=100, layout="constrained")
    grid = fig.add_gridspec(3, 3, height_ratios=(1, 1, 1.1))
    fig.suptitle(summary["text"].splitlines()[0], fontsize=11)
    ax = fig.add_subplot(grid[0, 0])
    order = np.argsort(-summary["call"], kind="stable")[:10]
    ax.barh([call_name(c) for c in order][::-1], summary["call"][order][::-1], color="tab:blue")
    ax.set_xlim(0, 1)
    ax.set_title("next call (top 10)")
    ax = fig.add_subplot(grid[0, 1:])
    hcp = summary["partner_hcp"]
    ax.bar(np.arange(len(hcp)), hcp, color="tab:green")
    ax.set_xlabel("HCP")
    ax.set_title(f"partner ({summary['others'][1]}) HCP")
    length_axes, card_axes = [], []
    for k, name in enumerate(OTHERS):
        who = f"{summary['others'][k]} ({name})"
        ax = fig.add_subplot(grid[1, k])
        length_axes.append(ax)
        lengths = ax.imshow(summary["suit_lengths"][k][list(SUIT_ROWS)], vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_yticks(range(4), [f"{SUITS[s]} ~{summary['suit_length_mean'][k, s]:.1f}" for s in SUIT_ROWS])
        ax.set_xticks(range(14))
        ax.set_xlabel("cards in suit")
        ax.set_title(f"{who}: suit lengths")
        ax = fig.add_subplot(grid[2, k])
        card_axes.append(ax)
        cells = summary["cards"][:, k + 1].reshape(4, 13)[list(SUIT_ROWS)][:, list(RANK_COLUMNS)]
        mine = summary["cards"][:, 0].reshape(4, 13)[list(SUIT_ROWS)][:, list(RANK_COLUMNS)] > 0.5
        cmap = plt.get_cmap("magma").with_extremes(bad="lightgrey")
        holds = ax.imshow(np.ma.masked_array(cells, mine), vmin=0, vmax=1, cmap=cmap, aspect="auto")
        ax.set_yticks(range(4), [SUITS[s] for s in SUIT_ROWS])
        ax.set_xticks(range(13), [RANKS[r] for r in RANK_COLUMNS])
        for i in range(4):
            for j in range(13):
                ax.text(j, i, "me" if mine[i, j] else f"{100 * cells[i, j]:.0f}", ha="center", va="center", fontsize=7,
                        color="black" if mine[i, j] or cells[i, j] > 0.6 else "white")
        ax.set_title(f"{who}: P(holds card), %")
    fig.colorbar(lengths, ax=length_axes, shrink=0.8, label="P(length)")
    fig.colorbar(holds, ax=card_axes, shrink=0.8, label="P(holds)")
    fig.savefig(path)
    plt.close(fig)


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow explain", description="Show a BSM's call and beliefs for one hand.")
    parser.add_argument("--hand", required=True, help="PBN order S.H.D.C, e.g. K843.Q92.A75.J64")
    parser.add_argument("--auction", default="", help="calls from dealer, e.g. '1H P' (empty: dealer to call)")
    parser.add_argument("--dealer", default="N", help="N, E, S or W")
    parser.add_argument("--vul", default="none", help="none, ns, ew or both")
    parser.add_argument("--checkpoint", help="BSM: training out folder or model.pt; " + DEFAULT_HELP["BSM"])
    parser.add_argument("--out", default="explain.png", help="PNG to write")
    parser.add_argument("--top", type=int, default=5, help="calls to list")
    args = parser.parse_args(argv)
    out = output_file(args.out)  # before the work; a missing folder is made, as every verb makes its --out
    try:
        decision = parse_decision(args.hand, args.auction, args.dealer, args.vul)
    except ValueError as error:
        parser.error(str(error))
    summary = explain(Bidder.load(args.checkpoint or shipped_model("BSM", "--checkpoint")), decision.hand, decision.auction, decision.vulnerability,
                      decision.dealer, args.top)
    out.parent.mkdir(parents=True, exist_ok=True)
    render(summary, out)
    print(summary["text"])
    print(f"wrote {args.out}")
    return summary
