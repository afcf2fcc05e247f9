"""The study's verdict rule (analysis.verdict_rule): every run above every baseline run, below, neither, or too few
runs for the rule to say."""

from __future__ import annotations

import pytest

from specbench.analysis.verdict_rule import verdict


@pytest.mark.parametrize(
    ("values", "baseline", "expected"),
    [
        ([130.0, 131.0, 129.0], [126.0, 125.0, 127.0], "faster"),
        ([120.0, 119.0, 118.0], [126.0, 125.0, 127.0], "slower"),
        ([130.0, 124.0, 129.0], [126.0, 125.0, 127.0], "none"),
        ([127.0, 128.0, 129.0], [126.0, 125.0, 127.0], "none"),  # a tie with the best baseline run is not faster
        ([], [126.0], "none"),
        ([130.0], [], "none"),
        # by chance, 1 run beats 1 half the time, 2 beat 2 one time in 6, 2 beat 3 one time in 10: too few runs
        ([77.9], [77.1], "too few runs"),
        ([130.0, 131.0], [126.0, 125.0], "too few runs"),
        ([130.0, 131.0], [126.0, 125.0, 127.0], "too few runs"),
        ([130.0, 131.0], [126.0, 125.0, 127.0, 124.0, 123.0], "faster"),  # 1 in 21
        ([120.0, 119.0, 118.0, 117.0], [126.0, 125.0], "too few runs"),  # 1 in 15
    ],
)
def test_verdict_rule(values: list[float], baseline: list[float], expected: str) -> None:
    assert verdict(values, baseline) == expected
