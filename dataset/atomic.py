"""Atomic output, for every writer: a file (or folder) is built under a temporary name beside its
target and renamed onto it only when complete, so a reader, or a rerun after a kill, sees the
whole thing or none of it. Parquet files all take the project's PARQUET_OPTIONS."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from .schema import PARQUET_OPTIONS


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` for the block to write (a file or a folder); renamed onto
    `path` when the block ends, removed when it raises. An existing folder at `path` is replaced."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    _remove(temporary)
    try:
        yield temporary
        if path.is_dir() and temporary.is_dir():
            shutil.rmtree(path)
        os.replace(temporary, path)
    finally:
        _remove(temporary)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8", newline="\n")


def write_json(path: str | Path, value) -> None:
    write_text(path, json.dumps(value, indent=1) + "\n")


def write_table(table: pa.Table, path: str | Path) -> None:
    """A Parquet file with the project's options (zstd, 64k-row groups)."""
    with atomic_path(path) as temporary:
        pq.write_table(table, temporary, **PARQUET_OPTIONS)
