"""The real deals with exact DD tables of ../shared/data/oracle (see its README), as arrays, for
evaluating NN-DDA in documented runs and tests; never a default pipeline input.

Parsing is dataset/ddformats.py's; this only gathers the full deals with all 20 cells known:
DDS `dds_hands/list*.txt` and `largest.txt` (real deals, many repeated across lists) and every
macroxue results file and folder (random deals; an independent solver, verified equal to DDS)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from bridgeflow.dataset import ddformats
from bridgeflow.dataset.encodings import deal_id
from bridgeflow.dataset.labels import dd_store_table
from bridgeflow.dataset.record import BoardRecord


def oracle_sources(root: Path, which: str = "all") -> list[Path]:
    """The oracle files with full deals: `dds` (DDS's lists of real deals), `macroxue` (Xue's random
    deals) or `all`."""
    dds, xue = root / "dds_hands", root / "macroxue_bridge_solver"
    lists = sorted(dds.glob("list*.txt")) + [dds / "largest.txt"]
    random = [xue / "comparison" / "results.5k_deals.txt"] + sorted(p for p in xue.iterdir() if (p / "RESULTS").is_file())
    return {"dds": lists, "macroxue": random, "all": lists + random}[which]


def read_source(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One oracle file or folder -> owners int8[n, 52], tables int8[n, 4, 5] of its full deals."""
    owners, tables = [], []
    for record in ddformats.load(path):
        if isinstance(record, BoardRecord) and record.dd_tricks is not None and None not in record.dd_tricks:
            owners.append(np.asarray(record.owner, dtype=np.int8))
            tables.append(np.asarray(record.dd_tricks, dtype=np.int8).reshape(4, 5))
    return np.stack(owners), np.stack(tables)


def load_oracle(root: str | Path, which: str = "all") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All oracle deals -> (deal_ids uint64[n], owners, tables), one row per distinct deal, sorted
    by deal_id. Raises if one deal has two different tables."""
    parts = [read_source(path) for path in oracle_sources(Path(root), which)]
    owners = np.concatenate([o for o, _ in parts])
    tables = np.concatenate([t for _, t in parts])
    ids = np.array([deal_id(o) for o in owners], dtype=np.uint64)
    ids, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    if (tables != tables[first][inverse]).any():
        raise ValueError("the same deal has two different tables in the oracle files")
    return ids, owners[first], tables[first]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write the oracle deals as a DD-store file (for documented runs).")
    parser.add_argument("--oracle", required=True, help="the shared/data/oracle folder")
    parser.add_argument("--out", required=True, help="output folder; writes oracle-<sources>.parquet")
    parser.add_argument("--sources", choices=("all", "dds", "macroxue"), default="all",
                        help="macroxue: Xue's random deals only (training data that leaves DDS's real deals unseen)")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    pq.write_table(dd_store_table(*load_oracle(args.oracle, args.sources)), Path(args.out) / f"oracle-{args.sources}.parquet")
