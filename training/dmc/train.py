"""The DMC learner and `bridgeflow dmc`:

    bridgeflow dmc train --out data/dmc [--params params.yaml] [--set updates=2000 ...]
    bridgeflow dmc check --agent dmc@data/dmc --against bsm@models/bsm --dd datasets/dd_labels \
        --boards 200 --nndda models/nndda --out data/dmc/nndda_check.json

`train` starts `dmc.actors` actor processes (torch.multiprocessing, spawn; actor.py) that fill a
shared buffer (buffer.py) with decisions and their duplicate returns (reward.py), while this
process fits Q(state, call played) to the returns by mean squared error and copies its weights to
the actors every `broadcast_every` updates. Every `checkpoint_every` updates ckpt.pt (network,
optimizer, counters) is replaced atomically; a killed run restarted with the same --out and params
resumes from it (the buffer refills from the resumed weights; `updates`, `actors` and the logging,
checkpoint and snapshot intervals may change between stretches). With `snapshot_every`, the network
is also kept as snapshots/q-UPDATES.pt, the points of the learning curve (docs/dmc.md). A progress
line every `log_seconds`: updates, decisions/s, buffer fill, loss; the same rows in progress.csv. Writes to --out: q.pt (the Q network, for
`dmc@PATH` agents), ckpt.pt, metrics.json, progress.csv, MODEL_CARD.md. `check`: check.py."""

from __future__ import annotations

import argparse
import csv
import json
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.multiprocessing as mp

from bridgeflow.dataset.atomic import atomic_path
from bridgeflow.dataset.digests import key_digest
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.dataset.splits import in_split
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.model_files import load_model_state, model_file
from bridgeflow.training.params import ParamsArguments

from .actor import actor_loop
from .buffer import SharedBuffer
from .q_model import Q_FILE, QConfig, QNetwork, decision_batch, from_bsm
from .reward import BridgeReward, DealTables, exact_store

log = logging.getLogger(__name__)
# keys that change neither the data nor the fit: a resumed stretch may change them
RESUMABLE_KEYS = ("updates", "actors", "log_seconds", "checkpoint_every", "snapshot_every")
PROGRESS_COLUMNS = ["updates", "decisions", "seconds", "decisions_per_second", "buffer_fill", "loss"]


@dataclass
class DMCConfig:
    """The `dmc:` section of params.yaml (docs/dmc.md)."""

    init: str = "data/bsm"  # the imitation BSM whose trunk Q starts from (the shipped one: models/bsm)
    dd: str = "data/dd"  # DD store: its train-split deals are played, scored with their exact tables
    nndda: str = ""  # NN-DDA for deals the store does not label ("" = none: every deal from the store)
    store_share: float = 1.0  # share of deals drawn from the store; the rest are fresh random deals (NN-DDA)
    reward: str = "duplicate"  # duplicate (two tables, sides swapped) | par (IMPs against the DD par)
    actors: int = 1  # actor processes
    deals_per_batch: int = 8  # deals per lockstep batch (x 2 tables)
    epsilon: float = 0.1  # actors' exploration: a uniformly drawn legal call with this probability
    max_calls: int = 48  # an auction is closed with passes at max_calls - 3 calls
    buffer: int = 20000  # decisions the shared ring holds
    min_fill: int = 256  # decisions in the buffer before the first update
    batch_size: int = 64  # decisions per update
    lr: float = 1e-4
    grad_clip: float = 1.0
    updates: int = 10  # learner updates in all (resumed stretches included)
    broadcast_every: int = 5  # updates between weight copies to the actors
    checkpoint_every: int = 5
    snapshot_every: int = 0  # keep the Q network every this many updates in snapshots/ (0 = none): the curve's points
    log_seconds: float = 10.0
    head_hidden: int = 256  # Q head width
    prior: float = 0.0  # the BSM's log-policy's weight, added to Q at play (0: DouZero's plain Q)
    candidates: int = 0  # play and explore only the BSM's this many likeliest calls (0 = every legal call)
    freeze_trunk: bool = False  # fit the value head only; the BSM's trunk (and prior) stay as initialised
    seed: int = 0

    def __post_init__(self):
        if self.actors < 1 or self.deals_per_batch < 1 or self.batch_size < 1 or self.updates < 0:
            raise ValueError("dmc: actors, deals_per_batch, batch_size >= 1 and updates >= 0")
        if not 0 <= self.epsilon <= 1 or not 0 <= self.store_share <= 1:
            raise ValueError("dmc: epsilon and store_share must be in [0, 1]")
        if self.max_calls < 8 or self.buffer < self.batch_size or self.broadcast_every < 1 or self.checkpoint_every < 1:
            raise ValueError("dmc: max_calls >= 8, buffer >= batch_size, broadcast_every and checkpoint_every >= 1")
        if self.snapshot_every < 0:
            raise ValueError("dmc.snapshot_every must be >= 0")
        if self.reward not in ("duplicate", "par"):
            raise ValueError(f"dmc.reward must be duplicate or par, not {self.reward!r}")
        if self.prior < 0 or self.candidates < 0:
            raise ValueError("dmc.prior and dmc.candidates must be >= 0")


def bridge_reward(config: DMCConfig, store: tuple[np.ndarray, np.ndarray, np.ndarray]) -> BridgeReward:
    """The actors' reward: exact tables of the store's deals, NN-DDA for the others."""
    if not config.nndda and (not len(store[0]) or config.store_share < 1):
        raise InputError("dmc plays deals the DD store (dmc.dd) does not label: they need an NN-DDA (dmc.nndda)")
    estimator = DDEstimator.load(config.nndda) if config.nndda else None
    return BridgeReward(config.reward, DealTables(dict(zip(map(int, store[0]), store[2])), estimator))


def run_key(config: DMCConfig) -> str:
    decisive = {key: value for key, value in asdict(config).items() if key not in RESUMABLE_KEYS}
    return key_digest(decisive)


def load_store(config: DMCConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not config.dd:
        return np.zeros(0, np.uint64), np.zeros((0, 52), np.int8), np.zeros((0, 4, 5), np.int8)
    store = exact_store(config.dd)
    if config.store_share > 0 and not in_split(store[0], "train").any():
        raise InputError(f"DD store {config.dd}: no train-split deal with an exact table (dmc.store_share > 0)")
    return store


def save_atomically(network: QNetwork, path: Path, extra: dict | None = None) -> None:
    with atomic_path(path) as temporary:
        network.save(temporary, extra)


class Learner:
    """The network, its optimizer and the counters a checkpoint keeps."""

    def __init__(self, config: DMCConfig, out: Path):
        self.config, self.out, self.ckpt = config, out, out / "ckpt.pt"
        torch.manual_seed(config.seed)
        self.updates = self.decisions = 0
        self.seconds = 0.0
        if self.ckpt.exists():
            saved, _ = load_model_state(self.ckpt, "DMC checkpoint")
            if saved.get("run_key") != run_key(config):
                raise InputError(f"{self.ckpt}: a checkpoint of other dmc params; give another --out or the same params")
            self.network = QNetwork(QConfig(**saved["model_config"]))
            self.network.load_state_dict(saved["model"])
            self.optimizer = self.make_optimizer()
            self.optimizer.load_state_dict(saved["optimizer"])
            self.updates, self.decisions, self.seconds = saved["updates"], saved["decisions"], saved["seconds"]
            log.info("resuming from %s at update %d (%d decisions)", self.ckpt, self.updates, self.decisions)
        else:
            self.network = from_bsm(config.init, config.head_hidden, config.prior, config.candidates)
            self.optimizer = self.make_optimizer()
        self.features480 = self.network.config.bsm.get("arch") == "mlp"
        self.rng = np.random.default_rng([config.seed, self.updates])

    def make_optimizer(self) -> torch.optim.Optimizer:
        self.network.trunk.requires_grad_(not self.config.freeze_trunk)
        return torch.optim.Adam([p for p in self.network.parameters() if p.requires_grad], lr=self.config.lr)

    def step(self, buffer: SharedBuffer) -> float:
        """One update on a random batch of the buffer: MSE of the head's Q(state, call played) to the
        return (the prior is a fixed bonus at play, not part of the fit)."""
        rows = buffer.sample(self.config.batch_size, self.rng)
        batch = decision_batch(rows["hand"], rows["calls"], rows["dealer"], rows["vul"], self.features480)
        self.network.train()
        if self.config.freeze_trunk:
            self.network.trunk.eval()  # no dropout in a trunk that is not learning
        q = self.network(batch, restrict=False, with_prior=False)
        q = q.gather(1, torch.from_numpy(rows["call"])[:, None])[:, 0]
        loss = torch.nn.functional.mse_loss(q, torch.from_numpy(rows["ret"]))
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.network.parameters(), self.config.grad_clip)
        self.optimizer.step()
        self.updates += 1
        return loss.item()

    def checkpoint(self) -> None:
        save_atomically(self.network, self.ckpt, {"optimizer": self.optimizer.state_dict(), "updates": self.updates,
                                                  "decisions": self.decisions, "seconds": self.seconds,
                                                  "run_key": run_key(self.config)})


def start_actors(config: DMCConfig, shared: QNetwork, version, reward_factory, count: int,
                 store: tuple[np.ndarray, np.ndarray, np.ndarray], stretch: int = 0):
    """(buffer, stop event, processes): `count` actor processes writing to a new shared buffer
    (stretch: the update the run resumed from, which seeds the actors)."""
    context = mp.get_context("spawn")
    buffer, stop = SharedBuffer(config.buffer, config.max_calls, context), context.Event()
    processes = [context.Process(target=actor_loop, args=(index, config, reward_factory, shared, version, buffer,
                                                          stop, store, stretch), daemon=True) for index in range(count)]
    for process in processes:
        process.start()
    return buffer, stop, processes


def shared_copy(network: QNetwork) -> QNetwork:
    shared = QNetwork(network.config)
    shared.load_state_dict(network.state_dict())
    return shared.share_memory().eval()


def train(config: DMCConfig, out: str | Path, reward_factory=bridge_reward) -> dict:
    """Run (or resume) DMC to `config.updates` updates; returns the metrics written to --out."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    store = load_store(config)
    reward_factory(config, store)  # a bad reward setting fails here, not in every actor
    learner = Learner(config, out)
    shared = shared_copy(learner.network)
    version = mp.get_context("spawn").Value("q", 0)
    buffer, stop, processes = start_actors(config, shared, version, reward_factory, config.actors, store,
                                           learner.updates)
    progress_path = out / "progress.csv"
    rows = list(csv.DictReader(progress_path.open())) if progress_path.exists() and learner.updates else []
    rows = [row for row in rows if int(row["updates"]) <= learner.updates]  # past the checkpoint: replayed
    started, logged, losses = time.perf_counter(), time.perf_counter(), []
    seconds_before, decisions_before = learner.seconds, learner.decisions

    def record() -> None:
        now = time.perf_counter() - started
        learner.seconds, learner.decisions = seconds_before + now, decisions_before + buffer.written.value
        if not losses:  # nothing learnt since the last row: counters only
            return
        rows.append({"updates": learner.updates, "decisions": learner.decisions, "seconds": round(learner.seconds, 2),
                     "decisions_per_second": round(buffer.written.value / now, 2) if now else 0.0,
                     "buffer_fill": buffer.filled, "loss": round(float(np.mean(losses)), 5)})
        log.info("dmc: update %d/%d, %d decisions (%.1f/s), buffer %d/%d, loss %s", learner.updates, config.updates,
                 learner.decisions, rows[-1]["decisions_per_second"], buffer.filled, config.buffer, rows[-1]["loss"])
        losses.clear()
        with open(progress_path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=PROGRESS_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)

    try:
        while learner.updates < config.updates:
            failed = [p for p in processes if p.exitcode not in (None, 0)]
            if failed:
                raise RuntimeError(f"dmc: an actor process exited with code {failed[0].exitcode}")
            if buffer.filled < config.min_fill:
                time.sleep(0.05)
                continue
            losses.append(learner.step(buffer))
            if learner.updates % config.broadcast_every == 0:
                with version.get_lock():
                    shared.load_state_dict(learner.network.state_dict())
                    version.value += 1
            if config.snapshot_every and learner.updates % config.snapshot_every == 0:
                (out / "snapshots").mkdir(exist_ok=True)
                save_atomically(learner.network, out / "snapshots" / f"q-{learner.updates:08d}.pt")
            if learner.updates % config.checkpoint_every == 0:
                record()
                learner.checkpoint()
            elif time.perf_counter() - logged >= config.log_seconds:
                record()
                logged = time.perf_counter()
    finally:
        stop.set()
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.terminate()
    record()
    learner.checkpoint()
    save_atomically(learner.network, out / Q_FILE)
    metrics = {"schema_version": SCHEMA_VERSION, "updates": learner.updates, "decisions": learner.decisions,
               "seconds": learner.seconds, "final_loss": float(rows[-1]["loss"]) if rows else None, "config": asdict(config),
               "init": str(model_file(config.init, "BSM")), "run_key": run_key(config)}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    (out / "MODEL_CARD.md").write_text(model_card(metrics, learner.network.config))
    return metrics


def model_card(metrics: dict, config: QConfig) -> str:
    return "\n".join([
        "# DMC Q network (Deep Monte Carlo self-play)", "",
        "Q(state, call) for every call of the player to act; greedy play takes the best legal call.", "",
        "## Variant", "",
        "State: the imitation BSM's trunk (its encoding of hand, auction, vulnerability, seat and hand",
        f"features; `{config.bsm.get('arch')}`, initialised from `{metrics['init']}`). Call: its own features",
        "(pass / double / redouble / bid, level, strain, jump over the cheapest legal bid of its strain).",
        f"Head: an MLP ({config.hidden} wide) over the concatenated state and call features, DouZero's choice,",
        "computed as A h + B f so the trunk runs once per state and all 38 calls come out of one pass. Chosen",
        "over a dot product of state and call embeddings, which can only rank calls linearly in a shared space,",
        "while the MLP's extra cost per call is small next to the recurrent trunk's.",
        (f"Prior: calls are chosen by Q + {config.prior} x the imitation BSM's log-probability of the call (Q, the"
         " head, is fitted to the returns alone), so play starts from the BSM's calls and leaves one only where Q"
         f" rates another call above it by more than {config.prior} IMPs per nat of log-probability between them."
         if config.prior else "Prior: none (DouZero's plain Q; the fresh head starts from a near-arbitrary policy)."),
        (f"Candidates: only the BSM's {config.candidates} likeliest legal calls are played or explored."
         if config.candidates else "Candidates: every legal call."),
        "",
        "## Training", "",
        f"- updates: {metrics['updates']}, decisions played: {metrics['decisions']}, seconds: {metrics['seconds']:.0f}",
        f"- final loss (MSE, IMPs^2): {metrics['final_loss']}",
        f"- reward: {metrics['config']['reward']}; params: `{json.dumps(metrics['config'], sort_keys=True)}`", "",
    ])


def run(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="bridgeflow dmc", description="Deep Monte Carlo self-play (docs/dmc.md).")
    verbs = parser.add_subparsers(dest="command", required=True)
    fit = verbs.add_parser("train", help="actors and learner; resumable")
    fit.add_argument("--out", required=True, help="q.pt, ckpt.pt, metrics.json, progress.csv, MODEL_CARD.md")
    params = ParamsArguments(fit, ["dmc"], bare="dmc")
    from .check import add_arguments, run_check

    add_arguments(verbs.add_parser("check", help="does a policy exploit NN-DDA? IMPs under NN-DDA and exact DDS"))
    args = parser.parse_args(argv)
    if args.command == "check":
        return run_check(args)
    return train(params.parsed(args).load(DMCConfig, "dmc"), args.out)
