"""Aggregation and the study's verdict rule on hand-made tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from specbench.aggregate import summarise, verdict


@pytest.mark.parametrize(
    ("values", "baseline", "expected"),
    [
        ([130, 131, 129], [126, 125, 127], "faster"),
        ([120, 121, 119], [126, 125, 127], "slower"),
        ([130, 124, 129], [126, 125, 127], "none"),  # one run below the best baseline run
        ([127, 128, 129], [126, 125, 127], "none"),  # a tie is not a win
        ([], [126], "none"),
        ([130], [], "none"),
    ],
)
def test_verdict_rule(values: list[float], baseline: list[float], expected: str) -> None:
    assert verdict(values, baseline) == expected


def _runs(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["task", "condition", "temperature", "repeat", "tokens_per_s", "draft_n",
                                        "draft_n_accepted"])
    frame["cell_file"] = [f"results/cells/{r[0]}/{r[1]}/t{r[2]}/r{r[3]}.json" for r in rows]
    return frame


def test_summary_speedups_acceptance_and_verdicts() -> None:
    runs = _runs([
        ("rewrite", "off", 0.0, 1, 100.0, 0, 0), ("rewrite", "off", 0.0, 2, 110.0, 0, 0),
        ("rewrite", "off", 0.0, 3, 120.0, 0, 0),
        ("rewrite", "ngram", 0.0, 1, 600.0, 900, 880), ("rewrite", "ngram", 0.0, 2, 650.0, 950, 940),
        ("rewrite", "ngram", 0.0, 3, 700.0, 1000, 1000),
        ("rewrite", "mtp", 0.0, 1, 115.0, 10, 0), ("rewrite", "mtp", 0.0, 2, 90.0, 10, 5),
        ("rewrite", "mtp", 0.0, 3, 105.0, 0, 0),
        ("essay", "off", 0.0, 1, 126.0, 0, 0), ("essay", "ngram", 0.0, 1, 120.0, 0, 0),
    ])
    summary = summarise(runs, "off").set_index(["task", "condition", "temperature"])
    ngram = summary.loc[("rewrite", "ngram", 0.0)]
    assert ngram.median_tokens_per_s == 650.0
    assert ngram.baseline_median_tokens_per_s == 110.0
    assert ngram.speedup_median == pytest.approx(650 / 110)
    assert ngram.speedup_min == pytest.approx(600 / 110) and ngram.speedup_max == pytest.approx(700 / 110)
    assert ngram.verdict == "faster"
    assert ngram.cell_files.count(";") == 2
    assert summary.loc[("rewrite", "mtp", 0.0)].verdict == "none"
    assert summary.loc[("rewrite", "off", 0.0)].verdict == "baseline"
    assert summary.loc[("essay", "ngram", 0.0)].verdict == "slower"


def test_summary_without_baseline_runs_has_no_speedup() -> None:
    runs = _runs([("essay", "ngram", 1.0, 1, 120.0, 0, 0)])
    row = summarise(runs, "off").iloc[0]
    assert math.isnan(row.speedup_median) and row.verdict == "none"
