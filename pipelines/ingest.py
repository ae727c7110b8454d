"""Ingest PBN, LIN and OpenSpiel files into Parquet shards (Apache Beam).

    bridgeflow ingest --input 'path/**/*.lin' --input 'other/**/*.pbn' --out data/ingest

writes `records/` (accepted boards, schema `dataset.schema.RECORDS`), `quarantine/` (every record
that could not be accepted, with file, position, raw text and reason), `manifest.json` (per
file: read = accepted + quarantined, quarantined by reason, accepted records by repair; the files
skipped or failed, and why) and `summary.json` (the totals).
The job runs on Beam's FnApiRunner with one worker process per core by default; any Beam
runner works (see README: Flink, Spark, Dataflow through the portable runner).

Each parsed chunk is committed to `_work/KEY/` (its rows as part files, then a marker with its
counts), KEY a hash of the planned chunks, the input files' sizes and mtimes, --rows-per-shard and
the parsing code (`code_fingerprint`). A killed run resumes: the rerun parses only the chunks
without a marker. At the end the parts are compacted in plan order into shards of --rows-per-shard
rows, so a resumed run writes the same shards as an uninterrupted one, and `_work/KEY/` is removed.

One file never stops the run: a file that cannot be read (a broken link, deleted meanwhile) or is
not a regular file (a FIFO, a device, a socket: never opened, so nothing waits on a pipe or reads
/dev/zero without end) is listed as skipped; one whose parsing raised, or whose size or
modification time is no longer what planning saw (a file written or cut meanwhile: never read in
part), is listed as failed with why, and contributes no rows; the other files are written, and only
then does a run with failed files exit non-zero.
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
import stat
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import apache_beam as beam

from bridgeflow.dataset.atomic import write_json
from bridgeflow.dataset.digests import key_digest
from bridgeflow.dataset import schema
from bridgeflow.dataset.errors import InputError, output_folder
from bridgeflow.dataset.formats import LINE_BASED_FORMATS, format_of, parser_for
from bridgeflow.dataset.pbn import range_starts
from bridgeflow.dataset.record import BoardRecord, Rejected, Repair
from bridgeflow.dataset.validate import check
from bridgeflow.pipelines.runner import add_runner_arguments, job_parser, parse_job_arguments, pipeline_options, positive_int
from bridgeflow.pipelines.shards import ParquetFileWriter, compact, lock_output, number_shards, publish

LOG = logging.getLogger("bridgeflow.ingest")
WILDCARDS = "*?["
READ_BLOCK = 1 << 20  # bytes read at a time when planning where to split a file
OUTPUTS = (("records", schema.RECORDS), ("quarantine", schema.QUARANTINE))


@dataclass(frozen=True)
class InputChunk:
    """A unit of parsing work: a whole file, or a byte range of a large file (line-based: at line
    breaks; PBN: between games)."""

    prefix: str  # the input glob's literal folder prefix (part of record_id)
    relative_path: str  # path below the prefix
    path: str  # where to read it
    format: str
    size: int  # the file's size and modification time when planned: read only as it was then
    mtime_ns: int
    start: int = 0  # byte range [start, end); end -1 = to the end of the file
    end: int = -1
    first_line: int = 1  # 1-based line number of `start`
    first_position: int = 0  # records before `start` in this file
    carried: dict | None = None  # PBN: the '#'/'##' tag state at `start` (pbn.range_starts)

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
    """Expand globs into parse work. Returns (chunks, skipped files with why); raises InputError
    for a pattern that matches no file."""
    chunks: list[InputChunk] = []
    skipped: list[dict] = []
    seen: set[str] = set()
    for given in patterns:
        if os.path.isdir(given):  # a folder: every file below it that a parser reads
            prefix = os.path.normpath(given)
            pattern = os.path.join(given, "**", "*")
        else:
            prefix, pattern = literal_prefix(given), given
        matches = [path for path in sorted(glob.glob(pattern, recursive=True)) if not os.path.isdir(path)]
        if not matches:
            raise InputError(f"--input {given!r} matches no file")
        for path in matches:
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            relative = os.path.relpath(path, prefix) if prefix else path
            format_name = format_of(path)
            if format_name is None:
                skipped.append({"file": path, "why": "no parser for this file extension"})
                continue
            try:
                check_regular(path, os.stat(path))  # before opening: opening a FIFO waits for a writer
                chunks.extend(_split(prefix, relative, path, format_name, split_bytes))
            except OSError as error:
                skipped.append({"file": path, "why": unreadable(path, error)})
    return chunks, skipped


class NotRegularFile(OSError):
    """An input that is a FIFO, a device, a socket or a folder: skipped, never read."""


class ChangedFile(Exception):
    """An input whose size or modification time is no longer what planning saw."""


SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def check_regular(path: str, status: os.stat_result) -> None:
    """NotRegularFile unless `status` (of `path`, links followed) is a regular file's."""
    if not stat.S_ISREG(status.st_mode):
        kind = next((name for test, name in SPECIAL_FILES if test(status.st_mode)), "not a file")
        link = f", through a symbolic link to {os.readlink(path)}" if os.path.islink(path) else ""
        raise NotRegularFile(0, f"not a regular file: {kind}{link}", path)


def open_regular(path: str):
    """(binary handle, its stat) of `path`, or NotRegularFile. Opened without waiting (a FIFO put in
    a file's place after planning gives NotRegularFile, not a read that never ends)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        status = os.fstat(descriptor)
        check_regular(path, status)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb"), status


def unreadable(path: str, error: OSError) -> str:
    """Why `path` could not be read, in words."""
    if isinstance(error, NotRegularFile):
        return error.strerror
    if isinstance(error, FileNotFoundError) and os.path.islink(path):
        return f"unreadable: a broken symbolic link (to {os.readlink(path)})"
    return f"unreadable: {error.strerror or error}"


def _split(prefix: str, relative: str, path: str, format_name: str, split_bytes: int) -> list[InputChunk]:
    """A file's chunks: a large file is split so several workers share it and each holds only its
    piece, a line-based file at line breaks, a PBN file between games. Reads at most the size the
    file has when opened. Raises OSError for a file that cannot be read."""
    handle, status = open_regular(path)  # opened here, so an unreadable file is skipped, not failed
    chunk = InputChunk(prefix, relative, path, format_name, status.st_size, status.st_mtime_ns)
    with handle:
        if chunk.size <= split_bytes:
            return [chunk]
        if chunk.format == "pbn":
            starts = range_starts(read_blocks(handle, chunk.size), split_bytes)
            if not starts:  # read as a whole (see range_starts)
                return [chunk]
            ends = [offset for offset, *_ in starts] + [chunk.size]
            return [dataclasses.replace(chunk, start=start, end=end, first_line=line, first_position=position,
                                        carried=carried)
                    for (start, line, position, carried), end in zip([(0, 1, 0, None)] + starts, ends)]
        if chunk.format not in LINE_BASED_FORMATS:
            return [chunk]
        data = handle.read(chunk.size)
    pieces, start, line, position = [], 0, 1, 0
    while start < len(data):
        end = data.find(b"\n", start + split_bytes)
        end = len(data) if end < 0 else end + 1
        piece = data[start:end]
        pieces.append(dataclasses.replace(chunk, start=start, end=end, first_line=line, first_position=position))
        line += piece.count(b"\n")
        position += sum(1 for text in piece.splitlines() if text.strip())
        start = end
    return pieces


def read_blocks(handle, size: int):
    """The first `size` bytes of `handle`, READ_BLOCK at a time."""
    while size > 0:
        block = handle.read(min(READ_BLOCK, size))
        if not block:
            return
        size -= len(block)
        yield block


def read_planned(chunk: InputChunk) -> bytes:
    """The chunk's bytes, read from its file as planned, or ChangedFile (its size or modification
    time differs from the plan's, before or after the read), or NotRegularFile."""
    handle, status = open_regular(chunk.path)
    with handle:
        check_unchanged(chunk, status)
        handle.seek(chunk.start)
        end = chunk.size if chunk.end < 0 else chunk.end
        data = handle.read(end - chunk.start)
        check_unchanged(chunk, os.fstat(handle.fileno()))
    if len(data) != end - chunk.start:
        raise ChangedFile(f"changed since it was planned: cut to {chunk.start + len(data)} bytes while read")
    return data


def check_unchanged(chunk: InputChunk, status: os.stat_result) -> None:
    if (status.st_size, status.st_mtime_ns) != (chunk.size, chunk.mtime_ns):
        change = f"size {chunk.size} -> {status.st_size} bytes" if status.st_size != chunk.size else "modified, same size"
        raise ChangedFile(f"changed since it was planned ({change}): not read, a rerun reads it as it is now")


def code_fingerprint() -> str:
    """A hash of the code that turns input bytes into rows (the dataset package and this module), so
    a run resumed after an upgrade never mixes parts parsed by two versions."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(Path(schema.__file__).parent.glob("*.py")) + [Path(__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def work_key(chunks: list[InputChunk], rows_per_shard: int) -> str:
    """A short hash of everything that decides the output (the chunks hold their files' sizes and
    mtimes); not --workers or the runner, so a rerun with others resumes the same work."""
    decisive = {"chunks": [dataclasses.asdict(c) for c in chunks], "rows_per_shard": rows_per_shard,
                "code": code_fingerprint()}
    return key_digest(decisive)


def part_path(work: Path, index: int, output: str) -> Path:
    return work / "parts" / f"{index}-{output}.parquet"


def marker_path(work: Path, index: int) -> Path:
    return work / "done" / f"{index}.json"


def failure_path(work: Path, index: int) -> Path:
    return work / "failed" / f"{index}.json"


def done_chunks(work: Path) -> set[int]:
    """Indices of the chunks committed in `work` (their marker exists)."""
    return {int(path.stem) for path in (work / "done").glob("*.json")}


def failure(chunk: InputChunk, error: Exception) -> dict:
    """A chunk that could not be parsed, as its failure marker holds it: unreadable (the file went
    away or cannot be opened) is a skipped file, anything else a failed one."""
    if isinstance(error, OSError) and error.filename == chunk.path:
        return {"file": chunk.path, "why": unreadable(chunk.path, error), "skipped": True}
    if isinstance(error, ChangedFile):
        return {"file": chunk.path, "why": str(error), "skipped": False}
    where = f" (bytes {chunk.start}..{chunk.end})" if chunk.start or chunk.end >= 0 else ""
    text = " / ".join(str(error).splitlines())  # one line
    return {"file": chunk.path, "why": f"parsing failed{where}: {type(error).__name__}: {text}", "skipped": False}


class ParseChunk(beam.DoFn):
    """(index, InputChunk) -> its validated records rows and quarantine rows in part files under
    `work`, then its marker holding its counts (source_file, format, counts by "accepted" or
    quarantine reason, accepted records' repairs by name); emits the chunk's index (not the counts:
    Beam's coder cannot hold a file name that is not UTF-8).

    The marker is written last, so a chunk with a marker is whole and a kill loses only the chunks
    in flight. Rows stream to the part files a row group at a time: memory stays flat. A chunk whose
    file cannot be read or whose parsing raises gets a failure marker instead, and no part files."""

    BATCH_ROWS = 16_384  # rows held as dicts before they go to a part file

    def __init__(self, work: str):
        self.work = work
        self.accepted = beam.metrics.Metrics.counter("ingest", "accepted")
        self.quarantined = beam.metrics.Metrics.counter("ingest", "quarantined")
        self.chunks_done = 0

    def process(self, element: tuple[int, InputChunk]):
        index, chunk = element
        work = Path(self.work)
        try:
            counts, repairs = self.parse(index, chunk, work)
        except Exception as error:  # one file's problem: reported in the manifest, the run goes on
            failed = failure(chunk, error)
            LOG.error("%s: %s", chunk.path, failed["why"], exc_info=failed["why"].startswith("parsing failed"))
            write_json(failure_path(work, index), failed)
            return
        write_json(marker_path(work, index), (chunk.source_file, chunk.format, dict(counts), dict(repairs)))
        self.chunks_done += 1
        if self.chunks_done % 200 == 0:
            LOG.info("worker %d: %d chunks parsed", os.getpid(), self.chunks_done)
        yield index

    def parse(self, index: int, chunk: InputChunk, work: Path) -> tuple[Counter, Counter]:
        """Write the chunk's part files; returns its counts by outcome and by repair. A part file is
        whole or absent."""
        data = read_planned(chunk)
        records, quarantine = (ParquetFileWriter(part_path(work, index, output), table_schema, self.BATCH_ROWS)
                               for output, table_schema in OUTPUTS)
        try:
            counts, repairs = self.write_rows(chunk, data, records, quarantine)
        except Exception:
            records.abort()
            quarantine.abort()
            raise
        records.close()
        quarantine.close()
        return counts, repairs

    def write_rows(self, chunk: InputChunk, data: bytes, records: ParquetFileWriter,
                   quarantine: ParquetFileWriter) -> tuple[Counter, Counter]:
        parse = parser_for(chunk.format)
        items = parse(data, chunk.source_file) if chunk.carried is None else parse(data, chunk.source_file, chunk.carried)
        counts: Counter = Counter()
        repairs: Counter = Counter()
        for item in items:
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
        return counts, repairs


def build(pipeline: beam.Pipeline, todo: list[tuple[int, InputChunk]], work: Path):
    """The job's graph: parse and commit each (index, chunk) of `todo`; returns the committed indices."""
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


def manifest_from(stats: list, skipped: list[dict], failed: list[dict], inputs: list[str], seconds: float) -> dict:
    """Aggregate per-chunk counts per file; read = accepted + quarantined by construction. `stats`
    holds no chunk of a `failed` file: a failed file has no rows. `repairs` counts accepted records
    by repair (record.Repair); `placeholder_results` is the count of one of them, the 0-trick
    results taken as unknown."""
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
        "failed_files": failed,
        "seconds": round(seconds, 2),
        "per_file": dict(sorted(files.items())),
    }


def parse_args(argv):
    parser = job_parser("bridgeflow ingest", __doc__.split("\n\n")[0])
    parser.add_argument("--input", action="append", required=True, help="folder or glob of input files (repeatable; ** allowed)")
    parser.add_argument("--out", required=True, help="output folder (records/, quarantine/, manifest.json)")
    parser.add_argument("--rows-per-shard", type=positive_int, default=250_000, help="target rows per Parquet shard")
    parser.add_argument("--split-bytes", type=positive_int, default=8 << 20,
                        help="split line-based and PBN files larger than this into pieces of about this size")
    add_runner_arguments(parser)
    return parse_job_arguments(parser, argv)


def run(argv: list[str] | None = None) -> dict:
    """Run the ingest job, resuming the committed chunks of a killed run; returns the manifest it
    wrote. Raises InputError when an --input matches no file, before anything is written, and exits
    (SystemExit, code 1) when a file failed, after everything else is written."""
    args, beam_args = parse_args(argv)
    started = time.time()
    out = output_folder(args.out)  # before planning, which reads the files it splits
    plan = plan_inputs(args.input, args.split_bytes)
    out.mkdir(parents=True, exist_ok=True)
    with lock_output(out, "ingest"):
        manifest = ingest_inputs(args, beam_args, out, plan, started)
    LOG.info(
        "ingest: read %d, accepted %d, quarantined %d %s in %.1fs",
        manifest["read"], manifest["accepted"], manifest["quarantined"], manifest["quarantined_by_reason"], manifest["seconds"],
    )
    if manifest["skipped_files"]:
        LOG.warning("ingest: %d file(s) skipped, listed in %s (skipped_files)", len(manifest["skipped_files"]),
                    out / "manifest.json")
    if manifest["failed_files"]:
        first = manifest["failed_files"][0]
        raise SystemExit(f"bridgeflow ingest: {len(manifest['failed_files'])} file(s) failed, listed in "
                         f"{out / 'manifest.json'} (failed_files); the first: {first['file']}: {first['why']}")
    return manifest


def ingest_inputs(args: argparse.Namespace, beam_args: list[str], out: Path,
                  plan: tuple[list[InputChunk], list[dict]], started: float) -> dict:
    """The job on plan_inputs' `plan`, under run()'s lock on `out`."""
    chunks, skipped = plan
    work = out / "_work" / work_key(chunks, args.rows_per_shard)
    work.mkdir(parents=True, exist_ok=True)
    clear_stale(out, work)
    done = done_chunks(work)
    LOG.info("ingest: %d files (%d chunks) -> %s", len({c.path for c in chunks}), len(chunks), out)
    if done:
        LOG.info("resuming: %d of %d chunks already parsed", len(done), len(chunks))
    todo = [(index, chunk) for index, chunk in enumerate(chunks) if index not in done]
    shutil.rmtree(work / "failed", ignore_errors=True)  # a rerun tries the failed chunks again
    if todo:
        with beam.Pipeline(options=pipeline_options(args, beam_args)) as pipeline:
            build(pipeline, todo, work)
    failures = {}  # file -> its first chunk's failure
    for index in sorted(set(range(len(chunks))) - done_chunks(work)):
        failures.setdefault(chunks[index].path, json.loads(failure_path(work, index).read_text()))
    kept = [index for index, chunk in enumerate(chunks) if chunk.path not in failures]
    stats = [json.loads(marker_path(work, index).read_text()) for index in kept]
    staging = out / f".staging-{os.getpid()}"
    for output, table_schema in OUTPUTS:
        parts = [part_path(work, index, output) for index in kept]
        compact(parts, staging / output, table_schema, args.rows_per_shard)
        number_shards(staging / output, table_schema)
        publish(staging / output, out / output)
    staging.rmdir()
    skipped = skipped + [{"file": entry["file"], "why": entry["why"]} for entry in failures.values() if entry["skipped"]]
    failed = [{"file": entry["file"], "why": entry["why"]} for entry in failures.values() if not entry["skipped"]]
    manifest = manifest_from(stats, skipped, failed, args.input, time.time() - started)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    summary = {key: manifest[key] for key in ("files", "read", "accepted", "quarantined", "quarantined_by_reason", "seconds")}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    shutil.rmtree(work)
    if not any((out / "_work").iterdir()):
        (out / "_work").rmdir()
    return manifest
