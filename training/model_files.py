"""One rule for every model loader: a model is named by its file or by the folder its trainer
wrote (which holds that file); with no name, the one shipped in the repository's models/ is used
(home.py: found beside the code in a checkout, through BRIDGEFLOW_HOME when installed).
A missing, truncated or foreign file is an InputError naming the path, not a traceback, and every
load says which file it read."""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
from pathlib import Path

import torch

from bridgeflow.dataset.digests import sha256_digest
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.training.home import HOME, hint

LOG = logging.getLogger("bridgeflow.models")
MODELS = HOME / "models"  # the shipped models (not in the wheel)
FILE_OF = {"BSM": "model.pt", "NN-DDA": "nndda.pt", "DMC Q network": "q.pt"}  # the file a trainer writes
# kind -> the folder in models/ a verb loads when given none: for the BSM the strongest shipped
# network, chosen by the rule in models/README.md (best on the validation list and the Facit dev half)
SHIPPED = {"BSM": "bsm_pi", "NN-DDA": "nndda"}
DEFAULT_HELP = {what: f"default: models/{folder}, the shipped default" for what, folder in SHIPPED.items()}


def shipped_model(what: str, flag: str) -> Path:
    """The model of kind `what` shipped in models/, for a verb whose `flag` was not given."""
    folder = SHIPPED[what]
    path = MODELS / folder / FILE_OF[what]
    if not path.is_file():
        raise InputError(f"no {what} given ({flag}) and none shipped in {MODELS / folder}{hint()}")
    LOG.info("no %s given (%s): the shipped default, models/%s (models/README.md says why)", what, flag, folder)
    return path


def model_file(path: str | Path, what: str, given_by: str = "") -> Path:
    """The model file of kind `what` (FILE_OF): `path` itself, or the trainer's file in it when
    `path` is a folder; `given_by` (a flag or param) goes into the error."""
    path = Path(path)
    if path.is_dir():
        path = path / FILE_OF[what]
    if not path.is_file():
        raise InputError(f"{what}{f' ({given_by})' if given_by else ''} {path}: no such file or folder")
    return path


def load_model_state(path: Path, what: str) -> tuple[dict, bytes]:
    """(the saved dict with 'model' weights and 'model_config', the file's bytes). Loaded with
    `weights_only=True`: tensors and plain values only, so a model file cannot run code."""
    data = path.read_bytes()
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # truncated, not a torch file, or pickled classes we do not load
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{what} {path}: not a readable model file ({reason[:200]})") from None
    if not isinstance(state, dict) or not {"model", "model_config"} <= state.keys():
        raise InputError(f"{what} {path}: not a {what} file (no model weights and config in it)")
    LOG.info("%s: %s (sha256 %s)", what, path, sha256_digest(data)[:16])
    return state, data


def ship(trained: Path, what: str, out: Path, command: str) -> Path:
    """A trainer's out folder -> `out`: the model file with weights and config only (loadable with
    weights_only=True), config.json, metrics.json and MODEL_CARD.md with the file's sha256 and the
    command that trained it. Returns the model file."""
    file_name = FILE_OF[what]
    source = model_file(trained, what)
    state, _ = load_model_state(source, what)
    out.mkdir(parents=True, exist_ok=True)
    path = out / file_name
    torch.save({"model_config": state["model_config"], "model": state["model"]}, path)
    digest = sha256_digest(path.read_bytes())
    (out / "config.json").write_text(json.dumps(state["model_config"], indent=1, sort_keys=True) + "\n")
    metrics = json.loads((source.parent / "metrics.json").read_text())
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    card = (source.parent / "MODEL_CARD.md").read_text().rstrip()
    (out / "MODEL_CARD.md").write_text(card + "\n\n## Shipped\n\n" + "\n".join([
        f"- file: `{file_name}` (weights and `model_config` only; `torch.load(..., weights_only=True)`)",
        f"- sha256: `{digest}`",
        f"- schema_version: {SCHEMA_VERSION}",
        f"- trained by: `{command}`",
        f"- copied from `{source}` by `python -m bridgeflow.training.model_files --what {what} --trained {trained} "
        f"--out {os.path.relpath(out)}`",
    ]) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bridgeflow.training.model_files",
                                     description="Copy a trained model into models/ (what the repository ships).")
    parser.add_argument("--what", choices=sorted(SHIPPED), required=True)
    parser.add_argument("--trained", type=Path, required=True, help="the trainer's out folder")
    parser.add_argument("--out", type=Path, required=True, help="the folder in models/ it ships as, e.g. models/bsm_pi")
    parser.add_argument("--command", required=True, help="the command that trained it (for the model card)")
    args = parser.parse_args(argv)
    path = ship(args.trained, args.what, args.out, args.command)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
