"""The contract-choice regret of NN-DDA scoring (training/dd/contract_choice.py)."""

from __future__ import annotations

import numpy as np

from bridgeflow.training.dd.contract_choice import close_pairs, regrets


def one_hot(tables: np.ndarray) -> np.ndarray:
    return (np.arange(14) == tables[..., None]).astype(float)


def test_a_network_that_is_exact_loses_nothing_and_one_that_is_off_loses_some():
    rng = np.random.default_rng(0)
    exact = rng.integers(4, 12, (200, 4, 5))
    pairs = close_pairs(exact, 10, rng)
    assert len(pairs["deal"]) > 1500 and (pairs["level"] >= 1).all() and (pairs["level"] <= 7).all()
    perfect = regrets(one_hot(exact), exact, pairs)
    assert perfect["argmax_regret_imps"] == perfect["expected_regret_imps"] == 0.0
    off = regrets(one_hot(np.clip(exact + rng.integers(-1, 2, exact.shape), 0, 13)), exact, pairs)
    assert off["argmax_regret_imps"] > 0.1 and off["argmax_wrong"] > 0.02


def test_the_expected_score_hedges_where_the_network_is_unsure():
    exact = np.full((1, 4, 5), 9)  # 3NT makes exactly, 4NT fails by one
    pairs = {"deal": np.array([0]), "vulnerable": np.array([0]), "level": np.array([[3], [4]]),
             "strain": np.array([[4], [4]]), "declarer": np.array([[0], [0]])}
    probs = one_hot(exact)
    probs[0, 0, 4] = 0.0
    probs[0, 0, 4, [9, 10]] = [0.45, 0.55]  # the network leans to 10 tricks, but barely
    got = regrets(probs, exact, pairs)
    assert got["argmax_regret_imps"] > 0 and got["argmax_wrong"] == 1.0  # 4NT: +430 vs -50 by argmax
    assert got["expected_regret_imps"] == 0.0  # E[4NT] = 0.55 * 430 - 0.45 * 50 = 214 < 400
