"""The one error type for a user's mistake: a missing or unreadable input, a bad value on the
command line. `bridgeflow <verb>` prints it as one line and exits 2; any other exception is a bug
and keeps its traceback."""

from __future__ import annotations

import os
from pathlib import Path


class InputError(ValueError):
    """What the user gave cannot be used; the message names the path or value and why."""


def existing(path: str | Path, what: str) -> Path:
    """`path` as a Path, or an InputError naming `what` is missing (before any output is made)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{what} {path}: no such file or folder")
    return path


def output_folder(path: str | Path, what: str = "--out") -> Path:
    """`path` as a Path, or an InputError naming `what` (before any work) unless a run can make or
    write the folder there: '' (it would be the working directory), an existing file, a file in
    the way above it, or a place this user may not write."""
    if not str(path).strip():
        raise InputError(f"{what} {str(path)!r}: give a folder (an empty path would write into the working directory)")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{what} {path}: exists and is not a folder")
    above = path
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise InputError(f"{what} {path}: {above} is a file, not a folder")
    if not os.access(above, os.W_OK | os.X_OK):
        raise InputError(f"{what} {path}: {above} is not writable")
    return path


def output_file(path: str | Path, what: str = "--out") -> Path:
    """`path` as a Path, or an InputError naming `what` (before any work) unless a run can write the
    file there (its folder is made if missing, as output_folder allows)."""
    if not str(path).strip():
        raise InputError(f"{what} {str(path)!r}: give a file name")
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{what} {path}: is a folder, not a file")
    output_folder(path.parent, what)
    return path
