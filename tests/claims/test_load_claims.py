"""Claims about load (claims.load_judge), judged on load tables made by the pipeline's own code from generated
points: "pays up to N*" against where each multiplier's interval lies, "acceptance the same at every N" against the
band of its change from one request; and by simulation against a known truth, a true claim is seldom failed and a
false one seldom held."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specbench.analysis.load import ABOVE, BELOW, load_table
from specbench.claims.claim import (
    NOT_DIRECTION,
    NOT_MEASURED,
    NOT_REPRODUCED,
    NOT_SEPARATED,
    NOT_SIZE,
    REPRODUCED,
    TOO_FEW_RUNS,
    TOO_WIDE,
    ClaimError,
)
from specbench.claims.claims_file import parse_claims
from specbench.claims.evaluate import Setup, evaluate
from support.counterfactuals import CONFIG
from support.load_points import point_rows

HERE = Setup(comparable=True, same_model=True, device="CPU (x86_64)")
LEVELS = (1, 2, 4)


def judge(published: Any, tables: dict, kind: str = "pays_up_to", **extra: Any) -> Any:
    entry = {"id": "load-claim", "text": "a load claim", "kind": kind, "published": published, "task": "essay"}
    entry |= {"condition": "mtp", "temperature": 0.0, **extra}
    (claim,) = parse_claims([entry], CONFIG)
    return evaluate([claim], tables, baseline="off", setup=HERE).iloc[0]


def tables_of(speeds: dict, accepted: dict | None = None, drafted: int = 10) -> dict:
    return {"load": load_table(point_rows(speeds, accepted=accepted, drafted=drafted), "off")}


def speeds_at(multipliers: dict[int, float], spread: float = 0.0, runs: int = 3) -> dict:
    """off at 100 tok/s a request, mtp at the multiplier; each repeat's speed +- spread around it."""
    wobble = [1.0 + spread * k for k in range(runs)]
    speeds = {("off", n): [[100.0 * w] * n for w in wobble] for n in multipliers}
    return speeds | {("mtp", n): [[100.0 * m * w] * n for w in wobble] for n, m in multipliers.items()}


def test_pays_up_to_n_star_is_reproduced_where_the_sides_of_one_agree_and_failed_where_they_do_not() -> None:
    tables = tables_of(speeds_at({1: 2.1, 2: 1.4, 4: 0.77}, spread=0.01))
    row = judge(4, tables)
    assert row.verdict == REPRODUCED, row.detail
    assert row.measured["essay"]["n_star"] == 4 and "N=4 0.77x below 1.0x" in row.measured_text
    mtp = tables["load"][tables["load"].condition == "mtp"]
    assert sorted(row.cells) == sorted(set(mtp.cells.sum()))  # each multiplier's cells, the baseline's too
    early = judge(8, tables, at=[1, 2, 4, 8])  # N* published later than this run finds it
    assert early.verdict == NOT_MEASURED and "essay at N = 8" in early.detail
    assert judge(8, tables, at=[1, 8]).verdict == NOT_MEASURED
    assert judge(2, tables).verdict == NOT_DIRECTION  # at 2 it still pays here
    assert "essay at N = 2" in judge(2, tables).detail
    assert judge("every N", tables).verdict == NOT_DIRECTION
    assert judge("every N", tables, at=[1, 2]).verdict == REPRODUCED  # the published figures' own levels only


def test_pays_up_to_says_when_an_interval_cannot_decide() -> None:
    straddling = tables_of(speeds_at({1: 2.0, 2: 1.0}, spread=0.05))
    assert judge("every N", straddling).verdict == NOT_SEPARATED
    one_run = tables_of(speeds_at({1: 2.0, 2: 0.5}, runs=1))
    assert judge(2, one_run).verdict == TOO_FEW_RUNS
    assert judge(2, tables_of({})).verdict == NOT_MEASURED  # a run without a load dimension
    assert judge(2, tables_of(speeds_at({1: 2.0, 2: 0.5})), condition="off").verdict == NOT_MEASURED


@settings(max_examples=40, deadline=None)
@given(
    multipliers=st.lists(st.floats(0.3, 3.0), min_size=3, max_size=3),
    published=st.sampled_from([2, 4, "every N"]),
)
def test_pays_up_to_follows_the_load_tables_sides_on_any_multipliers(multipliers: list[float], published: Any) -> None:
    """On any multipliers (with a 1 % spread over repeats), the verdict is the one the load table's reading of each
    interval against 1.0x gives: a point on the wrong side fails the claim, and only then."""
    tables = tables_of(speeds_at(dict(zip(LEVELS, multipliers, strict=True)), spread=0.01))
    sides = tables["load"].set_index(["condition", "concurrency"]).against_one
    expected = {n: ABOVE if published == "every N" or n < published else BELOW for n in LEVELS}
    verdict = judge(published, tables).verdict
    wrong = [n for n in LEVELS if sides["mtp", n] in (ABOVE, BELOW) and sides["mtp", n] != expected[n]]
    assert (verdict == NOT_DIRECTION) == bool(wrong)
    assert (verdict == REPRODUCED) == all(sides["mtp", n] == expected[n] for n in LEVELS)


def simulated(truth: dict[int, float], accepted: dict[int, float], rng: np.random.Generator, cv: float) -> dict:
    """One simulated run: each request's speed lognormal with the CV around off's 100 and mtp's multiplier, 3
    repeats; mtp's acceptance per repeat about ``accepted[n]`` (a share) of 1,000 drafted tokens (+- 1 point)."""
    speeds, taken = {}, {}
    for n in truth:
        speeds["off", n] = [list(100.0 * rng.lognormal(0.0, cv, size=n)) for _ in range(3)]
        speeds["mtp", n] = [list(100.0 * truth[n] * rng.lognormal(0.0, cv, size=n)) for _ in range(3)]
        taken["mtp", n] = [round(1000 * share) for share in rng.normal(accepted[n], 0.01, size=3)]
    return tables_of(speeds, taken, drafted=1000)


def test_by_simulation_a_true_load_claim_is_seldom_failed_and_a_false_one_seldom_held() -> None:
    """Truth: multipliers 1.5, 1.15, 0.7 at N = 1, 2, 4 (N* = 4) with a 4 % CV; acceptance 70 % at every N. The
    true claims (N* 4; acceptance the same within 10 points) fail (a wrong side; a change beyond the band) in at most
    5 % of runs; the false ones (N* 2; pays at every N; acceptance different) hold in at most 5 %."""
    rng = np.random.default_rng(11)
    truth = {1: 1.5, 2: 1.15, 4: 0.7}
    verdicts: dict[str, list[str]] = {"n4": [], "n2": [], "every": [], "same": [], "different": []}
    for _ in range(60):
        tables = simulated(truth, dict.fromkeys(truth, 0.7), rng, 0.04)
        verdicts["n4"].append(judge(4, tables).verdict)
        verdicts["n2"].append(judge(2, tables).verdict)
        verdicts["every"].append(judge("every N", tables).verdict)
        verdicts["same"].append(judge("same", tables, kind="acceptance_under_load", tolerance=0.1).verdict)
        verdicts["different"].append(judge("different", tables, kind="acceptance_under_load", tolerance=0.1).verdict)
    share = {name: {v: found.count(v) / len(found) for v in set(found)} for name, found in verdicts.items()}
    assert share["n4"].get(NOT_DIRECTION, 0.0) <= 0.05 and share["n4"].get(REPRODUCED, 0.0) >= 0.8, share["n4"]
    assert share["n2"].get(REPRODUCED, 0.0) <= 0.05 and share["every"].get(REPRODUCED, 0.0) <= 0.05
    assert share["same"].get(NOT_SIZE, 0.0) <= 0.05 and share["same"].get(REPRODUCED, 0.0) >= 0.5, share["same"]
    assert share["different"].get(REPRODUCED, 0.0) <= 0.05


def test_acceptance_under_load_against_the_band_of_its_change() -> None:
    flat = speeds_at({1: 1.5, 2: 1.2, 4: 1.1})
    same = tables_of(flat, {("mtp", n): [7, 7, 7] for n in LEVELS})
    row = judge("same", same, kind="acceptance_under_load", tolerance=0.05)
    assert row.verdict == REPRODUCED and "N=2 +0.0 (+0.0 to +0.0) points" in row.measured_text
    assert judge("different", same, kind="acceptance_under_load", tolerance=0.05).verdict == NOT_REPRODUCED
    fallen = tables_of(flat, {("mtp", 4): [5, 5, 5]})
    row = judge("same", fallen, kind="acceptance_under_load", tolerance=0.05)
    assert row.verdict == NOT_SIZE and "essay at N = 4" in row.detail and "essay at N = 2" not in row.detail
    assert judge("different", fallen, kind="acceptance_under_load", tolerance=0.05).verdict == REPRODUCED
    assert judge("same", fallen, kind="acceptance_under_load", tolerance=0.05, at=[2]).verdict == REPRODUCED
    noisy = tables_of(flat, {("mtp", 2): [6, 7, 8]})
    assert judge("same", noisy, kind="acceptance_under_load", tolerance=0.05).verdict == TOO_WIDE
    one_run = tables_of(speeds_at({1: 1.5, 2: 1.2}, runs=1))
    assert judge("same", one_run, kind="acceptance_under_load", tolerance=0.05).verdict == TOO_FEW_RUNS
    off = judge("same", same, kind="acceptance_under_load", tolerance=0.05, condition="off", at=[2])
    assert off.verdict == NOT_MEASURED and "drafting" in off.detail  # off drafts nothing
    assert judge("same", same, kind="acceptance_under_load", tolerance=0.05, at=[8]).verdict == NOT_MEASURED


def test_load_claims_are_checked_when_loaded_and_read_back_as_published() -> None:
    with pytest.raises(ClaimError, match=r"key 'at': N\* 4 .* one of the levels \[1, 8\]"):
        judge(4, {}, at=[1, 8])
    with pytest.raises(ClaimError, match="key 'published'"):
        judge(1, {})  # N* 1: it never paid, not "pays up to"
    with pytest.raises(ClaimError, match="key 'tolerance'"):
        judge("same", {}, kind="acceptance_under_load")
    with pytest.raises(ClaimError, match="key 'at'"):
        judge("same", {}, kind="acceptance_under_load", tolerance=0.05, at=[1])
    row = judge(8, tables_of({}), at=[8, 1])
    assert row.published_text == "pays up to N* = 8: above 1.0x below it, below 1.0x from it (judged at N = 1, 8)"
    row = judge("same", tables_of({}), kind="acceptance_under_load", tolerance=0.05)
    assert row.published_text == "acceptance the same at every N as at one request (within ±5 points)"
    assert row.scope == "relative"
