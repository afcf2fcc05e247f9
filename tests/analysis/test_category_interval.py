"""A category's multiplier over its prompts and its two-level interval (specbench.analysis.category_interval): its
coverage by simulation, the estimate inside its interval on generated tables, a case worked by hand, and its agreement
with the summary, the acceptance table and the prompt spread."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from specbench.analysis.category_interval import (
    CATEGORY_COLUMNS,
    NONE,
    PROMPTS,
    REPEATS,
    category_multipliers,
    geometric_interval,
)
from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import tables

T_975_1 = float(stats.t.ppf(0.975, 1))  # 12.706...: the 95 % t quantile with 2 prompts (1 degree of freedom)


# --------------------------------------------------------------------------------------------------------------------
# Coverage by simulation


@pytest.mark.parametrize(
    ("tau", "prompts", "cv", "runs"),
    [(0.0, 2, 0.25, 2), (0.3, 5, 0.025, 3), (0.1, 10, 0.25, 3), (0.3, 2, 0.25, 3)],
)
def test_the_interval_covers_the_categorys_multiplier_95_percent_of_the_time(
    tau: float, prompts: int, cv: float, runs: int
) -> None:
    """Prompts' true log multipliers N(mu, tau^2), runs normal with CV ``cv``: the per-prompt ratios of means go
    through the module's own interval, which must cover exp(mu) 93-97 % of 2,000 draws."""
    rng = np.random.default_rng(20261206 + prompts)
    draws, truth = 2000, 1.5
    logs = math.log(truth) + tau * rng.standard_normal((draws, prompts))
    own = 100 * np.exp(logs)[..., None] * (1 + cv * rng.standard_normal((draws, prompts, runs)))
    base = 100 * (1 + cv * rng.standard_normal((draws, prompts, runs)))
    ratios = own.mean(axis=-1) / base.mean(axis=-1)
    intervals = [geometric_interval(row) for row in ratios]
    covered = sum(low <= truth <= high for _, low, high in intervals)
    assert all(low <= estimate <= high for estimate, low, high in intervals)
    assert 0.93 <= covered / draws <= 0.97


# --------------------------------------------------------------------------------------------------------------------
# Generated tables: one row per task x condition x temperature, every estimate inside its interval


@st.composite
def cells_frames(draw: st.DrawFn) -> pd.DataFrame:
    """A cells frame of 1-3 tasks of 1-3 prompts, some of the conditions off/ngram/mtp per temperature, 0-3 runs a
    prompt (a missing or failed run among them), drafted and accepted tokens (missing at times)."""
    rows = []
    speeds = st.floats(1.0, 500.0) | st.just(math.nan)
    for task in range(draw(st.integers(1, 3))):
        prompts = draw(st.integers(1, 3))
        for temperature in draw(st.sets(st.sampled_from((0.0, 1.0)), min_size=1)):
            for condition in draw(st.sets(st.sampled_from(("off", "ngram", "mtp")), min_size=1)):
                drafts = condition != "off" and draw(st.booleans())
                for prompt in range(prompts):
                    for repeat in range(draw(st.integers(0, 3))):
                        drafted = draw(st.integers(0, 400)) if drafts else 0
                        counted = draw(st.booleans()) or not drafts
                        rows.append(
                            {
                                "task": f"t{task}",
                                "prompt": f"p{prompt}" if prompts > 1 else "-",
                                "condition": condition,
                                "temperature": temperature,
                                "tokens_per_s": draw(speeds),
                                "draft_n": drafted if counted else pd.NA,
                                "draft_n_accepted": draw(st.integers(0, drafted)) if counted else pd.NA,
                                "cell_file": f"t{task}/{prompt}/{condition}/{temperature}/r{repeat}",
                            }
                        )
    frame = pd.DataFrame(rows, columns=["task", "prompt", "condition", "temperature", "tokens_per_s", "cell_file"])
    for column in ("draft_n", "draft_n_accepted"):
        frame[column] = pd.array([r[column] for r in rows], dtype="Int64")
    return frame


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells_frames())
def test_every_estimate_lies_inside_its_interval_one_row_per_task_condition_temperature(cells: pd.DataFrame) -> None:
    table = category_multipliers(cells, "off")
    assert list(table.columns) == CATEGORY_COLUMNS
    others = cells[cells.condition != "off"]
    expected = set(zip(others.task, others.condition, others.temperature, strict=True))
    assert len(table) == len(expected)
    assert set(zip(table.task, table.condition, table.temperature, strict=True)) == expected
    for row in table.itertuples():
        assert (row.basis == PROMPTS) == (row.prompts >= 2)
        assert not (row.basis == PROMPTS and math.isnan(row.low)) and not (row.basis == NONE and row.low == row.low)
        if not math.isnan(row.low):
            assert row.low <= row.multiplier <= row.high
        if not math.isnan(row.acceptance_low):
            assert row.acceptance_low <= row.acceptance <= row.acceptance_high
        assert math.isnan(row.between_prompts_share) or 0 <= row.between_prompts_share <= 1
        assert row.cells == sorted(row.cells)


# --------------------------------------------------------------------------------------------------------------------
# By hand: 2 prompts x 2 repeats


def _cell(prompt: str, condition: str, repeat: int, speed: float, drafted: int = 0, accepted: int = 0) -> dict:
    return {
        "task": "rewrite",
        "prompt": prompt,
        "condition": condition,
        "temperature": 0.0,
        "repeat": repeat,
        "tokens_per_s": speed,
        "draft_n": drafted,
        "draft_n_accepted": accepted,
        "cell_file": f"rewrite.{prompt}/{condition}/r{repeat}",
    }


HAND = [
    _cell("a", "off", 1, 100.0),
    _cell("a", "off", 2, 110.0),
    _cell("b", "off", 1, 50.0),
    _cell("b", "off", 2, 50.0),
    _cell("a", "ngram", 1, 200.0, 100, 80),
    _cell("a", "ngram", 2, 220.0, 100, 80),
    _cell("b", "ngram", 1, 150.0, 100, 70),
    _cell("b", "ngram", 2, 170.0, 300, 230),
    _cell("a", "noop", 1, 105.0),
    _cell("a", "noop", 2, 105.0),
    _cell("b", "noop", 1, 50.0),
    _cell("b", "noop", 2, 50.0),
]


def test_two_prompts_by_two_repeats_by_hand() -> None:
    table = category_multipliers(frame_of(HAND, "off"), "off").set_index("condition")
    row = table.loc["ngram"]
    # prompt a: 210 / 105 = 2; prompt b: 160 / 50 = 3.2
    la, lb = math.log(2.0), math.log(3.2)
    centre, half = (la + lb) / 2, T_975_1 * abs(la - lb) / 2  # s / sqrt(2) = |la - lb| / 2
    assert row.prompts == 2 and row.basis == PROMPTS and row.note == ""
    assert row.multiplier == pytest.approx(math.sqrt(6.4))
    assert row.low == pytest.approx(math.exp(centre - half))
    assert row.high == pytest.approx(math.exp(centre + half))
    # acceptance: 460 of 600 pooled; per prompt 160 / 200 = 0.8 and 300 / 400 = 0.75, SD 0.05 / sqrt(2)
    assert row.acceptance == pytest.approx(460 / 600)
    assert row.acceptance_low == pytest.approx(460 / 600 - T_975_1 * 0.05 / 2)
    assert row.acceptance_high == 1.0  # 0.767 + 0.318, clipped
    # the share between prompts: a prompt's pair of runs r1, r2 has a sum of squares (log r1 - log r2)^2 / 2, so the
    # pooled SD^2 over 2 prompts (2 degrees of freedom) is the mean of (log r1 - log r2)^2 / 2
    own = (math.log(1.1) ** 2 + math.log(17 / 15) ** 2) / 4
    base = (math.log(1.1) ** 2 + 0.0) / 4
    expected = own / 2 + base / 2  # 2 runs a side
    between = (la - lb) ** 2 / 2  # the variance of the two log multipliers
    assert row.between_prompts_share == pytest.approx((between - expected) / between)
    assert row.cells == sorted(c["cell_file"] for c in HAND if c["condition"] != "noop")
    noop = table.loc["noop"]  # 105 / 105 and 50 / 50: both exactly 1, drafting nothing
    assert (noop.multiplier, noop.low, noop.high) == (1.0, 1.0, 1.0)
    assert math.isnan(noop.acceptance) and math.isnan(noop.acceptance_low)
    assert math.isnan(noop.between_prompts_share)  # no spread between the prompts at all: unknown


# --------------------------------------------------------------------------------------------------------------------
# Agreement with the other tables


def test_it_agrees_with_the_summary_the_acceptance_table_and_the_prompt_spread() -> None:
    noise = (0.97, 1.0, 1.04)
    rows = []
    for task, gains in (("rewrite", {"a": 2.0, "b": 3.0, "c": 2.4}), ("essay", {"-": 1.3})):
        for prompt, gain in gains.items():
            for condition, factor in (("off", 1.0), ("ngram", gain)):
                for repeat, n in enumerate(noise, 1):
                    drafted = 0 if condition == "off" else 100 * repeat
                    accepted = drafted * (60 + 10 * repeat) // 100
                    cell = _cell(prompt, condition, repeat, 80 * factor * n, drafted, accepted)
                    rows.append(cell | {"task": task, "cell_file": f"{task}.{cell['cell_file']}"})
    rows.append(_cell("a", "mtp", 1, 150.0) | {"task": "rewrite", "cell_file": "rewrite.a/mtp/r1"})
    made = tables(frame_of(rows, "off"), "off")
    table = category_multipliers(made["cells"], "off").set_index(["task", "condition"])
    summary = made["summary"].set_index(["task", "condition"])
    acceptance = made["acceptance"].set_index(["task", "condition"])
    # one prompt: the category is that prompt, its interval the summary's
    essay = table.loc[("essay", "ngram")]
    assert essay.basis == REPEATS and essay.prompts == 1
    assert essay.multiplier == pytest.approx(summary.loc[("essay", "ngram"), "speedup"])
    assert essay.low == pytest.approx(summary.loc[("essay", "ngram"), "speedup_ci_low"])
    assert essay.high == pytest.approx(summary.loc[("essay", "ngram"), "speedup_ci_high"])
    # a prompt set: the geometric mean of the spread's prompt multipliers, its share from the spread's SDs
    rewrite = table.loc[("rewrite", "ngram")]
    spread = made["spread"].set_index(["task", "condition"]).loc[("rewrite", "ngram")]
    assert rewrite.multiplier == pytest.approx(math.exp(np.mean(np.log(spread.prompt_multipliers))))
    s2, e2 = spread.across_prompts_sd**2, spread.expected_sd**2
    assert rewrite.between_prompts_share == pytest.approx(max(0.0, s2 - e2) / s2)
    for key in (("essay", "ngram"), ("rewrite", "ngram")):
        assert table.loc[key, "acceptance"] == pytest.approx(acceptance.loc[key, "pooled_rate"])
    # a prompt set with one prompt measured: no interval, and why
    mtp = table.loc[("rewrite", "mtp")]
    assert mtp.basis == NONE and math.isnan(mtp.low) and "1 of the task's 3 prompts" in mtp.note
