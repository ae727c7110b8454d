"""The two intervals over boards: one shape, the bounds in order around the estimate."""

import numpy as np

from bridgeflow.training.evaluation.statistics import normal_interval, paired_bootstrap_percent


def test_the_normal_interval_is_the_mean_plus_minus_1_96_standard_errors():
    interval = normal_interval([1.0, 2.0, 6.0])
    se = np.std([1.0, 2.0, 6.0], ddof=1) / np.sqrt(3)
    assert (interval.estimate, interval.boards) == (3.0, 3) and np.isclose(interval.se, se)
    assert np.allclose([interval.low, interval.high], [3.0 - 1.959964 * se, 3.0 + 1.959964 * se])
    assert normal_interval([4.0]) == normal_interval([4.0]).__class__(4.0, None, None, 1)
    assert normal_interval([]).estimate is None


def test_the_bootstrap_interval_holds_the_share_and_repeats_with_its_seed():
    gained, possible = [3, -1, 0, 2, 1, -2, 4, 0], [4, 2, 3, 5, 2, 4, 6, 1]
    interval = paired_bootstrap_percent(gained, possible, seed=7)
    assert np.isclose(interval.estimate, 100 * 7 / 27) and interval.boards == 8
    assert interval.low < interval.estimate < interval.high
    assert paired_bootstrap_percent(gained, possible, seed=7) == interval
    same = paired_bootstrap_percent([1, 1], [2, 2], seed=0)
    assert (same.estimate, same.low, same.high) == (50.0, 50.0, 50.0)
    assert paired_bootstrap_percent([], [], seed=0) == same.__class__(0.0, 0.0, 0.0, 0)
