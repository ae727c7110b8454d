#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 the bridgeflow authors.
#
# This program is free software: you can redistribute it and/or modify it under the terms of the
# GNU General Public License as published by the Free Software Foundation, either version 3 of the
# License, or (at your option) any later version. It is distributed WITHOUT ANY WARRANTY; see
# <https://www.gnu.org/licenses/gpl-3.0.html>. It imports BEN (lorserker/ben, GPL-3.0) at run
# time and is kept apart from the Apache-2.0 bridgeflow package (docs/ben.md).
"""BEN's bidder behind a JSON-lines protocol, for bridgeflow's `ben` agents.

    BEN_HOME=/path/to/ben python ben_server.py [--ben /path/to/ben]

Start-up loads BEN's ONNX config (src/config/onnx.conf) with BBA left out, then writes one line
{"ready": true, "seconds": S}. Then one request per line on stdin, one reply per line on stdout:

    {"hand": "AKT963.A6.AKT9.6", "dealer": 1, "vulnerability": [false, false],
     "auction": ["PASS", "PASS"], "search": false}
    -> {"call": "2C", "seconds": 0.002}       (BEN's own time for the call)
    -> {"error": "..."}                        (a bad request or a failure inside BEN)

    {"hands": ["N's S.H.D.C", "E's", "S's", "W's"], "dealer": 0, "vulnerability": [...], "search": false}
    -> {"auction": ["1S", "PASS", ...], "seconds": 0.04}

A `hands` request bids every seat to the end of the auction, each call exactly as a `hand`
request for it would (a corpus then pays one round trip per auction, not per call).

The hand is the player to act's, suits S.H.D.C; seats N=0..W=3; the auction holds the calls from
the dealer on, spelt as BEN does ('PASS', 'X', 'XX', '1C'..'7N'). `search` false is
`ben-nosearch` ([bidding] search_threshold = -1, check_final_contract = False); true runs BEN's
bidding search, whose double-dummy solves go to the dds3 shim in stubs/. Every call builds a
fresh BotBid, as BEN reseeds from the hand per call: a reply depends on its request only. The
server ends at the end of stdin, or when the process that started it is gone. Anything BEN prints
goes to stderr, never into the protocol."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import traceback
from configparser import ConfigParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
# BBA (libEPBot) is not shipped with BEN's snapshot; BEN then bids from its network alone.
NO_BBA = {"models": {"consult_bba": "False", "use_bba_to_count_aces": "False", "use_bba_rollout": "False"}}
NO_SEARCH = {"bidding": {"search_threshold": "-1", "check_final_contract": "False"}}
CALLS = {"PASS", "X", "XX", *(f"{level}{strain}" for level in range(1, 8) for strain in "CDHSN")}
MAX_CALLS = 319  # the longest legal auction


def configuration(ben: Path, search: bool) -> ConfigParser:
    """BEN's onnx.conf with the overrides of the `ben` or `ben-nosearch` agent."""
    conf = ConfigParser()
    with open(ben / "src" / "config" / "onnx.conf") as file:
        conf.read_file(file)
    for overrides in (NO_BBA, {} if search else NO_SEARCH):
        for section, values in overrides.items():
            for key, value in values.items():
                conf.set(section, key, value)
    return conf


class Bidders:
    """BEN's models, sampler and DD solver, loaded once per variant (with or without search)."""

    def __init__(self, ben: Path):
        self.ben = ben
        self.loaded = {}

    def variant(self, search: bool):
        if search not in self.loaded:
            from ddsolver.ddsolver import DDSolver
            from nn.models_tf2 import Models
            from sample import Sample
            conf = configuration(self.ben, search)
            # One solver thread: the shipped DDS library accepts thread index 0 only.
            self.loaded[search] = (Models.from_conf(conf, str(self.ben)), Sample.from_conf(conf, False),
                                   DDSolver(max_threads=1))
        return self.loaded[search]

    def bid(self, request: dict) -> str:
        from botbidder import BotBid
        hand, dealer, vulnerability, auction = check(request)
        models, sampler, solver = self.variant(bool(request.get("search", False)))
        seat = (dealer + len(auction)) % 4
        bot = BotBid(vulnerability, hand, models, sampler, seat, dealer, solver, False, False)
        return bot.bid(["PAD_START"] * dealer + auction).bid

    def auction(self, request: dict) -> list[str]:
        """The whole auction of a `hands` request: each seat's call as `bid` gives it."""
        hands, dealer = request.get("hands"), request.get("dealer")
        if not isinstance(hands, list) or len(hands) != 4:
            raise ValueError(f"hands {hands!r} is not a list of the four hands N, E, S, W")
        if dealer not in (0, 1, 2, 3):
            raise ValueError(f"dealer {dealer!r} is not a seat 0..3 (N..W)")
        auction: list[str] = []
        while not finished(auction):
            if len(auction) == MAX_CALLS:
                raise ValueError(f"BEN's auction did not end in {MAX_CALLS} calls: {' '.join(auction)}")
            seat = (dealer + len(auction)) % 4
            auction.append(self.bid(request | {"hand": hands[seat], "auction": auction}))
        return auction


def finished(auction: list[str]) -> bool:
    """Three passes after a call (four passes in a row also start with one)."""
    return len(auction) >= 4 and auction[-3:] == ["PASS"] * 3


def check(request: dict) -> tuple[str, int, list[bool], list[str]]:
    """The request's fields, or ValueError naming the one at fault."""
    hand, dealer = request.get("hand"), request.get("dealer")
    vulnerability, auction = request.get("vulnerability"), request.get("auction")
    if not isinstance(hand, str) or len(hand.split(".")) != 4 or len(hand) - 3 != 13:
        raise ValueError(f"hand {hand!r} is not 13 cards as S.H.D.C")
    if dealer not in (0, 1, 2, 3):
        raise ValueError(f"dealer {dealer!r} is not a seat 0..3 (N..W)")
    if not (isinstance(vulnerability, list) and len(vulnerability) == 2 and all(isinstance(v, bool) for v in vulnerability)):
        raise ValueError(f"vulnerability {vulnerability!r} is not [ns, ew] booleans")
    if not isinstance(auction, list) or any(call not in CALLS for call in auction):
        raise ValueError(f"auction {auction!r} is not a list of BEN's calls (PASS, X, XX, 1C..7N)")
    return hand, dealer, vulnerability, auction


def serve(ben: Path, requests, replies) -> None:
    bidders = Bidders(ben)
    started = time.perf_counter()
    bidders.variant(False)  # the networks every variant uses, before ready
    reply(replies, {"ready": True, "seconds": time.perf_counter() - started})
    for line in requests:
        if not line.strip():
            continue
        started = time.perf_counter()
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
            answer = {"auction": bidders.auction(request)} if "hands" in request else {"call": bidders.bid(request)}
        except Exception as error:  # a reply for every request: the client never waits in vain
            traceback.print_exc(file=sys.stderr)
            answer = {"error": f"{type(error).__name__}: {error}"}
        reply(replies, answer | {"seconds": time.perf_counter() - started})


def reply(replies, message: dict) -> None:
    replies.write(json.dumps(message) + "\n")
    replies.flush()


def exit_with_parent() -> None:
    """Exit as soon as the process that started this one is gone (a killed evaluate worker):
    else the server would search on, orphaned, holding a core until its request ends. The same
    watch as bridgeflow's `pools.end_with_parent`, which BEN's virtualenv cannot import."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    exit_with_parent()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ben", default=os.environ.get("BEN_HOME"), help="BEN's folder (src/, models/, bin/)")
    args = parser.parse_args()
    if not args.ben or not (Path(args.ben) / "src" / "botbidder.py").is_file():
        sys.exit(f"ben_server: BEN not found at {args.ben!r} (--ben or BEN_HOME: the folder holding src/botbidder.py)")
    ben = Path(args.ben).resolve()
    os.environ["BEN_HOME"] = str(ben)  # the dds3 shim finds bin/libdds.so through it
    sys.path[:0] = [str(HERE / "stubs"), str(ben / "src")]
    # The protocol keeps the real stdout; BEN's prints go to stderr.
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(ben, sys.stdin, replies)


if __name__ == "__main__":
    main()
