"""The per-cell table and its summaries (identity, acceptance, speeds, multipliers, verdicts) on hand-made data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from specbench.analysis.acceptance import acceptance, tokens_per_step
from specbench.analysis.cell_table import csv_copy, frame_of, read_table, write_table
from specbench.analysis.identity import identity
from specbench.analysis.intervals import ratio_interval, runs_for_precision
from specbench.analysis.speed import cell_multipliers, summary
from specbench.analysis.summaries import tables
from specbench.analysis.verdict import verdict
from specbench.core.records.explanations import first_difference

BASE = [151644, 872, 198, 2610, 525, 264, 10950, 17847, 13, 151645]


def _file(task: str, condition: str, temperature: float, repeat: int) -> str:
    return f"results/cells/{task}/{condition}/t{temperature}/r{repeat}.json"


def _rows(tokens: dict[tuple[str, str, int], list[int]], temperature: float = 0.0) -> list[dict]:
    return [
        {
            "task": t,
            "condition": c,
            "temperature": temperature,
            "repeat": r,
            "tokens": seq,
            "predicted_n": len(seq),
            "tokens_per_s": 100.0,
            "cell_file": _file(t, c, temperature, r),
        }
        for (t, c, r), seq in tokens.items()
    ]


# --------------------------------------------------------------------------------------------------------------
# first_difference
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "first"),
    [
        (BASE, list(BASE), None),
        ([], [], None),
        ([], BASE, 0),  # empty vs non-empty: differs at 0
        ([198, *BASE[1:]], BASE, 0),  # diverges at the very first token
        ([*BASE[:6], 11, *BASE[7:]], BASE, 6),  # diverges later, same length
        (BASE[:7], BASE, 7),  # a prefix of b: the shorter length
        ([*BASE, 271, 40], BASE, 10),  # b a prefix of a
        ((1, 2, 3), [1, 2, 4, 5], 2),  # tuples work, first difference before the length difference
    ],
)
def test_first_difference(a: list[int], b: list[int], first: int | None) -> None:
    assert first_difference(a, b) == first


# --------------------------------------------------------------------------------------------------------------
# identity
# --------------------------------------------------------------------------------------------------------------


def _seq(length: int, start: int = 1000) -> list[int]:
    return list(range(start, start + length))


def _tokens() -> dict[tuple[str, str, int], list[int]]:
    off = _seq(898)
    off3 = [*off[:512], 7, *off[513:]]  # the baseline itself drifts at token 512 in r3
    return {
        ("rewrite", "off", 1): off,
        ("rewrite", "off", 2): list(off),
        ("rewrite", "off", 3): off3,
        ("rewrite", "ngram", 1): list(off),
        ("rewrite", "ngram", 2): [*off[:415], *_seq(414, 50_000)],  # diverges at 415, ends at 829 tokens
        ("rewrite", "ngram", 3): list(off3),  # same repeat, same tokens: identical to off r3, not to off r1
        ("rewrite", "mtp", 1): list(off),
        ("rewrite", "mtp", 2): list(off),
        ("rewrite", "mtp", 3): list(off3),
        ("rewrite", "mtp", 4): list(off),  # a repeat the baseline lacks
        ("gsm8k", "off", 2): _seq(300),  # baseline r1 missing: the control has nothing to compare with
        ("gsm8k", "ngram", 2): [5, *_seq(299, 1001)],  # diverges at token 0
    }


def test_identity_columns_per_cell() -> None:
    keyed = frame_of(_rows(_tokens()), "off").set_index(["task", "condition", "repeat"])
    ngram2 = keyed.loc[("rewrite", "ngram", 2)]
    assert not ngram2.identical and ngram2.first_difference == 415
    assert (len(ngram2.tokens), ngram2.baseline_length) == (829, 898)
    assert ngram2.compared_repeat == 2
    assert keyed.loc[("rewrite", "ngram", 1)].identical
    assert pd.isna(keyed.loc[("rewrite", "ngram", 1)].first_difference)
    assert keyed.loc[("gsm8k", "ngram", 2)].first_difference == 0
    assert pd.isna(keyed.loc[("rewrite", "off", 1)].compared_repeat)  # the reference is never compared


def test_identity_control_compares_baseline_repeats_with_r1() -> None:
    cells = frame_of(_rows(_tokens()), "off")
    control = cells[(cells.condition == "off") & cells.compared_repeat.notna()].set_index(["task", "repeat"])
    assert sorted(control.index) == [("gsm8k", 2), ("rewrite", 2), ("rewrite", 3)]
    assert control.loc[("rewrite", 2)].identical
    assert control.loc[("rewrite", 3)].compared_repeat == 1
    assert not control.loc[("rewrite", 3)].identical and control.loc[("rewrite", 3)].first_difference == 512


def test_identity_missing_baseline_is_recorded_not_a_crash() -> None:
    keyed = frame_of(_rows(_tokens()), "off").set_index(["task", "condition", "repeat"])
    mtp4 = keyed.loc[("rewrite", "mtp", 4)]
    assert pd.isna(mtp4.identical) and pd.isna(mtp4.baseline_length) and len(mtp4.tokens) == 898
    assert mtp4.compared_repeat == 4
    control = keyed.loc[("gsm8k", "off", 2)]
    assert pd.isna(control.identical) and control.compared_repeat == 1


def test_identity_only_at_temperature_zero_and_other_baseline_name() -> None:
    hot = frame_of(_rows({("essay", "off", 1): [1, 2], ("essay", "ngram", 1): [1, 3]}, temperature=1.0), "off")
    assert hot.compared_repeat.isna().all() and identity(hot, "off").empty
    cells = frame_of(_rows({("essay", "none", 1): [1, 2], ("essay", "dflash", 1): [1, 2, 3]}), "none")
    table = identity(cells, "none")
    assert table.condition.tolist() == ["dflash"]
    assert table.iloc[0].first_differences == [2] and table.iloc[0].token_counts == [[3, 2]]
    empty = identity(frame_of([], "off"), "off")
    assert empty.empty and "identical" in empty.columns


def test_identity_summary() -> None:
    table = identity(frame_of(_rows(_tokens()), "off"), "off").set_index(["task", "condition"])
    ngram = table.loc[("rewrite", "ngram")]
    assert (ngram.repeats_compared, ngram.identical, ngram.missing) == (3, 2, 0)
    assert not ngram.all_identical and not ngram.control
    assert ngram.token_counts == [[829, 898]] and ngram.differing_repeats == [2] and ngram.first_differences == [415]
    assert ngram.cells == sorted(_file("rewrite", c, 0.0, r) for c in ("ngram", "off") for r in (1, 2, 3))
    mtp = table.loc[("rewrite", "mtp")]
    assert (mtp.repeats_compared, mtp.identical, mtp.missing) == (3, 3, 1)
    assert not mtp.all_identical  # a missing comparison is not evidence of identity
    control = table.loc[("rewrite", "off")]
    assert control.control and (control.repeats_compared, control.identical) == (2, 1)
    assert control.token_counts == [[898, 898]] and control.differing_repeats == [3]
    assert control.cells == [_file("rewrite", "off", 0.0, r) for r in (1, 2, 3)]
    assert table.loc[("gsm8k", "off")].repeats_compared == 0


def test_identity_summary_all_identical_and_several_differences() -> None:
    off = _seq(50)
    tokens = {("essay", "off", r): list(off) for r in (1, 2, 3)}
    tokens |= {("essay", "ngram", 1): off[:40], ("essay", "ngram", 2): list(off), ("essay", "ngram", 3): [*off, 9]}
    table = identity(frame_of(_rows(tokens), "off"), "off").set_index(["task", "condition"])
    assert table.loc[("essay", "off")].all_identical
    ngram = table.loc[("essay", "ngram")]
    assert ngram.token_counts == [[40, 50], [51, 50]] and ngram.differing_repeats == [1, 3]
    assert ngram.first_differences == [40, 50]


# --------------------------------------------------------------------------------------------------------------
# Acceptance
# --------------------------------------------------------------------------------------------------------------

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
        row["cell_file"] = _file(row["task"], row["condition"], row["temperature"], row["repeat"])
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
    assert ngram.cells == [_file("rewrite", "ngram", 0.0, r) for r in (1, 2, 3)]


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


# --------------------------------------------------------------------------------------------------------------
# Speeds, multipliers, verdicts
# --------------------------------------------------------------------------------------------------------------


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


def _speed_cells(speeds: dict[tuple[str, str, float], list[float]]) -> pd.DataFrame:
    rows = [
        {
            "task": t,
            "condition": c,
            "temperature": temp,
            "repeat": r,
            "tokens_per_s": v,
            "cell_file": _file(t, c, temp, r),
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
    assert ngram.cells == sorted(_file("rewrite", c, 0.0, r) for c in ("ngram", "off") for r in (1, 2, 3))
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
    assert off.cells == [_file("rewrite", "off", 0.0, r) for r in (1, 2, 3)]


def test_summary_without_baseline_runs_has_no_multiplier() -> None:
    row = (
        summary(_speed_cells(SPEEDS), "off").set_index(["task", "condition", "temperature"]).loc[("essay", "mtp", 1.0)]
    )
    assert math.isnan(row.speedup_median) and math.isnan(row.baseline_median_tokens_per_s)
    assert row.verdict == "none" and row.baseline_tokens_per_s_values == []
    assert math.isnan(row.speedup_ci_low) and math.isnan(row.runs_for_5pct)
    assert row.cells == [_file("essay", "mtp", 1.0, r) for r in (1, 2, 3)]


def test_cell_multipliers_share_the_summary_definition() -> None:
    cells = _speed_cells(SPEEDS)
    per_cell = cell_multipliers(cells, "off")
    assert "off" not in set(per_cell.condition) and len(per_cell) == 12
    ngram = per_cell[per_cell.condition == "ngram"].multiplier.tolist()
    assert ngram == pytest.approx([780 / 126, 790 / 126, 800 / 126])
    row = summary(cells, "off").set_index(["task", "condition", "temperature"]).loc[("rewrite", "ngram", 0.0)]
    assert per_cell[per_cell.condition == "ngram"].multiplier.median() == pytest.approx(row.speedup_median)
    assert per_cell[per_cell.condition == "mtp"].query("temperature == 1.0").multiplier.isna().all()


def test_parquet_round_trip_keeps_types_and_csv_copy_keeps_lists_readable(tmp_path: Path) -> None:
    rows = _rows(_tokens())
    rows[0] |= {
        "gsm8k_correct": 2,
        "gsm8k_total": 3,
        "started_at": "2026-11-30T06:00:00.123+00:00",
        "gsm8k_wrong": [{"problem": 3, "extracted": "25000", "reference": "70000"}],
        "rejected_reasons": ["foreign GPU process 4242"],
    }
    cells = frame_of(rows, "off")
    write_table(cells, tmp_path / "cells.parquet")
    again = read_table(tmp_path / "cells.parquet")
    pd.testing.assert_frame_equal(again, cells)
    assert str(again.repeat.dtype) == "Int64" and str(again.identical.dtype) == "boolean"
    assert again.temperature.dtype == float and str(again.started_at.dtype) == "datetime64[ms, UTC]"
    first = again[again.gsm8k_correct.notna()].iloc[0]
    assert first.gsm8k_wrong == [{"problem": 3, "extracted": "25000", "reference": "70000"}]
    assert isinstance(first.tokens, list) and all(type(t) is int for t in first.tokens)
    csv = csv_copy(again)
    assert not {"tokens", "chunk_ms", "chunk_tokens"} & set(csv.columns)
    assert (
        csv[csv.gsm8k_correct.notna()].iloc[0].gsm8k_wrong == '[{"problem": 3, "extracted": "25000", '
        '"reference": "70000"}]'
    )
    assert set(tables(again, "off")) == {
        "cells",
        "summary",
        "acceptance",
        "positions",
        "latency",
        "identity",
        "prompts",
        "spread",
        "deciding",
        "thesis",
    }


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
