"""Double-dummy labels for every distinct deal of the ingest's records (Apache Beam + DDS, or NN-DDA estimates).

    bridgeflow ddlabel --records data/ingest/records --out data/dd [--store other/dd ...]
        [--split all|train|valid|test] [--estimator dds|nn --nndda data/nndda]

writes into `--out`:
  labels/       the label store (`dataset.labels`): one DD_LABELS row per deal_id (deal, DD table,
                par for all 16 dealer x vulnerability, solver and version), committed batch by
                batch while solving and compacted at the end. Read it with `dataset.labels.read_labels`.
  quarantine/   DD_QUARANTINE: deals left unlabelled (not a full deal, DDS rejected it or died on it).
  mismatches/   DD_MISMATCHES: records whose own DD table (`dd_tricks`) disagrees with the solver.
  summary.json  what the last run did (deals in, already labelled, solved, ..., seconds), and the
                --records files set aside as not readable Parquet (`skipped_files`, with why).

Every --records file is checked first (`dataset.shard_check`): one that is not readable Parquet is
skipped and listed, the others labelled; a file of another schema (a quarantine shard among the
records) stops the run before any work, with one line naming the odd files. A file damaged inside
(its footer reads, a page does not) is read up to the damage and listed too.

Deals already labelled (in `--out` or a `--store`) are never solved again; rows found in a store
are copied into `--out`. A rerun after a kill loses no committed batch: solving walks one shared
list of batches that every lane (one per core, each with its own single-threaded DDS process)
claims from by creating a file, so no core waits while batches remain, and batches shrink towards
the end of the list so the last deals are spread over every lane. The folders must be on a file
system every worker sees.

`--split train|valid|test` labels only the deals of that split (`split_of(deal_id)`, deal_id % 100),
e.g. an exact evaluation set without paying DDS for the other 90%; the other deals are counted
(`deals_outside_split`) and left alone: not solved, quarantined, cross-checked or copied.

`--estimator nn` labels with an NN-DDA model (`--nndda`) instead of DDS: approximate, but thousands
of times faster. Its rows say solver "nn-dda" and solver_version "nn-dda:<hash of the model file>",
with par from the estimated table, and go into `--out` like exact rows: give estimates their own
`--out` unless you want them mixed in. An estimate never counts as a label for an exact run: that
run solves the deal with DDS and the exact row supersedes the estimate (`dataset.labels.read_labels` and
compaction keep a deal_id's "dds" row over an "nn-dda" one). An nn run skips deals with an exact row
(in `--out` or a `--store`) or any estimate in `--out` (a new model: a new `--out`). Source DD tables
are cross-checked against exact tables only, never against estimates. Consumers that need exact
tables keep solver == "dds" rows (`bridgeflow nndda` and `bridgeflow evaluate` do).
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch
from apache_beam.metrics.metric import MetricsFilter

from bridgeflow.dataset.atomic import write_json, write_table
from bridgeflow.dataset import dd
from bridgeflow.dataset.encodings import deal_id as deal_id_of
from bridgeflow.dataset.errors import InputError, existing, output_folder
from bridgeflow.dataset.labels import (
    ESTIMATOR_NAME,
    LabelStore,
    exact_rows,
    label_files,
    label_row,
    par_columns,
    read_label_file,
)
from bridgeflow.dataset.record import Reason, RecordError
from bridgeflow.dataset.schema import DD_LABELS, DD_MISMATCHES, DD_QUARANTINE, RECORDS, SCHEMA_VERSION
from bridgeflow.dataset.shard_check import checked_shards
from bridgeflow.dataset.splits import SPLITS, split_of
from bridgeflow.pipelines.monitor import JobMonitor, rate_and_eta
from bridgeflow.pipelines.runner import add_runner_arguments, job_parser, parse_job_arguments, pipeline_options, positive_int
from bridgeflow.pipelines.shards import WriteParquetShards, lock_output, number_shards, publish
from bridgeflow.training.dd.dd_estimator import DDEstimator
from bridgeflow.training.model_files import model_file

LOG = logging.getLogger("bridgeflow.ddlabel")
NAMESPACE = "ddlabel"  # Beam counters
DEAL_ID_MISMATCH = "deal_id_mismatch"  # a record whose deal_id is not the hash of its owner


# ------------------------------------------------------------------ rows

def mismatch_rows(deal_id: int, checks: list[tuple[int, list]], table: bytes):
    """Records whose given DD cells (None = unknown) differ from the solver's table."""
    solved = np.frombuffer(table, dtype=np.int8).tolist()
    for record_id, given in checks:
        cells = [cell for cell, value in enumerate(given) if value is not None and value != solved[cell]]
        if cells:
            yield {"record_id": record_id, "deal_id": deal_id, "cells": cells, "given": given, "dd_tricks": solved}


def quarantine_row(deal_id: int, owner: bytes | None, reason: str, message: str, records: int) -> dict:
    owner_list = None if owner is None else np.frombuffer(owner, dtype=np.int8).tolist()
    return {"deal_id": deal_id, "owner": owner_list, "reason": reason, "message": message, "records": records}


# ------------------------------------------------------------------ Beam transforms

def _counter(name: str):
    return beam.metrics.Metrics.counter(NAMESPACE, name)


class ReadRecords(beam.DoFn):
    """A records Parquet file -> (deal_id, ("r", record_id, owner bytes, dd_tricks or None)).

    Read through DuckDB: pyarrow 25 cannot read a fixed-size list column holding a null (apache/
    arrow#35692), and records of boards without a deal have a null owner. A file damaged inside
    (its footer read, a page does not) ends where the damage starts and is listed in
    `work`/unreadable/ (the deals read before it are labelled: a label is the deal's, not the file's)."""

    def __init__(self, work: str):
        self.work = work
        self.read = _counter("records_read")
        self.without_deal = _counter("records_without_deal_id")

    def process(self, path: str):
        import duckdb

        read = 0
        try:
            for element in self.elements(path):
                read += 1
                yield element
        except duckdb.Error as error:
            why = f"not readable Parquet after {read} records with a deal: {' '.join(str(error).split())}"
            write_json(Path(self.work) / "unreadable" / f"{uuid.uuid4().hex}.json", {"file": path, "why": why})

    def elements(self, path: str):
        import duckdb

        relation = duckdb.connect().read_parquet(path).project("record_id, deal_id, owner, dd_tricks")
        for batch in relation.to_arrow_reader(65536):
            record_ids = batch.column("record_id").to_numpy()
            deal_ids = batch.column("deal_id").to_pylist()
            owners = _owner_bytes(batch.column("owner"))
            dd_column = batch.column("dd_tricks")
            dd_tricks = dd_column.to_pylist() if dd_column.null_count < len(dd_column) else [None] * len(dd_column)
            self.read.inc(len(record_ids))
            for record_id, deal, owner, given in zip(record_ids, deal_ids, owners, dd_tricks):
                if deal is None:
                    self.without_deal.inc()
                    continue
                yield deal, ("r", int(record_id), owner, given)


def _owner_bytes(column: pa.Array) -> list[bytes | None]:
    """owner cells as raw int8 bytes (None where null): compact to shuffle and to compare."""
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    if column.null_count == 0 and (lengths == 52).all():
        return [owner.tobytes() for owner in column.flatten().to_numpy().astype(np.int8).reshape(-1, 52)]
    return [np.array(owner, dtype=np.int8).tobytes() if owner is not None else None for owner in column.to_pylist()]


class ReadLabels(beam.DoFn):
    """A label file -> (deal_id, ("o", dd bytes)) for --out, (deal_id, ("s", row)) for a --store.
    Only exact labels (solver "dds") count as labelled; with `estimates`, --out's estimates come
    as (deal_id, ("e",)), so an nn run does not estimate a deal twice."""

    def __init__(self, tag: str, estimates: bool = False):
        self.tag, self.estimates = tag, estimates

    def process(self, path: str):
        if self.tag == "o":
            table = pq.read_table(path, columns=["deal_id", "dd_tricks", "solver"])
            exact = exact_rows(table)
            cells = exact.column("dd_tricks").combine_chunks().flatten().to_numpy().astype(np.int8).reshape(-1, 20)
            for deal, table_cells in zip(exact.column("deal_id").to_pylist(), cells):
                yield deal, ("o", table_cells.tobytes())
            if self.estimates:
                estimated = table.filter(pc.not_equal(table.column("solver"), dd.SOLVER_NAME))
                for deal in estimated.column("deal_id").to_pylist():
                    yield deal, ("e",)
        else:
            for row in exact_rows(read_label_file(Path(path))).to_pylist():
                yield row["deal_id"], ("s", row)


class Classify(beam.DoFn):
    """All that is known of one deal_id -> what to do with it.

    Main output: mismatch rows against an existing label. Tagged: TODO (deal_id, owner bytes,
    records) to solve or estimate, PENDING (deal_id, ("p", checks)) to cross-check once solved,
    COPY (store rows to add to --out), QUARANTINE rows."""

    TODO, PENDING, COPY, QUARANTINE = "todo", "pending", "copy", "quarantine"

    def __init__(self, split: str = "all"):
        self.split = split
        self.deals = _counter("deals_in")
        self.outside_split = _counter("deals_outside_split")
        self.labelled = _counter("already_labelled")
        self.estimated = _counter("already_estimated")
        self.copied = _counter("copied_from_store")
        self.to_solve = _counter("to_solve")
        self.mismatched = _counter("mismatched_records")

    def process(self, element):
        deal, values = element
        records = [value for value in values if value[0] == "r"]
        if records:  # else: a label of a deal these records do not hold
            self.deals.inc()
            if self.split != "all" and split_of(deal) != self.split:
                self.outside_split.inc()
                return
            checks = [(record_id, given) for _, record_id, _, given in records if given is not None]
            labels = [value[1] for value in values if value[0] == "o"]
            stored = [value[1] for value in values if value[0] == "s"]
            if labels or stored:
                yield from self._labelled(deal, checks, labels, stored)
            elif any(value[0] == "e" for value in values):
                self.estimated.inc()
            else:
                yield from self._unlabelled(deal, records[0][2], checks, len(records))

    def _labelled(self, deal, checks, labels, stored):
        self.labelled.inc()
        if labels:
            table = labels[0]
        else:
            self.copied.inc()
            row = stored[0]
            if row["par_score"] is None or row["par_contracts"] is None:
                row["par_score"], row["par_contracts"] = par_columns(np.array(row["dd_tricks"]))
            yield beam.pvalue.TaggedOutput(self.COPY, row)
            table = np.array(row["dd_tricks"], dtype=np.int8).tobytes()
        for row in mismatch_rows(deal, checks, table):
            self.mismatched.inc()
            yield row

    def _unlabelled(self, deal, owner_bytes, checks, records):
        reason, message = self._fault(deal, owner_bytes)
        if reason:
            _counter(f"quarantined_{reason}").inc()
            yield beam.pvalue.TaggedOutput(self.QUARANTINE, quarantine_row(deal, owner_bytes, reason, message, records))
        else:
            self.to_solve.inc()
            yield beam.pvalue.TaggedOutput(self.TODO, (deal, owner_bytes, records))
            if checks:
                yield beam.pvalue.TaggedOutput(self.PENDING, (deal, ("p", checks)))

    @staticmethod
    def _fault(deal, owner_bytes) -> tuple[str | None, str | None]:
        """(reason, message) why this deal cannot go to the solver, or (None, None)."""
        if owner_bytes is None:
            return Reason.NOT_A_DEAL.value, "the record has a deal_id but no owner"
        try:
            owner = dd.check_deal(np.frombuffer(owner_bytes, dtype=np.int8))
        except RecordError as error:
            return error.reason.value, error.message
        if deal_id_of(owner) != deal:
            return DEAL_ID_MISMATCH, f"the owner hashes to deal_id {deal_id_of(owner)}"
        return None, None


def plan_batches(todo: list, lanes: int, max_batch: int, work: str) -> list:
    """The shared list of solver batches: (deal_ids, owners int8[n, 52], record counts).

    Guided sizes: a batch is at most a quarter of the remaining deals per lane, so batches shrink
    towards the end and the last deals are spread over every lane. Also writes work/plan.json for
    the driver's progress line."""
    todo = sorted(todo)
    batches, start = [], 0
    while start < len(todo):
        size = max(1, min(max_batch, (len(todo) - start) // (4 * lanes)))
        chunk = todo[start:start + size]
        batches.append((
            np.array([deal for deal, _, _ in chunk], dtype=np.uint64),
            np.stack([np.frombuffer(owner, dtype=np.int8) for _, owner, _ in chunk]),
            [records for _, _, records in chunk],
        ))
        start += size
    write_json(Path(work) / "plan.json", {"deals": len(todo), "batches": len(batches)})
    return batches


class SolveLane(beam.DoFn):
    """One lane (one per core): claim the next unclaimed batch of the shared plan, solve it in
    this lane's DDS process, commit its labels as a part file, repeat.

    Main output: (deal_id, table bytes) per solved deal; QUARANTINE: deals the solver refused."""

    QUARANTINE = "quarantine"

    def __init__(self, out: str, work: str, run_id: str, dds_threads: int):
        self.out, self.work, self.run_id, self.dds_threads = out, work, run_id, dds_threads
        self.solved = _counter("solved")
        self.calls = _counter("solver_calls")
        self.solver: dd.Solver | None = None

    def setup(self):
        self.solver = dd.Solver(threads=self.dds_threads)  # started at the first claimed batch

    def teardown(self):
        if self.solver is not None:
            self.solver.close()

    def process(self, element, plan):
        lane = element[0]
        store = LabelStore(self.out)
        claims = Path(self.work) / "claims"
        stats = {"lane": lane, "pid": os.getpid(), "deals": 0, "batches": 0, "first_solve_at": None, "done_at": None}
        for index, (deal_ids, owners, records) in enumerate(plan):
            if not _claim(claims, index):
                continue
            if stats["first_solve_at"] is None:
                version = self.solver.version  # starts the DDS process: start-up, not solving time
                stats["first_solve_at"] = time.time()
            calls = self.solver.calls
            results = self.solver.solve(owners)
            rows = []
            for deal, owner, count, result in zip(deal_ids.tolist(), owners, records, results):
                if isinstance(result, tuple):
                    reason, message = result
                    _counter(f"quarantined_{reason}").inc()
                    yield beam.pvalue.TaggedOutput(self.QUARANTINE, quarantine_row(deal, owner.tobytes(), reason, message, count))
                else:
                    rows.append(label_row(deal, owner, result, dd.SOLVER_NAME, version))
                    yield deal, result.tobytes()
            if rows:
                if not claims.is_dir():
                    raise RuntimeError(f"run {self.run_id} was superseded by a newer run: not committing")
                part = store.dir / f"part-{self.run_id}-{index:07d}-n{len(rows)}.parquet"
                write_table(pa.Table.from_pylist(rows, schema=DD_LABELS), part)
            self.solved.inc(len(rows))
            self.calls.inc(self.solver.calls - calls)
            stats["deals"] += len(deal_ids)
            stats["batches"] += 1
            stats["done_at"] = time.time()
            stats["solver_version"] = version
        if stats["batches"]:
            write_json(Path(self.work) / "lanes" / f"{lane}.json", stats)


def _claim(claims: Path, index: int) -> bool:
    """Take batch `index` for this lane: whoever creates its claim file first solves it."""
    try:
        os.close(os.open(claims / f"{index:07d}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


class Estimate(beam.DoFn):
    """A batch of deals to label -> DD_LABELS rows from the NN-DDA (solver "nn-dda"), committed as
    one part file like a solver lane's batch. No DDS process and no shared plan: the network does
    a batch in milliseconds."""

    def __init__(self, out: str, work: str, run_id: str, model_file: str):
        self.out, self.work, self.run_id, self.model_file = out, work, run_id, model_file
        self.estimated = _counter("estimated")
        self.estimator = None

    def setup(self):
        torch.set_num_threads(1)  # one worker process per core already
        self.estimator = DDEstimator.load(self.model_file)

    def process(self, batch):
        owners = np.stack([np.frombuffer(owner, dtype=np.int8) for _, owner, _ in batch])
        tables = self.estimator.tables(owners).reshape(-1, 20)
        rows = [label_row(deal, owner, table, ESTIMATOR_NAME, self.estimator.solver_version)
                for (deal, _, _), owner, table in zip(batch, owners, tables)]
        if not Path(self.work).is_dir():
            raise RuntimeError(f"run {self.run_id} was superseded by a newer run: not committing")
        part = LabelStore(self.out).dir / f"part-{self.run_id}-{uuid.uuid4().hex[:12]}-n{len(rows)}.parquet"
        write_table(pa.Table.from_pylist(rows, schema=DD_LABELS), part)
        self.estimated.inc(len(rows))


class CrossCheck(beam.DoFn):
    """(deal_id, [("p", checks), ("t", table)]) -> mismatch rows for the records' own DD tables."""

    def __init__(self):
        self.mismatched = _counter("mismatched_records")

    def process(self, element):
        deal, values = element
        tables = [value[1] for value in values if value[0] == "t"]  # none if the solver refused it
        for _, checks in (value for value in values if value[0] == "p" and tables):
            for row in mismatch_rows(deal, checks, tables[0]):
                self.mismatched.inc()
                yield row


def build(pipeline, record_files, out_label_files, store_label_files, out: Path, work: Path, args) -> None:
    """The job's graph. Outputs go to labels/ (parts, while solving) and work/staging/."""
    staging = work / "staging"
    estimating = args.estimator == "nn"

    def read(label, files, reader):
        return (pipeline | f"{label}Files" >> beam.Create(files, reshuffle=False)
                | f"Spread{label}" >> beam.Reshuffle() | f"Read{label}" >> beam.ParDo(reader))

    known = (
        (read("Records", record_files, ReadRecords(str(work))),
         read("Labels", out_label_files, ReadLabels("o", estimates=estimating)),
         read("Stores", store_label_files, ReadLabels("s")))
        | "AllByDeal" >> beam.Flatten() | "GroupByDeal" >> beam.GroupByKey()
        | "Classify" >> beam.ParDo(Classify(args.split)).with_outputs(
            Classify.TODO, Classify.PENDING, Classify.COPY, Classify.QUARANTINE, main="mismatches")
    )
    _ = known.copy | "WriteCopies" >> beam.ParDo(
        WriteParquetShards(str(LabelStore(out).dir), DD_LABELS, args.rows_per_shard, "deal_id"))

    if estimating:
        _ = (known.todo | "EstimateBatches" >> beam.BatchElements(min_batch_size=1024, max_batch_size=16384)
             | "Estimate" >> beam.ParDo(Estimate(str(out), str(work), work.name, str(model_file(args.nndda, "NN-DDA")))))
        mismatches, quarantine = (known.mismatches,), (known.quarantine,)  # known.pending: never against estimates
    else:
        plan = (known.todo | "CollectTodo" >> beam.combiners.ToList()
                | "Plan" >> beam.Map(plan_batches, args.workers, args.max_batch, str(work)))
        solved = (
            pipeline
            | "Lanes" >> beam.Create([(lane, None) for lane in range(args.workers)], reshuffle=False)
            | "OneLanePerWorker" >> beam.GroupByKey()
            | "Solve" >> beam.ParDo(SolveLane(str(out), str(work), work.name, args.dds_threads),
                                    plan=beam.pvalue.AsSingleton(plan)).with_outputs(SolveLane.QUARANTINE, main="tables")
        )
        checked = (
            (known.pending, solved.tables | "TagTables" >> beam.Map(lambda kv: (kv[0], ("t", kv[1]))))
            | "PendingAndSolved" >> beam.Flatten() | "GroupChecks" >> beam.GroupByKey()
            | "CrossCheck" >> beam.ParDo(CrossCheck())
        )
        mismatches, quarantine = (known.mismatches, checked), (known.quarantine, solved.quarantine)
    _ = (mismatches | "AllMismatches" >> beam.Flatten()
         | "WriteMismatches" >> beam.ParDo(WriteParquetShards(
             str(staging / "mismatches"), DD_MISMATCHES, args.rows_per_shard, "record_id")))
    _ = (quarantine | "AllQuarantine" >> beam.Flatten()
         | "WriteQuarantine" >> beam.ParDo(WriteParquetShards(
             str(staging / "quarantine"), DD_QUARANTINE, args.rows_per_shard, "deal_id")))


# ------------------------------------------------------------------ the driver

class Monitor(JobMonitor):
    """Driver side, while the job runs: a progress line from the parts committed so far (deals
    done, deals/s, ETA when the solver lanes' plan gives the total), and compaction of this run's
    parts each time they fill a shard, so a long run does not leave thousands of small files."""

    def __init__(self, store: LabelStore, work: Path, rows_per_shard: int, interval: float):
        super().__init__(interval)
        self.store, self.work, self.rows_per_shard = store, work, rows_per_shard
        self.seen: dict[str, int] = {}
        self.uncompacted: list[Path] = []
        self.started = time.time()  # replaced by when the plan was written (DDS); nn runs have no plan
        self.total: int | None = None  # deals to solve, from the plan; unknown to an nn run
        self.bar = None

    def poll(self) -> None:
        for path in self.store.dir.glob(f"part-{self.work.name}-*.parquet"):
            if path.name not in self.seen:
                self.seen[path.name] = int(re.search(r"-n(\d+)\.parquet$", path.name).group(1))
                self.uncompacted.append(path)
        plan = self.work / "plan.json"
        if self.total is None and plan.exists():
            self.total = json.loads(plan.read_text())["deals"]
            self.started = plan.stat().st_mtime  # solving starts then, not at this (later) poll
        done = sum(self.seen.values())
        if self.total or done:
            self._report(done)
        if sum(self.seen[path.name] for path in self.uncompacted) >= self.rows_per_shard:
            self.store.compact(self.uncompacted, self.rows_per_shard)
            self.uncompacted = []

    def _report(self, done: int) -> None:
        if sys.stderr.isatty():
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=self.total, unit="deal", desc="ddlabel")
            self.bar.update(done - self.bar.n)
            return
        rate, eta = rate_and_eta(done, self.total, self.started)
        if self.total is None:
            LOG.info("ddlabel: %d deals estimated, %.0f deals/s", done, rate)
            return
        LOG.info("ddlabel: %d/%d deals solved, %.2f deals/s, ETA %s", done, self.total, rate, eta)

    def finish(self) -> None:
        super().finish()
        if self.bar is not None:
            self.bar.close()


def record_files(specs: list[str]) -> list[str]:
    """--records folders or globs -> Parquet files."""
    files = []
    for spec in specs:
        pattern = os.path.join(spec, "**", "*.parquet") if os.path.isdir(spec) else spec
        matches = sorted(glob.glob(pattern, recursive=True))
        if not matches:
            raise InputError(f"--records {spec}: no such folder, or no Parquet file in it")
        files += matches
    return files


def parse_args(argv):
    parser = job_parser("bridgeflow ddlabel", __doc__.split("\n\n")[0])
    parser.add_argument("--records", action="append", required=True, help="records folder or glob (repeatable)")
    parser.add_argument("--out", required=True, help="DD store folder (labels/, quarantine/, mismatches/, summary.json)")
    parser.add_argument("--store", action="append", default=[], help="another DD store whose labels are reused (repeatable)")
    add_runner_arguments(parser)  # --workers: solver lanes = local worker processes
    parser.add_argument("--dds-threads", type=int, default=1, help="DDS threads per lane (0 = one per core)")
    parser.add_argument("--max-batch", type=int, default=dd.MAX_DEALS_PER_CALL, help="deals per solver batch (1..40)")
    parser.add_argument("--rows-per-shard", type=positive_int, default=1_000_000, help="label rows per compacted shard")
    parser.add_argument("--progress-seconds", type=float, default=10.0, help="progress line interval")
    parser.add_argument("--split", choices=("all", *SPLITS), default="all",
                        help="label only this split's deals (deal_id %% 100: < 80 train, < 90 valid, else test)")
    parser.add_argument("--estimator", choices=("dds", "nn"), default="dds",
                        help=f"dds: exact tables; nn: NN-DDA estimates (--nndda), rows marked "
                             f"solver={ESTIMATOR_NAME!r}, superseded by a later exact run")
    parser.add_argument("--nndda", help="NN-DDA model for --estimator nn: `bridgeflow nndda`'s folder or its nndda.pt")
    args, beam_args = parse_job_arguments(parser, argv)
    if args.dds_threads < 0:
        parser.error(f"--dds-threads must be >= 0 (0 = one per core), not {args.dds_threads}")
    if not 1 <= args.max_batch <= dd.MAX_DEALS_PER_CALL:
        parser.error(f"--max-batch must be 1..{dd.MAX_DEALS_PER_CALL}")
    if (args.estimator == "nn") != (args.nndda is not None):
        parser.error("--nndda goes with --estimator nn, and only with it")
    return args, beam_args


def run(argv: list[str] | None = None) -> dict:
    """Run the DD-label job; returns the summary it wrote to <out>/summary.json."""
    args, beam_args = parse_args(argv)
    # every input is checked before anything is written: unreadable shards are set aside, another schema refused
    inputs, skipped = checked_shards(record_files(args.records), RECORDS, "--records", "records")
    stores = [existing(spec, "--store") for spec in args.store]
    estimator_version = None
    if args.estimator == "nn":  # a bad model fails before any work
        estimator_version = DDEstimator.load(args.nndda).solver_version
    out = output_folder(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with lock_output(out, "ddlabel"):
        summary = label_deals(args, beam_args, out, inputs, stores, estimator_version, skipped)
    LOG.info("ddlabel: %s", json.dumps({key: value for key, value in summary.items() if not isinstance(value, (dict, list))}))
    for entry in skipped:
        LOG.warning("ddlabel: skipped %s: %s", entry["file"], entry["why"])
    return summary


def label_deals(args: argparse.Namespace, beam_args: list[str], out: Path, inputs: list[str], stores: list[Path],
                estimator_version: str | None, skipped: list[dict]) -> dict:
    """The job, under run()'s lock on `out`; `skipped` are the --records files set aside (summary.json lists them)."""
    started = time.time()
    store = LabelStore(out)
    store.recover()
    shutil.rmtree(out / "_work", ignore_errors=True)  # also stops lanes of a killed run from committing
    work = out / "_work" / f"{time.strftime('%Y%m%dT%H%M%S')}{os.getpid()}"
    (work / "claims").mkdir(parents=True)
    for sub in ("quarantine", "mismatches"):
        (work / "staging" / sub).mkdir(parents=True)

    out_files = [str(path) for path in store.files()]
    store_files = [str(path) for store_folder in stores for path in label_files(store_folder)]
    LOG.info("ddlabel: %d records files, %d label files in %s, %d in stores, %d lanes",
             len(inputs), len(out_files), out, len(store_files), args.workers)
    monitor = Monitor(store, work, args.rows_per_shard, args.progress_seconds)
    monitor.start()
    pipeline = beam.Pipeline(options=pipeline_options(args, beam_args))
    build(pipeline, inputs, out_files, store_files, out, work, args)
    try:
        result = pipeline.run()
        result.wait_until_finish()
    finally:
        monitor.finish()
    counts = _counters(result)

    parts, small = store.parts(), store.small_shards(args.rows_per_shard)
    if parts or len(small) > 1:
        store.compact(parts + small, args.rows_per_shard)
    for sub, table_schema in (("quarantine", DD_QUARANTINE), ("mismatches", DD_MISMATCHES)):
        number_shards(work / "staging" / sub, table_schema)
        publish(work / "staging" / sub, out / sub)
    lanes = [json.loads(path.read_text()) for path in sorted((work / "lanes").glob("*.json"))]
    summary = _summary(counts, lanes, args, started, estimator_version)
    summary["label_files"] = len(store.files())
    damaged = [json.loads(path.read_text()) for path in sorted((work / "unreadable").glob("*.json"))]
    summary["skipped_files"] = skipped + sorted(damaged, key=lambda entry: entry["file"])
    write_json(out / "summary.json", summary)
    shutil.rmtree(out / "_work", ignore_errors=True)
    return summary


def _counters(result) -> dict[str, int]:
    counts: dict[str, int] = {}
    for counter in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        counts[counter.key.metric.name] = counts.get(counter.key.metric.name, 0) + counter.committed
    return counts


def _summary(counts: dict[str, int], lanes: list[dict], args, started: float, estimator_version: str | None) -> dict:
    solve_start = min((lane["first_solve_at"] for lane in lanes), default=None)
    solve_end = max((lane["done_at"] for lane in lanes), default=None)
    solve_seconds = solve_end - solve_start if lanes else 0.0
    quarantined = {name.removeprefix("quarantined_"): value for name, value in sorted(counts.items())
                   if name.startswith("quarantined_")}
    seconds = time.time() - started
    if estimator_version:  # no solver lanes: the rate of the whole job, Beam and par included
        rate = counts.get("estimated", 0) / seconds
    else:
        rate = counts.get("solved", 0) / solve_seconds if solve_seconds else None
    return {
        "schema_version": SCHEMA_VERSION,
        "records_read": counts.get("records_read", 0),
        "records_without_deal_id": counts.get("records_without_deal_id", 0),
        "deals_in": counts.get("deals_in", 0),
        "split": args.split,
        "deals_outside_split": counts.get("deals_outside_split", 0),
        "already_labelled": counts.get("already_labelled", 0),
        "already_estimated": counts.get("already_estimated", 0),
        "copied_from_store": counts.get("copied_from_store", 0),
        "to_solve": counts.get("to_solve", 0),
        "solved": counts.get("solved", 0),
        "estimated": counts.get("estimated", 0),
        "quarantined": sum(quarantined.values()),
        "quarantined_by_reason": quarantined,
        "mismatched_records": counts.get("mismatched_records", 0),
        "solver": ESTIMATOR_NAME if estimator_version else dd.SOLVER_NAME,
        "solver_version": estimator_version or next((lane["solver_version"] for lane in lanes), None),
        "solver_calls": counts.get("solver_calls", 0),
        "lanes": args.workers,
        "dds_threads": args.dds_threads,
        "seconds": round(seconds, 3),
        "startup_seconds": round(solve_start - started, 3) if lanes else None,
        "solve_seconds": round(solve_seconds, 3),
        "deals_per_second": round(rate, 3) if rate is not None else None,
    }


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    run(sys.argv[1:])
