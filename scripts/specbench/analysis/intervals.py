"""The multiplier's 95 % confidence interval: a Welch t-interval on the log of the ratio of means (delta method:
the variance of log(mean) is CV^2 / n, with the runs' sample CV; Welch-Satterthwaite degrees of freedom), and how many
runs per side would make it +-5 %."""

from __future__ import annotations

import math

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
