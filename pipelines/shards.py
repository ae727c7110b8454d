"""Few, large Parquet shards written straight from the worker that made the rows (so memory stays
flat: nothing is grouped in the runner), staged, then published in one rename.

A DoFn streams rows into a Parquet file and closes it at `rows_per_shard` rows or at the end of
each bundle; files are written under a temporary name first, so a reader never sees half a
shard. `compact` streams many small files into few shards of a fixed size, in a given order.
`publish` swaps a finished staging folder in place of the old output."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from bridgeflow.dataset.atomic import write_table
from bridgeflow.dataset.errors import InputError
from bridgeflow.dataset.schema import PARQUET_OPTIONS

# Lone surrogates: text decoded with errors="surrogateescape" (U+DC80..U+DCFF stand for the bytes
# 0x80..0xFF that did not decode), which UTF-8, and so Arrow, cannot hold.
SURROGATE = re.compile("[\ud800-\udfff]")


@contextmanager
def lock_output(out: Path, job: str):
    """One run per output folder at a time: held for the `with` block, and dropped by the kernel if
    the run is killed; a second run gets an InputError (one line)."""
    with open(out / ".lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"another {job} run is writing {out} (it holds {out / '.lock'}): wait for it to end, "
                             f"or give another --out") from None
        yield


class ParquetFileWriter:
    """One Parquet file written a row group at a time (memory holds at most one), under a temporary
    name until `close` renames it into place: a reader sees the whole file or none."""

    def __init__(self, path: Path, schema: pa.Schema, row_group_rows: int = PARQUET_OPTIONS["row_group_size"]):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.schema, self.row_group_rows = path, schema, row_group_rows
        self.temporary = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:12]}")
        self.writer = pq.ParquetWriter(self.temporary, schema, compression=PARQUET_OPTIONS["compression"])
        self.unbatched: list[dict] = []  # added one by one, not yet a batch
        self.batches: list[pa.RecordBatch] = []  # not yet written
        self.pending = 0  # rows in self.unbatched and self.batches
        self.written = 0  # rows given so far, written or pending

    def add(self, row: dict) -> None:
        self.unbatched.append(row)
        self.pending += 1
        self.written += 1
        if self.pending >= self.row_group_rows:
            self._flush()

    def write(self, batch: pa.RecordBatch) -> None:
        self._batch_rows()
        self.batches.append(batch)
        self.pending += batch.num_rows
        self.written += batch.num_rows
        if self.pending >= self.row_group_rows:
            self._flush()

    def close(self) -> None:
        self._flush(last=True)
        self.writer.close()
        os.replace(self.temporary, self.path)

    def abort(self) -> None:
        """Drop the file: nothing of it appears at `path`."""
        self.writer.close()
        self.temporary.unlink(missing_ok=True)

    def _batch_rows(self) -> None:
        if self.unbatched:
            try:
                batch = pa.RecordBatch.from_pylist(self.unbatched, schema=self.schema)
            except UnicodeEncodeError:  # a string with lone surrogates: write them escaped, never fail
                batch = pa.RecordBatch.from_pylist([escape_surrogates(row) for row in self.unbatched], schema=self.schema)
            self.batches.append(batch)
            self.unbatched = []

    def _flush(self, last: bool = False) -> None:
        """Write the pending rows as row groups of exactly `row_group_rows` (the last one fewer), so
        the file's bytes depend on its rows alone, not on how they were handed in."""
        self._batch_rows()
        if not self.batches:
            return
        table = pa.Table.from_batches(self.batches, schema=self.schema)
        whole = table.num_rows if last else table.num_rows - table.num_rows % self.row_group_rows
        if whole:
            self.writer.write_table(table.slice(0, whole).combine_chunks(), row_group_size=self.row_group_rows)
        rest = table.slice(whole)
        self.batches, self.pending = rest.to_batches(), rest.num_rows


def escape_surrogates(value):
    """`value` (a row, or any str, list, tuple or dict inside one) with each lone surrogate written
    as text: `\\xNN` for the byte it stands for (surrogateescape), `\\uNNNN` for any other."""
    if isinstance(value, str):
        return SURROGATE.sub(_escaped, value)
    if isinstance(value, dict):
        return {key: escape_surrogates(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(escape_surrogates(item) for item in value)
    return value


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def compact(parts: list[Path], directory: Path, schema: pa.Schema, rows_per_shard: int) -> None:
    """Stream the rows of `parts`, in that order, into shards of exactly `rows_per_shard` rows (the
    last one fewer) named 00000.parquet, 00001.parquet, ... in `directory`: the same parts in the
    same order give the same shards, and memory holds a row group or two however many rows there are."""
    shard = None
    shards = 0
    for part in parts:
        batches = pq.ParquetFile(part).iter_batches(batch_size=PARQUET_OPTIONS["row_group_size"], use_threads=False)
        for batch in batches:  # one thread: parts are many and small, threads cost more than they save
            while batch.num_rows:
                if shard is None:
                    shard = ParquetFileWriter(directory / f"{shards:05d}.parquet", schema)
                    shards += 1
                room = rows_per_shard - shard.written
                shard.write(batch.slice(0, room))
                batch = batch.slice(room)
                if shard.written == rows_per_shard:
                    shard.close()
                    shard = None
    if shard is not None:
        shard.close()


class WriteParquetShards(beam.DoFn):
    """Rows (dicts matching `schema`) -> Parquet files in `directory`; emits each file's path.

    Rows stream into an open ParquetFileWriter (`batch_rows` rows per row group, so a worker holds
    at most one row group in memory however large the shard); a shard is closed at
    `rows_per_shard` rows or at the end of the bundle and named by a hash of its `id_column`, so
    the same rows in the same order give the same file."""

    def __init__(self, directory: str, schema: pa.Schema, rows_per_shard: int, id_column: str,
                 batch_rows: int = 16_384):
        self.directory = directory
        self.schema = schema
        self.rows_per_shard = rows_per_shard
        self.id_column = id_column
        self.batch_rows = min(batch_rows, rows_per_shard)
        self.shard: ParquetFileWriter | None = None

    def start_bundle(self):
        self.shard = None

    def process(self, row: dict):
        if self.shard is None:
            self.shard = ParquetFileWriter(Path(self.directory) / f".shard-{uuid.uuid4().hex}", self.schema,
                                           self.batch_rows)
            self.digest = hashlib.blake2b(digest_size=10)
        self.shard.add(row)
        self.digest.update(int(row[self.id_column]).to_bytes(8, "little"))
        if self.shard.written >= self.rows_per_shard:
            yield self._close()

    def finish_bundle(self):
        if self.shard is not None:
            yield WindowedValue(self._close(), 0, [GlobalWindow()])

    def _close(self) -> str:
        self.shard.close()
        path = Path(self.directory) / f"{self.digest.hexdigest()}.parquet"
        os.replace(self.shard.path, path)
        self.shard = None
        return str(path)


def number_shards(directory: Path, schema: pa.Schema) -> list[Path]:
    """Rename staged shards to part-00000.parquet ... in a stable order (by staged name: a content
    hash, or compact's sequence). An empty output still gets one empty shard, so readers always
    find the schema."""
    staged = sorted(directory.glob("*.parquet"))
    if not staged:
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
