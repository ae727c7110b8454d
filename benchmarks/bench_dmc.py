"""DMC throughput: actor decisions/s with 1, 2, ... actor processes (the learner paused), and
learner updates/s on its own.

    python benchmarks/bench_dmc.py [--bsm models/bsm] [--dd datasets/dd_labels] [--actors 1 2] \
        [--seconds 15] [--params params.yaml] [--set KEY=VALUE ...]
    python benchmarks/bench_dmc.py --tiny        # an untrained toy BSM, 2 s per measurement: a smoke run

Actors are the training's own (training/dmc/actor.py: lockstep batches of `deals_per_batch` deals
at two tables, epsilon-greedy, duplicate returns from the store's exact tables), started as
`bridgeflow dmc train` starts them, counted from their first written decision for `--seconds`
of wall time, and per CPU second the actors got (what they would do with a core each: on a
shared machine the wall rate stops scaling when the free cores run out). The learner's rate: `Learner.step` on a buffer filled by one in-process batch run,
for `--seconds`. Wall rates: on a shared machine they are lower bounds. Prints one JSON object."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.dmc.actor import DealSource, decisions, play_batch
from bridgeflow.training.dmc.buffer import SharedBuffer
from bridgeflow.training.dmc.train import DMCConfig, Learner, bridge_reward, load_store, shared_copy, start_actors
from bridgeflow.training.params import load_section

REPO = Path(__file__).resolve().parents[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_actors(count: int, seconds: float, start) -> dict:
    """Decisions per wall second and per actor CPU second of `count` actor processes, the learner
    paused: `start(count)` returns (buffer, stop, processes); counted from the first decision written."""
    buffer, stop, processes = start(count)
    while buffer.written.value == 0:
        time.sleep(0.05)
    first, began = buffer.written.value, time.perf_counter()
    cpu = sum(cpu_seconds(process.pid) for process in processes)
    time.sleep(seconds)
    made = buffer.written.value - first
    wall, cpu = time.perf_counter() - began, sum(cpu_seconds(process.pid) for process in processes) - cpu
    stop.set()
    for process in processes:
        process.join()
    return {"decisions_per_second": made / wall, "decisions_per_actor_cpu_second": made / cpu, "cpu_share": cpu / wall}


def learner_rate(config: DMCConfig, out: Path, store, seconds: float) -> tuple[float, int]:
    """(updates/s, decisions in the buffer) of the learner alone."""
    learner = Learner(config, out)
    reward = bridge_reward(config, store)
    buffer = SharedBuffer(config.buffer, config.max_calls)
    source, rng = DealSource(store[0], store[1], config.store_share, config.seed), np.random.default_rng(0)
    while buffer.filled < max(config.min_fill, config.batch_size):
        played = play_batch(learner.network, *source.draw(config.deals_per_batch), config.epsilon, rng, config.max_calls)
        buffer.add(decisions(played, reward.returns(played), config.max_calls))
    learner.step(buffer)  # warm-up
    began, updates = time.perf_counter(), 0
    while time.perf_counter() - began < seconds:
        learner.step(buffer)
        updates += 1
    return updates / (time.perf_counter() - began), buffer.filled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bsm", default=str(REPO / "models" / "bsm"))
    parser.add_argument("--dd", default=str(REPO / "datasets" / "dd_labels"))
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--params", default=str(REPO / "params.yaml"))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a dmc param")
    parser.add_argument("--tiny", action="store_true", help="untrained toy BSM, 2 s per measurement")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        bsm = args.bsm
        if args.tiny:
            toy = BSMConfig(hidden=16, layers=1, embed=8, dropout=0.0, hand_features=True)
            bsm = os.path.join(folder, "model.pt")
            torch.save({"model": BSM(toy).state_dict(), "model_config": asdict(toy)}, bsm)
            args.seconds = 2.0
        config = replace(load_section(DMCConfig, args.params, "dmc", args.set), init=bsm, dd=args.dd)
        store = load_store(config)
        learner = Learner(config, Path(folder) / "learner")
        shared = shared_copy(learner.network)
        version = torch.multiprocessing.get_context("spawn").Value("q", 0)

        def start(count):
            return start_actors(config, shared, version, bridge_reward, count, store)

        actors = {str(count): measure_actors(count, args.seconds, start) for count in args.actors}
        updates_per_second, filled = learner_rate(config, Path(folder) / "alone", store, args.seconds)
    print(json.dumps({"bsm": args.bsm if not args.tiny else "toy (LSTM 1 x 16)", "seconds": args.seconds,
                      "cpus": os.cpu_count(), "deals_per_batch": config.deals_per_batch, "epsilon": config.epsilon,
                      "actor_decisions_per_second": actors,
                      "scaling": {count: rate["decisions_per_second"] / actors[str(args.actors[0])]["decisions_per_second"]
                                  for count, rate in actors.items()},
                      "learner_updates_per_second": updates_per_second, "batch_size": config.batch_size,
                      "learner_decisions_per_second": updates_per_second * config.batch_size,
                      "buffer_for_learner": filled}, indent=1))


if __name__ == "__main__":
    main()
