"""A toy game for DMC's tests: one call always wins. The dealer's side gets 1 when the dealer
opens `WINNING_CALL`, else 0, whatever else is called; the other side always gets 0. Q at the
opening decision must learn that one call is worth 1 and every other 0."""

from __future__ import annotations

import numpy as np

from bridgeflow.dataset.encodings import parse_call
from bridgeflow.training.dmc.reward import Played

WINNING_CALL = parse_call("3NT")


class FirstCallWins:
    def __init__(self, config=None, store=None):
        pass

    def returns(self, played: Played) -> list[np.ndarray]:
        out = []
        for state in played.states:
            won = float(state.calls[0] == WINNING_CALL)
            dealer_side = (np.arange(len(state.calls)) % 2) == 0  # call k is made by dealer + k
            out.append(np.where(dealer_side, won, 0.0))
        return out
