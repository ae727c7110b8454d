"""`bridgeflow <verb> ...`: one entry point for every stage; each verb hands its arguments to the
module that owns it (a Beam job's `run(argv)`, a trainer, ...)."""

from __future__ import annotations

import importlib
import logging
import sys

from bridgeflow.dataset.errors import InputError

# verb -> (module with run(argv), one-line help)
VERBS = {
    "synth": ("bridgeflow.pipelines.synth", "generate the synthetic corpus (random deals, PBN/LIN)"),
    "ingest": ("bridgeflow.pipelines.ingest", "parse PBN/LIN/OpenSpiel files into Parquet shards (Beam)"),
    "ddlabel": ("bridgeflow.pipelines.ddlabel", "double-dummy tables and par for every distinct deal (Beam + DDS, or NN-DDA estimates)"),
    "catalog": ("bridgeflow.dataset.catalog", "build the DuckDB catalog (views + macros) over the shards"),
    "bsm": ("bridgeflow.training.bidding.bsm_train", "train the bidding system model (BSM): next call + hand understanding"),
    "nndda": ("bridgeflow.training.dd.nndda_train", "train NN-DDA, the fast neural DD estimator, on the DD store"),
    "selfplay": ("bridgeflow.pipelines.selfplay", "policy iteration: self-play auctions searched with the current network (Beam)"),
    "dmc": ("bridgeflow.training.dmc.train", "Deep Monte Carlo self-play: Q(state, call) from parallel actors' duplicate returns"),
    "bid": ("bridgeflow.training.search.monte_carlo", "Monte Carlo bidding search for one decision, with its evidence"),
    "evaluate": ("bridgeflow.training.evaluation.evaluate", "duplicate match in IMPs on DD-scored test boards"),
    "challenge": ("bridgeflow.training.evaluation.challenge", "bid BEN's Challenges problems, scored by their Facit award tables"),
    "compare": ("bridgeflow.training.evaluation.compare_runs", "two evaluate or challenge runs on the same boards, paired (settings one per run)"),
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
    try:
        module.run(rest)
    except InputError as error:  # the user's mistake: one line, not a traceback
        print(f"bridgeflow {verb}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
