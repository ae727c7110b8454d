"""How every bridgeflow Beam job picks its runner: FnApiRunner with one worker process per core
by default, or any Beam runner (PortableRunner, FlinkRunner, SparkRunner, DataflowRunner) with
its own flags passed through."""

from __future__ import annotations

import argparse
import os

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions


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
    return options
