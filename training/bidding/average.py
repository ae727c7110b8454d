"""`bridgeflow average`: one BSM whose weights are the (weighted) mean of several BSMs'.

    bridgeflow average --bsm data/runs/exit/gen2/bsm --bsm models/bsm_pi --bsm data/runs/pi4/gen3/bsm \\
        --out data/runs/soup

Why: the networks that policy iteration fine-tunes from one start (different generations, or
different self-play runs of one generation) each learned their own search's noise as well as its
judgement. Their weight average keeps what they agree on and averages the noise away ("model soups",
Wortsman et al. 2022), at no cost at inference, as it is one network of the same size;
docs/selfplay.md measures what it buys. Averaging only makes sense for networks fine-tuned from one
start (here every network of a loop started from `models/bsm_ben`); networks trained apart from
scratch do not share a basin, and their average plays nothing.

The out folder is a BSM like a trainer's (model.pt, metrics.json, MODEL_CARD.md, config.json):
every verb and agent (`bsm@DIR`, `search@DIR`) loads it, and model_files.py ships it."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import torch

from bridgeflow.dataset.digests import sha256_digest
from bridgeflow.dataset.errors import InputError, output_folder
from bridgeflow.training.model_files import load_model_state, model_file


def average_states(states: list[dict], weights: list[float]) -> dict:
    """The weighted mean of `states` (state dicts of one architecture), key by key; integer buffers
    (counters) are taken from the first."""
    total = sum(weights)
    first = states[0]
    return {key: (sum(weight * state[key].double() for state, weight in zip(states, weights)) / total).to(tensor.dtype)
            if tensor.is_floating_point() else tensor.clone()
            for key, tensor in first.items()}


def average(paths: list[str | Path], weights: list[float] | None, out: Path, command: str) -> dict:
    """Average the BSMs at `paths` (folders or model.pt files) into `out`; returns metrics.json's dict."""
    if len(paths) < 2:
        raise InputError(f"average needs at least two BSMs (--bsm), got {len(paths)}")
    weights = [1.0] * len(paths) if weights is None else list(weights)
    if len(weights) != len(paths):
        raise InputError(f"{len(weights)} weights (--weights) for {len(paths)} BSMs (--bsm)")
    if min(weights) < 0 or sum(weights) <= 0:
        raise InputError(f"weights (--weights) must be >= 0 with a positive sum, got {weights}")
    files = [model_file(path, "BSM", "--bsm") for path in paths]
    loaded = [load_model_state(path, "BSM") for path in files]
    config = loaded[0][0]["model_config"]
    shapes = {key: tensor.shape for key, tensor in loaded[0][0]["model"].items()}
    for path, (state, _) in zip(files[1:], loaded[1:]):
        if state["model_config"] != config:
            differ = sorted(key for key in config.keys() | state["model_config"].keys()
                            if config.get(key) != state["model_config"].get(key))
            raise InputError(f"BSM {path}: model_config differs from {files[0]}'s in {', '.join(differ)}; "
                             "only networks of one architecture can be averaged")
        if {key: tensor.shape for key, tensor in state["model"].items()} != shapes:
            raise InputError(f"BSM {path}: its weights' names or shapes differ from {files[0]}'s")
    members = [{"path": str(path), "sha256": sha256_digest(data), "weight": weight}
               for path, (_, data), weight in zip(files, loaded, weights)]
    out.mkdir(parents=True, exist_ok=True)
    state = {"model_config": config, "model": average_states([s["model"] for s, _ in loaded], weights)}
    torch.save(state, out / "model.pt")
    metrics = {"kind": "weight average", "members": members, "command": command}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    (out / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
    (out / "MODEL_CARD.md").write_text(model_card(metrics, config))
    return metrics


def model_card(metrics: dict, config: dict) -> str:
    total = sum(member["weight"] for member in metrics["members"])
    rows = [f"| `{m['path']}` | {m['weight'] / total:.3f} | `{m['sha256']}` |" for m in metrics["members"]]
    return "\n".join([
        "# BSM: a weight average of BSMs",
        "",
        "Each weight is the members' weighted mean (`bridgeflow average`, training/bidding/average.py); "
        "no training data of its own. What each member learned, and from what, is in its own card.",
        "",
        "| member | share | sha256 |",
        "|---|---:|---|",
        *rows,
        "",
        f"- architecture: `{json.dumps(config, sort_keys=True)}`",
        f"- command: `{metrics['command']}`",
        "",
    ])


def run(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="bridgeflow average",
                                     description="Average BSMs' weights (fine-tuned from one start) into one BSM.")
    parser.add_argument("--bsm", action="append", required=True,
                        help="a BSM: training out folder or model.pt (repeat, at least two)")
    parser.add_argument("--weights", type=float, nargs="+", help="one weight per --bsm, in order (default: equal)")
    parser.add_argument("--out", type=Path, required=True, help="model.pt, metrics.json, config.json, MODEL_CARD.md")
    args = parser.parse_args(argv)
    output_folder(args.out)
    metrics = average(args.bsm, args.weights, args.out, "bridgeflow average " + shlex.join(argv))
    print(f"wrote {args.out / 'model.pt'}: the mean of {len(metrics['members'])} BSMs")
    return metrics
