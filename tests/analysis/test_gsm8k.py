"""GSM8K answer extraction and scoring on hand-written answers shaped like real model output."""

from __future__ import annotations

import pytest

from specbench.analysis.gsm8k import extract_final_numbers, normalise_number, numbers_equal, score_gsm8k

# GSM8K test rows 0, 1, 2 (ducks' eggs, robe bolts, house flip), references as reference_answer() gives them.
REFERENCES = ["18", "3", "70000"]


def _summary(result: dict) -> tuple[int, int, list[tuple[int, str | None, str]]]:
    """Correct, total, and (problem, extracted, reference) of every wrong answer."""
    wrong = [(p["problem"], p["extracted"], p["reference"]) for p in result["per_problem"] if not p["correct"]]
    return result["correct"], result["total"], wrong


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
    assert _summary(score_gsm8k(CLEAN, REFERENCES)) == (3, 3, [])


def test_extract_boxed_answers_without_answer_lines() -> None:
    assert extract_final_numbers(BOXED, 3) == ["18", "3", "70000"]
    result = score_gsm8k(BOXED, REFERENCES)
    assert (result["correct"], result["total"]) == (3, 3)


def test_wrong_third_answer_like_the_published_case() -> None:
    result = score_gsm8k(WRONG_THIRD, REFERENCES)
    assert result["correct"] == 2 and result["total"] == 3
    assert _summary(result) == (2, 3, [(3, "25000", "70000")])
    assert result["per_problem"][2] == {"problem": 3, "extracted": "25000", "reference": "70000", "correct": False}
    assert result["per_problem"][0]["correct"] and result["per_problem"][1]["correct"]


def test_truncated_mid_problem_three_scores_none_not_an_intermediate_number() -> None:
    assert extract_final_numbers(TRUNCATED, 3) == ["18", "3", None]
    result = score_gsm8k(TRUNCATED, REFERENCES)
    assert _summary(result) == (2, 3, [(3, None, "70000")])
    assert result["per_problem"][2]["extracted"] is None


def test_thousands_separators_dollars_and_markdown_bold() -> None:
    assert extract_final_numbers(CURRENCY, 3) == ["18", "3", "70000"]
    assert extract_final_numbers("**Answer 1:** 18\n**Answer 2:** 45\n", 2) == ["18", "45"]
    assert extract_final_numbers("**Answer 1**: 18\nAnswer 2: **45**\n", 2) == ["18", "45"]
    assert _summary(score_gsm8k(CURRENCY, REFERENCES)) == (3, 3, [])


def test_answer_line_rules() -> None:
    text = (
        "Answer 1: 16 - 3 - 4 = 9 eggs, 9 * 2 = 18\n"
        "Answer 2:\n3\n"  # the number on the next line
        "Answer 3: 70000\n"
        "Let me double-check problem 1... Answer 1: 18 (16 - 3 - 4 = 9 eggs at $2 each)\n"
        "Answer 4: 12\n"
    )  # beyond expected_count: ignored
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
    assert _summary(result) == (0, 3, [(1, "17", "18"), (2, None, "3"), (3, "25000", "70000")])
    assert [p["correct"] for p in result["per_problem"]] == [False, False, False]
    assert score_gsm8k("", []) == {"correct": 0, "total": 0, "per_problem": []}
