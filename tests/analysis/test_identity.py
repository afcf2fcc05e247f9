"""Output identity per task and condition (analysis.identity) on hand-made token sequences: repeats against the
baseline's, the baseline's control, missing references, temperature 0 only."""

from __future__ import annotations

import pandas as pd

from specbench.analysis.cell_table import frame_of
from specbench.analysis.identity import identity
from support.token_rows import cell_file, drifting_tokens, seq, token_rows


def test_identity_columns_per_cell() -> None:
    keyed = frame_of(token_rows(drifting_tokens()), "off").set_index(["task", "condition", "repeat"])
    ngram2 = keyed.loc[("rewrite", "ngram", 2)]
    assert not ngram2.identical and ngram2.first_difference == 415
    assert (len(ngram2.tokens), ngram2.baseline_length) == (829, 898)
    assert ngram2.compared_repeat == 2
    assert keyed.loc[("rewrite", "ngram", 1)].identical
    assert pd.isna(keyed.loc[("rewrite", "ngram", 1)].first_difference)
    assert keyed.loc[("gsm8k", "ngram", 2)].first_difference == 0
    assert pd.isna(keyed.loc[("rewrite", "off", 1)].compared_repeat)  # the reference is never compared


def test_identity_control_compares_baseline_repeats_with_r1() -> None:
    cells = frame_of(token_rows(drifting_tokens()), "off")
    control = cells[(cells.condition == "off") & cells.compared_repeat.notna()].set_index(["task", "repeat"])
    assert sorted(control.index) == [("gsm8k", 2), ("rewrite", 2), ("rewrite", 3)]
    assert control.loc[("rewrite", 2)].identical
    assert control.loc[("rewrite", 3)].compared_repeat == 1
    assert not control.loc[("rewrite", 3)].identical and control.loc[("rewrite", 3)].first_difference == 512


def test_identity_missing_baseline_is_recorded_not_a_crash() -> None:
    keyed = frame_of(token_rows(drifting_tokens()), "off").set_index(["task", "condition", "repeat"])
    mtp4 = keyed.loc[("rewrite", "mtp", 4)]
    assert pd.isna(mtp4.identical) and pd.isna(mtp4.baseline_length) and len(mtp4.tokens) == 898
    assert mtp4.compared_repeat == 4
    control = keyed.loc[("gsm8k", "off", 2)]
    assert pd.isna(control.identical) and control.compared_repeat == 1


def test_identity_only_at_temperature_zero_and_other_baseline_name() -> None:
    hot = frame_of(token_rows({("essay", "off", 1): [1, 2], ("essay", "ngram", 1): [1, 3]}, temperature=1.0), "off")
    assert hot.compared_repeat.isna().all() and identity(hot, "off").empty
    cells = frame_of(token_rows({("essay", "none", 1): [1, 2], ("essay", "dflash", 1): [1, 2, 3]}), "none")
    table = identity(cells, "none")
    assert table.condition.tolist() == ["dflash"]
    assert table.iloc[0].first_differences == [2] and table.iloc[0].token_counts == [[3, 2]]
    empty = identity(frame_of([], "off"), "off")
    assert empty.empty and "identical" in empty.columns


def test_identity_summary() -> None:
    table = identity(frame_of(token_rows(drifting_tokens()), "off"), "off").set_index(["task", "condition"])
    ngram = table.loc[("rewrite", "ngram")]
    assert (ngram.repeats_compared, ngram.identical, ngram.missing) == (3, 2, 0)
    assert not ngram.all_identical and not ngram.control
    assert ngram.token_counts == [[829, 898]] and ngram.differing_repeats == [2] and ngram.first_differences == [415]
    assert ngram.cells == sorted(cell_file("rewrite", c, 0.0, r) for c in ("ngram", "off") for r in (1, 2, 3))
    mtp = table.loc[("rewrite", "mtp")]
    assert (mtp.repeats_compared, mtp.identical, mtp.missing) == (3, 3, 1)
    assert not mtp.all_identical  # a missing comparison is not evidence of identity
    control = table.loc[("rewrite", "off")]
    assert control.control and (control.repeats_compared, control.identical) == (2, 1)
    assert control.token_counts == [[898, 898]] and control.differing_repeats == [3]
    assert control.cells == [cell_file("rewrite", "off", 0.0, r) for r in (1, 2, 3)]
    assert table.loc[("gsm8k", "off")].repeats_compared == 0


def test_identity_summary_all_identical_and_several_differences() -> None:
    off = seq(50)
    tokens = {("essay", "off", r): list(off) for r in (1, 2, 3)}
    tokens |= {("essay", "ngram", 1): off[:40], ("essay", "ngram", 2): list(off), ("essay", "ngram", 3): [*off, 9]}
    table = identity(frame_of(token_rows(tokens), "off"), "off").set_index(["task", "condition"])
    assert table.loc[("essay", "off")].all_identical
    ngram = table.loc[("essay", "ngram")]
    assert ngram.token_counts == [[40, 50], [51, 50]] and ngram.differing_repeats == [1, 3]
    assert ngram.first_differences == [40, 50]
