"""One rule for every model loader: a model is named by its file or by the folder its trainer
wrote (which holds that file), and a missing, truncated or foreign file is an InputError naming
the path instead of a traceback."""

from __future__ import annotations

import io
from pathlib import Path

import torch

from bridgeflow.dataset.errors import InputError


def model_file(path: str | Path, file_name: str, what: str) -> Path:
    """The model file: `path` itself, or `path/file_name` when `path` is a folder."""
    path = Path(path)
    if path.is_dir():
        path = path / file_name
    if not path.is_file():
        raise InputError(f"{what} {path}: no such file or folder")
    return path


def load_model_state(path: Path, what: str, weights_only: bool = True) -> tuple[dict, bytes]:
    """(the saved dict with 'model' weights and 'model_config', the file's bytes)."""
    data = path.read_bytes()
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=weights_only)
    except Exception as error:  # truncated, not a torch file, or pickled classes we do not load
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{what} {path}: not a readable model file ({reason[:200]})") from None
    if not isinstance(state, dict) or not {"model", "model_config"} <= state.keys():
        raise InputError(f"{what} {path}: not a {what} file (no model weights and config in it)")
    return state, data
