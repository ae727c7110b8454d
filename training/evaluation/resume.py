"""The resume log of a run: the boards played so far, committed in Parquet parts that a killed
run's rerun loads instead of playing them again."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bridgeflow.dataset.atomic import write_table

from .table import LOG_SCHEMA, SAMPLER_COUNTS

COMMIT_SECONDS = 30.0  # a kill loses about this much play at most
# A part's rows: the log's, with each agent's decision seconds and sampling counts (a resumed run
# still reports them).
PROGRESS_SCHEMA = LOG_SCHEMA.append(pa.field("seconds", pa.map_(pa.string(), pa.list_(pa.float64())))).append(
    pa.field("sampler", pa.map_(pa.string(), pa.struct([(key, pa.int64()) for key in SAMPLER_COUNTS]))))


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
