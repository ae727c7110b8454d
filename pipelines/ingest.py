"""Ingest PBN, LIN and OpenSpiel files into Parquet shards (Apache Beam).

    bridgeflow ingest --input 'path/**/*.lin' --input 'other/**/*.pbn' --out data/ingest

writes `records/` (accepted boards, schema `dataset.schema.RECORDS`), `quarantine/` (every record
that could not be accepted, with file, position, raw text and reason), `manifest.json` (per
file: read = accepted + quarantined, quarantined by reason) and `summary.json` (the totals).
The job runs on Beam's FnApiRunner with one worker process per core by default; any Beam
runner works (see README: Flink, Spark, Dataflow through the portable runner).
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import apache_beam as beam

from bridgeflow.dataset import schema
from bridgeflow.dataset.formats import LINE_BASED_FORMATS, format_of, parser_for
from bridgeflow.dataset.record import BoardRecord, Rejected
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines.runner import add_runner_arguments, pipeline_options
from bridgeflow.pipelines.shards import WriteParquetShards, number_shards, publish

LOG = logging.getLogger("bridgeflow.ingest")
WILDCARDS = "*?["


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


class ParseChunk(beam.DoFn):
    """InputChunk -> validated records rows (main output), quarantine rows and per-chunk counts."""

    QUARANTINE = "quarantine"
    STATS = "stats"

    def __init__(self):
        self.accepted = beam.metrics.Metrics.counter("ingest", "accepted")
        self.quarantined = beam.metrics.Metrics.counter("ingest", "quarantined")
        self.chunks_done = 0

    def process(self, chunk: InputChunk):
        with open(chunk.path, "rb") as handle:
            handle.seek(chunk.start)
            data = handle.read() if chunk.end < 0 else handle.read(chunk.end - chunk.start)
        parse = parser_for(chunk.format)
        counts: Counter = Counter()
        for item in parse(data, chunk.source_file):
            item.source_position += chunk.first_position
            item.source_line += chunk.first_line - 1
            key = schema.record_id(chunk.prefix, chunk.relative_path, item.source_position)
            if isinstance(item, BoardRecord):
                item = check(item)
            if isinstance(item, Rejected):
                counts[item.reason.value] += 1
                self.quarantined.inc()
                yield beam.pvalue.TaggedOutput(self.QUARANTINE, schema.quarantine_row(item, key))
            else:
                counts["accepted"] += 1
                self.accepted.inc()
                yield schema.records_row(item, key)
        self.chunks_done += 1
        if self.chunks_done % 200 == 0:
            LOG.info("worker %d: %d chunks parsed", os.getpid(), self.chunks_done)
        yield beam.pvalue.TaggedOutput(self.STATS, (chunk.source_file, chunk.format, dict(counts)))


def build(pipeline: beam.Pipeline, chunks: list[InputChunk], staging: Path, rows_per_shard: int):
    """The job's graph; returns the stats PCollection (one tuple per chunk)."""
    parsed = (
        pipeline
        | "Chunks" >> beam.Create(chunks, reshuffle=False)
        | "Spread" >> beam.Reshuffle()
        | "Parse" >> beam.ParDo(ParseChunk()).with_outputs(ParseChunk.QUARANTINE, ParseChunk.STATS, main="records")
    )
    _ = parsed.records | "WriteRecords" >> beam.ParDo(
        WriteParquetShards(str(staging / "records"), schema.RECORDS, rows_per_shard, "record_id"))
    _ = parsed.quarantine | "WriteQuarantine" >> beam.ParDo(
        WriteParquetShards(str(staging / "quarantine"), schema.QUARANTINE, rows_per_shard, "record_id"))
    return parsed.stats


def write_stats(stats: list[tuple], path: str) -> None:
    with open(path, "w") as handle:
        json.dump(stats, handle)


def manifest_from(stats: list, skipped: list[dict], inputs: list[str], seconds: float) -> dict:
    """Aggregate per-chunk counts per file; read = accepted + quarantined by construction."""
    files: dict[str, dict] = {}
    for source_file, format_name, counts in stats:
        entry = files.setdefault(source_file, {"format": format_name, "read": 0, "accepted": 0, "quarantined": {}})
        for reason, count in counts.items():
            entry["read"] += count
            if reason == "accepted":
                entry["accepted"] += count
            else:
                entry["quarantined"][reason] = entry["quarantined"].get(reason, 0) + count
    totals: Counter = Counter()
    by_reason: Counter = Counter()
    for entry in files.values():
        totals["read"] += entry["read"]
        totals["accepted"] += entry["accepted"]
        by_reason.update(entry["quarantined"])
    return {
        "inputs": inputs,
        "files": len(files),
        "read": totals["read"],
        "accepted": totals["accepted"],
        "quarantined": sum(by_reason.values()),
        "quarantined_by_reason": dict(sorted(by_reason.items())),
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
    """Run the ingest job; returns the manifest it wrote."""
    args, beam_args = parse_args(argv)
    started = time.time()
    chunks, skipped = plan_inputs(args.input, args.split_bytes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    staging = out / f".staging-{os.getpid()}"
    for sub in ("records", "quarantine"):
        (staging / sub).mkdir(parents=True, exist_ok=True)
    LOG.info("ingest: %d files (%d chunks) -> %s", len({c.path for c in chunks}), len(chunks), out)
    stats_path = staging / "stats.json"
    with beam.Pipeline(options=pipeline_options(args, beam_args)) as pipeline:
        stats = build(pipeline, chunks, staging, args.rows_per_shard)
        _ = stats | "AllStats" >> beam.combiners.ToList() | "SaveStats" >> beam.Map(write_stats, str(stats_path))
    stats_list = json.loads(stats_path.read_text())
    stats_path.unlink()
    manifest = manifest_from(stats_list, skipped, args.input, time.time() - started)
    for sub, table_schema in (("records", schema.RECORDS), ("quarantine", schema.QUARANTINE)):
        number_shards(staging / sub, table_schema)
        publish(staging / sub, out / sub)
    staging.rmdir()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    summary = {key: manifest[key] for key in ("files", "read", "accepted", "quarantined", "quarantined_by_reason", "seconds")}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    LOG.info(
        "ingest: read %d, accepted %d, quarantined %d %s in %.1fs",
        manifest["read"], manifest["accepted"], manifest["quarantined"], manifest["quarantined_by_reason"], manifest["seconds"],
    )
    return manifest
