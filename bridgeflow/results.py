"""Results as data: every number README quotes lives in a committed `results/<name>.json` that says
how it was made (the exact command, git commit, date, seed, hashes of the data and models it
read), and tests/test_results.py checks README's numbers against these files.

    python -m bridgeflow.results --name make_repro --command "make repro" \\
        --metrics bsm=data/bsm/metrics.json --metrics nndda=data/nndda/metrics.json \\
        --model data/bsm/model.pt --data data/ingest/records --seed "synth 2026, training 0"
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
from pathlib import Path

from bridgeflow.dataset.digests import sha256_digest
from bridgeflow.dataset.errors import existing
from bridgeflow.dataset.schema import SCHEMA_VERSION
from bridgeflow.training.home import HOME

RESULTS = HOME / "results"  # committed with the checkout, not in the wheel


def content_hash(path: Path) -> str:
    """sha256 of a file (as the loaders log it), or of a folder's files (relative names and bytes,
    in sorted order); the first 16 hex digits."""
    if path.is_file():
        return sha256_digest(path.read_bytes())[:16]
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode())
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()[:16]


def git_commit(folder: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def record(name: str, command: str, metrics: dict[str, Path], models: list[Path], data: list[Path],
           seed: str | None, out: Path = RESULTS) -> Path:
    """Write results/<name>.json from the metrics files a run wrote."""
    return write_result(name, command, {key: json.loads(path.read_text()) for key, path in metrics.items()},
                        {str(path): content_hash(path) for path in models},
                        {str(path): content_hash(path) for path in data}, seed, out)


def write_result(name: str, command: str, metrics: dict, models: dict[str, str], data: dict[str, str],
                 seed: str | None, out: Path = RESULTS) -> Path:
    """results/<name>.json: the metrics with how they were made (`models` and `data`: path -> content_hash)."""
    result = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "command": command,
        "git_commit": git_commit(Path.cwd()),
        "date": datetime.date.today().isoformat(),
        "seed": seed,
        "data": data,
        "models": models,
        "metrics": metrics,
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path


def lookup(result: dict, key: str):
    """A value of a results file by its dotted key, e.g. 'metrics.bsm.call_accuracy' (a number
    indexes a list: 'metrics.evaluate.headline.ci95.0')."""
    value = result
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bridgeflow.results", description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="results/<name>.json")
    parser.add_argument("--command", required=True, help="the exact command that made the metrics")
    parser.add_argument("--metrics", action="append", default=[], metavar="KEY=FILE", required=True,
                        help="a metrics.json the run wrote, stored under metrics.KEY")
    parser.add_argument("--model", action="append", default=[], type=Path, help="a model file the run used or made")
    parser.add_argument("--data", action="append", default=[], type=Path, help="a data file or folder it read")
    parser.add_argument("--seed", help="the seeds that decide the numbers, e.g. 'synth 2026, training and evaluate 0'")
    args = parser.parse_args(argv)
    metrics = {}
    for spec in args.metrics:
        key, _, file = spec.partition("=")
        metrics[key] = existing(file, f"--metrics {key}")
    for path in [*args.model, *args.data]:
        existing(path, "--model/--data")
    print(f"wrote {record(args.name, args.command, metrics, args.model, args.data, args.seed)}")


if __name__ == "__main__":
    main()
