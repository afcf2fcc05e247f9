"""Output identity, GSM8K answer checking and acceptance aggregation on hand-made but realistic data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from specbench.measures import (
    acceptance_summary,
    compare_tokens,
    extract_final_numbers,
    identity_summary,
    identity_table,
    normalise_number,
    numbers_equal,
    score_gsm8k,
    tokens_per_step,
    with_tokens_per_step,
)

# GSM8K test rows 0, 1, 2 (ducks' eggs, robe bolts, house flip), references as reference_answer() gives them.
REFERENCES = ["18", "3", "70000"]

# --------------------------------------------------------------------------------------------------------------
# compare_tokens
# --------------------------------------------------------------------------------------------------------------

BASE = [151644, 872, 198, 2610, 525, 264, 10950, 17847, 13, 151645]


@pytest.mark.parametrize(
    ("a", "b", "identical", "first", "len_a", "len_b"),
    [
        (BASE, list(BASE), True, None, 10, 10),
        ([], [], True, None, 0, 0),
        ([], BASE, False, 0, 0, 10),  # empty vs non-empty: differs at 0
        ([198, *BASE[1:]], BASE, False, 0, 10, 10),  # diverges at the very first token
        ([*BASE[:6], 11, *BASE[7:]], BASE, False, 6, 10, 10),  # diverges later, same length
        (BASE[:7], BASE, False, 7, 7, 10),  # a prefix of b: the shorter length
        ([*BASE, 271, 40], BASE, False, 10, 12, 10),  # b a prefix of a
        ((1, 2, 3), [1, 2, 4, 5], False, 2, 3, 4),  # tuples work, first difference before the length difference
    ],
)
def test_compare_tokens(a: list[int], b: list[int], identical: bool, first: int | None, len_a: int,
                        len_b: int) -> None:
    result = compare_tokens(a, b)
    assert result == {"identical": identical, "first_difference": first, "length_a": len_a, "length_b": len_b}


# --------------------------------------------------------------------------------------------------------------
# identity_table / identity_summary
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


def test_identity_table_rows_and_columns() -> None:
    table = identity_table(_tokens())
    assert list(table.columns) == ["task", "condition", "repeat", "compared_with", "identical", "first_difference",
                                   "length", "baseline_length", "note"]
    keyed = table.set_index(["task", "condition", "repeat"])
    # 4 mtp + 3 ngram + 2 control rows for rewrite, 1 ngram + 1 control for gsm8k
    assert len(table) == 11
    ngram2 = keyed.loc[("rewrite", "ngram", 2)]
    assert not ngram2.identical and ngram2.first_difference == 415
    assert (ngram2.length, ngram2.baseline_length) == (829, 898)
    assert ngram2.compared_with == "off r2" and ngram2.note == ""
    assert keyed.loc[("rewrite", "ngram", 1)].identical
    assert pd.isna(keyed.loc[("rewrite", "ngram", 1)].first_difference)
    assert keyed.loc[("gsm8k", "ngram", 2)].first_difference == 0


def test_identity_table_control_rows_compare_baseline_repeats_with_r1() -> None:
    table = identity_table(_tokens())
    control = table[table.condition == "off (control: r1)"].set_index(["task", "repeat"])
    assert sorted(control.index) == [("gsm8k", 2), ("rewrite", 2), ("rewrite", 3)]
    assert control.loc[("rewrite", 2)].identical
    assert control.loc[("rewrite", 3)].compared_with == "off r1"
    assert not control.loc[("rewrite", 3)].identical and control.loc[("rewrite", 3)].first_difference == 512
    assert "off" not in set(table.condition)  # the baseline is never compared with itself under its own name


def test_identity_table_missing_baseline_is_a_note_not_a_crash() -> None:
    keyed = identity_table(_tokens()).set_index(["task", "condition", "repeat"])
    mtp4 = keyed.loc[("rewrite", "mtp", 4)]
    assert pd.isna(mtp4.identical) and pd.isna(mtp4.baseline_length) and mtp4.length == 898
    assert mtp4.note == "missing off r4 for rewrite"
    control = keyed.loc[("gsm8k", "off (control: r1)", 2)]
    assert pd.isna(control.identical) and control.note == "missing off r1 for gsm8k"


def test_identity_table_other_baseline_name_and_empty_input() -> None:
    table = identity_table({("essay", "none", 1): [1, 2], ("essay", "dflash", 1): [1, 2, 3]}, baseline="none")
    assert table.condition.tolist() == ["dflash"]
    assert table.iloc[0].first_difference == 2 and table.iloc[0].compared_with == "none r1"
    empty = identity_table({})
    assert empty.empty and "identical" in empty.columns
    assert identity_summary(empty).empty


def test_identity_summary() -> None:
    summary = identity_summary(identity_table(_tokens())).set_index(["task", "condition"])
    ngram = summary.loc[("rewrite", "ngram")]
    assert (ngram.repeats_compared, ngram.identical, ngram.missing) == (3, 2, 0)
    assert not ngram.all_identical
    assert ngram.token_counts == "829 vs 898" and ngram.differing_repeats == "2" and ngram.first_differences == "415"
    mtp = summary.loc[("rewrite", "mtp")]
    assert (mtp.repeats_compared, mtp.identical, mtp.missing) == (3, 3, 1)
    assert not mtp.all_identical  # a missing comparison is not evidence of identity
    control = summary.loc[("rewrite", "off (control: r1)")]
    assert (control.repeats_compared, control.identical) == (2, 1)
    assert control.token_counts == "898 vs 898" and control.differing_repeats == "3"
    assert summary.loc[("gsm8k", "off (control: r1)")].repeats_compared == 0


def test_identity_summary_all_identical_and_several_differences() -> None:
    off = _seq(50)
    tokens = {("essay", "off", r): list(off) for r in (1, 2, 3)}
    tokens |= {("essay", "ngram", 1): off[:40], ("essay", "ngram", 2): list(off), ("essay", "ngram", 3): [*off, 9]}
    summary = identity_summary(identity_table(tokens)).set_index(["task", "condition"])
    assert summary.loc[("essay", "off (control: r1)")].all_identical
    ngram = summary.loc[("essay", "ngram")]
    assert ngram.token_counts == "40 vs 50; 51 vs 50" and ngram.differing_repeats == "1; 3"
    assert ngram.first_differences == "40; 50"


# --------------------------------------------------------------------------------------------------------------
# GSM8K
# --------------------------------------------------------------------------------------------------------------

CLEAN = """Problem 1: Janet's ducks lay 16 eggs per day. She eats 3 for breakfast and bakes muffins with 4.
Eggs left to sell: 16 - 3 - 4 = 9.
She sells them at $2 each: 9 * 2 = 18 dollars.
Answer 1: 18

Problem 2: A robe takes 2 bolts of blue fiber and half that much white fiber.
White fiber: 2 / 2 = 1 bolt.
Total: 2 + 1 = 3 bolts.
Answer 2: 3

Problem 3: Josh buys a house for $80,000 and puts $50,000 into repairs.
Total cost: 80,000 + 50,000 = 130,000.
The value increases by 150%: 80,000 * 2.5 = 200,000.
Profit: 200,000 - 130,000 = 70,000.
Answer 3: 70000
"""

BOXED = """**Problem 1**
Janet has 16 - 3 - 4 = 9 eggs left, and 9 \\times 2 = 18.
\\boxed{18}

**Problem 2**
Blue fiber is 2 bolts, white fiber is half of that, 1 bolt, so 2 + 1 = 3 bolts.
\\boxed{3}

**Problem 3**
The new value is 80000 \\cdot 2.5 = 200000, so the profit is 200000 - 130000 = 70000.
$\\boxed{70{,}000}$ — the final answer is \\boxed{70000}
"""

WRONG_THIRD = """Problem 1
16 - 3 - 4 = 9 eggs, 9 x $2 = $18.
Answer 1: 18

Problem 2
2 bolts blue + 1 bolt white = 3 bolts.
Answer 2: 3

Problem 3
The repairs increased the value by 150% of $50,000, which is $75,000.
So the house is worth 50,000 + 75,000 = 125,000, and the profit is 125,000 - 80,000 - 50,000 + 30,000 = 25,000.
Answer 3: 25,000
"""

TRUNCATED = """Problem 1: 16 - 3 - 4 = 9 eggs to sell, at $2 each that is 9 * 2 = 18.
Answer 1: 18

Problem 2: The robe needs 2 bolts of blue and 2 / 2 = 1 bolt of white, so 3 bolts.
Answer 2: 3

Problem 3: First, the total investment is 80,000 + 50,000 = 130,000. Next, the value increased by 150%, so the"""

CURRENCY = """### Problem 1
Janet earns 9 * $2.00 = $18.00 per day.
**Answer 1:** $18.00

### Problem 2
Total bolts: 2 + 1 = 3.
**Answer 2:** 3 bolts

### Problem 3
Profit = $200,000 - $130,000 = $70,000.
**Answer 3:** $70,000.
"""


def test_extract_clean_answers() -> None:
    assert extract_final_numbers(CLEAN, 3) == ["18", "3", "70000"]
    assert score_gsm8k(CLEAN, REFERENCES)["summary"] == "3/3 correct"


def test_extract_boxed_answers_without_answer_lines() -> None:
    assert extract_final_numbers(BOXED, 3) == ["18", "3", "70000"]
    result = score_gsm8k(BOXED, REFERENCES)
    assert (result["correct"], result["total"]) == (3, 3)


def test_wrong_third_answer_like_the_published_case() -> None:
    result = score_gsm8k(WRONG_THIRD, REFERENCES)
    assert result["correct"] == 2 and result["total"] == 3
    assert result["summary"] == "2/3 correct, problem 3: 25000 vs 70000"
    assert result["per_problem"][2] == {"problem": 3, "extracted": "25000", "reference": "70000", "correct": False}
    assert result["per_problem"][0]["correct"] and result["per_problem"][1]["correct"]


def test_truncated_mid_problem_three_scores_none_not_an_intermediate_number() -> None:
    assert extract_final_numbers(TRUNCATED, 3) == ["18", "3", None]
    result = score_gsm8k(TRUNCATED, REFERENCES)
    assert result["summary"] == "2/3 correct, problem 3: none vs 70000"
    assert result["per_problem"][2]["extracted"] is None


def test_thousands_separators_dollars_and_markdown_bold() -> None:
    assert extract_final_numbers(CURRENCY, 3) == ["18", "3", "70000"]
    assert extract_final_numbers("**Answer 1:** 18\n**Answer 2:** 45\n", 2) == ["18", "45"]
    assert extract_final_numbers("**Answer 1**: 18\nAnswer 2: **45**\n", 2) == ["18", "45"]
    assert score_gsm8k(CURRENCY, REFERENCES)["summary"] == "3/3 correct"


def test_answer_line_rules() -> None:
    text = ("Answer 1: 16 - 3 - 4 = 9 eggs, 9 * 2 = 18\n"
            "Answer 2:\n3\n"  # the number on the next line
            "Answer 3: 70000\n"
            "Let me double-check problem 1... Answer 1: 18 (16 - 3 - 4 = 9 eggs at $2 each)\n"
            "Answer 4: 12\n")  # beyond expected_count: ignored
    assert extract_final_numbers(text, 3) == ["18", "3", "70000"]
    # the last Answer N line wins when the model corrects itself
    assert extract_final_numbers("Answer 1: 17\nWait, I forgot one egg.\nAnswer 1: 18\n", 1) == ["18"]


def test_labels_and_next_headings_are_never_taken_as_answers() -> None:
    # an empty 'Answer 1:' followed by the next heading: neither '2' of 'Problem 2' nor '1' of 'Answer 1'
    assert extract_final_numbers("Problem 1:\nAnswer 1:\nProblem 2: 3 bolts\nAnswer 2: 3", 2) == [None, "3"]
    assert extract_final_numbers("Problem 1\n9 * 2 = 18\nAnswer 1:\n\n**18**\nProblem 2\nAnswer 2: 3", 2) == ["18", "3"]


def test_fallback_forms_per_problem_segment() -> None:
    text = """Problem 1
16 - 3 - 4 = 9 and 9 * 2 = 18
#### 18

Problem 2
2 + 1 = 3, so the answer is 3 bolts.

Problem 3
200,000 - 130,000 = 70,000
**Answer:** $70,000
"""
    assert extract_final_numbers(text, 3) == ["18", "3", "70000"]


def test_last_number_only_for_a_finished_segment() -> None:
    text = """Problem 1
She sells 9 eggs at $2, making 18 dollars a day.

Problem 2
It takes 2 + 1 = 3 bolts in total.

Problem 3
He made a profit of 70,000 dollars."""
    # problems 1 and 2 are followed by the next heading; problem 3 could have been cut off
    assert extract_final_numbers(text, 3) == ["18", "3", None]
    assert extract_final_numbers(text, 3, complete=True) == ["18", "3", "70000"]


def test_answer_lines_without_problem_headings_segment_the_rest() -> None:
    text = "9 * 2 = 18\nAnswer 1: 18\n2 + 1 = 3\nAnswer 2: 3\n200000 - 130000 = 70000, so \\boxed{70000}"
    assert extract_final_numbers(text, 3) == ["18", "3", "70000"]
    # no explicit form after Answer 2: the last number is not trusted there
    assert extract_final_numbers("Answer 1: 18\nAnswer 2: 3\n80000 + 50000 = 130000", 3) == ["18", "3", None]


def test_unsegmented_text_uses_explicit_forms_only() -> None:
    assert extract_final_numbers("Step by step: 16 - 3 - 4 = 9, 9 * 2 = 18.\n#### 18", 1) == ["18"]
    assert extract_final_numbers("So 9 * 2 = 18 dollars.", 1) == [None]
    three = "eggs: \\boxed{18}; bolts: \\boxed{3}; profit: \\boxed{70000}"
    assert extract_final_numbers(three, 3) == ["18", "3", "70000"]
    # two boxes for three problems: cannot tell which problem lacks one
    assert extract_final_numbers("\\boxed{18} and \\boxed{3}", 3) == [None, None, None]
    assert extract_final_numbers("", 3) == [None, None, None]
    assert extract_final_numbers(CLEAN, 0) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("70,000", "70000"),
        ("$1,234.50", "1234.5"),
        ("12.50", "12.5"),
        ("18.00", "18"),
        ("18.", "18"),
        ("-3", "-3"),
        ("−3", "-3"),
        ("-$5", "-5"),
        ("1/2", "1/2"),
        ("\\frac{1}{2}", "1/2"),
        ("\\$18", "18"),
        ("0.0", "0"),
        ("H2O and no other number", None),
        ("none", None),
        ("5-3", "5"),
    ],
)
def test_normalise_number(text: str, expected: str | None) -> None:
    assert normalise_number(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("70000", "70000", True),
        ("70000.0", "70,000", True),
        ("12.5", "12.50", True),
        ("0.1", "0.1000000001", True),
        ("25000", "70000", False),
        ("18", "18.01", False),
        ("1/2", "0.5", True),
        ("-3", "3", False),
        (None, "18", False),
    ],
)
def test_numbers_equal(a: str | None, b: str, expected: bool) -> None:
    assert numbers_equal(a, b) is expected


def test_score_lists_every_wrong_problem() -> None:
    text = "Answer 1: 17\nAnswer 3: 25,000\n"
    result = score_gsm8k(text, REFERENCES)
    assert result["summary"] == "0/3 correct, problem 1: 17 vs 18, problem 2: none vs 3, problem 3: 25000 vs 70000"
    assert [p["correct"] for p in result["per_problem"]] == [False, False, False]
    assert score_gsm8k("", []) == {"correct": 0, "total": 0, "per_problem": [], "summary": "0/0 correct"}


# --------------------------------------------------------------------------------------------------------------
# Acceptance
# --------------------------------------------------------------------------------------------------------------


def _runs(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["task", "condition", "temperature", "repeat", "tokens_per_s", "predicted_n",
                                       "draft_n", "draft_n_accepted"])


RUNS = _runs([
    ("rewrite", "off", 0.0, 1, 120.0, 898, 0, 0),
    ("rewrite", "off", 0.0, 2, 121.0, 898, 0, 0),
    ("rewrite", "ngram", 0.0, 1, 610.0, 898, 800, 760),
    ("rewrite", "ngram", 0.0, 2, 580.0, 829, 700, 640),
    ("rewrite", "ngram", 0.0, 3, 600.0, 898, 0, 0),  # ngram found nothing to draft in this repeat
    ("rewrite", "mtp", 1.0, 1, 150.0, 500, 400, 300),
    ("rewrite", "mtp", 1.0, 2, 140.0, None, None, None),  # timings without predicted_n or draft keys
])


def test_acceptance_summary_pooled_and_per_cell() -> None:
    summary = acceptance_summary(RUNS).set_index(["task", "condition", "temperature"])
    ngram = summary.loc[("rewrite", "ngram", 0.0)]
    assert (ngram.runs, ngram.drafted, ngram.accepted) == (3, 1500, 1400)
    assert ngram.pooled_rate == pytest.approx(1400 / 1500)
    assert ngram.min_rate == pytest.approx(640 / 700) and ngram.max_rate == pytest.approx(760 / 800)
    predicted = 898 + 829 + 898
    assert ngram.tokens_per_step == pytest.approx(predicted / (predicted - 1400))
    assert ngram.accepted_per_step == pytest.approx(1400 / (predicted - 1400))
    assert ngram.accepted_per_step == pytest.approx(ngram.tokens_per_step - 1)
    assert ngram.note == ""


def test_acceptance_summary_drafted_nothing_and_missing_figures() -> None:
    summary = acceptance_summary(RUNS).set_index(["task", "condition", "temperature"])
    off = summary.loc[("rewrite", "off", 0.0)]
    assert off.drafted == 0 and math.isnan(off.pooled_rate) and off.note == "drafted nothing"
    assert math.isnan(off.min_rate) and math.isnan(off.max_rate)
    assert off.tokens_per_step == 1.0 and off.accepted_per_step == 0.0  # one token per step without drafting
    mtp = summary.loc[("rewrite", "mtp", 1.0)]
    assert (mtp.drafted, mtp.accepted) == (400, 300)  # the cell without draft keys counts as zero
    assert mtp.tokens_per_step == pytest.approx(500 / 200)  # only the cell with predicted_n
    assert mtp.predicted == 500


def test_acceptance_summary_never_divides_by_zero() -> None:
    odd = _runs([("essay", "ngram", 0.0, 1, 10.0, 0, 0, 0), ("essay", "mtp", 0.0, 1, 10.0, 100, 120, 100)])
    summary = acceptance_summary(odd).set_index("condition")
    assert math.isnan(summary.loc["ngram"].tokens_per_step) and math.isnan(summary.loc["ngram"].pooled_rate)
    assert math.isnan(summary.loc["mtp"].tokens_per_step)  # accepted == predicted: no target steps left
    empty = acceptance_summary(RUNS.iloc[0:0])
    assert empty.empty and "tokens_per_step" in empty.columns


def test_acceptance_summary_without_predicted_n_column() -> None:
    runs = RUNS.drop(columns=["predicted_n"])
    summary = acceptance_summary(runs).set_index(["task", "condition", "temperature"])
    assert summary.loc[("rewrite", "ngram", 0.0)].drafted == 1500
    assert summary.tokens_per_step.isna().all()


@pytest.mark.parametrize(
    ("predicted", "accepted", "expected"),
    [(898, 0, 1.0), (898, 760, 898 / 138), (100, 100, math.nan), (0, 0, math.nan), (None, 5, math.nan),
     (100, None, math.nan), (float("nan"), 0, math.nan)],
)
def test_tokens_per_step(predicted: float | None, accepted: float | None, expected: float) -> None:
    value = tokens_per_step(predicted, accepted)
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected) and value >= 1.0


def test_with_tokens_per_step_adds_a_column_per_cell() -> None:
    frame = with_tokens_per_step(RUNS)
    assert len(frame) == len(RUNS) and "tokens_per_step" not in RUNS.columns
    values = frame.tokens_per_step.tolist()
    assert values[0] == 1.0
    assert values[2] == pytest.approx(898 / 138)
    assert values[3] == pytest.approx(829 / 189)
    assert math.isnan(values[6])
