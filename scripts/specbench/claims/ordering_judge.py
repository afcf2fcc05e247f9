"""The judge of an order (kind ``ordering``): tasks or methods in the published tiers, or the same shape at another
temperature, each pair decided by its 95 % intervals."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from specbench.claims.claim import CONTRADICTED, NOT_MEASURED, NOT_SEPARATED, REPRODUCED, TOO_FEW_RUNS
from specbench.claims.judge_inputs import METRICS, Outcome, Run, listed, side_of

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def _ranked(values: Mapping[str, float | None], fmt: Callable[[float], str]) -> str:
    known = sorted(((v, k) for k, v in values.items() if v is not None), key=lambda item: -item[0])
    if not known:
        return "n/a"
    unknown = listed(k for k, v in values.items() if v is None)
    return " > ".join(f"{k} {fmt(v)}" for v, k in known) + (f" (n/a: {unknown})" if unknown else "")


def _members(claim: Claim) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The groups an ordering ranks: per condition its tasks, or the one task's conditions; each member as (name,
    task, condition)."""
    if claim.over == "tasks":
        return [(c, [(t, t, c) for t in claim.tasks]) for c in claim.conditions]
    task = claim.tasks[0]
    return [(task, [(c, task, c) for c in claim.conditions])]


class _Measured:
    """One group's values and 95 % intervals at one temperature."""

    def __init__(self, claim: Claim, run: Run, members: list[tuple[str, str, str]], temperature: float) -> None:
        metric = METRICS[claim.metric]
        self.metric = metric
        self.values: dict[str, float | None] = {}
        self.bounds: dict[str, tuple[float, float] | None] = {}
        self.cells: list[str] = []
        for name, task, condition in members:
            self.values[name], found = run.value(metric, task, condition, temperature)
            self.bounds[name] = run.interval(metric, task, condition, temperature)
            self.cells += found

    def order(self, a: str, b: str) -> int:
        """+1 where a is above b with intervals apart (values apart, for a metric without intervals), -1 below, 0
        where they are not separated."""
        if self.metric.interval is None:
            return side_of(self.values[a], self.values[b])
        low_a, high_a = self.bounds[a]
        low_b, high_b = self.bounds[b]
        if low_a > high_b:
            return 1
        if low_b > high_a:
            return -1
        return 0

    def lacking(self) -> tuple[list[str], list[str]]:
        """Members without a value; members without an interval (where the metric has one)."""
        no_value = [m for m, v in self.values.items() if v is None]
        no_interval = [m for m, b in self.bounds.items() if b is None and self.metric.interval is not None]
        return no_value, no_interval


def _tier_pairs(claim: Claim) -> list[tuple[str, str]]:
    """(upper, lower) for every pair across the published tiers. Intervals apart is transitive, so every such pair
    is ordered exactly where every pair across two adjacent tiers is; a pair two tiers apart can still be reversed
    where the pairs between are only not separated, so each is judged."""
    pairs = []
    for i, upper in enumerate(claim.published):
        lower = [m for tier in claim.published[i + 1 :] for m in tier]
        pairs += list(itertools.product(upper, lower))
    return pairs


class _Tally:
    """What an ordering's groups lack (a value, a 95 % interval) and how its judged pairs came out, with the verdict
    they make: the tally every ordering judge keeps."""

    def __init__(self) -> None:
        self.no_value: list[str] = []
        self.no_interval: list[str] = []
        self.reversed: list[str] = []  # pairs in the other order, intervals apart
        self.unseparated: list[str] = []  # pairs whose intervals overlap
        self.judged = 0

    def add(self, prefix: str, *groups: _Measured) -> bool:
        """Note what the groups (one member set, at one or more temperatures) lack, each member named after
        ``prefix``; True where some member lacks something, so its pairs cannot be judged."""
        lacking = False
        for group in groups:
            no_value, no_interval = group.lacking()
            self.no_value += [prefix + m for m in no_value]
            self.no_interval += [prefix + m for m in no_interval]
            lacking = lacking or bool(no_value or no_interval)
        return lacking

    def judge(self, pair: str, order: int, expected: int) -> None:
        """One pair's ``order`` (+1 above, -1 below, 0 not separated) against the ``expected`` one (+1 or -1)."""
        self.judged += 1
        if order == -expected:
            self.reversed.append(pair)
        elif order == 0:
            self.unseparated.append(pair)

    def lacking(self, claim: Claim, at: str) -> tuple[str, str] | None:
        """Not measured where a member lacks a value at temperature ``at``, too few runs where one lacks an interval;
        else None."""
        if self.no_value:
            return NOT_MEASURED, f"no {claim.metric} for {listed(self.no_value)} at temperature {at}"
        if self.no_interval:
            members = listed(dict.fromkeys(self.no_interval))
            return TOO_FEW_RUNS, f"no 95 % interval for {members} (it needs 2 runs a side)"
        return None

    def verdict(self, what: str) -> tuple[str, str]:
        """Contradicted by any separated pair in the other order; not separated while any pair is; else reproduced."""
        kept = self.judged - len(self.reversed) - len(self.unseparated)
        summary = f"{kept} of {self.judged} pairs ordered as {what} with 95 % intervals apart"
        if self.unseparated:
            summary += f"; not separated (intervals overlap): {listed(self.unseparated)}"
        if self.reversed:
            return CONTRADICTED, f"{summary}; in the other order, intervals apart: {listed(self.reversed)}"
        if self.unseparated:
            return NOT_SEPARATED, summary
        return REPRODUCED, summary


def judge_ordering(claim: Claim, run: Run) -> Outcome:
    """Each published pair (upper tier above lower) per group: ordered, reversed, or not separated. The order holds
    where every pair is ordered, is contradicted where some pair is reversed, and is not separated otherwise, the
    detail naming the pairs; members of one tier are not ordered among themselves."""
    if claim.versus_temperature is not None:
        return _same_shape(claim, run)
    groups = _members(claim)
    several = len(groups) > 1
    measured: dict[str, dict[str, float | None]] = {}
    parts: list[str] = []
    cells: list[str] = []
    tally = _Tally()
    for label, members in groups:
        group = _Measured(claim, run, members, claim.temperature)
        prefix = f"{label}: " if several else ""
        measured[label] = group.values
        parts.append(prefix + _ranked(group.values, group.metric.fmt))
        cells += group.cells
        if tally.add(prefix, group):
            continue
        for a, b in _tier_pairs(claim):
            tally.judge(f"{prefix}{a} vs {b}", group.order(a, b), 1)
    verdict, detail = tally.lacking(claim, f"{claim.temperature:g}") or tally.verdict("published")
    return Outcome(measured, "; ".join(parts), cells, verdict, detail)


def _same_shape(claim: Claim, run: Run) -> Outcome:
    """Per condition, every pair of tasks separated at the reference temperature, ordered the same way at this
    one; pairs the reference does not separate are left out and named."""
    versus = claim.versus_temperature
    measured: dict[str, dict[float, dict[str, float | None]]] = {}
    parts: list[str] = []
    cells: list[str] = []
    tally = _Tally()
    left_out: list[str] = []  # pairs the reference temperature does not separate
    for label, members in _members(claim):
        here = _Measured(claim, run, members, claim.temperature)
        there = _Measured(claim, run, members, versus)
        measured[label] = {claim.temperature: here.values, versus: there.values}
        fmt = here.metric.fmt
        parts.append(
            f"{label}: {_ranked(here.values, fmt)} at {claim.temperature:g} "
            f"vs {_ranked(there.values, fmt)} at {versus:g}"
        )
        cells += here.cells + there.cells
        if tally.add(f"{label}/", here, there):
            continue
        for a, b in itertools.combinations(claim.tasks, 2):
            pair = f"{label} {a} vs {b}"
            reference = there.order(a, b)
            if reference == 0:
                left_out.append(pair)
                continue
            tally.judge(pair, here.order(a, b), reference)
    text = "; ".join(parts)
    lacking = tally.lacking(claim, f"{claim.temperature:g} or {versus:g}")
    if lacking:
        return Outcome(measured, text, cells, *lacking)
    left = f"; left out, not separated at temperature {versus:g}: {listed(left_out)}" if left_out else ""
    if not tally.judged:
        return Outcome(measured, text, cells, NOT_SEPARATED, f"no pair separated at temperature {versus:g}{left}")
    verdict, detail = tally.verdict(f"at temperature {versus:g}")
    return Outcome(measured, text, cells, verdict, detail + left)
