"""Intervals over boards, one shape for both kinds: `Interval(estimate, low, high, boards)`.

- `normal_interval`: the mean of per-board values (IMPs, or a paired difference of IMPs on the
  same boards) with its standard error and the normal 95% interval mean +- 1.96 se; `evaluate`,
  `generation` and `dmc check` use it.
- `paired_bootstrap_percent`: a share in percent, 100 sum(gained) / sum(possible), of paired
  per-board values (the Facit points one agent gains over another on the same problems, over the
  top awards), with the 2.5 and 97.5 percentiles of its bootstrap over boards; `challenge` uses it.

`low` and `high` name the bounds in code. The files keep the keys they have always had, each
writer mapping an Interval onto them: an evaluate metrics.json match is {mean_imps, se, ci95:
[low, high], boards} (matches.summary), a challenge pair is {difference, low, high, boards}."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

Z95 = 1.959964  # the standard normal's 97.5th percentile
BOOTSTRAP_DRAWS = 10_000


@dataclass(frozen=True)
class Interval:
    """An estimate over `boards` boards and its 95% interval [low, high]; None where undefined
    (a normal interval needs two boards). `se` is the normal interval's standard error."""

    estimate: float | None
    low: float | None
    high: float | None
    boards: int
    se: float | None = None


def normal_interval(values: Sequence[float]) -> Interval:
    """Mean, standard error and normal 95% interval of per-board values."""
    values = np.asarray(values, float)
    n = len(values)
    if n < 2:
        return Interval(float(values.mean()) if n else None, None, None, n)
    mean, se = float(values.mean()), float(values.std(ddof=1) / np.sqrt(n))
    return Interval(mean, mean - Z95 * se, mean + Z95 * se, n, se)


def paired_bootstrap_percent(gained: Sequence[float], possible: Sequence[float], seed: int,
                             draws: int = BOOTSTRAP_DRAWS) -> Interval:
    """100 sum(gained) / sum(possible) over the boards (0 when nothing was possible), with the 95%
    interval of `draws` bootstrap resamples of the boards (a fixed seed: the same interval every
    run). No boards: all zeros."""
    gained, possible = np.asarray(gained, float), np.asarray(possible, float)
    if not len(possible):
        return Interval(0.0, 0.0, 0.0, 0)
    rows = np.random.default_rng(seed).integers(0, len(possible), (draws, len(possible)))
    sums = possible[rows].sum(axis=1)
    percents = 100.0 * gained[rows].sum(axis=1) / np.where(sums > 0, sums, 1.0)
    low, high = np.percentile(percents, [2.5, 97.5])
    estimate = 100.0 * gained.sum() / possible.sum() if possible.sum() else 0.0
    return Interval(estimate, float(low), float(high), len(possible))


def timing_summary(seconds: Sequence[float]) -> dict:
    """Decisions, mean and 95th percentile in milliseconds of per-decision seconds."""
    ms = np.asarray(seconds) * 1000
    return {"decisions": len(ms), "mean_ms": float(ms.mean()), "p95_ms": float(np.percentile(ms, 95))}
