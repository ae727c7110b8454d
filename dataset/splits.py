"""The deal-disjoint split every stage uses (docs/conventions.md): `deal_id % 100` below 80 is
train, below 90 valid, else test, so one deal bid in two rooms or read from two sources never
straddles splits. One rule, for single ids and for arrays of them."""

from __future__ import annotations

import numpy as np

SPLITS = ("train", "valid", "test")
_UPPER = (80, 90, 100)  # a split holds the buckets below its bound and at or above the previous one


def split_of(deal_id: int) -> str:
    """'train' | 'valid' | 'test' for one deal_id."""
    bucket = int(deal_id) % 100
    return next(name for name, upper in zip(SPLITS, _UPPER) if bucket < upper)


def in_split(deal_ids: np.ndarray, split: str) -> np.ndarray:
    """bool mask over an array of deal_ids: which are in `split`."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    index = SPLITS.index(split)
    bucket = np.asarray(deal_ids, dtype=np.uint64) % np.uint64(100)
    lower = np.uint64(_UPPER[index - 1] if index else 0)
    return (bucket >= lower) & (bucket < np.uint64(_UPPER[index]))
