"""The one error type for a user's mistake: a missing or unreadable input, a bad value on the
command line. `bridgeflow <verb>` prints it as one line and exits 2; any other exception is a bug
and keeps its traceback."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """What the user gave cannot be used; the message names the path or value and why."""


def existing(path: str | Path, what: str) -> Path:
    """`path` as a Path, or an InputError naming `what` is missing (before any output is made)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{what} {path}: no such file or folder")
    return path
