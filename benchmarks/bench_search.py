"""Gain of the Monte Carlo search against its cost: one curve over the number of sampled deals K.

    python benchmarks/bench_search.py --bsm data/bsm --nndda data/nndda \
        [--boards 20] [--samples 8,16,32,64,128,256] [--set search.KEY=VALUE ...] [--csv out.csv]
    python benchmarks/bench_search.py --tiny      # untrained models, 4 DDS-solved boards: a smoke run

It tunes, so it plays the first --boards deals of the committed validation list (valid split,
exact labels shipped in datasets/dd_labels); the test list is for claims, not for tuning.
For each K, the duplicate match search:rule is played on the same boards as bsm:rule; the
gain is the paired per-board difference (search vs rule) - (BSM vs rule) in IMPs with its standard
error, next to the search's time per decision (mean and p95): wall clock, and CPU time with one
torch thread (the cost on one core, which a shared machine's load inflates less), and per
position kind (opening, uncontested, defending, competitive) how many searched decisions the
sampler filled in with deals that do not fit (`sampler_fallback`) or could not search at all
(`bsm_fallback`), and in how many the fit test left calls out (`relaxed`). Plot gain against K
or against ms/decision from the CSV."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import torch

from bridgeflow.dataset.dd import Solver
from bridgeflow.dataset.encodings import deal_id, random_owner
from bridgeflow.dataset.labels import dd_store_table
from bridgeflow.dataset.splits import split_of
from bridgeflow.training.bidding.bsm_model import BSM, BSMConfig
from bridgeflow.training.dd.nndda_model import NNDDA, NNDDAConfig
from bridgeflow.training.evaluation import evaluate as ev
from bridgeflow.training.evaluation.agents import SearchAgent
from bridgeflow.training.params import load_section
from bridgeflow.training.search.monte_carlo import SearchConfig, SearchResult

REPO = Path(__file__).resolve().parents[1]
VALID_LIST = next((REPO / "benchmarks" / "boards").glob("valid1000-*.json"), None)  # the tuning boards


def tiny_setup(folder: Path, boards: int) -> tuple[Path, Path, Path]:
    """Untrained BSM and NN-DDA checkpoints and a DD store of `boards` random test-split deals."""
    torch.manual_seed(0)
    bsm = BSM(BSMConfig(hidden=32, layers=1, embed=16))
    torch.save({"model_config": vars(bsm.config), "model": bsm.state_dict()}, folder / "model.pt")
    nndda = NNDDA(NNDDAConfig(hidden=32, layers=1))
    torch.save({"model_config": vars(nndda.config), "model": nndda.state_dict()}, folder / "nndda.pt")
    owners = [o for o in (random_owner(0, i) for i in range(40 * boards)) if split_of(deal_id(o)) == "test"][:boards]
    with Solver() as solver:
        tables = np.stack(solver.solve(owners)).reshape(-1, 4, 5)
    ids = np.array([deal_id(o) for o in owners], np.uint64)
    (folder / "dd").mkdir()
    pq.write_table(dd_store_table(ids, np.stack(owners), tables), folder / "dd" / "labels.parquet")
    return folder / "dd", folder / "model.pt", folder / "nndda.pt"


class RecordingFactory(ev.AgentFactory):
    """AgentFactory whose search agents keep each decision's CPU seconds (one torch thread: the
    process's CPU time is the decision's cost on one core, whatever else the machine runs),
    evidence and position (hand, auction, dealer, vul)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.decisions: list[tuple[float, SearchResult]] = []
        self.positions: list[tuple] = []

    def make(self, spec: str):
        agent = super().make(spec)
        if isinstance(agent, SearchAgent):
            decide = agent.next_call

            def timed(*args):
                started = time.process_time()
                call = decide(*args)
                self.decisions.append((time.process_time() - started, agent.last))
                self.positions.append(args)
                return call

            agent.next_call = timed
        return agent


def fallbacks_by_kind(decisions: list[tuple[float, SearchResult]]) -> dict[str, dict[str, int]]:
    """Per position kind: searched decisions, those where the sampler filled in with deals that do
    not fit (sampler_fallback), those where no search ran for want of fitting deals (bsm_fallback),
    and those whose fit test left calls out (relaxed, search.relax)."""
    out: dict[str, dict[str, int]] = {}
    for _, result in decisions:
        if result.generated == 0:  # one candidate: nothing sampled
            continue
        counts = out.setdefault(result.position, {"decisions": 0, "sampler_fallback": 0, "bsm_fallback": 0, "relaxed": 0})
        counts["decisions"] += 1
        counts["sampler_fallback"] += result.sampler_fell_back
        counts["bsm_fallback"] += result.fallback is not None
        counts["relaxed"] += result.relaxed > 0
    return out


def curve(dd: Path, bsm: Path, nndda: Path, boards: int, samples: list[int], overrides: list[str],
          seed: int, board_list: Path | None = None) -> list[dict]:
    board_set = ev.load_boards(dd, boards, board_list)
    board_set = ev.Boards(board_set.deal_ids[:boards], board_set.owners[:boards], board_set.tables[:boards])
    base = load_section(SearchConfig, None, "search", overrides)
    factory = RecordingFactory(bsm, nndda, base)
    _, baseline = ev.evaluate(ev.EvalConfig(seed=seed, matches=["bsm:rule"]), board_set, factory)
    reference = np.array([r["imps"] for r in baseline])
    points = []
    for k in samples:
        factory.search_config = load_section(SearchConfig, None, "search", overrides + [f"samples={k}"])
        factory.decisions = []
        metrics, rows = ev.evaluate(ev.EvalConfig(seed=seed, matches=["search:rule"]), board_set, factory)
        gain = ev.summary(np.array([r["imps"] for r in rows]) - reference)
        timing = metrics["matches"]["search:rule"]["time_per_decision"]["search"]
        cpu = np.array([seconds for seconds, _ in factory.decisions]) * 1000
        kinds = fallbacks_by_kind(factory.decisions)
        points.append({"samples": k, "boards": gain["boards"], "gain_imps": gain["mean_imps"], "se": gain["se"],
                       "ms_per_decision": timing["mean_ms"], "p95_ms": timing["p95_ms"],
                       "cpu_ms": float(cpu.mean()), "cpu_p95_ms": float(np.percentile(cpu, 95)),
                       "decisions": timing["decisions"], "fallbacks": json.dumps(kinds, sort_keys=True)})
        print(f"K={k:3d}  gain {gain['mean_imps']:+6.2f} IMPs/board (se {gain['se'] or float('nan'):.2f})"
              f"  {timing['mean_ms']:7.1f} ms/decision wall (p95 {timing['p95_ms']:.0f}),"
              f" CPU {cpu.mean():.1f} ms (p95 {np.percentile(cpu, 95):.0f}), {timing['decisions']} decisions", flush=True)
        print("       fallbacks by position: " + ", ".join(
            f"{kind} {c['sampler_fallback']}+{c['bsm_fallback']}/{c['decisions']} (relaxed {c['relaxed']})"
            for kind, c in sorted(kinds.items())),
            flush=True)
    factory.close()
    return points


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dd", type=Path, default=REPO / "datasets" / "dd_labels")
    parser.add_argument("--board-list", type=Path, default=VALID_LIST, help="default: the validation list")
    parser.add_argument("--bsm", type=Path, default=Path("data/bsm"))
    parser.add_argument("--nndda", type=Path, default=Path("data/nndda"))
    parser.add_argument("--boards", type=int, default=20)
    parser.add_argument("--samples", default="8,16,32,64,128,256", help="comma-separated values of K")
    parser.add_argument("--set", action="append", default=[], metavar="search.KEY=VALUE", help="other search params")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--csv", type=Path, help="write the curve here")
    parser.add_argument("--tiny", action="store_true", help="untrained models on 4 boards, K = 1,2 (smoke run)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    samples = [int(k) for k in args.samples.split(",")]
    overrides = [s.removeprefix("search.") for s in args.set]
    with tempfile.TemporaryDirectory() as tmp:
        if args.tiny:
            args.boards, samples = 4, [1, 2]
            args.dd, args.bsm, args.nndda = tiny_setup(Path(tmp), args.boards)
            args.board_list = None  # its own 4 test-split boards
        points = curve(args.dd, args.bsm, args.nndda, args.boards, samples, overrides, args.seed, args.board_list)
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with args.csv.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(points[0]))
            writer.writeheader()
            writer.writerows(points)
    return points


if __name__ == "__main__":
    main(sys.argv[1:])
