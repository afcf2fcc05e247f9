"""Acceptance per task, condition and temperature (analysis.acceptance): pooled and per-cell rates, nothing
drafted, missing figures, tokens per target step."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from specbench.analysis.acceptance import acceptance, tokens_per_step
from specbench.analysis.cell_table import frame_of
from support.token_rows import cell_file

_ACCEPTANCE_ROWS = [
    ("rewrite", "off", 0.0, 1, 120.0, 898, 0, 0),
    ("rewrite", "off", 0.0, 2, 121.0, 898, 0, 0),
    ("rewrite", "ngram", 0.0, 1, 610.0, 898, 800, 760),
    ("rewrite", "ngram", 0.0, 2, 580.0, 829, 700, 640),
    ("rewrite", "ngram", 0.0, 3, 600.0, 898, 0, 0),  # ngram found nothing to draft in this repeat
    ("rewrite", "mtp", 1.0, 1, 150.0, 500, 400, 300),
    ("rewrite", "mtp", 1.0, 2, 140.0, None, None, None),  # timings without predicted_n or draft keys
]


def _acceptance_cells(rows: list[tuple]) -> pd.DataFrame:
    keys = ["task", "condition", "temperature", "repeat", "tokens_per_s", "predicted_n", "draft_n", "draft_n_accepted"]
    dicts = [dict(zip(keys, row, strict=True)) for row in rows]
    for row in dicts:
        row["acceptance_rate"] = row["draft_n_accepted"] / row["draft_n"] if row["draft_n"] else None
        row["cell_file"] = cell_file(row["task"], row["condition"], row["temperature"], row["repeat"])
    return frame_of(dicts, "off")


def test_acceptance_pooled_and_per_cell() -> None:
    table = acceptance(_acceptance_cells(_ACCEPTANCE_ROWS)).set_index(["task", "condition", "temperature"])
    ngram = table.loc[("rewrite", "ngram", 0.0)]
    assert (ngram.runs, ngram.drafted, ngram.accepted) == (3, 1500, 1400)
    assert ngram.pooled_rate == pytest.approx(1400 / 1500)
    assert ngram.min_rate == pytest.approx(640 / 700) and ngram.max_rate == pytest.approx(760 / 800)
    predicted = 898 + 829 + 898
    assert ngram.tokens_per_step == pytest.approx(predicted / (predicted - 1400))
    assert ngram.accepted_per_step == pytest.approx(1400 / (predicted - 1400))
    assert ngram.accepted_per_step == pytest.approx(ngram.tokens_per_step - 1)
    assert ngram.cells == [cell_file("rewrite", "ngram", 0.0, r) for r in (1, 2, 3)]


def test_acceptance_drafted_nothing_and_missing_figures() -> None:
    table = acceptance(_acceptance_cells(_ACCEPTANCE_ROWS)).set_index(["task", "condition", "temperature"])
    off = table.loc[("rewrite", "off", 0.0)]
    assert off.drafted == 0 and math.isnan(off.pooled_rate)
    assert math.isnan(off.min_rate) and math.isnan(off.max_rate)
    assert off.tokens_per_step == 1.0 and off.accepted_per_step == 0.0  # one token per step without drafting
    mtp = table.loc[("rewrite", "mtp", 1.0)]
    assert (mtp.drafted, mtp.accepted) == (400, 300)  # the cell without draft keys counts as zero
    assert mtp.tokens_per_step == pytest.approx(500 / 200)  # only the cell with predicted_n
    assert mtp.predicted == 500


def test_acceptance_never_divides_by_zero() -> None:
    odd = _acceptance_cells([("essay", "ngram", 0.0, 1, 10.0, 0, 0, 0), ("essay", "mtp", 0.0, 1, 10.0, 100, 120, 100)])
    table = acceptance(odd).set_index("condition")
    assert math.isnan(table.loc["ngram"].tokens_per_step) and math.isnan(table.loc["ngram"].pooled_rate)
    assert math.isnan(table.loc["mtp"].tokens_per_step)  # accepted == predicted: no target steps left
    empty = acceptance(frame_of([], "off"))
    assert empty.empty and "tokens_per_step" in empty.columns


@pytest.mark.parametrize(
    ("predicted", "accepted", "expected"),
    [
        (898, 0, 1.0),
        (898, 760, 898 / 138),
        (100, 100, math.nan),
        (0, 0, math.nan),
        (None, 5, math.nan),
        (100, None, math.nan),
        (float("nan"), 0, math.nan),
    ],
)
def test_tokens_per_step(predicted: float | None, accepted: float | None, expected: float) -> None:
    value = tokens_per_step(predicted, accepted)
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected) and value >= 1.0
