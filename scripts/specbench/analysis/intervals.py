"""The multiplier's 95 % confidence interval: a Welch t-interval on the log of the ratio of means (delta method:
the variance of log(mean) is CV^2 / n, with the runs' sample CV; Welch-Satterthwaite degrees of freedom), and how many
runs per side would make it +-5 %; the interval of a mean speed, of a pooled rate and of the difference of two pooled
rates, which claims' sizes are judged with."""

from __future__ import annotations

import math
import statistics

import pandas as pd
from scipy import stats

CONFIDENCE = 0.95


def _log_se(cv: float, n: int, base_cv: float, base_n: int) -> tuple[float, float]:
    """Standard error of log(mean_a / mean_b) and its Welch-Satterthwaite degrees of freedom."""
    a, b = cv * cv / n, base_cv * base_cv / base_n
    se = math.sqrt(a + b)
    df = (a + b) ** 2 / (a * a / (n - 1) + b * b / (base_n - 1)) if a + b > 0 else math.inf
    return se, df


def ratio_interval(ratio: float, cv: float, n: int, base_cv: float, base_n: float) -> tuple[float, float]:
    """The CONFIDENCE interval of a ratio of means (see the module docstring); NaN with fewer than 2 runs a side."""
    if not (ratio > 0) or pd.isna(base_n) or n < 2 or base_n < 2 or pd.isna(cv) or pd.isna(base_cv):
        return math.nan, math.nan
    se, df = _log_se(cv, n, base_cv, int(base_n))
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, df) * se if se > 0 else 0.0
    return ratio * math.exp(-half), ratio * math.exp(half)


def runs_for_precision(cv: float, base_cv: float, precision: float = 0.05, most: int = 1000) -> float:
    """Runs per side that make the interval of the ratio +-``precision`` given these CVs (NaN when unknown, infinity
    beyond ``most``): the fewest, found by bisection, since the interval only narrows as the runs grow."""
    if pd.isna(cv) or pd.isna(base_cv):
        return math.nan

    def precise(n: int) -> bool:
        se, df = _log_se(cv, n, base_cv, n)
        return se == 0 or stats.t.ppf(0.5 + CONFIDENCE / 2, df) * se <= math.log1p(precision)

    if most < 2 or not precise(most):
        return math.inf
    low, high = 2, most  # precise(high) holds
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if precise(middle) else (middle + 1, high)
    return float(low)


def mean_interval(mean: float, cv: float, n: int) -> tuple[float, float]:
    """The CONFIDENCE interval of a mean of positive runs (a speed): a t-interval on the log of the mean, whose
    variance is CV^2 / n, with n - 1 degrees of freedom; NaN with fewer than 2 runs."""
    if not (mean > 0) or pd.isna(n) or n < 2 or pd.isna(cv):
        return math.nan, math.nan
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * cv / math.sqrt(n)
    return mean * math.exp(-half), mean * math.exp(half)


def rate_interval(pooled: float, rates: list[float]) -> tuple[float, float]:
    """The CONFIDENCE interval of a rate pooled over runs (acceptance): the runs' own rates give its standard error,
    a t-interval with n - 1 degrees of freedom around the pooled rate, within 0-1; NaN with fewer than 2 rates."""
    rates = [r for r in rates if not pd.isna(r)]
    if pd.isna(pooled) or len(rates) < 2:
        return math.nan, math.nan
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, len(rates) - 1) * statistics.stdev(rates) / math.sqrt(len(rates))
    return max(pooled - half, 0.0), min(pooled + half, 1.0)


def rate_difference_interval(
    pooled: float, rates: list[float], base: float, base_rates: list[float]
) -> tuple[float, float]:
    """The CONFIDENCE interval of ``pooled - base``, two rates pooled over runs (acceptance at two loads): each side's
    runs give its standard error, a Welch t-interval around the difference, within -1..1; NaN with fewer than 2
    rates a side (runs identical on both sides: the difference itself)."""
    rates = [r for r in rates if not pd.isna(r)]
    base_rates = [r for r in base_rates if not pd.isna(r)]
    if pd.isna(pooled) or pd.isna(base) or len(rates) < 2 or len(base_rates) < 2:
        return math.nan, math.nan
    a = statistics.variance(rates) / len(rates)
    b = statistics.variance(base_rates) / len(base_rates)
    difference = pooled - base
    if a + b == 0:
        return difference, difference
    df = (a + b) ** 2 / (a * a / (len(rates) - 1) + b * b / (len(base_rates) - 1))
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, df) * math.sqrt(a + b)
    return max(difference - half, -1.0), min(difference + half, 1.0)
