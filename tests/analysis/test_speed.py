"""Speeds and multipliers per task, condition and temperature (analysis.speed): the summary's multipliers,
verdicts and cells, a missing baseline, and the per-cell multipliers of the figure."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from specbench.analysis.cell_table import frame_of
from specbench.analysis.speed import cell_multipliers, summary
from support.token_rows import cell_file


def _speed_cells(speeds: dict[tuple[str, str, float], list[float]]) -> pd.DataFrame:
    rows = [
        {
            "task": t,
            "condition": c,
            "temperature": temp,
            "repeat": r,
            "tokens_per_s": v,
            "cell_file": cell_file(t, c, temp, r),
        }
        for (t, c, temp), values in speeds.items()
        for r, v in enumerate(values, start=1)
    ]
    return frame_of(rows, "off")


SPEEDS = {
    ("rewrite", "off", 0.0): [126.0, 125.0, 127.0],
    ("rewrite", "ngram", 0.0): [780.0, 790.0, 800.0],
    ("rewrite", "mtp", 0.0): [120.0, 130.0, 126.5],
    ("essay", "off", 0.0): [126.0, 120.0, 132.0],
    ("essay", "dflash", 0.0): [80.0, 83.0, 86.0],
    ("essay", "mtp", 1.0): [131.0, 131.0, 134.0],  # no baseline at temperature 1.0
}


def test_summary_multipliers_verdicts_and_cells() -> None:
    table = summary(_speed_cells(SPEEDS), "off").set_index(["task", "condition", "temperature"])
    ngram = table.loc[("rewrite", "ngram", 0.0)]
    assert ngram.runs == 3 and ngram.median_tokens_per_s == 790.0 and ngram.mean_tokens_per_s == 790.0
    assert ngram.speedup_median == pytest.approx(790 / 126) and ngram.speedup == pytest.approx(790 / 126)
    assert ngram.speedup_min == pytest.approx(780 / 126) and ngram.speedup_max == pytest.approx(800 / 126)
    assert ngram.verdict == "faster"
    assert ngram.tokens_per_s_values == [780.0, 790.0, 800.0]
    assert ngram.baseline_tokens_per_s_values == [125.0, 126.0, 127.0]
    assert ngram.cells == sorted(cell_file("rewrite", c, 0.0, r) for c in ("ngram", "off") for r in (1, 2, 3))
    assert ngram.cv == pytest.approx(pd.Series([780.0, 790.0, 800.0]).std() / 790.0)
    assert table.loc[("rewrite", "mtp", 0.0)].verdict == "none"
    dflash = table.loc[("essay", "dflash", 0.0)]
    assert dflash.verdict == "slower" and dflash.speedup == pytest.approx(83 / 126)
    assert dflash.baseline_spread == pytest.approx(12 / 126) and dflash.noisy  # off ran 120..132
    assert not ngram.noisy and ngram.baseline_spread == pytest.approx(2 / 126)
    assert ngram.verdict_chance == pytest.approx(1 / 20)
    assert ngram.speedup_ci_low < ngram.speedup < ngram.speedup_ci_high
    off = table.loc[("rewrite", "off", 0.0)]
    assert off.verdict == "baseline" and off.speedup_median == 1.0
    assert off.cells == [cell_file("rewrite", "off", 0.0, r) for r in (1, 2, 3)]


def test_summary_without_baseline_runs_has_no_multiplier() -> None:
    row = (
        summary(_speed_cells(SPEEDS), "off").set_index(["task", "condition", "temperature"]).loc[("essay", "mtp", 1.0)]
    )
    assert math.isnan(row.speedup_median) and math.isnan(row.baseline_median_tokens_per_s)
    assert row.verdict == "none" and row.baseline_tokens_per_s_values == []
    assert math.isnan(row.speedup_ci_low) and math.isnan(row.runs_for_5pct)
    assert row.cells == [cell_file("essay", "mtp", 1.0, r) for r in (1, 2, 3)]


def test_cell_multipliers_share_the_summary_definition() -> None:
    cells = _speed_cells(SPEEDS)
    per_cell = cell_multipliers(cells, "off")
    assert "off" not in set(per_cell.condition) and len(per_cell) == 12
    ngram = per_cell[per_cell.condition == "ngram"].multiplier.tolist()
    assert ngram == pytest.approx([780 / 126, 790 / 126, 800 / 126])
    row = summary(cells, "off").set_index(["task", "condition", "temperature"]).loc[("rewrite", "ngram", 0.0)]
    assert per_cell[per_cell.condition == "ngram"].multiplier.median() == pytest.approx(row.speedup_median)
    assert per_cell[per_cell.condition == "mtp"].query("temperature == 1.0").multiplier.isna().all()
