"""How every bridgeflow Beam job picks its runner: FnApiRunner with one worker process per core
by default, or any Beam runner (PortableRunner, FlinkRunner, SparkRunner, DataflowRunner) with
its own flags passed through."""

from __future__ import annotations

import argparse
import os
import tempfile

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions, _BeamArgumentParser


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (a count or a size: 0 or -5 is a mistake, not a setting)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"want an integer >= 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"want an integer >= 1, not {value}")
    return value


def job_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a Beam job's verb: no abbreviated options (the rest of the line goes to Beam,
    and a prefix of one of ours must not swallow a Beam flag)."""
    return argparse.ArgumentParser(prog=prog, description=description, allow_abbrev=False)

from bridgeflow.dataset.atomic import write_json


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runner", default="FnApiRunner", help="Beam runner (FnApiRunner, PortableRunner, ...)")
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                        help="local worker processes (FnApiRunner)")


def parse_job_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """(our options, Beam's): what `parser` does not know goes to Beam, but an option Beam does not
    know either (a typo such as --rows-per-shards) is an error, never silently ignored."""
    args, beam_args = parser.parse_known_args(argv)
    beam_parser = _BeamArgumentParser(allow_abbrev=False)  # as PipelineOptions.get_all_options builds it
    for options in {str(cls): cls for cls in PipelineOptions.__subclasses__()}.values():
        options._add_argparse_args(beam_parser)  # pylint: disable=protected-access
    _, unknown = beam_parser.parse_known_args(beam_args)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)} (neither {parser.prog}'s nor a Beam pipeline option)")
    return args, beam_args


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
