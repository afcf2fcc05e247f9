"""The thesis as figures (analysis.thesis) under both views, and its claims (claims.thesis_judge, one per view) on
constructed tables: a matrix where the task decides, one where the method decides, one where neither is separated,
one method only, one where the views disagree; simulations against a known truth under each view; and the figures
computed from the study's published multipliers, by hand."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specbench.analysis import thesis as thesis_module
from specbench.analysis import thesis_fit
from specbench.analysis.cell_table import csv_copy, frame_of
from specbench.analysis.thesis import thesis
from specbench.analysis.thesis_fit import MAIN_EFFECTS, SPREAD_WITHIN, VIEWS
from specbench.analysis.thesis_published import published_figure
from specbench.analysis.thesis_text import PUBLISHED_LABEL
from specbench.claims.claim import (
    AGREES,
    CONTRADICTED,
    DIFFERS,
    NOT_MEASURED,
    NOT_SEPARATED,
    REPRODUCED,
    THESIS_CLAIM,
    TOO_FEW_RUNS,
    Claim,
    ClaimError,
)
from specbench.claims.claims_file import load_claims, parse_claims
from specbench.claims.evaluate import Setup, evaluate
from specbench.core.config.schema import load_schema
from specbench.report.figures import thesis_figure as thesis_figure_module
from specbench.report.sections.thesis_section import thesis_section
from support.config import load_config
from support.counterfactuals import tables_of, thesis_tables
from support.paths import REPO

CONFIG = load_config([REPO / "config" / "config.yaml"])
BASELINE = CONFIG["baseline"]
TASKS = ["file-rewrite", "todo-app", "gsm8k", "essay"]
METHODS = ["ngram-mod", "mtp", "dflash"]


def thesis_claims() -> dict[str, Claim]:
    """The claims file's thesis claims by the view each reads."""
    return {c.reads: c for c in load_claims(REPO / "config" / "claims.yaml", CONFIG) if c.kind == "thesis"}


def thesis_claim(view: str = MAIN_EFFECTS, **fields: Any) -> Claim:
    """The claims file's thesis claim of one view (its own tasks, methods and published matrix), with ``fields``
    changed."""
    claim = thesis_claims()[view]
    return claim if not fields else parse_claims([{**entry_of(claim), **fields}], CONFIG)[0]


def entry_of(claim: Claim) -> dict[str, Any]:
    return {
        "id": claim.id,
        "text": claim.text,
        "kind": claim.kind,
        "published": claim.published,
        "source": claim.source,
        "tasks": list(claim.tasks),
        "conditions": list(claim.conditions),
        "variants": list(claim.variants),
        "temperature": "unstated",
        "matrix": {t: dict(r) for t, r in claim.matrix.items()},
        "readings": claim.readings,
        "reads": claim.reads,
    }


def judged(claim: Claim | Sequence[Claim], tables: Mapping[str, pd.DataFrame], study: bool = True) -> pd.DataFrame:
    claims = [claim] if isinstance(claim, Claim) else list(claim)
    return evaluate(
        claims, tables, baseline=BASELINE, setup=Setup(comparable=study, same_model=True, device="CPU")
    ).set_index("id")


def views_of(frame: pd.DataFrame, temperature: float = 0.0) -> dict[str, dict[str, Any]]:
    """One temperature's rows of a thesis table, by view (every view once)."""
    rows = frame[frame.temperature == temperature].to_dict("records")
    assert sorted(r["view"] for r in rows) == sorted(VIEWS)
    return {r["view"]: r for r in rows}


# --------------------------------------------------------------------------------------------------------------
# The figures, under each view
# --------------------------------------------------------------------------------------------------------------


def by_task(factor: float) -> dict[str, dict[str, float]]:
    """Three tasks x three methods: the task multiplies by ``factor`` from one task to the next, the method by 1.1."""
    return {t: {m: factor**ti * 1.1**mi for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS[:3])}


def log_variance(runs: Sequence[float]) -> float:
    """The delta method's variance of a mean's log."""
    return float(np.var(runs, ddof=1) / (len(runs) * np.mean(runs) ** 2))


def test_a_matrix_where_the_task_decides():
    spreads = (-0.01, 0.0, 0.01)
    frame = tables_of(by_task(2.0), spreads=spreads)["thesis"]
    views = views_of(frame)
    row = views[MAIN_EFFECTS]
    # additive: a = log 2 x (-1, 0, 1), b = log 1.1 x (-1, 0, 1); every cell (and baseline) has the same log-mean
    # variance v, so a row mean carries v / 3 + v (its baseline's) and a column mean v / 3, each centred over 3
    v = log_variance([1 + s for s in spreads])
    tau2 = 2 * math.log(2) ** 2 / 3 - (1 / 3) * (2 / 3) * 3 * (v / 3 + v)
    beta2 = 2 * math.log(1.1) ** 2 / 3 - (1 / 3) * (2 / 3) * 3 * (v / 3)
    assert row["task_effect"] == pytest.approx(math.sqrt(tau2), rel=1e-9)
    assert row["method_effect"] == pytest.approx(math.sqrt(beta2), rel=1e-9)
    assert row["ratio"] == pytest.approx(math.sqrt(tau2 / beta2), rel=1e-9)
    assert row["difference"] == pytest.approx(tau2 - beta2, rel=1e-9)
    assert row["task_share"] + row["method_share"] + row["interaction_share"] == pytest.approx(1.0)
    assert row["interaction_share"] < 1e-3  # additive: only noise is left over
    for name, point in (("task", "task_effect"), ("method", "method_effect"), ("ratio", "ratio")):
        assert row[f"{name}_low"] < row[point] < row[f"{name}_high"]
    assert row["difference_low"] > 0 and row["ratio_low"] > 1 and row["decides"] == "task"
    assert (row["missing"], row["fewest_runs"]) == ([], 3)
    assert sorted(row["methods"]) == sorted(METHODS) and sorted(row["tasks"]) == sorted(TASKS[:3])  # table order
    assert row["matrix"]["gsm8k"]["mtp"] == pytest.approx(4 * 1.1)
    assert len(row["cells"]) == 3 * 4 * 3  # every run of the three tasks, the baseline's too
    # the spread within: a column's variance over its 3 tasks (each cell v + its own baseline's v, independent
    # across the rows) carries (2 / 3) 2v of noise; a row's over its 3 methods (the row's baseline shared, so it
    # cancels) (2 / 3) v
    spread = views[SPREAD_WITHIN]
    across_tasks = 2 * math.log(2) ** 2 / 3 - (2 / 3) * 2 * v
    across_methods = 2 * math.log(1.1) ** 2 / 3 - (2 / 3) * v
    assert spread["task_effect"] == pytest.approx(math.sqrt(across_tasks), rel=1e-9)
    assert spread["method_effect"] == pytest.approx(math.sqrt(across_methods), rel=1e-9)
    assert spread["difference"] == pytest.approx(row["difference"], rel=1e-9)  # complete: the same D
    assert (spread["difference_low"], spread["difference_high"]) == pytest.approx(
        (row["difference_low"], row["difference_high"]), rel=1e-9
    )
    assert spread["decides"] == "task" and math.isnan(spread["task_share"]) and spread["reason"].startswith("D = (")


def test_a_matrix_where_the_method_decides():
    swapped = {t: {m: 1.05**ti * 3.0**mi for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS)}
    views = views_of(tables_of(swapped)["thesis"])
    row = views[MAIN_EFFECTS]
    assert row["difference_high"] < 0 and row["ratio_high"] < 1 and row["decides"] == "method"
    assert row["method_effect"] == pytest.approx(math.sqrt(2 / 3) * math.log(3), rel=1e-3)
    assert views[SPREAD_WITHIN]["decides"] == "method" and views[SPREAD_WITHIN]["ratio_high"] < 1


def test_neither_separated_when_the_runs_spread_widely():
    even = {t: {m: 1.5 ** ((ti + mi) % 2) for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS[:3])}
    views = views_of(tables_of(even, spreads=(-0.3, 0.0, 0.3))["thesis"])
    row = views[MAIN_EFFECTS]
    assert row["difference_low"] < 0 < row["difference_high"] and row["decides"] == "not separated"
    assert row["interaction_share"] > 0.5  # a checkerboard is interaction, not task or method
    # counted on both sides, the checkerboard makes the spreads larger than the main effects, and neither larger
    spread = views[SPREAD_WITHIN]
    assert spread["decides"] == "not separated" and spread["method_effect"] > row["method_effect"]


def test_a_task_effect_near_zero_keeps_its_estimate_inside_its_interval():
    """The README demo's case: the tasks barely differ and the runs scatter; the old statistic put the task effect
    (0.1147) below its own bootstrap interval ([0.1151, 0.2706])."""
    flat = {t: {m: 1.3**mi * (1.0 + 0.01 * ti) for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS)}
    frame = tables_of(flat, spreads=(-0.05, 0.02, 0.04))["thesis"]
    for view, row in views_of(frame).items():
        for name, point in (("task", "task_effect"), ("method", "method_effect"), ("difference", "difference")):
            assert row[f"{name}_low"] <= row[point] <= row[f"{name}_high"], (view, name)
    assert views_of(frame)[MAIN_EFFECTS]["task_low"] == 0.0  # a zero task effect is not excluded
    assert thesis_figure_module.draw_thesis(frame, BASELINE, None).startswith(b"\x89PNG")  # whiskers drawn


def test_one_method_or_one_task_cannot_be_judged():
    one_method = {t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}
    for row in views_of(tables_of(one_method)["thesis"]).values():
        assert row["decides"] == "cannot be judged" and row["reason"] == "only one method ran (ngram-mod)"
        assert math.isnan(row["ratio_low"]) and math.isnan(row["task_effect"])
    for row in views_of(tables_of({"essay": {"ngram-mod": 1.0, "mtp": 1.5}})["thesis"]).values():
        assert row["decides"] == "cannot be judged" and row["reason"] == "no two tasks measured with one method"


def test_no_baseline_cells_cannot_be_judged():
    cells = tables_of(by_task(2.0))["cells"]
    for row in views_of(thesis(cells[cells.condition != BASELINE], BASELINE)).values():
        assert row["decides"] == "cannot be judged" and row["reason"] == f"no '{BASELINE}' cells: no multiplier"


def test_a_matrix_in_unconnected_blocks_cannot_be_judged():
    blocks = {"file-rewrite": {"ngram-mod": 2.0, "mtp": 1.5}, "essay": {"dflash": 0.7, "mtp-2": 1.1}}
    for row in views_of(tables_of(blocks)["thesis"]).values():
        assert row["decides"] == "cannot be judged" and "blocks" in row["reason"]


def test_one_run_a_cell_gives_no_interval():
    for row in views_of(tables_of(by_task(2.0), spreads=(0.0,))["thesis"]).values():
        assert row["decides"] == "too few runs" and math.isnan(row["ratio_low"]) and math.isnan(row["task_low"])
        assert row["ratio"] == pytest.approx(math.log(2) / math.log(1.1), rel=1e-9)  # the plain figure still shown


def test_an_incomplete_matrix_is_fitted_on_the_cells_it_has():
    """An additive matrix with a gap: the least-squares fit recovers its main effects exactly, where the row means
    of the cells a row has would not; the spread within reads each method's and task's own cells."""
    incomplete = by_task(2.0)
    del incomplete["gsm8k"]["dflash"]
    views = views_of(tables_of(incomplete, spreads=(0.0,))["thesis"])
    row = views[MAIN_EFFECTS]
    assert row["missing"] == ["gsm8k/dflash"]
    assert row["task_effect"] == pytest.approx(math.sqrt(2 / 3) * math.log(2), rel=1e-9)
    assert row["method_effect"] == pytest.approx(math.sqrt(2 / 3) * math.log(1.1), rel=1e-9)
    # dflash has two tasks (variance (log 2)^2 / 4), the others three (2 (log 2)^2 / 3); gsm8k two methods
    across_tasks = (2 * (2 * math.log(2) ** 2 / 3) + math.log(2) ** 2 / 4) / 3
    across_methods = (2 * (2 * math.log(1.1) ** 2 / 3) + math.log(1.1) ** 2 / 4) / 3
    assert views[SPREAD_WITHIN]["task_effect"] == pytest.approx(math.sqrt(across_tasks), rel=1e-9)
    assert views[SPREAD_WITHIN]["method_effect"] == pytest.approx(math.sqrt(across_methods), rel=1e-9)


def test_the_decomposition_of_a_hand_made_matrix():
    """2 x 3, complete: a_t the row means less the grand mean, b_m the column means less it, the rest the residual;
    the spread within is each column's (row's) variance, averaged: tau^2 + rest and beta^2 + rest."""
    logs = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 3.0]])
    fit = thesis_fit.design(np.ones_like(logs, dtype=bool))
    values = logs.ravel()
    a = logs.mean(axis=1) - logs.mean()
    b = logs.mean(axis=0) - logs.mean()
    rest = logs - logs.mean() - a[:, None] - b[None, :]
    assert fit.task @ values == pytest.approx(a) and fit.method @ values == pytest.approx(b)
    squares = {name: values @ q @ values for name, q in fit.forms.items()}
    assert squares["task"] == pytest.approx(np.mean(a**2)) and squares["method"] == pytest.approx(np.mean(b**2))
    assert squares["rest"] == pytest.approx(np.mean(rest**2))
    spread = {name: values @ q @ values for name, q in fit.forms_of(SPREAD_WITHIN).items()}
    assert spread["task"] == pytest.approx(np.mean(np.var(logs, axis=0)))  # across the tasks, within each method
    assert spread["method"] == pytest.approx(np.mean(np.var(logs, axis=1)))  # across the methods, within each task
    assert spread["task"] == pytest.approx(squares["task"] + squares["rest"])
    assert spread["method"] == pytest.approx(squares["method"] + squares["rest"])
    assert spread["difference"] == pytest.approx(squares["difference"])
    with pytest.raises(ValueError, match="no thesis view"):
        fit.forms_of("range")


def test_every_temperature_gets_a_row_per_view():
    frame = tables_of(by_task(2.0), temperatures=(0.0, 1.0))["thesis"]
    assert list(frame.temperature) == [0.0, 0.0, 1.0, 1.0] and list(frame.view) == [*VIEWS, *VIEWS]
    assert set(frame.decides) == {"task"}
    assert thesis(frame_of([], BASELINE), BASELINE).empty


# A matrix with gaps whose views disagree: main effects put the file rewrite's lone 8x on the task (the fit reads
# it as the task's level), the spread within reads the other rows' 0.5x / 4-8x / 0.5x as the method
VIEWS_DISAGREE = {
    "file-rewrite": {"ngram-mod": 0.5, "mtp": 4.0, "dflash": 0.5},
    "todo-app": {"ngram-mod": 0.5, "mtp": 8.0, "dflash": 0.5},
    "gsm8k": {"ngram-mod": 8.0},
    "essay": {"ngram-mod": 0.5, "mtp": 2.0, "dflash": 0.5},
}


def test_on_a_matrix_with_gaps_the_views_can_disagree():
    views = views_of(tables_of(VIEWS_DISAGREE)["thesis"])
    assert views[MAIN_EFFECTS]["decides"] == "task" and views[SPREAD_WITHIN]["decides"] == "method"


# --------------------------------------------------------------------------------------------------------------
# Containment, calibration and a known truth, by simulation (bench/calibration.py runs the long version)
# --------------------------------------------------------------------------------------------------------------


def simulated(logs: np.ndarray, cv: float, runs: int, rng: np.random.Generator, view: str = MAIN_EFFECTS) -> dict:
    """The figures under ``view`` of one simulated run of a (tasks, methods) matrix of true log multipliers (NaN:
    not measured): every cell's and baseline's runs normal with this CV around their true speed."""
    tasks, methods = logs.shape
    base = 100 * (1 + cv * rng.standard_normal((tasks, runs)))
    cells = 100 * np.exp(logs)[..., None] * (1 + cv * rng.standard_normal((tasks, methods, runs)))
    base_mean, cell_mean = base.mean(axis=-1), cells.mean(axis=-1)
    measured = np.where(np.isfinite(logs), np.log(cell_mean / base_mean[:, None]), np.nan)
    return thesis_module.figures(
        measured,
        cells.var(axis=-1, ddof=1) / (runs * cell_mean**2),
        np.full(logs.shape, runs - 1.0),
        base.var(axis=-1, ddof=1) / (runs * base_mean**2),
        np.full(tasks, runs - 1.0),
        [f"t{i}" for i in range(tasks)],
        [f"m{i}" for i in range(methods)],
        view,
    )


def truth(logs: np.ndarray, view: str) -> dict[str, float]:
    """A view's squared sides and D of a true matrix (no noise)."""
    present = np.isfinite(logs)
    fit, values = thesis_fit.design(present), logs[present]
    return {name: float(values @ q @ values) for name, q in fit.forms_of(view).items()}


def random_matrix(rng: np.random.Generator) -> np.ndarray:
    """A 2 x 2 to 4 x 4 matrix of log multipliers, some of it task, some method, some interaction, with gaps."""
    shape = tuple(rng.integers(2, 5, size=2))
    logs = (
        rng.normal(0, rng.choice([0.0, 0.3]), size=(shape[0], 1))
        + rng.normal(0, rng.choice([0.0, 0.3]), size=(1, shape[1]))
        + rng.normal(0, rng.choice([0.0, 0.02, 0.3]), size=shape)
    )
    logs[rng.random(shape) < 0.15] = np.nan
    return logs


def test_every_interval_holds_its_estimate():
    """Random matrices of every size from 2 x 2 to 4 x 4, with gaps, 2 or 3 runs, noise from 1 % to 30 %, under
    each view."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        logs = random_matrix(rng)
        cv, runs, view = rng.choice([0.01, 0.05, 0.3]), int(rng.integers(2, 4)), VIEWS[int(rng.integers(2))]
        row = simulated(logs, cv, runs, rng, view)
        if row["decides"] == "cannot be judged":
            continue
        assert row["view"] == view
        for name, point in (("task", "task_effect"), ("method", "method_effect"), ("difference", "difference")):
            assert row[f"{name}_low"] <= row[point] <= row[f"{name}_high"], (name, row)
        if math.isnan(row["ratio"]):
            assert "no ratio" in row["reason"] and math.isnan(row["ratio_low"])
        else:
            assert row["ratio_low"] <= row["ratio"] <= row["ratio_high"], row
        assert (row["difference_low"] > 0) == (row["decides"] == "task")
        assert (row["difference_high"] < 0) == (row["decides"] == "method")


def test_the_verdict_follows_a_known_truth_under_each_view():
    """Random true matrices (with gaps, so that the views can disagree), 3 runs a side at 1 % noise: where the
    truth's D is clearly above (below) 0 under a view, that view decides 'task' ('method') in nearly every run,
    and never the other way."""
    rng = np.random.default_rng(11)
    counts = {view: {"right": 0, "wrong": 0, "clear": 0} for view in VIEWS}
    for _ in range(400):
        logs = random_matrix(rng)
        present = np.isfinite(logs)
        if not (present.any(axis=0).all() and present.any(axis=1).all()) or not thesis_fit.connected(present):
            continue
        for view in VIEWS:
            side = truth(logs, view)["difference"]
            row = simulated(logs, 0.01, 3, rng, view)
            expected = "task" if side > 0 else "method"
            counts[view]["wrong"] += row["decides"] == ("method" if side > 0 else "task")
            if abs(side) > 0.02:  # far from a tie against 1 % noise
                counts[view]["clear"] += 1
                counts[view]["right"] += row["decides"] == expected
    for view, count in counts.items():
        assert count["clear"] > 150, (view, count)
        assert count["right"] >= 0.95 * count["clear"], (view, count)
        assert count["wrong"] <= 0.02 * 400, (view, count)


def test_coverage_and_ties_in_a_small_simulation():
    """200 runs of a 4 x 3 matrix whose task and method effects are equal (tau = beta = 0.2), 3 runs a side at 5 %
    noise: D's interval holds 0, and the ratio's 1, in 95 % of them (a binomial band of 200 draws), and a wrong
    'decides' is rare; on this complete matrix the spread within decides the same in every run."""
    rng = np.random.default_rng(1)
    a, b = np.array([-0.2, -0.2, 0.2, 0.2]), 0.2 * math.sqrt(1.5) * np.array([-1.0, 0.0, 1.0])
    logs = a[:, None] + b[None, :]
    rows = [simulated(logs, 0.05, 3, rng) for _ in range(200)]
    covered = sum(r["difference_low"] <= 0 <= r["difference_high"] for r in rows)
    assert 180 <= covered <= 197  # 95 % of 200 is 190; the band is about +-3.5 standard deviations
    assert sum(r["ratio_low"] <= 1 <= r["ratio_high"] for r in rows) == covered  # one verdict, two readings
    assert sum(r["decides"] != "not separated" for r in rows) == 200 - covered
    again = np.random.default_rng(1)
    spread = [simulated(logs, 0.05, 3, again, SPREAD_WITHIN) for _ in range(200)]
    assert [r["decides"] for r in spread] == [r["decides"] for r in rows]


def test_the_spread_within_covers_its_truth_on_the_studys_shape():
    """The published shape (4 x 3, DFlash on math missing) at 5 % noise, 3 runs a side, 300 draws: each side's and
    D's 95 % interval under the spread within holds the true figure in at least 92 % of the draws (1,000 draws a
    row gave 96-99 % at 2.5-25 % noise and 2 or 3 runs)."""
    rng = np.random.default_rng(3)
    logs = np.log([[6.25, 1.78, 3.35], [0.95, 1.65, 2.27], [0.95, 1.65, np.nan], [1.0, 1.04, 0.675]])
    true = truth(logs, SPREAD_WITHIN)
    hits = {"task": 0, "method": 0, "difference": 0}
    for _ in range(300):
        row = simulated(logs, 0.05, 3, rng, SPREAD_WITHIN)
        hits["task"] += row["task_low"] <= math.sqrt(true["task"]) <= row["task_high"]
        hits["method"] += row["method_low"] <= math.sqrt(true["method"]) <= row["method_high"]
        hits["difference"] += row["difference_low"] <= true["difference"] <= row["difference_high"]
    assert min(hits.values()) >= 276, hits


@given(
    st.lists(st.floats(-2.0, 2.0), min_size=12, max_size=12),
    st.sets(st.integers(0, 11), max_size=3),
    st.sampled_from([0.001, 0.02, 0.3]),
    st.integers(2, 4),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_each_views_intervals_hold_their_estimates(
    values: list[float], gaps: set[int], cv: float, runs: int, seed: int
) -> None:
    """Property: any 4 x 3 matrix with gaps, any noise, 2-4 runs: under each view, every interval holds its
    estimate, and the answer follows D's interval."""
    logs = np.array(values).reshape(4, 3)
    logs.flat[sorted(gaps)] = np.nan
    rng = np.random.default_rng(seed)
    for view in VIEWS:
        row = simulated(logs, cv, runs, rng, view)
        if row["decides"] == "cannot be judged":
            continue
        for name, point in (("task", "task_effect"), ("method", "method_effect"), ("difference", "difference")):
            assert row[f"{name}_low"] <= row[point] <= row[f"{name}_high"], (view, name, row)
        if not math.isnan(row["ratio"]):
            assert row["ratio_low"] <= row["ratio"] <= row["ratio_high"], (view, row)
        assert row["decides"] == thesis_fit.decides(row["difference_low"], row["difference_high"])


# --------------------------------------------------------------------------------------------------------------
# The published matrix
# --------------------------------------------------------------------------------------------------------------


def test_the_published_figure_by_hand():
    """The study's two complete rows (file rewrite and essay under n-gram / MTP / DFlash): a row mean less the grand
    mean is each task's effect, a column mean less it each method's; the task carries 74 % of the spread, the
    method 12 %, the rest 14 %. The spread within: each method's variance over the two tasks, each task's over the
    three methods."""
    logs = np.log([[6.25, 1.78, 3.35], [1.00, 1.04, 0.66]])
    a, b = logs.mean(axis=1) - logs.mean(), logs.mean(axis=0) - logs.mean()
    spread = np.mean((logs - logs.mean()) ** 2)
    rows = {"file-rewrite": [6.25, 1.78, 3.35], "essay": [1.0, 1.04, 0.66]}
    figure = published_figure({t: dict(zip(METHODS, v, strict=True)) for t, v in rows.items()})
    main = figure["views"][MAIN_EFFECTS]
    tau, beta = math.sqrt(np.mean(a**2)), math.sqrt(np.mean(b**2))
    assert main["task_effect"] == pytest.approx((tau, tau), rel=1e-12)
    assert main["method_effect"] == pytest.approx((beta, beta), rel=1e-12)
    assert main["ratio"] == pytest.approx((tau / beta,) * 2, rel=1e-12)
    assert main["task_share"][0] == pytest.approx(tau**2 / spread, rel=1e-12)
    assert main["method_share"][0] == pytest.approx(beta**2 / spread, rel=1e-12)
    assert [round(main[f"{k}_share"][0], 2) for k in ("task", "method", "interaction")] == [0.74, 0.12, 0.14]
    assert main["decides"] == "task" and figure["missing"] == [] and figure["readings"] == 1
    within = figure["views"][SPREAD_WITHIN]
    across_tasks, across_methods = math.sqrt(np.var(logs, axis=0).mean()), math.sqrt(np.var(logs, axis=1).mean())
    assert within["task_effect"] == pytest.approx((across_tasks,) * 2, rel=1e-12)
    assert within["method_effect"] == pytest.approx((across_methods,) * 2, rel=1e-12)
    assert within["decides"] == "task" and all(math.isnan(v) for v in within["task_share"])


def test_the_published_figure_under_every_reading_of_the_claims_file():
    """Main effects: task 1.61-1.64x against method 1.02-1.06x, ratio 8.8-32.6 (the methods' differences sit in
    the interaction, 33-38 %); the spread within: about 1.87x against 1.43x, ratio about 1.75 (1.7-1.8 over every
    reading)."""
    claim = thesis_claim()
    figure = published_figure(claim.matrix)
    assert figure["missing"] == ["gsm8k/dflash"] and len(figure["ranged"]) == 5
    corners = []
    for ngram, mtp, essay in itertools.product((0.9, 1.0), (1.5, 1.8), (0.66, 0.69)):
        for other_ngram, other_mtp in itertools.product((0.9, 1.0), (1.5, 1.8)):
            point = {
                "file-rewrite": {"ngram-mod": 6.25, "mtp": 1.78, "dflash": 3.35},
                "todo-app": {"ngram-mod": ngram, "mtp": mtp, "dflash": 2.27},
                "gsm8k": {"ngram-mod": other_ngram, "mtp": other_mtp},
                "essay": {"ngram-mod": 1.0, "mtp": 1.04, "dflash": essay},
            }
            corners.append(published_figure(point)["views"][MAIN_EFFECTS]["task_effect"][0])
    main, within = figure["views"][MAIN_EFFECTS], figure["views"][SPREAD_WITHIN]
    low, high = main["task_effect"]
    assert low <= min(corners) and max(corners) <= high  # every corner reading inside the range over the readings
    assert max(corners) == pytest.approx(high)  # tau^2 is convex in the logs: its largest value is at a corner
    assert main["difference"][0] > 0 and main["decides"] == "task"
    assert 1.60 < math.exp(low) < math.exp(high) < 1.65 and math.exp(main["method_effect"][1]) < 1.06
    assert 8.7 < main["ratio"][0] < 8.9 and 32.5 < main["ratio"][1] < 32.7
    assert 0.32 < main["interaction_share"][0] < main["interaction_share"][1] < 0.39
    assert 1.8 < math.exp(within["task_effect"][0]) < 1.87 < math.exp(within["task_effect"][1]) < 1.9
    assert 1.39 < math.exp(within["method_effect"][0]) < 1.43 < math.exp(within["method_effect"][1]) < 1.47
    assert 1.6 < within["ratio"][0] < 1.75 < within["ratio"][1] < 1.85 and within["decides"] == "task"
    # the middle reading (each range at its middle, DFlash on the essay 0.675x): 1.865x against 1.427x, ratio 1.75
    middle = {
        t: {m: float(np.mean(v)) if isinstance(v, Sequence) else v for m, v in r.items()}
        for t, r in claim.matrix.items()
    }
    spread = published_figure(middle)["views"][SPREAD_WITHIN]
    assert math.exp(spread["task_effect"][0]) == pytest.approx(1.865, abs=0.005)
    assert math.exp(spread["method_effect"][0]) == pytest.approx(1.427, abs=0.005)
    assert spread["ratio"][0] == pytest.approx(1.75, abs=0.005)


def test_a_matrix_naming_another_task_is_refused():
    with pytest.raises(ClaimError, match="key 'matrix'"):
        thesis_claim(matrix={"file-rewrite": {"ngram-mod": 6.25}, "poetry": {"ngram-mod": 1.0}})
    with pytest.raises(ClaimError, match="key 'matrix'.*warp"):
        thesis_claim(matrix={t: {"warp": 2.0} for t in TASKS})


def test_a_thesis_read_as_no_view_is_refused():
    with pytest.raises(ClaimError, match="key 'reads'"):
        thesis_claim(reads="the range")
    assert set(thesis_claims()) == set(VIEWS)  # one claim per view, read together
    schema = load_schema(REPO / "config" / "claims.schema.yaml")["$defs"]["claim"]["allOf"]
    [block] = [b["then"] for b in schema if b["if"]["properties"]["kind"].get("const") == "thesis"]
    assert block["properties"]["reads"]["enum"] == list(VIEWS)  # the schema refuses any other view at load time
    assert {c.readings for c in thesis_claims().values()} == {THESIS_CLAIM}


# --------------------------------------------------------------------------------------------------------------
# The claims, one per view
# --------------------------------------------------------------------------------------------------------------


def with_n15(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tables with the variant's DFlash setting, as the study config runs it."""
    cells = tables["cells"]
    extra = cells[cells.condition == "dflash"].assign(
        condition="dflash-n15", cell_file=lambda f: f.cell_file.str.replace("dflash", "dflash-n15")
    )
    return {**tables, "cells": pd.concat([cells, extra], ignore_index=True)}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("verdict", [REPRODUCED, CONTRADICTED, NOT_SEPARATED])
def test_the_claim_reads_what_its_tables_say(view, verdict):
    """Each view's claim, on the counterfactual walk's tables: the task deciding, the method deciding (the methods
    differ more than the tasks under each view: each reading can fail), neither."""
    claim = thesis_claim(view)
    result = judged(claim, with_n15(thesis_tables(claim, verdict)))
    published = {
        MAIN_EFFECTS: "computed from the study's published multipliers (main effects (interaction apart)): task "
        "1.61-1.64x vs method 1.02-1.06x",
        SPREAD_WITHIN: "computed from the study's published multipliers (spread within (interaction counted on both "
        "sides)): task 1.84-1.89x vs method 1.40-1.46x",
    }[view]
    for row_id in (claim.id, f"{claim.id}@dflash-n15"):
        row = result.loc[row_id]
        assert (row["verdict"], row["verdict_t1"]) == (verdict, verdict), row["detail"]
        assert row["detail"].startswith(f"under the {view}: ") and published in row["detail"], row["detail"]
        assert "not given: gsm8k/dflash" in row["detail"] and "no interval" in row["detail"]
        assert row["measured"]["view"] == view and row["measured"]["run"]["view"] == view
    assert result.loc[claim.id, "measured"]["run"]["methods"] == METHODS
    assert result.loc[f"{claim.id}@dflash-n15", "measured"]["run"]["methods"] == ["ngram-mod", "mtp", "dflash-n15"]
    assert result.loc[claim.id, "measured_text"].startswith("task ")


def test_the_two_readings_read_together():
    """Both claims as the claims file has them: borne out under both views where the task decides; contradicted
    under each where the method decides; on a matrix with gaps where the views disagree, the reading that is
    contradicted is named."""
    claims = list(thesis_claims().values())
    reads = {REPRODUCED: "both readings", CONTRADICTED: "contradicted under " + " and ".join(VIEWS)}
    for verdict, reading in reads.items():
        result = judged(claims, with_n15(thesis_tables(claims[0], verdict)))
        assert set(result.reading) == {reading}, result[["verdict", "reading"]]
    result = judged(claims, tables_of(VIEWS_DISAGREE, temperatures=(0.0, 1.0)))
    by_view = {result.loc[c.id, "reads"]: result.loc[c.id, "verdict"] for c in claims}
    assert by_view == {MAIN_EFFECTS: REPRODUCED, SPREAD_WITHIN: CONTRADICTED}
    assert set(result.loc[[c.id for c in claims], "reading"]) == {f"contradicted under {SPREAD_WITHIN}"}


def test_the_claim_with_one_method_cannot_be_judged():
    claim = thesis_claim()
    result = judged(claim, tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}))
    row = result.loc[claim.id]
    assert row["verdict"] == NOT_MEASURED and row["detail"].startswith(
        f"under the {MAIN_EFFECTS}: cannot be judged: only one method ran"
    )
    assert result.loc[claim.id, "verdict_t1"] == NOT_MEASURED  # nothing at temperature 1.0
    off_setup = judged(claim, tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}), study=False)
    assert off_setup.loc[claim.id, "verdict"] == NOT_MEASURED  # not measured stays so off the study's setup


def test_the_claim_with_one_run_a_cell_reads_too_few_runs():
    multipliers = {t: {m: 2.0**ti for m in METHODS} for ti, t in enumerate(TASKS)}
    for claim in thesis_claims().values():
        assert judged(claim, tables_of(multipliers, spreads=(0.0,))).loc[claim.id, "verdict"] == TOO_FEW_RUNS


def test_off_the_studys_setup_the_claim_agrees_or_differs():
    for claim in thesis_claims().values():
        assert judged(claim, thesis_tables(claim, REPRODUCED), study=False).loc[claim.id, "verdict"] == AGREES
        assert judged(claim, thesis_tables(claim, CONTRADICTED), study=False).loc[claim.id, "verdict"] == DIFFERS


def test_a_method_or_task_of_the_claim_that_did_not_run_is_not_measured():
    """The study config runs both DFlash settings; a run without dflash-n15 leaves its variant row not measured,
    never judged on the other two methods alone."""
    claim = thesis_claim()
    result = judged(claim, thesis_tables(claim, REPRODUCED))
    assert result.loc[claim.id, "verdict"] == REPRODUCED
    variant = result.loc[f"{claim.id}@dflash-n15"]
    assert variant["verdict"] == NOT_MEASURED and variant["detail"].startswith(
        f"under the {MAIN_EFFECTS}: no cells of dflash-n15 at temperature 0"
    )
    three = thesis_tables(replace_tasks(claim, claim.tasks[:3]), REPRODUCED)
    assert judged(claim, three).loc[claim.id, "detail"].startswith(f"under the {MAIN_EFFECTS}: no cells of essay")


def replace_tasks(claim: Claim, tasks: Sequence[str]) -> Claim:
    return dataclasses.replace(claim, tasks=tuple(tasks))


# --------------------------------------------------------------------------------------------------------------
# The report: the section and the figure
# --------------------------------------------------------------------------------------------------------------


def section_text(section: Any) -> str:
    """Every word a section shows: its notes and its table's cells."""
    cells = [str(c.show(c.get(row))) for row in section.table.rows for c in section.table.columns]
    return "\n".join([*(n.text for n in section.notes), *cells])


def test_the_section_shows_both_views_and_calls_no_computed_number_the_studys():
    """The table has a row per temperature and view, and the figures computed from the published multipliers are
    labelled so; "the study's figure" is never said (the study states no number for its thesis)."""
    claims = list(thesis_claims().values())
    tables = with_n15(thesis_tables(claims[0], REPRODUCED))
    result = evaluate(claims, tables, baseline=BASELINE, setup=Setup(comparable=True, same_model=True, device="CPU"))
    [section] = thesis_section(tables["thesis"], result, None, [BASELINE, *METHODS])
    rows = section.table.rows
    assert [(r["figure"].split(",")[0], r["temperature"], r["view"]) for r in rows] == [
        *(("this run", t, v) for t in (0.0, 1.0) for v in VIEWS),
        *((f"{PUBLISHED_LABEL} (every reading; no interval)", None, v) for v in VIEWS),
    ]
    text = section_text(section)
    assert "study's figure" not in text.lower()
    assert "The study states no figure for its thesis. Computed from the study's published multipliers (" in text
    assert "8.79-32.64" in text and "1.66-1.83" in text  # the ratios of both views
    assert "the task decides under both views" in text and "The run supports: both readings." in text
    headers = [c.header for c in section.table.columns]
    assert headers[:3] == ["figure", "temp", "view"]


def test_the_figure_says_each_views_answer_and_draws_with_one_method_too(monkeypatch):
    texts: list[str] = []
    original = thesis_figure_module.render

    def spy(fig):
        texts.extend(
            [*(t.get_text() for ax in fig.axes for t in ax.texts), *(a.get_title(loc="left") for a in fig.axes)]
        )
        return original(fig)

    monkeypatch.setattr(thesis_figure_module, "render", spy)
    published = published_figure(thesis_claim().matrix)
    decided = tables_of(by_task(2.0), temperatures=(0.0, 1.0))["thesis"]
    png = thesis_figure_module.draw_thesis(decided, BASELINE, published, TASKS, [BASELINE, *METHODS])
    assert png.startswith(b"\x89PNG")
    main = [t for t in texts if t.startswith("main effects\n(interaction apart)\n")]
    within = [t for t in texts if t.startswith("spread within\n(interaction counted on both sides)\n")]
    assert len(main) == len(within) == 2  # a panel per view and temperature
    assert "this run: the task decides\n(ratio 7.28 [" in main[0]
    assert "from the study's published multipliers:\nthe task decides (ratio 8.79-32.64)" in main[0]
    assert "from the study's published multipliers:\nthe task decides (ratio 1.66-1.83)" in within[0]
    assert not any("study's figure" in t for t in texts)
    texts.clear()
    one = tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)})["thesis"]
    assert thesis_figure_module.draw_thesis(one, BASELINE, None).startswith(b"\x89PNG")
    assert "this run: only one method ran (ngram-mod)" in texts
    assert any("this run: cannot be judged" in t for t in texts)


def test_the_csv_copy_writes_the_matrix_as_json():
    frame = csv_copy(tables_of(by_task(2.0))["thesis"])
    assert json.loads(frame.matrix.iloc[0])["gsm8k"]["mtp"] == pytest.approx(4.4)
    assert json.loads(frame.methods.iloc[0]) == ["dflash", "mtp", "ngram-mod"]
    assert list(frame.view) == list(VIEWS)
