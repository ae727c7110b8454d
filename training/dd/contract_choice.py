"""What NN-DDA's errors cost a bidding decision: the regret of choosing between two contracts on
one deal by the network's scores instead of exact DD.

    python -m bridgeflow.training.dd.contract_choice [--nndda models/nndda] [--dd datasets/dd_labels] \
        [--split test] [--pairs-per-deal 20] [--seed 0] [--out results.json]

A decision here is a pair of contracts on one deal, the kind a search compares: the first at a level
within a trick of what its declarer makes (a close call), the second one to two levels away, in the
same strain or another, by the same declarer or partner, undoubled, at a random vulnerability. Each
scorer picks the contract with the higher score for the declaring side; its regret is the exact IMPs
that pick loses to the better contract (0 when it picks right). Scorers:
- `argmax`: the score of NN-DDA's likeliest trick count (its DD table);
- `expected`: the score averaged over its trick distribution (`search.nndda_scores=expected`).
Measured on exact labels of one split, so the deals are disjoint from NN-DDA's training deals."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from bridgeflow.dataset.labels import exact_rows, read_labels
from bridgeflow.dataset.scoring import contract_scores, imps_array
from bridgeflow.dataset.splits import in_split
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.model_files import shipped_model

SCORERS = ("argmax", "expected")


def close_pairs(exact: np.ndarray, pairs_per_deal: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random contract pairs (the module docstring's decisions) on deals of exact tables int[n, 4, 5]."""
    deal = np.repeat(np.arange(len(exact)), pairs_per_deal)
    m = len(deal)
    declarer, strain, vulnerable = rng.integers(0, 4, m), rng.integers(0, 5, m), rng.integers(0, 2, m)
    level = np.clip(exact[deal, declarer, strain] - 6 + rng.integers(-1, 2, m), 1, 7)
    other_level = np.clip(level + rng.choice([-1, 1, 2], m), 1, 7)
    other_strain = np.where(rng.random(m) < 0.5, strain, rng.integers(0, 5, m))
    other_declarer = np.where(rng.random(m) < 0.5, declarer, (declarer + 2) % 4)
    keep = (level != other_level) | (strain != other_strain)
    pairs = {"deal": deal, "vulnerable": vulnerable, "level": np.stack([level, other_level]),
             "strain": np.stack([strain, other_strain]), "declarer": np.stack([declarer, other_declarer])}
    return {name: values[..., keep] for name, values in pairs.items()}


def regrets(probabilities: np.ndarray, exact: np.ndarray, pairs: dict[str, np.ndarray]) -> dict[str, float]:
    """Mean exact IMPs lost per decision by each scorer, and how often each picks the worse contract;
    probabilities float[n, 4, 5, 14] (NN-DDA's trick distributions), exact int[n, 4, 5]."""
    deal, declarer, strain = pairs["deal"], pairs["declarer"], pairs["strain"]
    outcomes = contract_scores(pairs["level"][..., None], strain[..., None], 0, pairs["vulnerable"][..., None],
                               np.arange(14)).astype(float)  # [2, m, 14]: the score of each trick count
    cell_probs = probabilities[deal, declarer, strain]  # [2, m, 14]
    rows = np.arange(len(deal))

    def at(tricks: np.ndarray) -> np.ndarray:
        return np.stack([outcomes[i, rows, tricks[i]] for i in range(2)])

    exact_scores = at(exact[deal, declarer, strain])
    estimates = {"argmax": at(cell_probs.argmax(-1)), "expected": (outcomes * cell_probs).sum(-1)}
    gain = imps_array(exact_scores[0] - exact_scores[1]).astype(float)  # exact IMPs of the first over the second
    out = {"decisions": int(len(deal)), "exact_ties": float((gain == 0).mean())}
    for name, scores in estimates.items():
        first = scores[0] > scores[1]
        lost = np.where(first, np.maximum(-gain, 0), np.maximum(gain, 0))
        out[f"{name}_regret_imps"] = float(lost.mean())
        out[f"{name}_wrong"] = float((lost > 0).mean())
    return out


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bridgeflow.training.dd.contract_choice", description=__doc__.split("\n")[0])
    parser.add_argument("--nndda", help="NN-DDA model (folder or nndda.pt); default: models/nndda")
    parser.add_argument("--dd", default="datasets/dd_labels", help="DD store(s) with exact labels (default: %(default)s)")
    parser.add_argument("--split", default="test", choices=("train", "valid", "test"))
    parser.add_argument("--pairs-per-deal", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the result as JSON here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    table = exact_rows(read_labels(args.dd))
    mask = in_split(np.array(table.column("deal_id").to_pylist(), np.uint64), args.split)
    owners = np.array(table.column("owner").to_pylist(), np.int8)[mask]
    exact = np.array(table.column("dd_tricks").to_pylist(), np.int64)[mask].reshape(-1, 4, 5)
    estimator = DDEstimator.load(args.nndda or shipped_model("NN-DDA", "--nndda"))
    pairs = close_pairs(exact, args.pairs_per_deal, np.random.default_rng(args.seed))
    result = {"nndda": estimator.version, "dd": args.dd, "split": args.split, "deals": int(len(owners)),
              "seed": args.seed, **regrets(estimator.trick_distributions(owners), exact, pairs)}
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    run()
