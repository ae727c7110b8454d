"""How every bridgeflow Beam job picks its runner: FnApiRunner with one worker process per core
by default, or any Beam runner (PortableRunner, FlinkRunner, SparkRunner, DataflowRunner) with
its own flags passed through."""

from __future__ import annotations

import argparse
import os
import tempfile

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from bridgeflow.dataset.atomic import write_json


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runner", default="FnApiRunner", help="Beam runner (FnApiRunner, PortableRunner, ...)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local worker processes (FnApiRunner)")


def pipeline_options(args: argparse.Namespace, beam_args: list[str]) -> PipelineOptions:
    """`args` from a parser with add_runner_arguments; `beam_args` are the flags it did not know."""
    options = PipelineOptions(beam_args)
    options.view_as(StandardOptions).runner = args.runner
    if args.runner == "FnApiRunner":
        direct = options.view_as(DirectOptions)
        direct.direct_num_workers = args.workers
        direct.direct_running_mode = "multi_processing" if args.workers > 1 else "in_memory"
        if args.workers > 1:
            quiet_local_workers()
    return options


# What FnApiRunner's worker processes read as their pipeline options (it hands them none):
# warnings and errors only, instead of a dozen INFO lines per worker and bundle.
WORKER_OPTIONS = {"default_sdk_harness_log_level": "WARNING", "sdk_harness_log_level_overrides": {"__main__": "ERROR"}}


def quiet_local_workers() -> None:
    """Point the local SDK worker processes (they inherit this process's environment) at
    WORKER_OPTIONS through Beam's PIPELINE_OPTIONS_FILE, unless the user set one."""
    if "PIPELINE_OPTIONS_FILE" in os.environ:
        return
    path = os.path.join(tempfile.gettempdir(), "bridgeflow-worker-options.json")
    write_json(path, {"options": WORKER_OPTIONS})  # concurrent jobs write the same content; each replace is atomic
    os.environ["PIPELINE_OPTIONS_FILE"] = path
