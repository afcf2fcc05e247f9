"""The study's verdict rule and its words: ``faster`` if every run beats every baseline run, ``slower`` if every
run is below every baseline run, otherwise ``none``; the baseline itself is ``baseline``. With n runs against m and
nothing different, "all n beat all m" happens by chance with probability 1 / C(n + m, n) (``verdict_chance``: 1/20 for
3 vs 3): the rule is an exact one-sided rank test at that level. Below ``VERDICT_LEVEL`` (1/20: 3 vs 3 is the fewest
equal runs that reach it) the rule's word would be chance as often as not, so the verdict is ``too few runs``
(docs/claims.md)."""

from __future__ import annotations

import math

VERDICT_LEVEL = 1 / 20  # the all-runs rule decides only where chance would give its word at most this often

TOO_FEW_RUNS = "too few runs"

# The verdict rule's words (the baseline's own row says "baseline")
FASTER, SLOWER, NO_VERDICT, BASELINE_WORD = "faster", "slower", "none", "baseline"

VERDICTS = (FASTER, SLOWER, NO_VERDICT, TOO_FEW_RUNS, BASELINE_WORD)


def verdict_chance(runs: int, baseline_runs: int) -> float:
    """How often "every run beats every baseline run" happens by chance with nothing different: 1 / C(n + m, n)."""
    return 1 / math.comb(runs + baseline_runs, runs)


def verdict(values: list[float], baseline: list[float]) -> str:
    """The study's rule: 'faster' if every run beats every baseline run, 'slower' if every one is below; 'too few
    runs' where that happens by chance more often than VERDICT_LEVEL (1 vs 1, 2 vs 2, 2 vs 3)."""
    if not values or not baseline:
        return NO_VERDICT
    if verdict_chance(len(values), len(baseline)) > VERDICT_LEVEL:
        return TOO_FEW_RUNS
    if min(values) > max(baseline):
        return FASTER
    if max(values) < min(baseline):
        return SLOWER
    return NO_VERDICT
