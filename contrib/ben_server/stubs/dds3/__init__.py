# SPDX-License-Identifier: GPL-3.0-or-later
# Copyright 2026 the bridgeflow authors.
#
# This program is free software: you can redistribute it and/or modify it under the terms of the
# GNU General Public License as published by the Free Software Foundation, either version 3 of the
# License, or (at your option) any later version. It is distributed WITHOUT ANY WARRANTY; see
# <https://www.gnu.org/licenses/gpl-3.0.html>. It imports BEN (lorserker/ben, GPL-3.0) at run
# time and is kept apart from the Apache-2.0 bridgeflow package (docs/ben.md).
"""BEN's `dds3` interface (DDS 3's Python module) for its bidding search, on the DDS 2.9 library
BEN ships (`bin/libdds.so`, found through BEN_HOME) by ctypes: BEN's own dds3 build needs glibc
2.38 and Python 3.12. Bidding only calls `solve_board_pbn` (src/ddsolver/ddsolver.py); the
library accepts thread index 0 only, so solves run one at a time under a lock. The library is
loaded on the first solve: BEN without its search imports this module but never solves."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

RETURN_NO_FAULT = 1
_lock = threading.Lock()
_library: ctypes.CDLL | None = None


class _DealPBN(ctypes.Structure):
    _fields_ = [("trump", ctypes.c_int), ("first", ctypes.c_int), ("currentTrickSuit", ctypes.c_int * 3),
                ("currentTrickRank", ctypes.c_int * 3), ("remainCards", ctypes.c_char * 80)]


class _FutureTricks(ctypes.Structure):
    _fields_ = [("nodes", ctypes.c_int), ("cards", ctypes.c_int), ("suit", ctypes.c_int * 13),
                ("rank", ctypes.c_int * 13), ("equals", ctypes.c_int * 13), ("score", ctypes.c_int * 13)]


class SolverContext:
    """DDS 3 keeps one per thread; the 2.9 library has one solver (thread index 0) for all."""


def library_path() -> Path:
    home = os.environ.get("BEN_HOME")
    if not home:
        raise RuntimeError("dds3 shim: BEN_HOME is not set (the BEN folder holding bin/libdds.so)")
    return Path(home) / "bin" / "libdds.so"


def _dds() -> ctypes.CDLL:
    global _library
    if _library is None:
        path = library_path()
        if not path.is_file():
            raise RuntimeError(f"dds3 shim: no DDS library at {path}")
        library = ctypes.CDLL(str(path))
        library.SolveBoardPBN.argtypes = [_DealPBN, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                          ctypes.POINTER(_FutureTricks), ctypes.c_int]
        library.SolveBoardPBN.restype = ctypes.c_int
        library.ErrorMessage.argtypes = [ctypes.c_int, ctypes.c_char * 80]
        library.SetMaxThreads.argtypes = [ctypes.c_int]
        library.SetMaxThreads(1)
        _library = library
    return _library


def solve_board_pbn(pbn: str, trump: int, first: int, current_trick_suit=(0, 0, 0), current_trick_rank=(0, 0, 0),
                    target: int = -1, solutions: int = 1, mode: int = 1, context: SolverContext | None = None) -> dict:
    """DDS SolveBoardPBN on one deal: dds3's result dict (nodes, cards, suit, rank, equals, score)."""
    deal = _DealPBN(trump, first, (ctypes.c_int * 3)(*current_trick_suit), (ctypes.c_int * 3)(*current_trick_rank),
                    pbn.encode("ascii"))
    result = _FutureTricks()
    library = _dds()
    with _lock:
        code = library.SolveBoardPBN(deal, target, solutions, mode, ctypes.byref(result), 0)
    if code != RETURN_NO_FAULT:
        message = (ctypes.c_char * 80)()
        library.ErrorMessage(code, message)
        raise RuntimeError(f"DDS SolveBoardPBN({pbn!r}, trump {trump}, first {first}): {message.value.decode()}")
    return {"nodes": result.nodes, "cards": result.cards, "suit": list(result.suit), "rank": list(result.rank),
            "equals": list(result.equals), "score": list(result.score)}


def __getattr__(name: str):
    raise AttributeError(f"dds3.{name}: bridgeflow's dds3 shim serves BEN's bidding search only "
                         "(solve_board_pbn)")
