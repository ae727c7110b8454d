"""BSM throughput on this machine: training decision points per second through the whole step
(batch encoding from the memory-mapped cache, forward, backward, optimiser), peak memory, the
one-off cache build, and batched Bidder inference (what Monte Carlo search pays per query).

    python benchmarks/bench_bsm_train.py                         # params.yaml `bsm:` (or defaults), toy corpus
    python benchmarks/bench_bsm_train.py --set layers=3 --set hidden=512 --set embed=128   # published BSM
    python benchmarks/bench_bsm_train.py --set arch=mlp          # OpenSpiel 480-feature MLP, 4 x 1024
    python benchmarks/bench_bsm_train.py --records data/ingest/records --threads 2

Prints one JSON object."""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the toy corpus lives with the tests

from bridgeflow.training.bidding.bidder import Bidder
from bridgeflow.training.bidding.bsm_data import load_corpus
from bridgeflow.training.bidding.bsm_train import load_config, train
from bsm_toy import write_toy_records


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", help="records *.parquet folder (default: a fresh toy corpus)")
    parser.add_argument("--deals", type=int, default=2000, help="toy corpus size when --records is not given")
    parser.add_argument("--steps", type=int, default=40, help="training steps to time")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--queries", type=int, default=1024, help="Bidder batch size to time")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cfg = load_config(Path(args.params), args.set + [f"steps={args.steps}", "eval_every=1000000", "checkpoint_every=1000000"])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        records = Path(args.records) if args.records else tmp / "records"
        if not args.records:
            write_toy_records(records, args.deals, seed=0, shards=2)
        started = time.perf_counter()
        corpus = load_corpus(records, tmp / "cache")
        build_s = time.perf_counter() - started
        rss_before = peak_rss_mib()
        with contextlib.redirect_stdout(sys.stderr):  # keep stdout for the JSON
            result = train(cfg, corpus, tmp / "out", progress=False)
        rss_train = peak_rss_mib()
        torch.save({"model_config": result["model"].config.__dict__, "model": result["model"].state_dict()}, tmp / "model.pt")
        bidder = Bidder.load(tmp / "model.pt")
        batch = corpus.batch(corpus.sequences("train")[: args.queries * 2])
        rows, positions = batch["row"][: args.queries], batch["position"][: args.queries]
        ids = corpus.sequences("train")[: args.queries * 2][rows]
        auctions = [corpus.calls[corpus.offsets[a]:corpus.offsets[a] + t].tolist() for a, t in zip(ids // 4, positions)]
        hands = np.stack([np.flatnonzero(np.asarray(corpus.owner[a]) == p) for a, p in zip(ids // 4, ids % 4)])
        vul, dealer = np.asarray(corpus.vul[ids // 4]), np.asarray(corpus.dealer[ids // 4])
        bidder.predict(hands[:8], auctions[:8], dealer[:8], vul[:8])  # warm up
        started = time.perf_counter()
        bidder.predict(hands, auctions, dealer, vul)
        infer_s = time.perf_counter() - started
    params = sum(p.numel() for p in result["model"].parameters())
    print(json.dumps({
        "arch": cfg.arch, "layers": cfg.layers if cfg.arch != "mlp" else cfg.mlp_layers,
        "hidden": cfg.hidden if cfg.arch != "mlp" else cfg.mlp_hidden, "embed": cfg.embed,
        "call_uses_beliefs": cfg.call_uses_beliefs, "parameters": params, "threads": args.threads,
        "batch_sequences": cfg.batch_size, "steps": args.steps,
        "train_decision_points_per_s": round(result["samples_per_s"], 1),
        "cache_build_s": round(build_s, 2), "auctions": corpus.meta["auctions"],
        "peak_rss_mib_before_training": round(rss_before, 1), "peak_rss_mib": round(rss_train, 1),
        "bidder_queries": len(hands), "bidder_queries_per_s": round(len(hands) / infer_s, 1),
        "mean_auction_prefix": round(float(np.mean([len(a) for a in auctions])), 2),
    }, indent=1))


if __name__ == "__main__":
    main()
