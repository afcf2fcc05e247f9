"""The stated limits' sentence as claims ("the size of the multipliers will differ; the order between tasks will
stay"): one order of tasks per method, as the study's figures give it, judged by the ordering rule on any hardware.
The rule on generated per-task multipliers with their 95 % intervals (holds only where every adjacent pair of tiers
is separated, contradicted by any pair reversed, tighter runs never undo a decided order); every pair of each
transfer claim shown able to fail; study-shaped runs on an H200; and config/predictions.yaml reading "this order"
as config/claims.yaml does."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specbench.analysis.cell_table import frame_of
from specbench.analysis.speed import summary
from specbench.claims.claim import (
    CONTRADICTED,
    NOT_SEPARATED,
    REPRODUCED,
    SAME_HERE,
    T0_ONLY,
    Claim,
    variant,
)
from specbench.claims.claims_file import load_claims, parse_claims
from specbench.claims.evaluate import Setup, evaluate
from specbench.claims.judge_inputs import METRICS, Run
from specbench.claims.judges import JUDGES
from specbench.report.sections.opening import HELD_KIND, NOT_REPRODUCED_KIND, opening_entries
from support.bounded import bounded
from support.counterfactuals import BASELINE, CONFIG, COUNTERFACTUALS, make_rows, make_tables
from support.paths import REPO
from support.study_run import MULTIPLIERS, TEMPERATURES, study_run

TASKS = ("file-rewrite", "todo-app", "gsm8k", "essay")
SENTENCE = "order-transfers"
PLACE = "limits.1"
H200 = Setup(comparable=False, same_model=True, device="NVIDIA H200")
STUDY = Setup(comparable=True, same_model=True, device="NVIDIA A100 80GB")
ANOTHER_MODEL = Setup(comparable=False, same_model=False, device="NVIDIA H200")
OFF = 126.0
ROUNDING = 0.005  # the study gives multipliers to two decimals
# Each example builds one summary with the pipeline's own code: few examples, the same draws every run
BOUNDED = bounded(60)
Tiers = list[list[str]]


@pytest.fixture(scope="module")
def claims() -> list[Claim]:
    return load_claims(REPO / "config" / "claims.yaml", CONFIG)


@pytest.fixture(scope="module")
def transfers(claims: list[Claim]) -> dict[str, Claim]:
    """The transfer claims by their method."""
    found = [c for c in claims if c.place == PLACE]
    assert all(len(c.conditions) == 1 for c in found)
    return {c.conditions[0]: c for c in found}


# --------------------------------------------------------------------------------------------------------------
# The claims: one per method, the study's whole order of tasks, one sentence at the stated limits


def _figure(value: Any) -> tuple[float, float] | None:
    """A published cell of the thesis's matrix as the range it stands for (a number within its rounding)."""
    if value is None:
        return None
    low, high = value if isinstance(value, list) else (value, value)
    return low - ROUNDING, high + ROUNDING


def test_one_transfer_claim_per_method_orders_every_task_the_study_gives_a_figure_for(
    claims: list[Claim], transfers: dict[str, Claim]
) -> None:
    """Each method's claim orders exactly the tasks the study gives it a figure for (the thesis's matrix of published
    multipliers), one task above another where its figure lies wholly above the other's, in one tier where the two
    touch or overlap (a figure inside another's range, equal within rounding): no order asked that the figures do not
    give, none left out that they give."""
    thesis = next(c for c in claims if c.kind == "thesis")  # its matrix: the study's multipliers
    assert set(transfers) == set(thesis.conditions)
    for method, one in transfers.items():
        figures = {task: _figure(thesis.matrix[task][method]) for task in thesis.tasks}
        given_ = {task for task, figure in figures.items() if figure is not None}
        assert set(one.tasks) == given_, method
        tier = {task: i for i, members in enumerate(one.published) for task in members}
        for a, b in itertools.permutations(one.tasks, 2):
            above = figures[a][0] > figures[b][1]
            assert (tier[a] < tier[b]) == above, (method, a, b, figures[a], figures[b], one.published)
        assert (one.kind, one.over, one.metric, one.scope) == ("ordering", "tasks", "speedup", "transfers")
        assert one.unstated and one.sentence == SENTENCE and one.explains == ""
        assert one.variants == tuple(v for v in thesis.variants if v.startswith(f"{method}-")), method


def test_no_other_claim_states_a_transfer_claims_order(claims: list[Claim], transfers: dict[str, Claim]) -> None:
    """One claim per prediction: no claim outside the stated limits orders the same tasks of the same method the
    same way (a weaker order, the conclusion's file rewrite above the essay, is a sentence of its own)."""

    def order(one: Claim) -> tuple[str, frozenset[tuple[str, str]]]:
        return one.conditions[0], frozenset(_cross(one.published))

    stated = {order(one) for one in transfers.values()}
    others = [c for c in claims if c.kind == "ordering" and c.over == "tasks" and c.place != PLACE]
    assert others  # the conclusion's order and the same shape at 1.0
    for other in others:
        for condition in other.conditions:
            assert order(replace(other, conditions=(condition,))) not in stated, other.id


def test_predictions_read_this_order_as_the_claims_do(claims: list[Claim]) -> None:
    """ "This order was the one predicted before measuring": config/predictions.yaml predicts, per method, the order
    config/claims.yaml reads in that sentence (order-held), at the same temperature reading, no more."""

    def orders(of: Sequence[Claim]) -> dict[str, tuple[Any, bool, tuple[str, ...]]]:
        return {
            condition: (one.published, one.unstated, tuple(v for v in one.variants if v.startswith(f"{condition}-")))
            for one in of
            for condition in one.conditions
        }

    held = [c for c in claims if c.sentence == "order-held"]
    predicted = load_claims(REPO / "config" / "predictions.yaml", CONFIG)
    assert held and predicted
    assert orders(predicted) == orders(held)


# --------------------------------------------------------------------------------------------------------------
# The rule on generated multipliers with their intervals


def _centred(deviations: Sequence[float]) -> list[float]:
    mean = sum(deviations) / len(deviations)
    return [d - mean for d in deviations]


def _run(multipliers: Mapping[str, float], scales: Mapping[str, float], off: Sequence[float], own: Sequence[float]):
    """Per task, off's runs at OFF and n-gram's at OFF x the task's multiplier, each run's deviation from its mean
    (a fraction) times the task's scale: the means, so the multipliers, are exactly the given ones."""
    speeds = {}
    for task, multiplier in multipliers.items():
        speeds[(task, BASELINE, 0.0)] = [OFF * (1 + scales[task] * d) for d in _centred(off)]
        speeds[(task, "ngram-mod", 0.0)] = [OFF * multiplier * (1 + scales[task] * d) for d in _centred(own)]
    cells = frame_of(make_rows(speeds), BASELINE)
    return Run({"cells": cells, "summary": summary(cells, BASELINE)}, BASELINE)


def _order_claim(tiers: Tiers) -> Claim:
    entry = {"id": "an-order", "text": "an order of tasks", "kind": "ordering", "metric": "speedup"}
    entry |= {"over": "tasks", "condition": "ngram-mod", "temperature": 0.0, "published": tiers}
    return parse_claims([entry], CONFIG)[0]


def _cross(tiers: Tiers, adjacent: bool = False) -> list[tuple[str, str]]:
    """(upper, lower) for every pair across the tiers, or across adjacent tiers only."""
    return [
        (a, b)
        for i, upper in enumerate(tiers)
        for lower in (tiers[i + 1 : i + 2] if adjacent else tiers[i + 1 :])
        for a in upper
        for b in lower
    ]


@st.composite
def tiers_of_tasks(draw: st.DrawFn) -> Tiers:
    """Two to four tasks in two or more tiers, best first."""
    tasks = draw(st.permutations(TASKS))[: draw(st.integers(2, len(TASKS)))]
    cuts = draw(st.lists(st.booleans(), min_size=len(tasks) - 1, max_size=len(tasks) - 1).filter(any))
    tiers: Tiers = [[tasks[0]]]
    for task, cut in zip(tasks[1:], cuts, strict=True):
        if cut:
            tiers.append([])
        tiers[-1].append(task)
    return tiers


deviations = st.lists(st.floats(-0.2, 0.2), min_size=3, max_size=3).filter(lambda d: max(d) - min(d) > 0.01)
scale = st.floats(0.001, 0.5)


@BOUNDED
@given(tiers=tiers_of_tasks(), data=st.data(), off=deviations, own=deviations)
def test_an_order_holds_only_where_every_adjacent_pair_is_separated(
    tiers: Tiers, data: st.DataObject, off: list[float], own: list[float]
) -> None:
    """Any tiers, any multipliers and run spreads: the order holds exactly where every pair of adjacent tiers is
    separated in the published direction (95 % intervals apart), is contradicted exactly where some pair across the
    tiers is reversed with intervals apart, and is not separated otherwise, naming each adjacent pair that is."""
    tasks = [t for tier in tiers for t in tier]
    multipliers = {t: data.draw(st.floats(0.3, 8.0), label=f"multiplier {t}") for t in tasks}
    scales = {t: data.draw(scale, label=f"scale {t}") for t in tasks}
    run = _run(multipliers, scales, off, own)
    bounds = {t: run.interval(METRICS["speedup"], t, "ngram-mod", 0.0) for t in tasks}

    def apart(a: str, b: str) -> bool:
        return bounds[a][0] > bounds[b][1]

    holds = all(apart(a, b) for a, b in _cross(tiers, adjacent=True))
    reversed_ = [(a, b) for a, b in _cross(tiers) if apart(b, a)]
    outcome = JUDGES["ordering"](_order_claim(tiers), run)
    expected = REPRODUCED if holds else CONTRADICTED if reversed_ else NOT_SEPARATED
    assert outcome.verdict == expected, (tiers, multipliers, bounds, outcome.detail)
    if expected == CONTRADICTED:
        named = outcome.detail.split("in the other order, intervals apart: ")[1]
        assert all(f"{a} vs {b}" in named for a, b in reversed_), outcome.detail
    if expected == NOT_SEPARATED:
        unseparated = [(a, b) for a, b in _cross(tiers, adjacent=True) if not apart(a, b)]
        assert unseparated and all(f"{a} vs {b}" in outcome.detail for a, b in unseparated), outcome.detail


def _held_multipliers(tiers: Tiers, jitter: Sequence[float]) -> dict[str, float]:
    """Each tier 1.5x above the next, its members within 5 % of one another: an order that holds."""
    base = {task: 0.5 * 1.5 ** (len(tiers) - i) for i, tier in enumerate(tiers) for task in tier}
    return {task: value * (1 + 0.05 * j) for (task, value), j in zip(base.items(), jitter, strict=False)}


@BOUNDED
@given(
    tiers=tiers_of_tasks(),
    jitter=st.lists(st.floats(0, 1), min_size=len(TASKS), max_size=len(TASKS)),
    pick=st.integers(0, 100),
    off=deviations,
    own=deviations,
)
def test_reversing_any_pair_beyond_the_intervals_contradicts_the_order(
    tiers: Tiers, jitter: list[float], pick: int, off: list[float], own: list[float]
) -> None:
    """An order that holds (runs within about 1 %), then two tasks of different tiers swapped: contradicted, that
    pair named."""
    multipliers = _held_multipliers(tiers, jitter)
    scales = dict.fromkeys(multipliers, 0.02)
    claim = _order_claim(tiers)
    assert JUDGES["ordering"](claim, _run(multipliers, scales, off, own)).verdict == REPRODUCED
    pairs = _cross(tiers)
    a, b = pairs[pick % len(pairs)]
    swapped = {**multipliers, a: multipliers[b], b: multipliers[a]}
    outcome = JUDGES["ordering"](claim, _run(swapped, scales, off, own))
    assert outcome.verdict == CONTRADICTED
    assert f"{a} vs {b}" in outcome.detail.split("in the other order, intervals apart: ")[1], outcome.detail


@BOUNDED
@given(tiers=tiers_of_tasks(), data=st.data(), off=deviations, own=deviations, tighter=st.floats(0.01, 0.99))
def test_tighter_runs_never_undo_a_decided_order(
    tiers: Tiers, data: st.DataObject, off: list[float], own: list[float], tighter: float
) -> None:
    """The same means with every run's deviation scaled down (off's and the method's alike, so each interval
    narrows around its own centre): a held order stays held, a contradicted one contradicted."""
    tasks = [t for tier in tiers for t in tier]
    multipliers = {t: data.draw(st.floats(0.3, 8.0), label=f"multiplier {t}") for t in tasks}
    scales = {t: data.draw(scale, label=f"scale {t}") for t in tasks}
    claim = _order_claim(tiers)
    wide = JUDGES["ordering"](claim, _run(multipliers, scales, off, own)).verdict
    narrow = JUDGES["ordering"](claim, _run(multipliers, {t: s * tighter for t, s in scales.items()}, off, own))
    if wide in (REPRODUCED, CONTRADICTED):
        assert narrow.verdict == wide, (tiers, multipliers, narrow.detail)


# --------------------------------------------------------------------------------------------------------------
# Every pair of every transfer claim can fail


def _pair_flipped(one: Claim, a: str, b: str) -> dict[str, Any]:
    """The claim's order as published (each tier 1.5x above the next), with a and b swapped, at both
    temperatures."""
    values = _held_multipliers([list(t) for t in one.published], [0.0] * len(one.tasks))
    values[a], values[b] = values[b], values[a]
    speeds = {}
    for t in TEMPERATURES:
        for task in one.tasks:
            speeds[(task, BASELINE, t)] = [OFF - 1, OFF, OFF + 1]
            for condition in one.conditions:
                centre = OFF * values[task]
                speeds[(task, condition, t)] = [centre * 0.999, centre, centre * 1.001]
    return make_tables(speeds)


def test_every_transfer_claim_can_fail_on_each_of_its_pairs(transfers: dict[str, Claim]) -> None:
    """The counterfactual walk's tables for each transfer claim and variant (reproduced, contradicted, not
    separated, too few runs) at both temperatures; and for each pair across its tiers, the published order with
    that pair swapped reads contradicted, the pair named."""
    rows = [one for base in transfers.values() for one in (base, *(variant(base, v) for v in base.variants))]
    assert len(rows) == 4
    for one in rows:
        made = COUNTERFACTUALS[one.kind](one)
        expected = [(REPRODUCED, made.reproduced), *made.failing, (NOT_SEPARATED, made.not_separated)]
        assert CONTRADICTED in {verdict for verdict, _ in made.failing}
        for verdict, tables in expected:
            row = evaluate([one], tables, baseline=BASELINE, setup=STUDY).iloc[0]
            assert (row["verdict"], row["verdict_t1"]) == (verdict, verdict), (one.id, verdict, row["detail"])
        for a, b in _cross([list(t) for t in one.published]):
            row = evaluate([one], _pair_flipped(one, a, b), baseline=BASELINE, setup=H200).iloc[0]
            assert (row["verdict"], row["verdict_t1"]) == (CONTRADICTED, CONTRADICTED), (one.id, a, b)
            assert f"{a} vs {b}" in row["detail"].split("in the other order, intervals apart: ")[1]


# --------------------------------------------------------------------------------------------------------------
# Study-shaped runs on an H200 (support.study_run)


def _transfer_rows(claims: list[Claim], setup: Setup = H200, **changes: Any):
    ones = [c for c in claims if c.place == PLACE]
    return evaluate(ones, study_run(**changes), baseline=BASELINE, setup=setup).set_index("id")


def _both(cells: Mapping[tuple[str, str], float]) -> dict[tuple[str, str, float], float]:
    return {(task, condition, t): value for (task, condition), value in cells.items() for t in TEMPERATURES}


def test_as_published_on_an_h200_every_order_of_tasks_holds(claims: list[Claim]) -> None:
    """Every multiplier as published, on an H200: the three orders of tasks (and DFlash's documented setting) hold
    at both temperatures, the sentence under both readings, held in the opening, the device named."""
    result = _transfer_rows(claims)
    assert len(result) == 4
    assert set(result.verdict) == set(result.verdict_t1) == {REPRODUCED}
    assert set(result.sentence_reading) == {"both readings"}
    assert all(d.startswith("ordering reproduced on NVIDIA H200: ") for d in result.detail)
    entries = {e.name: e for e in opening_entries(result.reset_index(), H200.device)}
    assert entries[SENTENCE].kind == HELD_KIND


def test_ngram_at_two_on_the_file_rewrite_still_holds_its_order(claims: list[Claim]) -> None:
    """n-gram 2.0x on the file rewrite instead of 6.25x: a size that differs, an order that stays."""
    result = _transfer_rows(claims, multipliers=_both({("file-rewrite", "ngram-mod"): 2.0}))
    assert (result.loc["ngram-task-order-transfers", ["verdict", "verdict_t1"]] == REPRODUCED).all()
    assert set(result.sentence_reading) == {"both readings"}
    assert "file-rewrite 2.00x > " in result.loc["ngram-task-order-transfers", "measured_text"]


def test_the_task_order_flipped_contradicts_every_method(claims: list[Claim]) -> None:
    """Each method's best and worst task swapped at both temperatures: each order is contradicted (the pair named),
    the sentence holds under neither reading, and the opening names it as not reproduced."""
    flipped = {}
    for method in ("ngram-mod", "mtp", "dflash", "dflash-n15"):
        published = MULTIPLIERS[method]
        flipped |= {("file-rewrite", method): published["essay"], ("essay", method): published["file-rewrite"]}
    result = _transfer_rows(claims, multipliers=_both(flipped))
    assert set(result.verdict) == set(result.verdict_t1) == {CONTRADICTED}
    assert all("file-rewrite vs essay" in d.split("in the other order, intervals apart: ")[1] for d in result.detail)
    assert set(result.sentence_reading) == {"neither reading"}
    entries = {e.name: e for e in opening_entries(result.reset_index(), H200.device)}
    assert entries[SENTENCE].kind == NOT_REPRODUCED_KIND


def test_a_flip_at_one_only_is_read_at_temperature_zero(claims: list[Claim]) -> None:
    """DFlash's new code below its essay at 1.0 only: its order is contradicted there, and the sentence, whose
    temperature the text does not give, holds under the temperature-0 reading only."""
    at_one = {("todo-app", d, 1.0): 0.5 for d in ("dflash", "dflash-n15")}
    result = _transfer_rows(claims, multipliers=at_one)
    row = result.loc["dflash-task-order-transfers"]
    assert (row["verdict"], row["verdict_t1"]) == (REPRODUCED, CONTRADICTED)
    assert row["measured_t1_text"].index("essay") < row["measured_t1_text"].index("todo-app")
    assert set(result.sentence_reading) == {T0_ONLY}


def test_on_another_model_the_orders_are_asked_not_failed(claims: list[Claim]) -> None:
    """Another model: each order of tasks is a question about that model, answered in the study's terms."""
    result = _transfer_rows(claims, setup=ANOTHER_MODEL)
    assert set(result.verdict) == set(result.verdict_t1) == {SAME_HERE}
