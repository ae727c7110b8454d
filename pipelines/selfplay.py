"""Self-play decisions for policy iteration (Apache Beam): `bridgeflow selfplay`.

    bridgeflow selfplay --bsm data/bsm --generation 1 --out data/selfplay/gen1/play \
        [--params params.yaml] [--set key=value ...] [--workers N] [--runner ...]

Generation g plays `selfplay.deals` fresh train-split deals of synth seed `selfplay.seed + g`
(board k + 1 is the k-th such deal: duplicate dealer and vulnerability of its number) with the
network `--bsm` in all four seats, or partnered by the rule-based bidder (`selfplay.partner:
rule`: the search then models the partner by `--partner-bsm`, default `selfplay.base`, the
imitation of the rule bidder), or N-S against another agent at E-W (`selfplay.against`: `rule`,
`ben-nosearch`, `bsm@FILE`, ...; its calls are recorded, not trained on, and the search models it
by `search.opponents`, default the network). Every network decision is searched (training.selfplay.actor)
with the `search:` params overridden by `selfplay.search`, scored by NN-DDA (`selfplay.nndda`,
or exact DDS with `--set search.dd=dds`). Writes to --out:
  decisions/    SELFPLAY_DECISIONS (dataset/schema.py): every call of every auction, with the
                candidates, their prior, tempered prior, Q and SE, pi' and the call played
  summary.json  boards, decisions, how many were searched, skipped as near-certain or fell back,
                how often argmax pi' differs from argmax pi, decisions per second of the workers'
                wall time and of their CPU time (one thread each: a free core's rate), the config
  report.html   every board's auction and searched candidates as one offline HTML page
                (training/evaluation/board_report.py)

Boards are planned as tasks of `selfplay.boards_per_task`; each task is committed to
`_work/KEY/` (its rows as a part file, then a marker with its counts), KEY a hash of everything
that decides the rows (config, generation, model files). A killed run resumes: the rerun plays
only the tasks without a marker, and since a board is a pure function of (seed, generation,
board), ends with the same decisions/ as an uninterrupted run. Progress (boards, decisions/s,
ETA) is logged from the markers while the job runs."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import apache_beam as beam
import numpy as np
import pyarrow as pa
import torch

from bridgeflow.dataset.atomic import write_json, write_table
from bridgeflow.dataset.digests import file_digest, key_digest
from bridgeflow.dataset.errors import InputError, output_folder
from bridgeflow.dataset.schema import SCHEMA_VERSION, SELFPLAY_DECISIONS
from bridgeflow.pipelines.monitor import JobMonitor, rate_and_eta
from bridgeflow.pipelines.runner import add_runner_arguments, job_parser, parse_job_arguments, pipeline_options
from bridgeflow.pipelines.shards import compact, lock_output, number_shards, publish
from bridgeflow.training.dd.exact_dd import ExactDD
from bridgeflow.training.evaluation.agents import AgentFactory
from bridgeflow.training.evaluation.board_report import write_report
from bridgeflow.training.model_files import model_file
from bridgeflow.training.params import Params, ParamsArguments
from bridgeflow.training.search.monte_carlo import MonteCarloSearch, SearchConfig, load_bidder, load_scorer
from bridgeflow.training.selfplay.actor import GENERATE_KEYS, NEAR_CERTAIN, Actor, SelfPlayConfig, train_deals

LOG = logging.getLogger("bridgeflow.selfplay")
ROWS_PER_SHARD = 1_000_000


def board_tasks(config: SelfPlayConfig, generation: int) -> list[list[tuple[int, list[int]]]]:
    """The plan: tasks of (board number, owner) in board order."""
    boards = [(k + 1, owner.tolist()) for k, (_, owner) in enumerate(train_deals(config.seed + generation, config.deals))]
    size = config.boards_per_task
    return [boards[first:first + size] for first in range(0, len(boards), size)]


def counts(rows: list[dict]) -> Counter:
    """What a task's rows hold: decisions by kind, and how often the search changed the best call."""
    out = Counter(boards=len({row["board"] for row in rows}), calls=len(rows))
    for row in rows:
        if row["actor"] != "bsm":
            continue
        out["decisions"] += 1
        out["searched"] += row["searched"]
        out["skipped_near_certain"] += row["skipped"] == NEAR_CERTAIN
        out["fallbacks"] += not row["searched"] and row["skipped"] != NEAR_CERTAIN
        out["best_changed"] += row["prior_best"] != row["policy_best"]
        out["played_not_prior_best"] += row["call"] != row["prior_best"]
    return out


class PlayTask(beam.DoFn):
    """(index, boards) -> the boards' decision rows in work/parts/INDEX.parquet, then the marker
    work/done/INDEX.json with the task's counts and seconds; emits the index. The marker is
    written last, so a task with a marker is whole."""

    def __init__(self, work: str, config: SelfPlayConfig, search: SearchConfig, generation: int,
                 bsm: str, partner_bsm: str | None, opponents_bsm: str | None):
        self.work, self.config, self.search_config, self.generation = work, config, search, generation
        self.bsm, self.partner_bsm, self.opponents_bsm = bsm, partner_bsm, opponents_bsm
        self.actor: Actor | None = None

    def setup(self):
        torch.set_num_threads(1)  # one worker process per core already
        network = load_bidder(self.bsm, self.search_config)
        partner = load_bidder(self.partner_bsm, self.search_config) if self.partner_bsm else None
        opponents = load_bidder(self.opponents_bsm, self.search_config) if self.opponents_bsm else None
        self.scorer = load_scorer(self.search_config.dd, self.config.nndda)
        search = MonteCarloSearch(network, self.scorer, self.search_config, partner, opponents=opponents)
        self.against = AgentFactory(None, self.config.nndda, self.search_config) if self.config.against else None
        opponent = self.against.make(self.config.against) if self.against else None
        self.actor = Actor(network, search, self.config, opponent)

    def teardown(self):
        if isinstance(getattr(self, "scorer", None), ExactDD):
            self.scorer.close()
        if getattr(self, "against", None) is not None:
            self.against.close()  # BEN's server, a search's DDS children

    def process(self, element):
        index, boards = element
        started, cpu = time.perf_counter(), time.process_time()
        rows = [row for board, owner in boards for row in self.actor.play(self.generation, board, np.asarray(owner, np.int8))]
        work = Path(self.work)
        write_table(pa.Table.from_pylist(rows, schema=SELFPLAY_DECISIONS), work / "parts" / f"{index}.parquet")
        write_json(work / "done" / f"{index}.json", dict(counts(rows)) | {"seconds": time.perf_counter() - started,
                                                                        "cpu_seconds": time.process_time() - cpu})
        yield index


def done_tasks(work: Path) -> dict[int, dict]:
    return {int(path.stem): json.loads(path.read_text()) for path in (work / "done").glob("*.json")}


def work_key(config: SelfPlayConfig, search: SearchConfig, generation: int, models: list[Path]) -> str:
    """A hash of everything that decides the rows (GENERATE_KEYS, the search, the generation, the
    model files); not the workers or the runner, so a rerun with others resumes the same work."""
    decisive = {"selfplay": {key: getattr(config, key) for key in GENERATE_KEYS},
                "search": dataclasses.asdict(search), "generation": generation,
                "models": {str(path): file_digest(path) for path in models}}
    return key_digest(decisive)


class Monitor(JobMonitor):
    """Driver side, while the job runs: boards done, boards/s and the ETA, from the markers."""

    def __init__(self, work: Path, boards: int, interval: float):
        super().__init__(interval)
        self.work, self.boards = work, boards
        self.started, self.initial = time.time(), sum(c["boards"] for c in done_tasks(work).values())

    def poll(self) -> None:
        done = done_tasks(self.work).values()
        boards, decisions = sum(c["boards"] for c in done), sum(c.get("decisions", 0) for c in done)
        rate, eta = rate_and_eta(boards, self.boards, self.started, self.initial)
        LOG.info("selfplay: %d/%d boards, %d decisions, %.2f boards/s, ETA %s", boards, self.boards, decisions, rate, eta)


SECTIONS = ("selfplay", "search")  # the params sections selfplay reads (--set KEY is selfplay.KEY)


def parse_args(argv):
    parser = job_parser("bridgeflow selfplay", __doc__.split("\n\n")[0])
    parser.add_argument("--bsm", required=True, help="the current network: a BSM training folder or model.pt")
    parser.add_argument("--partner-bsm", help="partner=rule: the BSM the search models the rule bidder by "
                                              "(default: selfplay.base)")
    parser.add_argument("--generation", type=int, required=True, help="generation number (>= 1): seeds the deals")
    parser.add_argument("--out", required=True, help="decisions/ and summary.json go here")
    params = ParamsArguments(parser, SECTIONS, bare="selfplay")
    parser.add_argument("--progress-seconds", type=float, default=10.0, help="progress line interval")
    add_runner_arguments(parser)
    args, beam_args = parse_job_arguments(parser, argv)
    return args, beam_args, params.parsed(args)


def load_configs(params: Params) -> tuple[SelfPlayConfig, SearchConfig]:
    """The selfplay section, and the search section overridden by selfplay.search, then by --set search.KEY."""
    config = params.load(SelfPlayConfig, "selfplay")
    search = params.load(SearchConfig, "search", first=[f"{key}={json.dumps(value)}" for key, value in config.search.items()])
    return config, search


def run(argv: list[str] | None = None) -> dict:
    """Run (or resume) one generation's self-play; returns the summary it wrote."""
    args, beam_args, params = parse_args(argv)
    started = time.time()
    config, search = load_configs(params)
    if args.generation < 1:
        raise InputError(f"--generation {args.generation}: generations count from 1 (0 is selfplay.base)")
    models = [model_file(args.bsm, "BSM", "--bsm")]
    partner = None
    if args.partner_bsm and config.partner != "rule":
        raise InputError("--partner-bsm goes with selfplay.partner: rule (the compatible setting), and only with it")
    if config.partner == "rule":
        partner = model_file(args.partner_bsm or config.base, "BSM", "--partner-bsm")
        models.append(partner)
    opponents = model_file(search.opponents, "BSM", "search.opponents") if search.opponents else None
    if opponents:  # the search's model of the opponents; at the table they are still the network
        models.append(opponents)
    if search.dd == "nndda":
        models.append(model_file(config.nndda, "NN-DDA", "selfplay.nndda"))
    if config.against:  # made once here to check the spec; the files it loads go into the work key
        factory = AgentFactory(None, config.nndda, search)
        try:
            factory.make(config.against)
        except InputError as error:
            raise InputError(f"selfplay.against: {error}") from None
        finally:
            factory.close()
        models += [Path(file) for file in factory.checkpoints if Path(file) not in models]
    out = output_folder(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with lock_output(out, "selfplay"):
        summary = generate(args, beam_args, out, config, search, models[0], partner, opponents, models, started)
        write_report(out)
    LOG.info("selfplay: %s", json.dumps({k: v for k, v in summary.items() if not isinstance(v, dict)}))
    return summary


def generate(args, beam_args, out: Path, config: SelfPlayConfig, search: SearchConfig, bsm: Path,
             partner: Path | None, opponents: Path | None, models: list[Path], started: float) -> dict:
    """The job, under run()'s lock on `out`."""
    key = work_key(config, search, args.generation, models)
    finished = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    if finished.get("key") == key and (out / "decisions").exists():
        LOG.info("selfplay: %s already holds this generation's decisions (same params and models)", out)
        return finished
    tasks = board_tasks(config, args.generation)
    work = out / "_work" / key
    for stale in (path for path in (out / "_work").glob("*") if path != work):
        shutil.rmtree(stale)  # made with other params or models
    (work / "parts").mkdir(parents=True, exist_ok=True)
    done = done_tasks(work)
    if done:
        LOG.info("selfplay: resuming, %d of %d tasks already played", len(done), len(tasks))
    todo = [(index, task) for index, task in enumerate(tasks) if index not in done]
    monitor = Monitor(work, config.deals, args.progress_seconds)
    monitor.start()
    try:
        if todo:
            with beam.Pipeline(options=pipeline_options(args, beam_args)) as pipeline:
                _ = (pipeline | "Tasks" >> beam.Create(todo, reshuffle=False) | "Spread" >> beam.Reshuffle()
                     | "Play" >> beam.ParDo(PlayTask(str(work), config, search, args.generation, str(bsm),
                                                     str(partner) if partner else None,
                                                     str(opponents) if opponents else None)))
    finally:
        monitor.finish()
    done = done_tasks(work)
    missing = sorted(set(range(len(tasks))) - set(done))
    if missing:
        raise RuntimeError(f"selfplay: tasks {missing[:5]} were not committed; rerun to resume")
    staging = out / f".staging-{os.getpid()}"
    compact([work / "parts" / f"{index}.parquet" for index in range(len(tasks))], staging, SELFPLAY_DECISIONS,
            ROWS_PER_SHARD)
    number_shards(staging, SELFPLAY_DECISIONS)
    publish(staging, out / "decisions")
    total = sum((Counter({k: v for k, v in c.items() if not k.endswith("seconds")}) for c in done.values()), Counter())
    busy = sum(c["seconds"] for c in done.values())
    cpu = sum(c["cpu_seconds"] for c in done.values())
    decisions = total["decisions"]
    summary = {
        "schema_version": SCHEMA_VERSION, "generation": args.generation, "deal_seed": config.seed + args.generation,
        **{key: total[key] for key in ("boards", "calls", "decisions", "searched", "skipped_near_certain",
                                       "fallbacks", "best_changed", "played_not_prior_best")},
        "searched_share": total["searched"] / decisions if decisions else None,
        "best_changed_share_of_searched": total["best_changed"] / total["searched"] if total["searched"] else None,
        "decisions_per_worker_second": decisions / busy if busy else None,  # wall time of the workers' tasks
        "decisions_per_cpu_second": decisions / cpu if cpu else None,  # one thread per worker: a core's rate
        "seconds": round(time.time() - started, 3),
        "key": key,  # a rerun with the same key is a no-op
        "models": {str(path): file_digest(path) for path in models},
        "config": {"selfplay": dataclasses.asdict(config), "search": dataclasses.asdict(search)},
    }
    write_json(out / "summary.json", summary)
    shutil.rmtree(out / "_work")
    return summary


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    run(sys.argv[1:])
