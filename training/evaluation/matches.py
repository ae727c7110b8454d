"""The match kinds and their IMPs: a team match `A:B` and the partnership setting `partner:A+B`
(evaluate's docstring), every board of a match played in order (`play_match`), and the summaries
of the results: per match and as paired differences on the same boards."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from tqdm import tqdm

from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.scoring import imps

from .agents import Agent, AgentFactory
from .boards import Boards
from .resume import Progress
from .statistics import normal_interval
from .table import play_board


def play_match(match: str, line_ups: list[list[Agent]], gain: Callable[[list[int]], float], boards: Boards,
               seed: int, progress: Progress | None) -> list[dict]:
    """Every board of a match, in board order, with the IMPs `gain(scores_ns)`; boards already in
    `progress` are not played again."""
    progress = progress or Progress()
    done = progress.rows[match]
    count = len(boards.deal_ids)
    todo = [index for index in range(count) if index + 1 not in done]
    for index in tqdm(todo, desc=match, unit="board", total=count, initial=count - len(todo), mininterval=2.0):
        row = play_board(match, line_ups, boards, index, seed)
        progress.add(row | {"imps": float(gain(row["scores_ns"]))})
    progress.commit()
    return [done[index + 1] for index in range(count)]


def team_line_ups(a: Agent, b: Agent) -> list[list[Agent]]:
    """A NS at table 1 and EW at table 2."""
    return [[a, b, a, b], [b, a, b, a]]


def team_gain(scores: list[int]) -> float:
    """IMPs for A: its NS score at table 1 against B's at table 2."""
    return imps(scores[0] - scores[1])


def partner_line_ups(agent: Agent, partner: Agent) -> list[list[Agent]]:
    """Four `partner`s, then the agent in each seat with three of them: with one as its partner,
    against two."""
    return [[partner] * 4] + [[agent if s == seat else partner for s in range(4)] for seat in range(4)]


def partner_gain(scores: list[int]) -> float:
    """IMPs for the agent's side against the table of four partners, averaged over the four seats."""
    return np.mean([(1 if seat % 2 == 0 else -1) * imps(scores[seat + 1] - scores[0]) for seat in range(4)])


def team_match(match: str, a: Agent, b: Agent, boards: Boards, seed: int,
               progress: Progress | None = None) -> list[dict]:
    return play_match(match, team_line_ups(a, b), team_gain, boards, seed, progress)


def partner_match(match: str, agent: Agent, partner: Agent, boards: Boards, seed: int,
                  progress: Progress | None = None) -> list[dict]:
    return play_match(match, partner_line_ups(agent, partner), partner_gain, boards, seed, progress)


def summary(values: Sequence[float]) -> dict:
    """Mean IMPs, standard error and normal 95% interval of per-board IMPs, as metrics.json has
    them (None where undefined)."""
    interval = normal_interval(values)
    return {"mean_imps": interval.estimate, "se": interval.se,
            "ci95": None if interval.low is None else [interval.low, interval.high], "boards": interval.boards}


def paired(results: dict[str, list[dict]]) -> dict[str, dict]:
    """Paired differences on the same boards: team matches against the same opponent (which of
    two agents does better against it), team matches of the same agent (which of two opponents is
    harder for it), and partner matches with the same partner."""
    def comparable(first: str, second: str) -> bool:
        (kind, a, b), (other_kind, c, d) = match_agents(first), match_agents(second)
        return kind == other_kind and (b == d or (kind == "team" and a == c))

    out = {}
    names = list(results)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            if comparable(first, second):
                a = np.array([r["imps"] for r in results[first]])
                b = np.array([r["imps"] for r in results[second]])
                out[f"{first} - {second}"] = summary(a - b)
    return out


def match_agents(match: str) -> tuple[str, str, str]:
    """('team', A, B) for `A:B`; ('partner', A, B) for `partner:A+B`, and `partner:A` is
    `partner:A+rule`."""
    if match.startswith("partner:"):
        agent, plus, partner = match.removeprefix("partner:").rpartition("+")
        return ("partner", agent, partner) if plus else ("partner", partner, "rule")
    first, sep, second = match.partition(":")
    if not sep:
        raise InputError(f"evaluate.matches: a match is A:B, partner:A+B or partner:A, not {match!r}")
    return "team", first, second


def seat_names(match: str) -> list[list[str]]:
    """The agents' names in the seats (N, E, S, W) of every table of `match`."""
    kind, first, second = match_agents(match)
    return (partner_line_ups if kind == "partner" else team_line_ups)(first, second)


def line_up(match: str, factory: AgentFactory) -> tuple[list[list[Agent]], Callable[[list[int]], float]]:
    """The seats at every table of a board of `match`, and its IMPs from the tables' NS scores."""
    kind, first, second = match_agents(match)
    try:
        first_agent, second_agent = factory.make(first), factory.make(second)
    except InputError as error:
        raise InputError(f"evaluate.matches: {match}: {error}") from None
    if kind == "partner":
        return partner_line_ups(first_agent, second_agent), partner_gain
    return team_line_ups(first_agent, second_agent), team_gain
