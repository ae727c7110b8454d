"""Peak memory of ingesting one large PBN file, split into pieces between games or parsed whole.

    python benchmarks/bench_ingest_memory.py --mb 10 --mb 50 --mb 200 [--workers 2]

Each size gets a generated file (robot-result style games of ~230 bytes: a deal, a passed-out
auction, '#' and '##' tags so that pieces carry tag state), ingested twice: with the default
--split-bytes (pieces of 8 MiB) and with --split-bytes above the file size (one piece, the old
behaviour). Memory is the peak summed RSS of the whole process tree (Beam workers included), as
in bench_synth_ingest.py. Flat memory: the split peak barely moves as the file grows; both runs
must write the same shards."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_synth_ingest import measure  # noqa: E402

from bridgeflow.dataset.encodings import SEATS, VUL_NAMES, deal_to_pbn  # noqa: E402

SPLIT_BYTES = 8 << 20  # ingest's default --split-bytes


def write_pbn(path: Path, megabytes: float, seed: int = 1) -> int:
    """A PBN file of about `megabytes` MB; returns its number of games."""
    rng = random.Random(seed)
    deals = []
    for _ in range(4096):  # a pool of deals, reused: the parser's work does not depend on which
        owner = np.repeat(np.arange(4, dtype=np.int8), 13)
        rng.shuffle(owner)
        deals.append(deal_to_pbn(owner))
    target = int(megabytes * 1e6)
    games = written = 0
    with open(path, "w") as handle:
        while written < target:
            board = games + 1
            dealer = SEATS[(board - 1) % 4]
            event = '"##Bench club night"' if games == 0 else '"#"'
            game = (f"[Event {event}]\n[Site \"#\"]\n[Board \"{board}\"]\n[Dealer \"{dealer}\"]\n"
                    f"[Vulnerable \"{VUL_NAMES[board % 4]}\"]\n[Deal \"{deals[games % len(deals)]}\"]\n"
                    f"[Contract \"Pass\"]\n[Auction \"{dealer}\"]\nPass Pass Pass Pass\n\n")
            if games == 0:
                game = game.replace('[Site "#"]', '[Site "Bench"]')
            handle.write(game)
            written += len(game)
            games += 1
    return games


def shards_digest(folder: Path) -> str:
    digest = hashlib.blake2b(digest_size=8)
    for shard in sorted(folder.glob("*.parquet")):
        digest.update(shard.read_bytes())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, action="append", help="file sizes in MB (repeatable)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--split-bytes", type=int, default=SPLIT_BYTES, help="piece size of the split runs")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "bridgeflow.cli", "ingest", "--workers", str(args.workers)]
    for megabytes in args.mb or [10.0]:
        with tempfile.TemporaryDirectory() as work:
            path = Path(work) / "big.pbn"
            games = write_pbn(path, megabytes)
            size = path.stat().st_size
            result = {"mb": megabytes, "bytes": size, "games": games, "workers": args.workers}
            digests = {}
            for name, split_bytes in (("split", args.split_bytes), ("whole", size + 1)):
                out = Path(work) / name
                seconds, peak = measure(cli + ["--input", str(path), "--out", str(out), "--split-bytes", str(split_bytes)])
                manifest = json.loads((out / "manifest.json").read_text())
                if manifest["read"] != games:
                    raise SystemExit(f"{name}: read {manifest['read']} of {games} games")
                digests[name] = shards_digest(out / "records") + shards_digest(out / "quarantine")
                result[f"{name}_s"] = round(seconds, 1)
                result[f"{name}_peak_mib"] = round(peak)
            result["same_shards"] = digests["split"] == digests["whole"]
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
