"""A reproducible duplicate evaluation in IMPs: `bridgeflow evaluate`.

    bridgeflow evaluate --dd data/dd --bsm data/bsm --nndda data/nndda --out data/eval \
        [--params params.yaml] [--set boards=50] [--set search.samples=8] [--boards FILE]

Boards: the first `boards` deal_ids, in ascending order, of the DD store's test split (deal_id % 100
>= 90), or a fixed list (`--boards`: a JSON list of deal_ids, or the boards.json this command
writes). Board i (1-based) gets duplicate dealer and vulnerability rotation. Every contract is
scored with the exact DD tricks of the store.

Matches (`evaluate.matches`), agents named rule | bsm | bsm-sample | search, each optionally
`@CHECKPOINT` (another BSM, e.g. `bsm@old/model.pt:bsm`), dmc@CHECKPOINT (a DMC Q network, greedy:
training/dmc), or BEN: ben | ben-nosearch (ben.py; one BEN server per process, workers included):
- `A:B`, a team match: A sits NS at table 1 and EW at table 2, B in the other seats; the board
  scores IMP(NS score at table 1 - NS score at table 2) for A (DeepMind's IMP(S(abab) - S(baba))).
- `partner:A+B`, the partnership setting: A replaces one of four B's, in each seat in turn, so it
  sits with B as partner against two B's; the board scores the mean over the four seats of the
  IMPs A's side gains over the table of four B's (how good a partner for B A is). `partner:A` is
  `partner:A+rule`. B is what follows the last `+`.
For every two team matches against the same opponent or of the same agent (and every two partner
matches with the same B) the report also gives the paired difference on the same boards, named
in the order of evaluate.matches; `search:rule - bsm:rule` is the headline, and
`search:ben - search:ben-nosearch` is what BEN's search changes for ours.

Reproducible: every agent is reseeded before every table from (evaluate.seed, match, deal_id,
table), so the same seed gives the same per-board results, whatever the board order (search.seed
only seeds `bridgeflow bid`); `evaluate.workers` processes (one core each) play boards in parallel
with the same results. Writes to --out:
  boards.parquet  one row per (match, board): auctions, contracts, DD tricks, NS scores, IMPs
  boards.json     the deal_ids played and their hash (a valid --boards file)
  metrics.json    per match: mean IMPs/board, SE, 95% interval, boards, time per decision (mean,
                  p95) per agent, and per search agent how often its sampler fell back (`sampler`);
                  the paired differences; the config, checkpoint hashes and seed.
  matches.pbn     every table of every board as a PBN game (match_pbn.py): seats, auction,
                  contract, its DD tricks as the result, NS score, IMPs, the DD table.
  report.html     the boards as one offline HTML page (board_report.py)

Resumable: finished boards are committed every COMMIT_SECONDS to --out/_progress/KEY/part-*.parquet,
KEY a hash of everything that decides the per-board results (see `run_key`). A rerun with the same
KEY plays only the boards not yet committed and writes the same boards.parquet and metrics.json
(timings aside) as an uninterrupted run; a complete run removes _progress."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch
from tqdm import tqdm

from bridgeflow.dataset.atomic import write_table
from bridgeflow.dataset.auction import AuctionState
from bridgeflow.dataset.dd import SOLVER_NAME
from bridgeflow.dataset.digests import digest, file_digest, key_digest, seed_of
from bridgeflow.dataset.encodings import duplicate_dealer, duplicate_vulnerability, hands_from_owner
from bridgeflow.dataset.errors import InputError, existing, output_folder
from bridgeflow.dataset.labels import read_labels
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.dataset.scoring import imps, score_ns
from bridgeflow.dataset.splits import in_split
from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.dd.exact_dd import ExactDD
from bridgeflow.training.dmc.q_model import DMCAgent, load_q
from bridgeflow.training.model_files import model_file, shipped_model
from bridgeflow.training.search.monte_carlo import (
    MonteCarloSearch,
    SearchConfig,
    SearchResult,
    contract_label,
    load_scorer,
)
from bridgeflow.training.params import ParamsArguments
from bridgeflow.training.pools import spawn_pool

from . import ben
from .agents import Agent, BSMAgent, RuleAgent, SearchAgent
from .board_report import write_report
from .match_pbn import match_pbn
from .statistics import normal_interval, timing_summary

log = logging.getLogger(__name__)
AGENT_KINDS = ("rule", "bsm", "bsm-sample", "search", "dmc", *ben.AGENTS)
COMMIT_SECONDS = 30.0  # a kill loses about this much play at most


@dataclass
class EvalConfig:
    """The `evaluate:` section of params.yaml."""

    boards: int = 100  # deals from the test split (ignored with --boards)
    seed: int = 0
    matches: list = field(default_factory=lambda: ["search:rule", "bsm:rule", "partner:bsm"])
    workers: int = 1  # processes playing boards, one core each; the results do not depend on it

    def __post_init__(self):
        if self.boards < 1 or self.workers < 1:
            raise ValueError(f"evaluate: boards and workers >= 1, not boards={self.boards}, workers={self.workers}")


@dataclass
class Boards:
    deal_ids: np.ndarray  # uint64[n], board i + 1 is deal_ids[i]
    owners: np.ndarray  # int8[n, 52]
    tables: np.ndarray  # int8[n, 4, 5] exact DD tricks

    @property
    def hash(self) -> str:
        return digest(self.deal_ids.astype("<u8").tobytes())


def load_boards(dd_store: str | Path, count: int, board_file: str | Path | None = None) -> Boards:
    """The boards of the match: a fixed list from `board_file`, else the first `count` test-split
    deal_ids of the DD store in ascending order. Only deals with an exact (DDS) table qualify."""
    wanted = None if board_file is None else read_board_list(board_file)
    labels = read_labels(existing(dd_store, "DD store (--dd)"))
    labels = labels.filter(pc.equal(labels.column("solver"), SOLVER_NAME))  # exact tables only, not NN-DDA estimates
    ids = labels.column("deal_id").to_numpy()
    if wanted is None:
        wanted = np.sort(ids[in_split(ids, "test")])[:count]
    position = {int(deal): row for row, deal in enumerate(ids)}
    missing = [int(d) for d in wanted if int(d) not in position]
    if missing:
        raise InputError(f"{len(missing)} boards have no exact DD table in {dd_store}, e.g. deal_id {missing[0]}")
    if not len(wanted):
        raise InputError(f"DD store {dd_store}: no test-split deal with an exact table in it")
    rows = pa.array([position[int(d)] for d in wanted])
    chosen = labels.take(rows)
    owners = np.array(chosen.column("owner").to_pylist(), np.int8)
    tables = np.array(chosen.column("dd_tricks").to_pylist(), np.int8).reshape(-1, 4, 5)
    return Boards(wanted, owners, tables)


def read_board_list(path: str | Path) -> np.ndarray:
    """The deal_ids of a board-list file: a JSON list of deal_ids, or an object whose "deal_ids" is
    one (a boards.json); InputError naming the file unless it is a non-empty list of integers in
    0..2**64-1 (1.5 or "1" is no deal_id)."""
    path = existing(path, "board list (--boards)")
    where = f"board list (--boards) {path}"
    try:
        listed = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{where}: not JSON ({error})") from None
    deal_ids = listed.get("deal_ids") if isinstance(listed, dict) else listed
    if not isinstance(deal_ids, list):
        raise InputError(f"{where}: want a JSON list of deal_ids or an object with one as \"deal_ids\"")
    if not deal_ids:
        raise InputError(f"{where}: lists no deal_id")
    for position, deal in enumerate(deal_ids):
        if isinstance(deal, bool) or not isinstance(deal, int) or not 0 <= deal < 1 << 64:
            raise InputError(f"{where}: item {position} is {json.dumps(deal)}, not a deal_id (an integer in 0..2**64-1)")
    return np.array(deal_ids, np.uint64)


def table_seed(seed: int, match: str, deal_id: int, table: int) -> int:
    return seed_of(seed, match, deal_id, table)


def play(seats: Sequence[Agent], owner: np.ndarray, dealer: int, vul: int, timings: dict[str, list],
         sampler: dict[str, dict[str, int]] | None = None) -> AuctionState:
    """One table: the agent in each seat (N, E, S, W) calls in turn until the auction ends. Each
    decision's seconds go to `timings`, and a search agent's sampling to `sampler` (count_sampling)."""
    hands = hands_from_owner(owner)
    state = AuctionState.start(dealer)
    while not state.finished:
        agent = seats[state.to_call]
        started = time.perf_counter()
        call = agent.next_call(hands[state.to_call], list(state.calls), dealer, vul)
        timings[agent.name].append(time.perf_counter() - started)
        if sampler is not None and isinstance(agent, SearchAgent):
            count_sampling(sampler.setdefault(agent.name, dict.fromkeys(SAMPLER_COUNTS, 0)), agent.last)
        state.add(call)  # an illegal call raises IllegalCall
    return state


# Per search agent and board: its decisions; those it sampled deals for (more than one candidate);
# those where under K sampled deals fit the auction, so the sampler filled in with deals that do
# not; those where under min_fitting fit, so the BSM's call was played; deals rolled out, and of
# those the ones that do not fit.
SAMPLER_COUNTS = ("decisions", "sampled", "sampler_fallback", "bsm_fallback", "deals", "unfitting")


def count_sampling(counts: dict[str, int], result: SearchResult) -> None:
    sampled = result.generated > 0
    counts["decisions"] += 1
    counts["sampled"] += sampled
    counts["sampler_fallback"] += result.sampler_fell_back
    counts["bsm_fallback"] += sampled and result.fallback is not None
    counts["deals"] += result.samples
    counts["unfitting"] += result.unfitting if result.samples else 0


def sampler_summary(counts: dict[str, int]) -> dict:
    """How often the search's sampler fell back, as shares of the decisions it sampled for."""
    sampled, deals = counts["sampled"], counts["deals"]
    return {"decisions": counts["decisions"], "sampled": sampled,
            "sampler_fallback": counts["sampler_fallback"] / sampled if sampled else None,
            "bsm_fallback": counts["bsm_fallback"] / sampled if sampled else None,
            "unfitting_deals": counts["unfitting"] / deals if deals else None}


def table_result(state: AuctionState, table: np.ndarray, vul: int) -> tuple[int, int]:
    """(NS score, declarer's DD tricks or -1 when passed out)."""
    contract = state.contract()
    if contract is None:
        return 0, -1
    tricks = int(table[contract.declarer, contract.strain])
    return score_ns(contract.level, contract.strain, contract.doubled, contract.declarer, vul, tricks), tricks


def play_board(match: str, line_ups: list[list[Agent]], boards: Boards, index: int, seed: int) -> dict:
    """Every table of one board: its log row, without the IMPs, plus the seconds of each agent's
    decisions and each search agent's sampling counts (kept with the board, so that a resumed run
    still reports them)."""
    deal = int(boards.deal_ids[index])
    dealer, vul = duplicate_dealer(index + 1), duplicate_vulnerability(index + 1)
    timings = defaultdict(list)
    row = {"match": match, "board": index + 1, "deal_id": deal, "dealer": dealer, "vul": vul,
           "auctions": [], "contracts": [], "tricks": [], "scores_ns": [], "seconds": timings, "sampler": {}}
    for number, seats in enumerate(line_ups):
        for agent in {id(a): a for a in seats}.values():
            agent.reseed(table_seed(seed, match, deal, number))
        state = play(seats, boards.owners[index], dealer, vul, timings, row["sampler"])
        score, tricks = table_result(state, boards.tables[index], vul)
        row["auctions"].append(state.calls)
        row["contracts"].append(contract_label(state))
        row["tricks"].append(tricks)
        row["scores_ns"].append(score)
    return row


class Progress:
    """The boards played so far, per match. With a folder, finished boards are committed there in
    parts every COMMIT_SECONDS (each written atomically), and the parts already there are loaded:
    a killed run resumes from them."""

    def __init__(self, folder: Path | None = None):
        self.folder, self.pending, self.committed = folder, [], time.monotonic()
        self.rows: dict[str, dict[int, dict]] = defaultdict(dict)  # match -> board -> row
        self.parts = sorted(folder.glob("part-*.parquet")) if folder else []
        for part in self.parts:
            for row in pq.read_table(part).to_pylist():
                self.rows[row["match"]][row["board"]] = row | {"seconds": dict(row["seconds"]), "sampler": dict(row["sampler"])}

    def add(self, row: dict) -> None:
        self.rows[row["match"]][row["board"]] = row
        self.pending.append(row)
        if time.monotonic() - self.committed >= COMMIT_SECONDS:
            self.commit()

    def commit(self) -> None:
        if self.folder is not None and self.pending:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"part-{len(self.parts):06d}.parquet"
            write_table(pa.Table.from_pylist(self.pending, schema=PROGRESS_SCHEMA), path)
            self.parts.append(path)
        self.pending, self.committed = [], time.monotonic()


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


class AgentFactory:
    """Builds agents from names like `search`, `bsm@path/model.pt` or `ben`; loads each model once
    (and starts this process's BEN server once)."""

    def __init__(self, bsm: str | Path | None, nndda: str | Path | None, search: SearchConfig):
        self.bsm, self.nndda, self.search_config = bsm, nndda, search
        self.bidders: dict[Path, Bidder] = {}
        self.scorer = None
        self.checkpoints: dict[str, str] = {}  # file -> hash
        self.searches: list[MonteCarloSearch] = []

    def bidder(self, path: str | Path | None) -> Bidder:
        file = model_file(path or shipped_model("BSM", "--bsm"), "BSM")
        if file not in self.bidders:
            self.bidders[file] = Bidder.load(file)
            self.checkpoints[str(file)] = file_digest(file)
        return self.bidders[file]

    def make(self, spec: str) -> Agent:
        kind, _, path = spec.partition("@")
        if kind not in AGENT_KINDS:
            raise InputError(f"unknown agent {spec!r}: one of {AGENT_KINDS}, optionally @CHECKPOINT")
        if kind == "rule":
            return RuleAgent(name=spec)
        if kind in ben.AGENTS:
            if path:
                raise InputError(f"agent {spec!r}: BEN takes no @CHECKPOINT (its models are BEN's onnx.conf)")
            for file in ben.ben_files().values():
                self.checkpoints[str(file)] = file_digest(file)
            return ben.BenAgent(kind)
        if kind == "dmc":  # a DMC Q network, greedy (training/dmc)
            if not path:
                raise InputError(f"agent {spec!r}: dmc needs @CHECKPOINT (a `bridgeflow dmc train` --out or its q.pt)")
            file = model_file(path, "DMC Q network")
            self.checkpoints[str(file)] = file_digest(file)
            return DMCAgent(load_q(file), name=spec)
        bidder = self.bidder(path or self.bsm)
        if kind != "search":
            return BSMAgent(bidder, greedy=kind == "bsm", name=spec)
        if self.scorer is None:
            self.scorer = load_scorer(self.search_config.dd, self.nndda)
            if self.search_config.dd == "nndda":
                file = model_file(self.nndda or shipped_model("NN-DDA", "--nndda"), "NN-DDA")
                self.checkpoints[str(file)] = file_digest(file)
        self.searches.append(MonteCarloSearch(bidder, self.scorer, self.search_config))
        return SearchAgent(self.searches[-1], name=spec)

    def close(self) -> None:
        if isinstance(self.scorer, ExactDD):
            self.scorer.close()
        for search in self.searches:  # their exact_top DDS children
            search.close()
        ben.close_server()


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


# One board-playing process of a parallel run: its own models, agents and DDS child.
_worker: dict = {}


def _start_worker(bsm, nndda, search_config: SearchConfig, matches: list[str], boards: Boards, seed: int) -> None:
    torch.set_num_threads(1)
    factory = AgentFactory(bsm, nndda, search_config)
    _worker.update(line_ups={match: line_up(match, factory) for match in matches}, boards=boards, seed=seed)


def _play_in_worker(task: tuple[str, int]) -> dict:
    match, index = task
    line_ups, gain = _worker["line_ups"][match]
    row = play_board(match, line_ups, _worker["boards"], index, _worker["seed"])
    return row | {"imps": float(gain(row["scores_ns"]))}


def play_in_parallel(config: EvalConfig, boards: Boards, factory: AgentFactory, progress: Progress) -> None:
    """Every board not yet in `progress`, of every match, played by `config.workers` processes
    and added to `progress` as it finishes. Each table reseeds its agents, so a board's result is
    the same in any process and any order: the serial loop then finds every board played."""
    todo = [(match, index) for match in config.matches for index in range(len(boards.deal_ids))
            if index + 1 not in progress.rows[match]]
    if not todo:
        return
    start = (factory.bsm, factory.nndda, factory.search_config, config.matches, boards, config.seed)
    with spawn_pool(config.workers, _start_worker, start) as pool:  # a killed run's workers end with it
        for row in tqdm(pool.map(_play_in_worker, todo, chunksize=4), total=len(todo), unit="board",
                        desc=f"{len(config.matches)} matches, {config.workers} workers", mininterval=2.0):
            progress.add(row)
    progress.commit()


def run_key(config: EvalConfig, boards: Boards, factory: AgentFactory) -> str:
    """Names a run's progress by everything that decides its per-board results: both configs (with
    the seed), the board list, the hash of every checkpoint loaded and which ones are the defaults
    (so call it once every agent is made)."""
    decisive = {"evaluate": asdict(config) | {"workers": None}, "search": asdict(factory.search_config), "boards": boards.hash,
                "checkpoints": factory.checkpoints, "defaults": [str(factory.bsm), str(factory.nndda)],
                "progress": str(PROGRESS_SCHEMA)}  # parts of another layout are not resumed
    return key_digest(decisive)


def evaluate(config: EvalConfig, boards: Boards, factory: AgentFactory,
             progress_root: Path | None = None) -> tuple[dict, list[dict]]:
    """Play every configured match; returns (metrics, log rows). With `progress_root`, finished
    boards are committed under progress_root/KEY and a rerun with the same KEY resumes from them."""
    lined_up = {match: line_up(match, factory) for match in config.matches}  # every checkpoint, before the key
    progress = Progress(progress_root / run_key(config, boards, factory) if progress_root else None)
    resumed = sum(map(len, progress.rows.values()))
    if resumed:
        log.info("resuming from %s: %d boards already played", progress.folder, resumed)
    if config.workers > 1:
        play_in_parallel(config, boards, factory, progress)
    results, timings, sampler, rows = {}, {}, {}, []
    for match, (line_ups, gain) in lined_up.items():
        started = time.perf_counter()
        played = play_match(match, line_ups, gain, boards, config.seed, progress)
        timings[match], sampler[match] = defaultdict(list), defaultdict(lambda: dict.fromkeys(SAMPLER_COUNTS, 0))
        for row in played:
            for name, seconds in row["seconds"].items():
                timings[match][name] += seconds
            for name, counts in row["sampler"].items():
                for key in SAMPLER_COUNTS:
                    sampler[match][name][key] += counts[key]
        results[match] = played
        rows += [{name: row[name] for name in LOG_SCHEMA.names} for row in played]
        log.info("%s: %.2f IMPs/board over %d boards in %.0f s", match, np.mean([r["imps"] for r in played]),
                 len(played), time.perf_counter() - started)
    metrics = {
        "matches": {match: summary([r["imps"] for r in played])
                    | {"time_per_decision": {name: timing_summary(t) for name, t in timings[match].items()}}
                    | ({"sampler": {name: sampler_summary(c) for name, c in sampler[match].items()}}
                       if sampler[match] else {})
                    for match, played in results.items()},
        "paired": paired(results),
    }
    if "search:rule - bsm:rule" in metrics["paired"]:
        metrics["headline"] = ({"comparison": "(search vs rule) - (bsm vs rule)"}
                               | metrics["paired"]["search:rule - bsm:rule"])
    return metrics, rows


LOG_SCHEMA = pa.schema([
    pa.field("match", pa.string()), pa.field("board", pa.int32()), pa.field("deal_id", pa.uint64()),
    pa.field("dealer", pa.int8()), pa.field("vul", pa.int8()), pa.field("auctions", pa.list_(pa.list_(pa.int8()))),
    pa.field("contracts", pa.list_(pa.string())), pa.field("tricks", pa.list_(pa.int8())),
    pa.field("scores_ns", pa.list_(pa.int32())), pa.field("imps", pa.float64()),
])
PROGRESS_SCHEMA = LOG_SCHEMA.append(pa.field("seconds", pa.map_(pa.string(), pa.list_(pa.float64())))).append(
    pa.field("sampler", pa.map_(pa.string(), pa.struct([(key, pa.int64()) for key in SAMPLER_COUNTS]))))


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow evaluate",
                                     description="Duplicate match in IMPs over DD-scored test boards.")
    parser.add_argument("--dd", default="data/dd", help="DD store (ddlabel --out)")
    parser.add_argument("--bsm", help="BSM checkpoint: training folder or model.pt; default: the one in models/bsm")
    parser.add_argument("--nndda", help="NN-DDA model for the search: folder or nndda.pt; default: models/nndda")
    parser.add_argument("--out", default="data/eval", help="boards.parquet, boards.json, metrics.json go here")
    params_arguments = ParamsArguments(parser, ["evaluate", "search"], bare="evaluate")
    parser.add_argument("--boards", help="fixed board list: JSON list of deal_ids or a boards.json")
    args = parser.parse_args(argv)
    # Decisions run small batches one after another: one thread is faster than two fighting
    # over a busy machine's cores (measured: up to 12x on 2 loaded cores).
    torch.set_num_threads(1)
    params = params_arguments.parsed(args)
    config = params.load(EvalConfig, "evaluate")
    search_config = params.load(SearchConfig, "search")
    boards = load_boards(args.dd, config.boards, args.boards)
    factory = AgentFactory(args.bsm, args.nndda, search_config)
    out = output_folder(args.out)  # checked before the work
    started = time.perf_counter()
    try:
        metrics, rows = evaluate(config, boards, factory, out / "_progress")
    finally:
        factory.close()
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=LOG_SCHEMA), out / "boards.parquet")
    (out / "matches.pbn").write_text(match_pbn(rows, boards, {match: seat_names(match) for match in config.matches}))
    board_list = {"deal_ids": [int(d) for d in boards.deal_ids], "hash": boards.hash}
    (out / "boards.json").write_text(json.dumps(board_list) + "\n")
    metrics |= {
        "schema_version": SCHEMA_VERSION,
        "boards": {"count": len(boards.deal_ids), "hash": boards.hash, "source": args.boards or f"{args.dd} test split",
                   "deal_ids": board_list["deal_ids"]},
        "config": {"evaluate": asdict(config), "search": asdict(search_config)},
        "checkpoints": factory.checkpoints,
        "seed": config.seed,
        "seconds": time.perf_counter() - started,
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    if (out / "_progress").exists():
        shutil.rmtree(out / "_progress")  # this run's parts and any stale ones of other keys
    write_report(out)
    for name, result in [*metrics["matches"].items(), *metrics["paired"].items()]:
        print(f"{name:>28}: {result['mean_imps']:+.2f} IMPs/board, se {float('nan') if result['se'] is None else result['se']:.2f},"
              f" {result['boards']} boards")
    return metrics
