"""Facit totals of bid problems (points against the sum of each board's top award) per file, agent
and kind, and every two agents' paired difference with its bootstrap interval (statistics.py)."""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

from .problems import KINDS
from .statistics import paired_bootstrap_percent


def totals(rows: Sequence[dict]) -> dict:
    points, best = sum(row["points"] for row in rows), sum(row["top_points"] for row in rows)
    return {"points": points, "max": best, "percent": 100.0 * points / best if best else 0.0, "boards": len(rows)}


def paired_interval(first: Sequence[dict], second: Sequence[dict], seed: int) -> dict:
    """The difference in percent (first - second) on the same boards, with a paired bootstrap 95%
    interval over boards (BOOTSTRAP_DRAWS draws, a fixed seed), as metrics.json has it."""
    interval = paired_bootstrap_percent([a["points"] - b["points"] for a, b in zip(first, second)],
                                        [a["top_points"] for a in first], seed)
    return {"difference": interval.estimate, "low": interval.low, "high": interval.high, "boards": interval.boards}


def summarise(rows: list[dict], agents: Sequence[str], seed: int) -> dict:
    """Totals per file and agent (all, uncontested, scripted), and the agents' paired differences."""
    files = list(dict.fromkeys(row["file"] for row in rows))
    def chosen(file: str | None, agent: str, kind: str | None = None) -> list[dict]:
        return [row for row in rows if row["agent"] == agent and file in (None, row["file"])
                and kind in (None, row["kind"])]
    out = {"files": {file: {agent: {"all": totals(chosen(file, agent))}
                            | {kind: totals(chosen(file, agent, kind)) for kind in KINDS}
                            for agent in agents} for file in files},
           "all": {agent: totals(chosen(None, agent)) for agent in agents}, "paired": {}}
    for first, second in combinations(agents, 2):
        out["paired"][f"{first} - {second}"] = (
            {file: paired_interval(chosen(file, first), chosen(file, second), seed) for file in files}
            | {"all": paired_interval(chosen(None, first), chosen(None, second), seed)})
    return out
