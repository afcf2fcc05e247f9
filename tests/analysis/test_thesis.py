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
from specbench.analysis.thesis import effects, published_figure, thesis, thesis_figure
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
from specbench.report import thesis_figure as thesis_figure_module
from support.config import load_config
from support.counterfactuals import cell_rows, tables_of, thesis_tables
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


def test_a_matrix_where_the_task_decides():
    [row] = tables_of(by_task(2.0))["thesis"].to_dict("records")
    # tasks 1, 2, 4 apart: pairs |log 2|, |log 2|, |log 4| under each method; methods |log 1.1|, |log 1.1|, |log 1.21|
    assert row["task_effect"] == pytest.approx(4 * math.log(2) / 3, rel=1e-9)
    assert row["method_effect"] == pytest.approx(4 * math.log(1.1) / 3, rel=1e-9)
    assert row["ratio"] == pytest.approx(math.log(2) / math.log(1.1), rel=1e-9)
    assert row["task_low"] < row["task_effect"] < row["task_high"]
    assert row["method_low"] < row["method_effect"] < row["method_high"]
    assert row["ratio_low"] > 1 and row["decides"] == "task"
    assert (row["task_pairs"], row["method_pairs"], row["fewest_runs"]) == (9, 9, 3)
    assert sorted(row["methods"]) == sorted(METHODS) and sorted(row["tasks"]) == sorted(TASKS[:3])  # table order
    assert row["matrix"]["gsm8k"]["mtp"] == pytest.approx(4 * 1.1)
    assert len(row["cells"]) == 3 * 4 * 3  # every run of the three tasks, the baseline's too


def test_a_matrix_where_the_method_decides():
    swapped = {t: {m: 1.05**ti * 3.0**mi for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS)}
    [row] = tables_of(swapped)["thesis"].to_dict("records")
    assert row["ratio_high"] < 1 and row["decides"] == "method"
    assert row["method_effect"] == pytest.approx(4 * math.log(3) / 3, rel=1e-9)


def test_neither_separated_when_the_runs_spread_widely():
    even = {t: {m: 1.5 ** ((ti + mi) % 2) for mi, m in enumerate(METHODS)} for ti, t in enumerate(TASKS[:3])}
    [row] = tables_of(even, spreads=(-0.3, 0.0, 0.3))["thesis"].to_dict("records")
    assert row["ratio_low"] < 1 < row["ratio_high"] and row["decides"] == "not separated"


def test_the_interval_is_seeded_and_reproducible():
    cells = frame_of(cell_rows(by_task(1.3), spreads=(-0.1, 0.0, 0.1)), BASELINE)
    first, again = (thesis_figure(cells, BASELINE, 0.0) for _ in range(2))
    assert (first["ratio_low"], first["ratio_high"]) == (again["ratio_low"], again["ratio_high"])
    other = thesis_figure(cells, BASELINE, 0.0, seed=1)
    assert (other["ratio_low"], other["ratio_high"]) != (first["ratio_low"], first["ratio_high"])


def test_one_method_or_one_task_cannot_be_judged():
    one_method = {t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)}
    [row] = tables_of(one_method)["thesis"].to_dict("records")
    assert row["decides"] == "cannot be judged" and row["reason"] == "only one method ran (ngram-mod)"
    assert row["method_pairs"] == 0 and math.isnan(row["ratio_low"])
    [row] = tables_of({"essay": {"ngram-mod": 1.0, "mtp": 1.5}})["thesis"].to_dict("records")
    assert row["decides"] == "cannot be judged" and row["reason"] == "no two tasks measured with one method"


def test_one_run_a_cell_gives_no_interval():
    [row] = tables_of(by_task(2.0), spreads=(0.0,))["thesis"].to_dict("records")
    assert row["decides"] == "too few runs" and math.isnan(row["ratio_low"])
    assert row["ratio"] == pytest.approx(math.log(2) / math.log(1.1), rel=1e-9)  # the point figure still shown


def test_an_incomplete_matrix_counts_only_the_pairs_it_has():
    incomplete = by_task(2.0)
    del incomplete["gsm8k"]["dflash"]
    [row] = tables_of(incomplete)["thesis"].to_dict("records")
    assert (row["task_pairs"], row["method_pairs"]) == (3 + 3 + 1, 3 + 3 + 1)
    # under each method 1-2, 2-4 (log 2) and 1-4 (log 4); DFlash lacks gsm8k's two pairs (2-4 and 1-4)
    task = (3 * (2 * math.log(2) + math.log(4)) - math.log(2) - math.log(4)) / 7
    assert row["task_effect"] == pytest.approx(task, rel=1e-9)


def test_effects_of_a_hand_made_matrix_with_a_gap():
    logs = [[0.0, 1.0], [2.0, float("nan")], [1.0, 3.0]]
    task, method = effects(pd.DataFrame(logs).to_numpy())
    assert task == pytest.approx((2 + 1 + 1 + 2) / 4)  # method 1: 0-2, 0-1, 2-1; method 2: 1-3
    assert method == pytest.approx((1 + 2) / 2)  # tasks 1 and 3 have both methods


def test_every_temperature_gets_a_row():
    frame = tables_of(by_task(2.0), temperatures=(0.0, 1.0))["thesis"]
    assert list(frame.temperature) == [0.0, 1.0] and set(frame.decides) == {"task"}
    assert thesis(frame_of([], BASELINE), BASELINE).empty


# --------------------------------------------------------------------------------------------------------------
# The published matrix
# --------------------------------------------------------------------------------------------------------------


def test_the_published_figure_by_hand():
    """One reading of the study's multipliers: MTP 1.5x on new code and math, n-gram 'slightly slower' at 1.00x, the
    essay's DFlash 0.66x, DFlash on math not given: 15 task pairs and 10 method pairs, each |log a - log b|."""
    ln = math.log
    ngram = [6.25, 1.00, 1.00, 1.00]  # file rewrite, new code, math, essay
    mtp = [1.78, 1.5, 1.5, 1.04]
    dflash = [3.35, 2.27, 0.66]  # file rewrite, new code, essay
    task_pairs = [abs(ln(a) - ln(b)) for column in (ngram, mtp, dflash) for a, b in itertools.combinations(column, 2)]
    rows = [[6.25, 1.78, 3.35], [1.00, 1.5, 2.27], [1.00, 1.5], [1.00, 1.04, 0.66]]
    method_pairs = [abs(ln(a) - ln(b)) for row in rows for a, b in itertools.combinations(row, 2)]
    assert (len(task_pairs), len(method_pairs)) == (15, 10)
    task, method = sum(task_pairs) / 15, sum(method_pairs) / 10
    figure = published_figure(
        {
            "file-rewrite": {"ngram-mod": 6.25, "mtp": 1.78, "dflash": 3.35},
            "todo-app": {"ngram-mod": 1.0, "mtp": 1.5, "dflash": 2.27},
            "gsm8k": {"ngram-mod": 1.0, "mtp": 1.5, "dflash": None},
            "essay": {"ngram-mod": 1.0, "mtp": 1.04, "dflash": 0.66},
        }
    )
    assert figure["task_effect"] == pytest.approx((task, task), rel=1e-12)
    assert figure["method_effect"] == pytest.approx((method, method), rel=1e-12)
    assert figure["ratio"] == pytest.approx((task / method,) * 2, rel=1e-12)
    assert (figure["task_pairs"], figure["method_pairs"], figure["readings"]) == (15, 10, 1)
    assert figure["missing"] == ["gsm8k/dflash"] and figure["decides"] == "task"
    assert math.exp(task) == pytest.approx(1.995, abs=1e-3) and math.exp(method) == pytest.approx(1.727, abs=1e-3)


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
            corners.append(published_figure(point)["ratio"][0])
    low, high = figure["ratio"]
    assert low <= min(corners) and max(corners) <= high  # every corner reading inside the range over the readings
    assert 1 < low < 1.25 < high < 1.35 and figure["decides"] == "task"


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
        assert "published multipliers: task 1.98-2.08x vs method 1.71-1.82x" in row["detail"]
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
    assert png.startswith(b"\x89PNG") and any("this run: the task decides (ratio 7.27 [" in t for t in texts)
    assert any("published multipliers: the task decides (ratio 1.21-1.31)" in t for t in texts)
    texts.clear()
    one = tables_of({t: {"ngram-mod": 2.0**ti} for ti, t in enumerate(TASKS)})["thesis"]
    assert thesis_figure_module.thesis_figure(one, BASELINE, None).startswith(b"\x89PNG")
    assert "this run: only one method ran (ngram-mod)" in texts
    assert any("this run: cannot be judged" in t for t in texts)


def test_the_csv_copy_writes_the_matrix_as_json():
    frame = csv_copy(tables_of(by_task(2.0))["thesis"])
    assert json.loads(frame.matrix.iloc[0])["gsm8k"]["mtp"] == pytest.approx(4.4)
    assert json.loads(frame.methods.iloc[0]) == ["dflash", "mtp", "ngram-mod"]


def test_a_drawn_mean_varies_as_a_t_intervals_standard_error_says():
    """Three runs: the plain bootstrap's mean varies by 2/3 of s^2 / n; spread by sqrt(n / (n - 1)) it is s^2 / n."""
    runs = np.array([90.0, 100.0, 113.0])
    drawn = thesis_module._means(runs, 40_000, (0, 1))
    assert drawn.mean() == pytest.approx(runs.mean(), rel=1e-3)
    assert drawn.var() == pytest.approx(runs.var(ddof=1) / 3, rel=0.05)
