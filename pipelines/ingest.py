"""Ingest PBN, LIN and OpenSpiel files into Parquet shards (Apache Beam).

    bridgeflow ingest --input 'path/**/*.lin' --input 'other/**/*.pbn' --out data/ingest

writes `records/` (accepted boards, schema `dataset.schema.RECORDS`), `quarantine/` (every record
that could not be accepted, with file, position, raw text and reason), `manifest.json` (per
file: read = accepted + quarantined, quarantined by reason, accepted records by repair) and
`summary.json` (the totals).
The job runs on Beam's FnApiRunner with one worker process per core by default; any Beam
runner works (see README: Flink, Spark, Dataflow through the portable runner).

Each parsed chunk is committed to `_work/KEY/` (its rows as part files, then a marker with its
counts), KEY a hash of the planned chunks, the input files' sizes and mtimes, --rows-per-shard and
the parsing code (`code_fingerprint`). A killed run resumes: the rerun parses only the chunks
without a marker. At the end the parts are compacted in plan order into shards of --rows-per-shard
rows, so a resumed run writes the same shards as an uninterrupted one, and `_work/KEY/` is removed.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import hashlib
import json
import logging
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import apache_beam as beam

from bridgeflow.dataset import schema
from bridgeflow.dataset.formats import LINE_BASED_FORMATS, format_of, parser_for
from bridgeflow.dataset.record import BoardRecord, Rejected, Repair
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines.runner import add_runner_arguments, pipeline_options
from bridgeflow.pipelines.shards import ParquetFileWriter, compact, lock_output, number_shards, publish, write_json

LOG = logging.getLogger("bridgeflow.ingest")
WILDCARDS = "*?["
OUTPUTS = (("records", schema.RECORDS), ("quarantine", schema.QUARANTINE))


@dataclass(frozen=True)
class InputChunk:
    """A unit of parsing work: a whole file, or a line range of a large line-based file."""

    prefix: str  # the input glob's literal folder prefix (part of record_id)
    relative_path: str  # path below the prefix
    path: str  # where to read it
    format: str
    start: int = 0  # byte range [start, end); end -1 = to the end of the file
    end: int = -1
    first_line: int = 1  # 1-based line number of `start`
    first_position: int = 0  # records before `start` in this file

    @property
    def source_file(self) -> str:
        return os.path.join(self.prefix, self.relative_path) if self.prefix else self.relative_path


def literal_prefix(pattern: str) -> str:
    """The folder part of a glob before its first wildcard: 'data/**/*.pbn' -> 'data'."""
    cut = min((pattern.index(c) for c in WILDCARDS if c in pattern), default=len(pattern))
    head = pattern[:cut]
    if cut == len(pattern):  # a plain file: its folder
        head = os.path.dirname(pattern)
    elif not head.endswith(os.sep):
        head = os.path.dirname(head)
    return os.path.normpath(head) if head else ""


def plan_inputs(patterns: list[str], split_bytes: int) -> tuple[list[InputChunk], list[dict]]:
    """Expand globs into parse work. Returns (chunks, skipped files with why)."""
    chunks: list[InputChunk] = []
    skipped: list[dict] = []
    seen: set[str] = set()
    for pattern in patterns:
        if os.path.isdir(pattern):  # a folder: every file below it that a parser reads
            prefix = os.path.normpath(pattern)
            pattern = os.path.join(pattern, "**", "*")
        else:
            prefix = literal_prefix(pattern)
        matches = sorted(glob.glob(pattern, recursive=True))
        if not matches:
            raise FileNotFoundError(f"--input {pattern!r} matches no file")
        for path in matches:
            if os.path.isdir(path):
                continue
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            relative = os.path.relpath(path, prefix) if prefix else path
            format_name = format_of(path)
            if format_name is None:
                skipped.append({"file": path, "why": "no parser for this file extension"})
                continue
            chunks.extend(_split(InputChunk(prefix, relative, path, format_name), split_bytes))
    return chunks, skipped


def _split(chunk: InputChunk, split_bytes: int) -> list[InputChunk]:
    """Split a large line-based file at line breaks so several workers share it."""
    if chunk.format not in LINE_BASED_FORMATS or os.path.getsize(chunk.path) <= split_bytes:
        return [chunk]
    data = Path(chunk.path).read_bytes()
    pieces, start, line, position = [], 0, 1, 0
    while start < len(data):
        end = data.find(b"\n", start + split_bytes)
        end = len(data) if end < 0 else end + 1
        piece = data[start:end]
        pieces.append(InputChunk(chunk.prefix, chunk.relative_path, chunk.path, chunk.format, start, end, line, position))
        line += piece.count(b"\n")
        position += sum(1 for text in piece.splitlines() if text.strip())
        start = end
    return pieces


def code_fingerprint() -> str:
    """A hash of the code that turns input bytes into rows (the dataset package and this module), so
    a run resumed after an upgrade never mixes parts parsed by two versions."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(Path(schema.__file__).parent.glob("*.py")) + [Path(__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def work_key(chunks: list[InputChunk], rows_per_shard: int) -> str:
    """A short hash of everything that decides the output; not --workers or the runner, so a rerun
    with others resumes the same work."""
    files = {}
    for chunk in chunks:
        if chunk.path not in files:
            stat = os.stat(chunk.path)
            files[chunk.path] = [stat.st_size, stat.st_mtime_ns]
    decisive = {"chunks": [dataclasses.asdict(c) for c in chunks], "files": files, "rows_per_shard": rows_per_shard,
                "code": code_fingerprint()}
    return hashlib.blake2b(json.dumps(decisive, sort_keys=True).encode(), digest_size=8).hexdigest()


def part_path(work: Path, index: int, output: str) -> Path:
    return work / "parts" / f"{index}-{output}.parquet"


def marker_path(work: Path, index: int) -> Path:
    return work / "done" / f"{index}.json"


def done_chunks(work: Path) -> set[int]:
    """Indices of the chunks committed in `work` (their marker exists)."""
    return {int(path.stem) for path in (work / "done").glob("*.json")}


class ParseChunk(beam.DoFn):
    """(index, InputChunk) -> its validated records rows and quarantine rows in part files under
    `work`, then its marker holding its counts; emits the counts (source_file, format, counts by
    "accepted" or quarantine reason, accepted records' repairs by name).

    The marker is written last, so a chunk with a marker is whole and a kill loses only the chunks
    in flight. Rows stream to the part files a row group at a time: memory stays flat."""

    BATCH_ROWS = 16_384  # rows held as dicts before they go to a part file

    def __init__(self, work: str):
        self.work = work
        self.accepted = beam.metrics.Metrics.counter("ingest", "accepted")
        self.quarantined = beam.metrics.Metrics.counter("ingest", "quarantined")
        self.chunks_done = 0

    def process(self, element: tuple[int, InputChunk]):
        index, chunk = element
        with open(chunk.path, "rb") as handle:
            handle.seek(chunk.start)
            data = handle.read() if chunk.end < 0 else handle.read(chunk.end - chunk.start)
        work = Path(self.work)
        records, quarantine = (ParquetFileWriter(part_path(work, index, output), table_schema, self.BATCH_ROWS)
                               for output, table_schema in OUTPUTS)
        parse = parser_for(chunk.format)
        counts: Counter = Counter()
        repairs: Counter = Counter()
        for item in parse(data, chunk.source_file):
            item.source_position += chunk.first_position
            item.source_line += chunk.first_line - 1
            key = schema.record_id(chunk.prefix, chunk.relative_path, item.source_position)
            if isinstance(item, BoardRecord):
                item = check(item)
            if isinstance(item, Rejected):
                counts[item.reason.value] += 1
                self.quarantined.inc()
                quarantine.add(schema.quarantine_row(item, key))
            else:
                counts["accepted"] += 1
                repairs.update(repair.value for repair in item.repairs)
                self.accepted.inc()
                records.add(schema.records_row(item, key))
        records.close()
        quarantine.close()
        stats = (chunk.source_file, chunk.format, dict(counts), dict(repairs))
        write_json(marker_path(work, index), stats)
        self.chunks_done += 1
        if self.chunks_done % 200 == 0:
            LOG.info("worker %d: %d chunks parsed", os.getpid(), self.chunks_done)
        yield stats


def build(pipeline: beam.Pipeline, todo: list[tuple[int, InputChunk]], work: Path):
    """The job's graph: parse and commit each (index, chunk) of `todo`; returns the stats PCollection."""
    return (
        pipeline
        | "Chunks" >> beam.Create(todo, reshuffle=False)
        | "Spread" >> beam.Reshuffle()
        | "Parse" >> beam.ParDo(ParseChunk(str(work)))
    )


def clear_stale(out: Path, work: Path) -> None:
    """Remove what earlier runs left and this one will not use: the work of other keys (their
    inputs or settings changed) and staging folders of killed runs."""
    others = [path for path in (out / "_work").glob("*") if path != work]
    for stale in others + list(out.glob(".staging-*")):
        shutil.rmtree(stale)


def manifest_from(stats: list, skipped: list[dict], inputs: list[str], seconds: float) -> dict:
    """Aggregate per-chunk counts per file; read = accepted + quarantined by construction. `repairs`
    counts accepted records by repair (record.Repair); `placeholder_results` is the count of one of
    them, the 0-trick results taken as unknown."""
    files: dict[str, dict] = {}
    for source_file, format_name, counts, repairs in stats:
        entry = files.setdefault(source_file, {"format": format_name, "read": 0, "accepted": 0, "quarantined": {},
                                               "repairs": {}, "placeholder_results": 0})
        for name, count in repairs.items():
            entry["repairs"][name] = entry["repairs"].get(name, 0) + count
        entry["placeholder_results"] += repairs.get(Repair.PLACEHOLDER_RESULT_DROPPED.value, 0)
        for reason, count in counts.items():
            entry["read"] += count
            if reason == "accepted":
                entry["accepted"] += count
            else:
                entry["quarantined"][reason] = entry["quarantined"].get(reason, 0) + count
    totals: Counter = Counter()
    by_reason: Counter = Counter()
    by_repair: Counter = Counter()
    for entry in files.values():
        totals["read"] += entry["read"]
        totals["accepted"] += entry["accepted"]
        by_reason.update(entry["quarantined"])
        by_repair.update(entry["repairs"])
    return {
        "inputs": inputs,
        "files": len(files),
        "read": totals["read"],
        "accepted": totals["accepted"],
        "quarantined": sum(by_reason.values()),
        "quarantined_by_reason": dict(sorted(by_reason.items())),
        "repairs": dict(sorted(by_repair.items())),
        "placeholder_results": by_repair[Repair.PLACEHOLDER_RESULT_DROPPED.value],
        "skipped_files": skipped,
        "seconds": round(seconds, 2),
        "per_file": dict(sorted(files.items())),
    }


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bridgeflow ingest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", action="append", required=True, help="folder or glob of input files (repeatable; ** allowed)")
    parser.add_argument("--out", required=True, help="output folder (records/, quarantine/, manifest.json)")
    parser.add_argument("--rows-per-shard", type=int, default=250_000, help="target rows per Parquet shard")
    parser.add_argument("--split-bytes", type=int, default=8 << 20, help="split line-based files larger than this")
    add_runner_arguments(parser)
    return parser.parse_known_args(argv)


def run(argv: list[str] | None = None) -> dict:
    """Run the ingest job, resuming the committed chunks of a killed run; returns the manifest it wrote."""
    args, beam_args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with lock_output(out, "ingest"):
        manifest = ingest_inputs(args, beam_args, out)
    LOG.info(
        "ingest: read %d, accepted %d, quarantined %d %s in %.1fs",
        manifest["read"], manifest["accepted"], manifest["quarantined"], manifest["quarantined_by_reason"], manifest["seconds"],
    )
    return manifest


def ingest_inputs(args: argparse.Namespace, beam_args: list[str], out: Path) -> dict:
    """The job, under run()'s lock on `out`."""
    started = time.time()
    chunks, skipped = plan_inputs(args.input, args.split_bytes)
    work = out / "_work" / work_key(chunks, args.rows_per_shard)
    work.mkdir(parents=True, exist_ok=True)
    clear_stale(out, work)
    done = done_chunks(work)
    LOG.info("ingest: %d files (%d chunks) -> %s", len({c.path for c in chunks}), len(chunks), out)
    if done:
        LOG.info("resuming: %d of %d chunks already parsed", len(done), len(chunks))
    todo = [(index, chunk) for index, chunk in enumerate(chunks) if index not in done]
    if todo:
        with beam.Pipeline(options=pipeline_options(args, beam_args)) as pipeline:
            build(pipeline, todo, work)
    stats = [json.loads(marker_path(work, index).read_text()) for index in range(len(chunks))]
    staging = out / f".staging-{os.getpid()}"
    for output, table_schema in OUTPUTS:
        parts = [part_path(work, index, output) for index in range(len(chunks))]
        compact(parts, staging / output, table_schema, args.rows_per_shard)
        number_shards(staging / output, table_schema)
        publish(staging / output, out / output)
    staging.rmdir()
    manifest = manifest_from(stats, skipped, args.input, time.time() - started)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    summary = {key: manifest[key] for key in ("files", "read", "accepted", "quarantined", "quarantined_by_reason", "seconds")}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    shutil.rmtree(work)
    if not any((out / "_work").iterdir()):
        (out / "_work").rmdir()
    return manifest
