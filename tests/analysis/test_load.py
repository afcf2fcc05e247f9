"""The load table (analysis.load) and a point's request columns (analysis.load_requests), on generated points: the
multiplier at each N is the per-user speed over the baseline's at the same N, its interval holds it, N* is the first
N whose interval lies below 1.0x, identity counts every temperature-0 request against the one-request control; and by
simulation against a known truth, N* is found where the true multiplier falls below 1.0x and not before it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specbench.analysis.cell_table import one_request
from specbench.analysis.load import ABOVE, BELOW, NOT_SEPARATED, against_one, load_table
from specbench.analysis.load_requests import aggregate_rate, all_in_flight, load_columns
from specbench.analysis.verdict_rule import BASELINE_WORD
from support.load_points import point_rows

LEVELS = [1, 2, 4, 8]


SPEED = st.floats(5.0, 500.0)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    levels=st.lists(st.sampled_from(LEVELS), min_size=1, max_size=4, unique=True).map(lambda v: sorted({1, *v})),
    repeats=st.integers(2, 4),
)
def test_each_point_is_divided_by_the_baseline_at_the_same_load(
    data: st.DataObject, levels: list[int], repeats: int
) -> None:
    speeds = {
        (condition, n): [data.draw(st.lists(SPEED, min_size=n, max_size=n)) for _ in range(repeats)]
        for condition in ("off", "mtp")
        for n in levels
    }
    table = load_table(point_rows(speeds), "off")
    assert sorted(zip(table.condition, table.concurrency, strict=True)) == sorted(speeds)
    for row in table.itertuples(index=False):
        per_user = np.mean([np.mean(r) for r in speeds[row.condition, row.concurrency]])
        base = np.mean([np.mean(r) for r in speeds["off", row.concurrency]])
        assert math.isclose(row.per_user_tokens_per_s, per_user) and math.isclose(row.speedup, per_user / base)
        assert row.speedup_ci_low <= row.speedup * (1 + 1e-9) and row.speedup <= row.speedup_ci_high * (1 + 1e-9)
        assert row.requests == repeats * row.concurrency
        if row.condition == "off":
            assert pd.isna(row.acceptance_rate) and row.tokens_per_step == 1.0
            assert row.against_one == BASELINE_WORD and pd.isna(row.n_star)
            continue
        assert row.against_one == against_one(row.speedup_ci_low, row.speedup_ci_high)
        assert math.isclose(row.acceptance_rate, 0.7) and math.isclose(row.tokens_per_step, 48 / 41)
    mtp = table[table.condition == "mtp"]
    below = sorted(mtp[mtp.against_one == BELOW].concurrency)
    assert all((pd.isna(n) and not below) or n == below[0] for n in mtp.n_star)


def test_the_study_tables_keep_the_one_request_cells_and_the_load_table_every_point() -> None:
    cells = point_rows({("off", n): [[100.0] * n] * 2 for n in (1, 2)} | {("mtp", n): [[90.0] * n] * 2 for n in (1, 2)})
    assert sorted(one_request(cells).concurrency) == [1] * 4
    assert len(load_table(cells, "off")) == 4
    plain = cells.assign(concurrency=pd.array([None] * len(cells), dtype="Int64"))
    assert load_table(plain, "off").empty


def test_every_greedy_request_is_compared_with_the_one_request_control() -> None:
    control, other = [1, 2, 3], [1, 2, 9]
    tokens = {
        ("off", 1, 1): [control],
        ("off", 1, 2): [control],
        ("mtp", 2, 1): [control, other],
        ("mtp", 2, 2): [control, control],
    }
    speeds = {
        ("off", 1): [[100.0]] * 2,
        ("mtp", 1): [[90.0]] * 2,
        ("off", 2): [[60.0] * 2] * 2,
        ("mtp", 2): [[50.0] * 2] * 2,
    }
    table = load_table(point_rows(speeds, tokens), "off").set_index(["condition", "concurrency"])
    assert (table.loc[("mtp", 2), "requests_compared"], table.loc[("mtp", 2), "requests_identical"]) == (4, 3)
    assert (table.loc[("off", 2), "requests_compared"], table.loc[("off", 2), "requests_identical"]) == (4, 4)


def test_n_star_is_found_where_the_true_multiplier_falls_below_one_and_not_before() -> None:
    """Simulated: true multipliers 1.5, 1.1, 0.7, 0.5 at N = 1, 2, 4, 8, each run's speed lognormal with a 3 % CV, 3
    repeats a side. N* is 4 in most runs; an N* of 2 or 1 (an interval below 1.0x where the truth is above) is as rare
    as the interval's 2.5 % tail allows."""
    rng = np.random.default_rng(7)
    truth = dict(zip(LEVELS, (1.5, 1.1, 0.7, 0.5), strict=True))
    found = []
    for _ in range(200):
        speeds = {}
        for n in LEVELS:
            for condition, mean in (("off", 100.0), ("mtp", 100.0 * truth[n])):
                speeds[condition, n] = [list(mean * rng.lognormal(0.0, 0.03, size=n)) for _ in range(3)]
        table = load_table(point_rows(speeds), "off")
        found.append(table[table.condition == "mtp"].n_star.iloc[0])
    found = pd.array(found, dtype="Int64")
    assert (found == 4).mean() >= 0.9
    assert (found < 4).mean() <= 0.05


@given(arrivals=st.lists(st.lists(st.floats(0.0, 100.0), min_size=1, max_size=20).map(sorted), min_size=1, max_size=6))
def test_the_all_in_flight_window_lies_inside_every_requests_generation(arrivals: list[list[float]]) -> None:
    window = all_in_flight(arrivals)
    if window is None:
        assert max(a[0] for a in arrivals) >= min(a[-1] for a in arrivals)
        assert aggregate_rate(arrivals, window) is None
        return
    start, end = window
    assert all(a[0] <= start < end <= a[-1] for a in arrivals)
    inside = sum(start < at <= end for a in arrivals for at in a)
    assert math.isclose(aggregate_rate(arrivals, window), inside / (end - start))


def test_a_points_requests_are_placed_on_one_clock() -> None:
    def request(sent: float, chunk_ms: list[float], slot: int) -> dict:
        timings = {
            "predicted_per_second": 50.0,
            "predicted_n": len(chunk_ms),
            "predicted_ms": 1.0,
            "prompt_n": 3,
            "prompt_ms": 1.0,
            "draft_n": 4,
            "draft_n_accepted": 3,
        }
        return {
            "slot": slot,
            "response": {"timings": timings, "tokens": list(range(len(chunk_ms)))},
            "client_timing": {"sent_at_unix_s": sent, "chunk_ms": chunk_ms, "chunk_tokens": [[1, len(chunk_ms)]]},
        }

    record = {
        "load": {
            "requests": [request(1000.0, [100.0, 200.0, 300.0, 400.0], 0), request(1000.1, [150.0, 250.0, 350.0], 1)]
        }
    }
    columns = load_columns(record)
    assert columns["load_sent_s"] == pytest.approx([0.0, 0.1])
    assert columns["load_first_token_s"] == pytest.approx([0.1, 0.25])
    assert columns["load_last_token_s"] == pytest.approx([0.4, 0.45])
    assert columns["load_slot"] == [0, 1] and columns["load_draft_n_accepted"] == [3, 3]
    assert columns["load_itl_median_ms"] == pytest.approx([100.0, 100.0])
    start, end = 0.25, 0.4  # request 1's first token, request 0's last
    assert math.isclose(columns["load_window_s"], end - start, abs_tol=1e-9)
    # inside (0.25, 0.4]: request 0's 0.3 and 0.4, request 1's 0.35
    assert math.isclose(columns["load_aggregate_tokens_per_s"], 3 / (end - start), rel_tol=1e-6)
    assert load_columns({})["load_window_s"] is None and load_columns({})["load_tokens"] == []


def test_against_one_reads_the_interval_the_studys_way() -> None:
    assert against_one(1.1, 1.3) == ABOVE and against_one(0.5, 0.9) == BELOW and against_one(0.9, 1.1) == NOT_SEPARATED


def test_the_multiplier_splits_into_tokens_per_step_over_the_step_time_ratio() -> None:
    """Requests of equal speed within each point: the multiplier is exactly tokens per step over the step-time
    ratio; from N = 1 to 2 the MTP step costs twice as much while acceptance holds, so the fall is the cost's."""
    speeds = {("off", 1): [[100.0]] * 3, ("mtp", 1): [[200.0]] * 3, ("off", 2): [[80.0] * 2] * 3}
    speeds |= {("mtp", 2): [[80.0 * 200.0 / 100.0 / 2] * 2] * 3}
    table = load_table(point_rows(speeds), "off").set_index(["condition", "concurrency"])
    for key in speeds:
        row = table.loc[key]
        assert math.isclose(row.speedup, row.tokens_per_step / row.step_time_ratio)
    assert table.loc[("off", 1), "tokens_per_step"] == 1.0
    assert math.isclose(table.loc[("mtp", 1), "tokens_per_step"], 48 / 41)  # point_rows: 7 of 48 accepted
    assert table.loc[("mtp", 2), "moved_by"] == "verification cost" and table.loc[("mtp", 1), "moved_by"] == ""
    assert table.loc[("off", 2), "moved_by"] == ""


def test_moved_by_names_the_larger_change() -> None:
    from specbench.analysis.load import moved_by

    assert moved_by(0.5, 1.1) == "acceptance" and moved_by(0.9, 2.0) == "verification cost"
    assert moved_by(math.nan, 1.0) == ""


def test_each_point_has_its_latency_and_its_acceptance_per_slot() -> None:
    speeds = {("off", 2): [[100.0, 100.0]] * 2, ("mtp", 2): [[150.0, 150.0]] * 2}
    table = load_table(point_rows(speeds), "off").set_index("condition")
    assert table.loc["mtp", "ttft_median_ms"] == pytest.approx(50.0)
    assert (table.loc["mtp", "itl_median_ms"], table.loc["mtp", "itl_p90_ms"]) == (10.0, 12.0)
    assert [list(pair) for pair in table.loc["mtp", "acceptance_by_slot"]] == [[0.0, 0.7], [1.0, 0.7]]
    assert list(table.loc["off", "acceptance_by_slot"]) == []  # off drafts nothing


def test_acceptance_at_each_load_is_set_against_the_conditions_one_request_point() -> None:
    """MTP accepts 7, 7, 7 of 10 per request alone and 5, 6, 7 at two: a change of -0.1 whose interval is each
    side's repeats' (Welch); off drafts nothing, so it has no change; N = 1 is the reference, none there either."""
    speeds = {(c, n): [[100.0] * n] * 3 for c in ("off", "mtp") for n in (1, 2)}
    table = load_table(point_rows(speeds, accepted={("mtp", 2): [5, 6, 7]}), "off").set_index(
        ["condition", "concurrency"]
    )
    row = table.loc[("mtp", 2)]
    assert row.acceptance_change == pytest.approx(-0.1)
    half = 4.302653 * 0.1 / math.sqrt(3)
    assert (row.acceptance_change_ci_low, row.acceptance_change_ci_high) == pytest.approx((-0.1 - half, -0.1 + half))
    assert math.isnan(table.loc[("mtp", 1), "acceptance_change"]) and math.isnan(
        table.loc[("off", 2), "acceptance_change"]
    )
