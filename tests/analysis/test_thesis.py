"""The thesis as a figure (analysis.thesis) and its claim (claims.thesis) on constructed tables: a matrix where the
task decides, one where the method decides, one where neither is separated, one method only, and the figure of the
study's published multipliers computed by hand."""

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

from specbench.analysis import thesis as thesis_module
from specbench.analysis.cell_table import csv_copy, frame_of
from specbench.analysis.thesis import published_figure, thesis
from specbench.claims.claim import (
    AGREES,
    CONTRADICTED,
    DIFFERS,
    NOT_MEASURED,
    NOT_SEPARATED,
    REPRODUCED,
    TOO_FEW_RUNS,
    Claim,
    ClaimError,
)
from specbench.claims.evaluate import Setup, evaluate
from specbench.claims.load import load_claims, parse_claims
from specbench.report.figures import thesis as thesis_figure_module
from support.config import load_config
from support.counterfactuals import tables_of, thesis_tables
from support.paths import REPO

CONFIG = load_config([REPO / "config" / "config.yaml"])
BASELINE = CONFIG["baseline"]
TASKS = ["file-rewrite", "todo-app", "gsm8k", "essay"]
METHODS = ["ngram-mod", "mtp", "dflash"]


def thesis_claim(**fields: Any) -> Claim:
    """The claims file's thesis claim (its own tasks, methods and published matrix), with ``fields`` changed."""
    [claim] = [c for c in load_claims(REPO / "config" / "claims.yaml", CONFIG) if c.kind == "thesis"]
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
    }


def judged(claim: Claim, tables: Mapping[str, pd.DataFrame], study: bool = True) -> pd.DataFrame:
    return evaluate(
        [claim], tables, baseline=BASELINE, setup=Setup(comparable=study, same_model=True, device="CPU")
    ).set_index("id")


# --------------------------------------------------------------------------------------------------------------
# The figure
# --------------------------------------------------------------------------------------------------------------


def by_task(factor: float) -> dict[str, dict[str, float]]:
    """Three tasks x three methods: the task multiplies by ``factor`` from one task to the next, the method by 1.1."""
    return {t: {m: factor**ti * 1.1**mi for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS[:3])}


def log_variance(runs: Sequence[float]) -> float:
    """The delta method's variance of a mean's log."""
    return float(np.var(runs, ddof=1) / (len(runs) * np.mean(runs) ** 2))


def test_a_matrix_where_the_task_decides():
    spreads = (-0.01, 0.0, 0.01)
    [row] = tables_of(by_task(2.0), spreads=spreads)["thesis"].to_dict("records")
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


def test_a_matrix_where_the_method_decides():
    swapped = {t: {m: 1.05**ti * 3.0**mi for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS)}
    [row] = tables_of(swapped)["thesis"].to_dict("records")
    assert row["difference_high"] < 0 and row["ratio_high"] < 1 and row["decides"] == "method"
    assert row["method_effect"] == pytest.approx(math.sqrt(2 / 3) * math.log(3), rel=1e-3)


def test_neither_separated_when_the_runs_spread_widely():
    even = {t: {m: 1.5 ** ((ti + mi) % 2) for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS[:3])}
    [row] = tables_of(even, spreads=(-0.3, 0.0, 0.3))["thesis"].to_dict("records")
    assert row["difference_low"] < 0 < row["difference_high"] and row["decides"] == "not separated"
    assert row["interaction_share"] > 0.5  # a checkerboard is interaction, not task or method


def test_a_task_effect_near_zero_keeps_its_estimate_inside_its_interval():
    """The README demo's case: the tasks barely differ and the runs scatter; the old statistic put the task effect
    (0.1147) below its own bootstrap interval ([0.1151, 0.2706])."""
    flat = {t: {m: 1.3**mi * (1.0 + 0.01 * ti) for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS)}
    frame = tables_of(flat, spreads=(-0.05, 0.02, 0.04))["thesis"]
    [row] = frame.to_dict("records")
    for name, point in (("task", "task_effect"), ("method", "method_effect"), ("difference", "difference")):
        assert row[f"{name}_low"] <= row[point] <= row[f"{name}_high"], name
    assert row["task_low"] == 0.0  # a zero task effect is not excluded
    assert thesis_figure_module.thesis_figure(frame, BASELINE, None).startswith(b"\x89PNG")  # whiskers drawn


def test_one_method_or_one_task_cannot_be_judged():
    one_method = {t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}
    [row] = tables_of(one_method)["thesis"].to_dict("records")
    assert row["decides"] == "cannot be judged" and row["reason"] == "only one method ran (ngram-mod)"
    assert math.isnan(row["ratio_low"]) and math.isnan(row["task_effect"])
    [row] = tables_of({"essay": {"ngram-mod": 1.0, "mtp": 1.5}})["thesis"].to_dict("records")
    assert row["decides"] == "cannot be judged" and row["reason"] == "no two tasks measured with one method"


def test_no_baseline_cells_cannot_be_judged():
    cells = tables_of(by_task(2.0))["cells"]
    [row] = thesis(cells[cells.condition != BASELINE], BASELINE).to_dict("records")
    assert row["decides"] == "cannot be judged" and row["reason"] == f"no '{BASELINE}' cells: no multiplier"


def test_a_matrix_in_unconnected_blocks_cannot_be_judged():
    blocks = {"file-rewrite": {"ngram-mod": 2.0, "mtp": 1.5}, "essay": {"dflash": 0.7, "mtp-2": 1.1}}
    [row] = tables_of(blocks)["thesis"].to_dict("records")
    assert row["decides"] == "cannot be judged" and "blocks" in row["reason"]


def test_one_run_a_cell_gives_no_interval():
    [row] = tables_of(by_task(2.0), spreads=(0.0,))["thesis"].to_dict("records")
    assert row["decides"] == "too few runs" and math.isnan(row["ratio_low"]) and math.isnan(row["task_low"])
    assert row["ratio"] == pytest.approx(math.log(2) / math.log(1.1), rel=1e-9)  # the plain figure still shown


def test_an_incomplete_matrix_is_fitted_on_the_cells_it_has():
    """An additive matrix with a gap: the least-squares fit recovers its effects exactly, where the row means of the
    cells a row has would not."""
    incomplete = by_task(2.0)
    del incomplete["gsm8k"]["dflash"]
    [row] = tables_of(incomplete, spreads=(0.0,))["thesis"].to_dict("records")
    assert row["missing"] == ["gsm8k/dflash"]
    assert row["task_effect"] == pytest.approx(math.sqrt(2 / 3) * math.log(2), rel=1e-9)
    assert row["method_effect"] == pytest.approx(math.sqrt(2 / 3) * math.log(1.1), rel=1e-9)


def test_the_decomposition_of_a_hand_made_matrix():
    """2 x 3, complete: a_t the row means less the grand mean, b_m the column means less it, the rest the residual."""
    logs = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 3.0]])
    fit = thesis_module.design(np.ones_like(logs, dtype=bool))
    values = logs.ravel()
    a = logs.mean(axis=1) - logs.mean()
    b = logs.mean(axis=0) - logs.mean()
    rest = logs - logs.mean() - a[:, None] - b[None, :]
    assert fit.task @ values == pytest.approx(a) and fit.method @ values == pytest.approx(b)
    squares = {name: values @ q @ values for name, q in fit.forms.items()}
    assert squares["task"] == pytest.approx(np.mean(a**2)) and squares["method"] == pytest.approx(np.mean(b**2))
    assert squares["rest"] == pytest.approx(np.mean(rest**2))


def test_every_temperature_gets_a_row():
    frame = tables_of(by_task(2.0), temperatures=(0.0, 1.0))["thesis"]
    assert list(frame.temperature) == [0.0, 1.0] and set(frame.decides) == {"task"}
    assert thesis(frame_of([], BASELINE), BASELINE).empty


# --------------------------------------------------------------------------------------------------------------
# Containment and calibration, by simulation (bench/calibration.py runs the long version)
# --------------------------------------------------------------------------------------------------------------


def simulated(logs: np.ndarray, cv: float, runs: int, rng: np.random.Generator) -> dict[str, Any]:
    """The figures of one simulated run of a (tasks, methods) matrix of true log multipliers (NaN: not measured):
    every cell's and baseline's runs normal with this CV around their true speed."""
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
    )


def test_every_interval_holds_its_estimate():
    """Random matrices of every size from 2 x 2 to 4 x 4, with gaps, 2 or 3 runs, noise from 1 % to 30 %."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        shape = tuple(rng.integers(2, 5, size=2))
        logs = rng.normal(0, rng.choice([0.0, 0.02, 0.3]), size=shape) + rng.normal(0, 0.3, size=shape[1])
        logs[rng.random(shape) < 0.15] = np.nan
        row = simulated(logs, rng.choice([0.01, 0.05, 0.3]), int(rng.integers(2, 4)), rng)
        if row["decides"] == "cannot be judged":
            continue
        for name, point in (("task", "task_effect"), ("method", "method_effect"), ("difference", "difference")):
            assert row[f"{name}_low"] <= row[point] <= row[f"{name}_high"], (name, row)
        if math.isnan(row["ratio"]):
            assert "no ratio" in row["reason"] and math.isnan(row["ratio_low"])
        else:
            assert row["ratio_low"] <= row["ratio"] <= row["ratio_high"], row
        assert (row["difference_low"] > 0) == (row["decides"] == "task")
        assert (row["difference_high"] < 0) == (row["decides"] == "method")


def test_coverage_and_ties_in_a_small_simulation():
    """200 runs of a 4 x 3 matrix whose task and method effects are equal (tau = beta = 0.2), 3 runs a side at 5 %
    noise: D's interval holds 0, and the ratio's 1, in 95 % of them (a binomial band of 200 draws), and a wrong
    'decides' is rare."""
    rng = np.random.default_rng(1)
    a, b = np.array([-0.2, -0.2, 0.2, 0.2]), 0.2 * math.sqrt(1.5) * np.array([-1.0, 0.0, 1.0])
    logs = a[:, None] + b[None, :]
    rows = [simulated(logs, 0.05, 3, rng) for _ in range(200)]
    covered = sum(r["difference_low"] <= 0 <= r["difference_high"] for r in rows)
    assert 180 <= covered <= 197  # 95 % of 200 is 190; the band is about +-3.5 standard deviations
    assert sum(r["ratio_low"] <= 1 <= r["ratio_high"] for r in rows) == covered  # one verdict, two readings
    assert sum(r["decides"] != "not separated" for r in rows) == 200 - covered


# --------------------------------------------------------------------------------------------------------------
# The published matrix
# --------------------------------------------------------------------------------------------------------------


def test_the_published_figure_by_hand():
    """The study's two complete rows (file rewrite and essay under n-gram / MTP / DFlash): a row mean less the grand
    mean is each task's effect, a column mean less it each method's; the task carries 74 % of the spread, the
    method 12 %, the rest 14 %."""
    logs = np.log([[6.25, 1.78, 3.35], [1.00, 1.04, 0.66]])
    a, b = logs.mean(axis=1) - logs.mean(), logs.mean(axis=0) - logs.mean()
    spread = np.mean((logs - logs.mean()) ** 2)
    rows = {"file-rewrite": [6.25, 1.78, 3.35], "essay": [1.0, 1.04, 0.66]}
    figure = published_figure({t: dict(zip(METHODS, v, strict=True)) for t, v in rows.items()})
    tau, beta = math.sqrt(np.mean(a**2)), math.sqrt(np.mean(b**2))
    assert figure["task_effect"] == pytest.approx((tau, tau), rel=1e-12)
    assert figure["method_effect"] == pytest.approx((beta, beta), rel=1e-12)
    assert figure["ratio"] == pytest.approx((tau / beta,) * 2, rel=1e-12)
    assert figure["task_share"][0] == pytest.approx(tau**2 / spread, rel=1e-12)
    assert figure["method_share"][0] == pytest.approx(beta**2 / spread, rel=1e-12)
    assert [round(figure[f"{k}_share"][0], 2) for k in ("task", "method", "interaction")] == [0.74, 0.12, 0.14]
    assert figure["decides"] == "task" and figure["missing"] == [] and figure["readings"] == 1


def test_the_published_figure_under_every_reading_of_the_claims_file():
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
            corners.append(published_figure(point)["task_effect"][0])
    low, high = figure["task_effect"]
    assert low <= min(corners) and max(corners) <= high  # every corner reading inside the range over the readings
    assert max(corners) == pytest.approx(high)  # tau^2 is convex in the logs: its largest value is at a corner
    assert figure["difference"][0] > 0 and figure["decides"] == "task"
    assert 1.60 < math.exp(low) < math.exp(high) < 1.65 and math.exp(figure["method_effect"][1]) < 1.06


def test_a_matrix_naming_another_task_is_refused():
    with pytest.raises(ClaimError, match="key 'matrix'"):
        thesis_claim(matrix={"file-rewrite": {"ngram-mod": 6.25}, "poetry": {"ngram-mod": 1.0}})
    with pytest.raises(ClaimError, match="key 'matrix'.*warp"):
        thesis_claim(matrix={t: {"warp": 2.0} for t in TASKS})


# --------------------------------------------------------------------------------------------------------------
# The claim
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verdict", [REPRODUCED, CONTRADICTED, NOT_SEPARATED])
def test_the_claim_reads_what_its_tables_say(verdict):
    claim = thesis_claim()
    tables = thesis_tables(claim, verdict)
    tables["cells"] = pd.concat(  # the variant's DFlash setting, as the study config runs it
        [
            tables["cells"],
            tables["cells"][tables["cells"].condition == "dflash"].assign(
                condition="dflash-n15", cell_file=lambda f: f.cell_file.str.replace("dflash", "dflash-n15")
            ),
        ],
        ignore_index=True,
    )
    result = judged(claim, tables)
    for row_id in (claim.id, f"{claim.id}@dflash-n15"):
        row = result.loc[row_id]
        assert (row["verdict"], row["verdict_t1"]) == (verdict, verdict), row["detail"]
        assert "published multipliers: task 1.61-1.64x vs method 1.02-1.06x" in row["detail"]
        assert "not given: gsm8k/dflash" in row["detail"] and "no interval" in row["detail"]
    assert result.loc[claim.id, "measured"]["run"]["methods"] == METHODS
    assert result.loc[f"{claim.id}@dflash-n15", "measured"]["run"]["methods"] == ["ngram-mod", "mtp", "dflash-n15"]
    assert result.loc[claim.id, "measured_text"].startswith("task ")


def test_the_claim_with_one_method_cannot_be_judged():
    claim = thesis_claim()
    result = judged(claim, tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}))
    row = result.loc[claim.id]
    assert row["verdict"] == NOT_MEASURED and row["detail"].startswith("cannot be judged: only one method ran")
    assert result.loc[claim.id, "verdict_t1"] == NOT_MEASURED  # nothing at temperature 1.0
    off_setup = judged(claim, tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}), study=False)
    assert off_setup.loc[claim.id, "verdict"] == NOT_MEASURED  # not measured stays so off the study's setup


def test_the_claim_with_one_run_a_cell_reads_too_few_runs():
    claim = thesis_claim()
    multipliers = {t: {m: 2.0**ti for m in METHODS} for ti, t in enumerate(TASKS)}
    assert judged(claim, tables_of(multipliers, spreads=(0.0,))).loc[claim.id, "verdict"] == TOO_FEW_RUNS


def test_off_the_studys_setup_the_claim_agrees_or_differs():
    claim = thesis_claim()
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
        "no cells of dflash-n15 at temperature 0"
    )
    three = thesis_tables(replace_tasks(claim, claim.tasks[:3]), REPRODUCED)
    assert judged(claim, three).loc[claim.id, "detail"].startswith("no cells of essay")


def replace_tasks(claim: Claim, tasks: Sequence[str]) -> Claim:
    return dataclasses.replace(claim, tasks=tuple(tasks))


def test_the_figure_says_the_answer_and_draws_with_one_method_too(monkeypatch):
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
    png = thesis_figure_module.thesis_figure(decided, BASELINE, published, TASKS, [BASELINE, *METHODS])
    assert png.startswith(b"\x89PNG") and any("this run: the task decides (ratio 7.28 [" in t for t in texts)
    assert any("published multipliers: the task decides (ratio 8.79-32.64)" in t for t in texts)
    texts.clear()
    one = tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)})["thesis"]
    assert thesis_figure_module.thesis_figure(one, BASELINE, None).startswith(b"\x89PNG")
    assert "this run: only one method ran (ngram-mod)" in texts
    assert any("this run: cannot be judged" in t for t in texts)


def test_the_csv_copy_writes_the_matrix_as_json():
    frame = csv_copy(tables_of(by_task(2.0))["thesis"])
    assert json.loads(frame.matrix.iloc[0])["gsm8k"]["mtp"] == pytest.approx(4.4)
    assert json.loads(frame.methods.iloc[0]) == ["dflash", "mtp", "ngram-mod"]
