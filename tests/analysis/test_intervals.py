"""The intervals claims' sizes are judged with (analysis/intervals.py): a mean speed's and a pooled rate's, each
checked by simulation against a known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from specbench.analysis.intervals import (
    mean_interval,
    rate_difference_interval,
    rate_interval,
    ratio_interval,
    runs_for_precision,
)


def test_interval_of_a_mean_speed_by_hand_and_against_a_simulation() -> None:
    low, high = mean_interval(126.0, 0.02, 3)
    half = 4.302653 * 0.02 / math.sqrt(3)  # t(0.975, 2 df)
    assert (low, high) == pytest.approx((126.0 * math.exp(-half), 126.0 * math.exp(half)), rel=1e-5)
    assert all(math.isnan(v) for v in mean_interval(126.0, 0.02, 1))
    assert all(math.isnan(v) for v in mean_interval(126.0, math.nan, 3))
    rng = np.random.default_rng(11)
    hits, trials = 0, 4000
    for _ in range(trials):  # 3 runs of a true mean of 126 tok/s, 3 % noise
        runs = rng.normal(126.0, 126.0 * 0.03, 3)
        lo, hi = mean_interval(runs.mean(), runs.std(ddof=1) / runs.mean(), 3)
        hits += lo <= 126.0 <= hi
    assert 0.93 <= hits / trials <= 0.97


def test_interval_of_a_pooled_rate_by_hand_and_against_a_simulation() -> None:
    low, high = rate_interval(0.4, [0.3, 0.4, 0.5])
    half = 4.302653 * 0.1 / math.sqrt(3)
    assert (low, high) == pytest.approx((0.4 - half, 0.4 + half), rel=1e-5)
    assert rate_interval(0.98, [0.7, 0.98, 1.0])[1] == 1.0  # within 0-100 %
    assert rate_interval(0.5, [0.5, 0.5, 0.5]) == (0.5, 0.5)  # identical runs: the rate itself
    assert all(math.isnan(v) for v in rate_interval(0.5, [0.5]))
    rng = np.random.default_rng(12)
    hits, trials = 0, 4000
    for _ in range(trials):  # 3 runs of 1,000 drafted tokens, each run's own rate about a true 41 % (+-5 points)
        rates = np.clip(rng.normal(0.41, 0.05, 3), 0, 1)
        accepted = np.round(rates * 1000)
        lo, hi = rate_interval(accepted.sum() / 3000, list(accepted / 1000))
        hits += lo <= 0.41 <= hi
    assert 0.93 <= hits / trials <= 0.97


def test_interval_of_a_difference_of_rates_by_hand_and_against_a_simulation() -> None:
    low, high = rate_difference_interval(0.5, [0.4, 0.5, 0.6], 0.4, [0.4, 0.4, 0.4])
    half = 4.302653 * 0.1 / math.sqrt(3)  # one side varies: Welch's df is that side's, 2
    assert (low, high) == pytest.approx((0.1 - half, 0.1 + half), rel=1e-5)
    assert rate_difference_interval(0.5, [0.5, 0.5], 0.3, [0.3, 0.3]) == pytest.approx((0.2, 0.2))
    assert all(math.isnan(v) for v in rate_difference_interval(0.5, [0.5], 0.4, [0.4, 0.4]))
    assert rate_difference_interval(0.99, [0.9, 1.0], 0.01, [0.0, 0.1])[1] == 1.0  # within -1..1
    rng = np.random.default_rng(21)
    hits, trials = 0, 4000
    for _ in range(trials):  # 3 runs a side of 1,000 drafted tokens: a true 41 % at one load, 35 % at another
        a = np.round(np.clip(rng.normal(0.41, 0.05, 3), 0, 1) * 1000)
        b = np.round(np.clip(rng.normal(0.35, 0.02, 3), 0, 1) * 1000)
        lo, hi = rate_difference_interval(a.sum() / 3000, list(a / 1000), b.sum() / 3000, list(b / 1000))
        assert lo <= a.sum() / 3000 - b.sum() / 3000 <= hi  # never excludes its own estimate
        hits += lo <= 0.06 <= hi
    assert 0.93 <= hits / trials <= 0.97


def test_interval_of_a_ratio_against_a_simulation() -> None:
    # Known data: 3 runs a side with CV 5 % around a true ratio of 2. The Welch t-interval on the log ratio:
    low, high = ratio_interval(2.0, 0.05, 3, 0.05, 3)
    se = math.sqrt(2 * 0.05**2 / 3)  # df = 4 by Welch-Satterthwaite for equal CVs and n
    assert (low, high) == pytest.approx((2.0 * math.exp(-2.776445 * se), 2.0 * math.exp(2.776445 * se)), rel=1e-5)
    # Its coverage on simulated normal runs is close to 95 % (the delta method on 3 runs is a little liberal).
    rng = np.random.default_rng(7)
    hits, trials = 0, 2000
    for _ in range(trials):
        a, b = rng.normal(200, 10, 3), rng.normal(100, 5, 3)
        ratio = a.mean() / b.mean()
        lo, hi = ratio_interval(ratio, a.std(ddof=1) / a.mean(), 3, b.std(ddof=1) / b.mean(), 3)
        hits += lo <= 2.0 <= hi
    assert 0.90 <= hits / trials <= 0.98


def test_runs_needed_for_a_five_percent_interval() -> None:
    assert runs_for_precision(0.0, 0.0) == 2.0
    assert runs_for_precision(0.01, 0.01) == 2.0
    needed = runs_for_precision(0.05, 0.05)
    _, high = ratio_interval(1.0, 0.05, int(needed), 0.05, int(needed))
    assert high <= 1.05 + 1e-9 and ratio_interval(1.0, 0.05, int(needed) - 1, 0.05, int(needed) - 1)[1] > 1.05
    assert runs_for_precision(0.18, 0.18) > 50  # the noisiest CPU group seen: ~100 runs, not 3
    assert math.isnan(runs_for_precision(math.nan, 0.05))
