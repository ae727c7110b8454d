"""One rule for every model loader: a model is named by its file or by the folder its trainer
wrote (which holds that file); with no name, the one shipped in the repository's models/ is used.
A missing, truncated or foreign file is an InputError naming the path, not a traceback, and every
load says which file it read."""

from __future__ import annotations

import hashlib
import io
import logging
from pathlib import Path

import torch

from bridgeflow.dataset.errors import InputError

LOG = logging.getLogger("bridgeflow.models")
MODELS = Path(__file__).resolve().parents[1] / "models"  # the git checkout's shipped models (not in the wheel)
SHIPPED = {"BSM": ("bsm", "model.pt"), "NN-DDA": ("nndda", "nndda.pt")}  # what -> (folder, file)


def shipped_model(what: str, flag: str) -> Path:
    """The model of kind `what` shipped in models/, for a verb whose `flag` was not given."""
    folder, file_name = SHIPPED[what]
    path = MODELS / folder / file_name
    if not path.is_file():
        raise InputError(f"no {what} given ({flag}) and none shipped in {MODELS / folder}")
    return path


def model_file(path: str | Path, file_name: str, what: str) -> Path:
    """The model file: `path` itself, or `path/file_name` when `path` is a folder."""
    path = Path(path)
    if path.is_dir():
        path = path / file_name
    if not path.is_file():
        raise InputError(f"{what} {path}: no such file or folder")
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
    LOG.info("%s: %s (sha256 %s)", what, path, hashlib.sha256(data).hexdigest()[:16])
    return state, data
