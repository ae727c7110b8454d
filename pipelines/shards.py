"""Few, large Parquet shards written straight from the worker that made the rows (so memory stays
flat: nothing is grouped in the runner), staged, then published in one rename.

A DoFn buffers up to `rows_per_shard` rows and writes one file per full buffer and one at the end
of each bundle; files are first written under a temporary name, so a reader never sees half a
shard. `publish` swaps a finished staging folder in place of the old output."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

PARQUET_OPTIONS = {"compression": "zstd", "row_group_size": 64 * 1024}


def write_table(table: pa.Table, path: Path) -> None:
    """Write atomically: a temporary name in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    pq.write_table(table, temporary, **PARQUET_OPTIONS)
    os.replace(temporary, path)


class WriteParquetShards(beam.DoFn):
    """Rows (dicts matching `schema`) -> Parquet files in `directory`; emits each file's path.

    Rows are sorted by `sort_keys` inside a shard and the file is named by a hash of its
    `id_column`, so the same rows in the same bundle give the same file."""

    def __init__(self, directory: str, schema: pa.Schema, rows_per_shard: int, sort_keys: tuple[str, ...], id_column: str):
        self.directory = directory
        self.schema = schema
        self.rows_per_shard = rows_per_shard
        self.sort_keys = sort_keys
        self.id_column = id_column
        self.rows: list[dict] = []

    def start_bundle(self):
        self.rows = []

    def process(self, row: dict):
        self.rows.append(row)
        if len(self.rows) >= self.rows_per_shard:
            yield self._flush()

    def finish_bundle(self):
        if self.rows:
            yield WindowedValue(self._flush(), 0, [GlobalWindow()])

    def _flush(self) -> str:
        rows = sorted(self.rows, key=lambda row: tuple(row[key] for key in self.sort_keys))
        self.rows = []
        table = pa.Table.from_pylist(rows, schema=self.schema)
        digest = hashlib.blake2b(digest_size=10)
        for value in table.column(self.id_column).to_numpy():
            digest.update(int(value).to_bytes(8, "little"))
        path = Path(self.directory) / f"{digest.hexdigest()}.parquet"
        write_table(table, path)
        return str(path)


def number_shards(directory: Path, schema: pa.Schema | None = None) -> list[Path]:
    """Rename staged shards to part-00000.parquet ... in a stable order (by content hash). An
    empty output still gets one empty shard, so readers always find the schema."""
    staged = sorted(directory.glob("*.parquet"))
    if not staged and schema is not None:
        write_table(schema.empty_table(), directory / "empty.parquet")
        staged = [directory / "empty.parquet"]
    renamed = []
    for index, path in enumerate(staged):
        target = directory / f"part-{index:05d}.parquet"
        os.replace(path, target)
        renamed.append(target)
    return renamed


def publish(staging: Path, final: Path) -> None:
    """Replace `final` by `staging` (a folder) so readers see the old or the new output, whole."""
    final.parent.mkdir(parents=True, exist_ok=True)
    retired = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, retired)
    os.replace(staging, final)
    shutil.rmtree(retired, ignore_errors=True)
