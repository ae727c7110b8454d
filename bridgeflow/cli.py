"""`bridgeflow <verb> ...`: one entry point for every stage; each verb hands its arguments to the
module that owns it (a Beam job's `run(argv)`, a trainer, ...)."""

from __future__ import annotations

import importlib
import logging
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from bridgeflow.dataset.errors import InputError

# verb -> (module with run(argv), one-line help)
VERBS = {
    "synth": ("bridgeflow.pipelines.synth", "generate the synthetic corpus (random deals, PBN/LIN)"),
    "ingest": ("bridgeflow.pipelines.ingest", "parse PBN/LIN/OpenSpiel files into Parquet shards (Beam)"),
    "ddlabel": ("bridgeflow.pipelines.ddlabel", "double-dummy tables and par for every distinct deal (Beam + DDS, or NN-DDA estimates)"),
    "catalog": ("bridgeflow.dataset.catalog", "build the DuckDB catalog (views + macros) over the shards"),
    "bsm": ("bridgeflow.training.bidding.bsm_train", "train the bidding system model (BSM): next call + hand understanding"),
    "average": ("bridgeflow.training.bidding.average", "one BSM from the weight average of BSMs fine-tuned from one start (a model soup)"),
    "nndda": ("bridgeflow.training.dd.nndda_train", "train NN-DDA, the fast neural DD estimator, on the DD store"),
    "selfplay": ("bridgeflow.pipelines.selfplay", "policy iteration: self-play auctions searched with the current network (Beam)"),
    "dmc": ("bridgeflow.training.dmc.train", "Deep Monte Carlo self-play: Q(state, call) from parallel actors' duplicate returns"),
    "bid": ("bridgeflow.training.search.monte_carlo", "Monte Carlo bidding search for one decision, with its evidence"),
    "evaluate": ("bridgeflow.training.evaluation.evaluate", "duplicate match in IMPs on DD-scored test boards"),
    "challenge": ("bridgeflow.training.evaluation.challenge", "bid BEN's Challenges problems, scored by their Facit award tables"),
    "compare": ("bridgeflow.training.evaluation.compare_runs", "two evaluate or challenge runs on the same boards, paired, and the calls or problems where they differ"),
    "generation": ("bridgeflow.training.evaluation.generation", "measure one generation of a learning loop: raw-network matches, Facit, history plot"),
    "report": ("bridgeflow.training.evaluation.board_report", "a run's boards as one self-contained HTML page (hands, auctions, results)"),
    "explain": ("bridgeflow.training.bidding.explain", "a trained BSM's call probabilities and beliefs for one hand (PNG + text)"),
}


def usage() -> str:
    lines = ["usage: bridgeflow <verb> [options]   (bridgeflow <verb> --help for each)", "", "verbs:"]
    lines += [f"  {verb:<10} {text}" for verb, (_, text) in VERBS.items()]
    return "\n".join(lines)


def configure_logging() -> None:
    """Our INFO lines; Beam's own chatter (worker start-up warnings, the optional GCP client
    notice) only when it is an error."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("apache_beam").setLevel(logging.ERROR)
    for handler in logging.getLogger().handlers:
        handler.addFilter(lambda record: not record.getMessage().startswith("apitools not found"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    verb, rest = argv[0], argv[1:]
    if verb not in VERBS:
        print(f"bridgeflow: unknown verb {verb!r}\n\n{usage()}", file=sys.stderr)
        return 2
    configure_logging()
    module = importlib.import_module(VERBS[verb][0])
    with stop_signals() as received:
        try:
            module.run(rest)
        except InputError as error:  # the user's mistake: one line, not a traceback
            print(f"bridgeflow {verb}: error: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM, after the verb kept what it had finished
            print(f"bridgeflow {verb}: interrupted; a resumable verb kept what it had finished "
                  "and the same command resumes it", file=sys.stderr)
            return 128 + received.get("signal", signal.SIGINT)
    return 0


@contextmanager
def stop_signals() -> Iterator[dict]:
    """SIGTERM unwinds the verb as Ctrl-C does (KeyboardInterrupt), so its `finally` blocks run:
    progress is committed and worker processes are ended instead of left behind. Yields a dict
    that names the signal received; the old handler is restored after."""
    received: dict = {}
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield received
        return

    def interrupt(signum, frame):
        received["signal"] = signum
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
