"""The study's thesis, "the task, more than the method, decided the multiplier", as figures: the task x method matrix
of log multipliers (one temperature, one machine), read under two views, each a task side against a method side.

- ``MAIN_EFFECTS`` (interaction apart): L[t, m] = mu + a_t + b_m + e_tm, fitted by least squares to the cells the
  matrix has (sum a_t = 0, sum b_m = 0; on a complete matrix a_t is a row mean less the grand mean). The task side
  tau = sqrt(mean_t a_t^2), the method side beta = sqrt(mean_m b_m^2): "averaged over the methods, a task moves the
  multiplier by exp(tau) from the average task". ``*_share``: tau^2, beta^2 and the mean squared rest e_tm^2 as
  shares of their sum (on a complete matrix, of the spread of the log multipliers). What a method changes only on
  some tasks (n-gram's 6.25x on the file rewrite against ~1x elsewhere) is in the rest, on neither side.
- ``SPREAD_WITHIN`` (interaction counted on both sides): the task side is the spread of the log multipliers across
  the tasks within one method (each method's mean squared deviation from its own mean over its tasks, averaged over
  the methods with two tasks or more), the method side the spread across the methods within one task (likewise).
  On a complete matrix these are tau^2 + rest and beta^2 + rest: the same difference as the main effects' (so the
  two views decide alike there), with a ratio nearer 1. No shares.
- Noise: the runs' scatter moves every cell, and a squared side grows with it. Each cell's log mean varies by
  s^2 / (n mean^2) (delta method, per prompt of a prompt set); the baseline's noise is shared by every method of a
  task, so it moves a whole row. Each side's square is a quadratic form of the cells, debiased by the exact
  expectation of that noise in it, ``difference`` D (task side^2 - method side^2) likewise.
- Intervals: symmetric (t) around each debiased estimate, its variance that of a quadratic form of normal cells plus
  the debiasing's own, Satterthwaite degrees of freedom over the cells' run counts (bench/calibration.py shows the
  main effects' coverage by simulation). The sides and their intervals are the square roots of the estimates and
  bounds clipped at 0, so each interval holds its estimate. ``ratio`` (task side / method side) has a Fieller-type
  interval: every r whose test of task^2 - r^2 method^2 = 0 is not rejected (its estimate among them).
- ``decides``: 'task' where D's 95 % interval lies above 0, 'method' below 0, 'not separated' otherwise (the ratio's
  interval then holds 1 too); 'cannot be judged' with fewer than two tasks or two methods, or a matrix in unconnected
  blocks; 'too few runs' where a cell (or a prompt of it) has one run: its figures are then not debiased.

A multiplier is a condition's mean tokens/s over the baseline's mean of the same task and temperature, as
``speed.summary`` computes it. ``thesis_rows`` gives one temperature's row per view, ``thesis`` the table of every
temperature; ``published_figure`` the same figures from published multipliers (no noise), where a cell may be a
number, a [low, high] range (read at points across it) or missing."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
TASK, METHOD, SEPARATED_NOT, TOO_FEW, CANNOT = "task", "method", "not separated", "too few runs", "cannot be judged"
MAIN_EFFECTS = "main effects (interaction apart)"
SPREAD_WITHIN = "spread within (interaction counted on both sides)"
VIEWS = (MAIN_EFFECTS, SPREAD_WITHIN)
THESIS_COLUMNS = [
    "temperature",
    "view",
    "methods",
    "tasks",
    "matrix",
    "missing",
    "fewest_runs",
    "task_effect",
    "task_low",
    "task_high",
    "method_effect",
    "method_low",
    "method_high",
    "ratio",
    "ratio_low",
    "ratio_high",
    "difference",
    "difference_low",
    "difference_high",
    "task_share",
    "method_share",
    "interaction_share",
    "decides",
    "reason",
    "cells",
]
INTERVALS = ("task", "method", "ratio", "difference")
COMBOS = {"task": (1.0, 0.0), "method": (0.0, 1.0), "difference": (1.0, -1.0)}  # over (task^2, method^2)


# --------------------------------------------------------------------------------------------------------------------
# The decomposition of a (tasks, methods) matrix with gaps


@dataclass(frozen=True)
class Design:
    """The additive fit on a presence mask: ``task`` (tasks, k) and ``method`` (methods, k) map the k present cells'
    values (row-major) to a_t and b_m; ``rest`` (k, k) to the residuals; ``rows`` and ``columns``: each present
    cell's task and method index."""

    task: np.ndarray
    method: np.ndarray
    rest: np.ndarray
    rows: np.ndarray
    columns: np.ndarray

    @property
    def forms(self) -> dict[str, np.ndarray]:
        """The quadratic forms (k, k) of tau^2, beta^2, the mean squared rest and D = tau^2 - beta^2."""
        tau = self.task.T @ self.task / len(self.task)
        beta = self.method.T @ self.method / len(self.method)
        return {"task": tau, "method": beta, "rest": self.rest.T @ self.rest / len(self.rows), "difference": tau - beta}

    def forms_of(self, view: str) -> dict[str, np.ndarray]:
        """The forms of a view's task side^2, method side^2, the rest and their difference (``VIEWS``)."""
        if view == MAIN_EFFECTS:
            return self.forms
        if view != SPREAD_WITHIN:
            raise ValueError(f"no thesis view {view!r}: one of {list(VIEWS)}")
        across_tasks, across_methods = spread_form(self.columns), spread_form(self.rows)
        return {
            "task": across_tasks,
            "method": across_methods,
            "rest": self.forms["rest"],
            "difference": across_tasks - across_methods,
        }


def spread_form(groups: np.ndarray) -> np.ndarray:
    """The form (k, k) of the mean, over the groups with two cells or more, of each group's mean squared deviation
    from its own mean (``groups``: each present cell's group; by method: the spread across tasks within a method)."""
    form, counted = np.zeros((len(groups), len(groups))), 0
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        n = len(members)
        if n > 1:
            form[np.ix_(members, members)] += (np.eye(n) - 1.0 / n) / n
            counted += 1
    return form / max(counted, 1)


def connected(present: np.ndarray) -> bool:
    """Whether every task and method of a presence mask (each with a cell) is linked through shared cells."""
    tasks, methods = present.shape
    seen, todo = {0}, [0]  # nodes: tasks 0..T-1, methods T..T+M-1
    while todo:
        node = todo.pop()
        links = (tasks + np.flatnonzero(present[node])) if node < tasks else np.flatnonzero(present[:, node - tasks])
        for nxt in links.tolist():
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return len(seen) == tasks + methods


def design(present: np.ndarray) -> Design:
    """The additive fit on ``present`` (every row and column with a cell, the whole connected)."""
    tasks, methods = present.shape
    rows, columns = np.nonzero(present)
    x = np.zeros((len(rows), tasks + methods))
    x[np.arange(len(rows)), rows] = 1.0
    x[np.arange(len(rows)), tasks + columns] = 1.0
    solve = np.linalg.pinv(x)  # the model's one free shift cancels in the centred effects
    task = solve[:tasks] - solve[:tasks].mean(axis=0)
    method = solve[tasks:] - solve[tasks:].mean(axis=0)
    return Design(task, method, np.eye(len(rows)) - x @ solve, rows, columns)


def shares(squares: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """tau^2, beta^2 and the mean squared rest (each clipped at 0) as shares of their sum."""
    parts = {k: np.maximum(squares[k], 0.0) for k in ("task", "method", "rest")}
    total = sum(parts.values())
    with np.errstate(invalid="ignore", divide="ignore"):
        return {k: np.where(total > 0, v / np.where(total > 0, total, 1.0), np.nan) for k, v in parts.items()}


def ratio_of(tau2: float, beta2: float) -> float:
    """tau / beta from the (debiased) squares clipped at 0; infinity where only beta is 0, NaN where both are."""
    tau, beta = math.sqrt(max(tau2, 0.0)), math.sqrt(max(beta2, 0.0))
    if beta > 0:
        return tau / beta
    return math.inf if tau > 0 else math.nan


# --------------------------------------------------------------------------------------------------------------------
# Noise: debiasing and intervals


@dataclass(frozen=True)
class Noise:
    """The variance of the log mean of every noise source: each present cell (``cells``, k) and each task's
    baseline (``bases``, tasks), with the degrees of freedom of their estimates."""

    cells: np.ndarray
    cells_df: np.ndarray
    bases: np.ndarray
    bases_df: np.ndarray

    def sources(self, rows: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """Each source's pattern over the present cells (a cell alone; a baseline: every cell of its row), with the
        sources' variances and degrees of freedom."""
        k = len(rows)
        patterns = [np.eye(k)[i] for i in range(k)] + [(rows == t).astype(float) for t in range(len(self.bases))]
        return patterns, np.concatenate([self.cells, self.bases]), np.concatenate([self.cells_df, self.bases_df])


class Debiased:
    """A view's task side^2, method side^2, the rest and D of one matrix, debiased by the noise, with their
    variances (the names below are the main effects', tau^2 and beta^2; a view's sides stand in): for a form Q of
    normal cells y with covariance S, E y'Qy = mu'Q mu + tr(QS) and var y'Qy = 2 tr(QSQS) + 4 mu'QSQ mu; the
    debiasing subtracts tr(Q S_hat), whose own variance is sum_j w_j^2 2 v_j^2 / df_j over the sources j. mu'QSQ mu
    is estimated by y'QSQy, which errs upwards (by tr(QSQS)): bench/calibration.py shows the coverage this gives."""

    def __init__(self, fit: Design, values: np.ndarray, noise: Noise, view: str = MAIN_EFFECTS) -> None:
        patterns, self.v, self.df = noise.sources(fit.rows)
        self.patterns = np.array(patterns)  # (sources, k)
        self.sigma = np.einsum("j,jk,jl->kl", self.v, self.patterns, self.patterns)
        self.y = values
        self.forms = fit.forms_of(view)
        self.weights = {  # w_j = tr(Q E_j) = p_j' Q p_j
            name: np.einsum("jk,kl,jl->j", self.patterns, q, self.patterns) for name, q in self.forms.items()
        }
        self.values = {name: float(values @ q @ values - self.weights[name] @ self.v) for name, q in self.forms.items()}
        basis = [self.forms["task"], self.forms["method"]]
        s = self.sigma
        self.noise = np.array([[np.trace(a @ s @ b @ s) for b in basis] for a in basis])  # tr(Q_x S Q_y S)
        self.signal = np.array([[values @ a @ s @ b @ values for b in basis] for a in basis])  # y'Q_x S Q_y y
        w = [self.weights["task"], self.weights["method"]]
        self.debiasing = np.array([[np.sum(a * b * 2 * self.v**2 / self.df) for b in w] for a in w])
        self.basis = basis

    def cross(self, x: str, y: str) -> float:
        """The covariance of the debiased forms x and y (each of task, method, difference)."""
        u, w = np.array(COMBOS[x]), np.array(COMBOS[y])
        return float(2 * u @ self.noise @ w + 4 * u @ self.signal @ w + u @ self.debiasing @ w)

    def degrees(self, name: str) -> float:
        """Satterthwaite degrees of freedom of the form's estimated variance g(v): g^2 / sum_j (v_j g_j)^2 / df_j,
        g_j the derivative by the source j's variance v_j."""
        u = np.array(COMBOS[name])
        q = u[0] * self.basis[0] + u[1] * self.basis[1]
        w = u[0] * self.weights["task"] + u[1] * self.weights["method"]
        qsq = q @ self.sigma @ q
        noise = np.einsum("jk,kl,jl->j", self.patterns, qsq, self.patterns)
        signal = (self.patterns @ (q @ self.y)) ** 2
        gradient = 4 * noise + 4 * signal + 4 * w**2 * self.v / self.df
        g = self.cross(name, name)
        spread = float(np.sum((gradient * self.v) ** 2 / self.df))
        return g * g / spread if spread > 0 else math.inf

    def interval(self, name: str) -> tuple[float, float]:
        """The symmetric t interval of a debiased form."""
        value, se = self.values[name], math.sqrt(max(self.cross(name, name), 0.0))
        half = quantile(self.degrees(name)) * se
        return value - half, value + half

    def ratio_interval(self) -> tuple[float, float]:
        """Every r >= 0 where |tau^2 - r^2 beta^2| <= c se(tau^2 - r^2 beta^2), c the quantile of D's degrees of
        freedom (so that r = 1 is inside exactly where D's interval holds 0), as its hull with the estimate."""
        tau2, beta2 = self.values["task"], self.values["method"]
        c2 = quantile(self.degrees("difference")) ** 2
        aa, ab, bb = self.cross("task", "task"), self.cross("task", "method"), self.cross("method", "method")
        # f(s) = (tau2 - s beta2)^2 - c2 (aa - 2 s ab + s^2 bb) <= 0, s = r^2
        low, high = _below_zero(beta2 * beta2 - c2 * bb, -2 * (tau2 * beta2 - c2 * ab), tau2 * tau2 - c2 * aa)
        point = ratio_of(tau2, beta2)
        if math.isnan(point):
            return math.nan, math.nan
        if low > high:  # no r passes (runs without scatter): the estimate alone
            return point, point
        return min(math.sqrt(low), point), max(math.sqrt(high), point)


def _below_zero(a: float, b: float, c: float) -> tuple[float, float]:
    """The hull of {s >= 0: a s^2 + b s + c <= 0} ((inf, -inf) where empty)."""
    candidates = [0.0, math.inf]
    if a != 0:
        disc = b * b - 4 * a * c
        if disc >= 0:
            root = math.sqrt(disc)
            candidates += [(-b - root) / (2 * a), (-b + root) / (2 * a)]
    elif b != 0:
        candidates.append(-c / b)
    inside = [s for s in candidates if s >= 0 and _holds(a, b, c, s)]
    return (min(inside), max(inside)) if inside else (math.inf, -math.inf)


def _holds(a: float, b: float, c: float, s: float) -> bool:
    if math.isinf(s):
        return a < 0 or (a == 0 and (b < 0 or (b == 0 and c <= 0)))
    scale = abs(a) * s * s + abs(b) * s + abs(c)
    return a * s * s + b * s + c <= 1e-12 * scale


def quantile(df: float) -> float:
    """The two-sided CONFIDENCE quantile of Student's t with ``df`` degrees of freedom."""
    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, max(df, 1.0)))


def decides(low: float, high: float) -> str:
    """'task' / 'method' / 'not separated' from D = tau^2 - beta^2's interval."""
    if low > 0:
        return TASK
    if high < 0:
        return METHOD
    return SEPARATED_NOT


def _where(verdict: str) -> str:
    return {TASK: "lies above 0", METHOD: "lies below 0"}.get(verdict, "holds 0")


# --------------------------------------------------------------------------------------------------------------------
# A run's cells


def _log_mean(runs: pd.DataFrame) -> tuple[float, float, float, list[int]]:
    """One task x condition's mean tokens/s over its runs, the variance of its log (delta method, each prompt's runs
    apart: sum_p n_p s_p^2 / (N mean)^2), that variance's Satterthwaite degrees of freedom, and the prompts' run
    counts."""
    groups = [g.tokens_per_s.to_numpy(dtype=float) for _, g in runs.groupby("prompt", sort=True, dropna=False)]
    sizes = [len(g) for g in groups]
    total, mean = sum(sizes), float(runs.tokens_per_s.mean())
    if min(sizes) < 2:
        return mean, math.nan, math.nan, sizes
    parts = np.array([len(g) * g.var(ddof=1) for g in groups]) / (total * mean) ** 2
    variance = float(parts.sum())
    spread = float(np.sum(parts**2 / (np.array(sizes) - 1)))
    return mean, variance, variance * variance / spread if spread > 0 else math.inf, sizes


def _cannot(tasks: Sequence[str], methods: Sequence[str], present: np.ndarray) -> str | None:
    """Why a matrix cannot be judged (None where it can)."""
    if not methods:
        return "no method ran"
    if len(methods) == 1:
        return f"only one method ran ({methods[0]})"
    if len(tasks) < 2:
        return "no two tasks measured with one method"
    if not connected(present):
        return "the matrix falls apart into blocks that share no task or method"
    return None


@dataclass(frozen=True)
class Matrix:
    """One temperature's (tasks, methods) matrix of log multipliers (NaN where missing), each cell's log-mean
    variance and its degrees of freedom, each task's baseline's (NaN where a cell has one run), and what every view's
    row shares: the multipliers by task and method, the fewest runs, the cell files behind them and why there is
    no multiplier at all (None where there is)."""

    logs: np.ndarray
    variances: np.ndarray
    dfs: np.ndarray
    base_var: np.ndarray
    base_df: np.ndarray
    tasks: list[str]
    methods: list[str]
    shared: dict[str, Any]
    no_multiplier: str | None


def matrix_of(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> Matrix:
    """The matrix of one temperature: ``methods`` default to every condition but the baseline, ``tasks`` to every
    task (in table order); a cell counts where both its runs and the baseline's have a positive tokens/s."""
    read = cells[["task", "prompt", "condition", "tokens_per_s", "cell_file"]]  # the columns read, not the wide table
    usable = read[(cells.temperature == temperature) & (cells.tokens_per_s > 0)]
    methods = [m for m in (methods or dict.fromkeys(usable.condition)) if m != baseline]
    tasks = list(tasks or dict.fromkeys(usable.task))
    logs = np.full((len(tasks), len(methods)), np.nan)
    variances, dfs = np.full_like(logs, np.nan), np.full_like(logs, np.nan)
    base_var, base_df = np.full(len(tasks), np.nan), np.full(len(tasks), np.nan)
    fewest, behind, matrix = math.inf, [], {}
    for ti, task in enumerate(tasks):
        own = usable[usable.task == task]
        base = own[own.condition == baseline]
        if base.empty:
            continue
        base_mean, base_var[ti], base_df[ti], base_sizes = _log_mean(base)
        for mi, method in enumerate(methods):
            runs = own[own.condition == method]
            if runs.empty:
                continue
            mean, variances[ti, mi], dfs[ti, mi], sizes = _log_mean(runs)
            logs[ti, mi] = math.log(mean / base_mean)
            fewest = min(fewest, *sizes, *base_sizes)
            matrix.setdefault(task, {})[method] = mean / base_mean
            behind += [*runs.cell_file, *base.cell_file]
    shared = {
        "temperature": float(temperature),
        "matrix": matrix,
        "fewest_runs": None if fewest == math.inf else int(fewest),
        "cells": sorted(set(behind)),
    }
    lacking = not matrix and usable.condition.isin(methods).any() and not (usable.condition == baseline).any()
    why = f"no '{baseline}' cells: no multiplier" if lacking else None
    return Matrix(logs, variances, dfs, base_var, base_df, tasks, methods, shared, why)


def thesis_rows(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One temperature's rows of ``THESIS_COLUMNS``, one per view (``VIEWS`` order); ``methods`` and ``tasks`` as
    ``matrix_of`` reads them."""
    return [row_of(matrix_of(cells, baseline, temperature, methods, tasks), view) for view in VIEWS]


def thesis_row(
    cells: pd.DataFrame,
    baseline: str,
    temperature: float,
    methods: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    view: str = MAIN_EFFECTS,
) -> dict[str, Any]:
    """One temperature's row of ``THESIS_COLUMNS`` under one view."""
    return row_of(matrix_of(cells, baseline, temperature, methods, tasks), view)


def row_of(matrix: Matrix, view: str) -> dict[str, Any]:
    """A matrix's row under one view."""
    m = matrix
    figured = figures(m.logs, m.variances, m.dfs, m.base_var, m.base_df, m.tasks, m.methods, view)
    if m.no_multiplier:
        figured["reason"] = m.no_multiplier
    return {**m.shared, **figured}


def figures(
    logs: np.ndarray,
    variances: np.ndarray,
    dfs: np.ndarray,
    base_var: np.ndarray,
    base_df: np.ndarray,
    tasks: Sequence[str],
    methods: Sequence[str],
    view: str = MAIN_EFFECTS,
) -> dict[str, Any]:
    """The figures, intervals and answer under ``view`` of a (tasks, methods) matrix of log multipliers (NaN where
    missing), each cell's log-mean variance and its degrees of freedom, and each task's baseline's (NaN where a cell
    has one run)."""
    present = np.isfinite(logs)
    keep_t, keep_m = present.any(axis=1), present.any(axis=0)
    row: dict[str, Any] = {
        "view": view,
        "methods": [m for mi, m in enumerate(methods) if keep_m[mi]],
        "tasks": [t for ti, t in enumerate(tasks) if keep_t[ti]],
        "missing": [
            f"{t}/{m}"
            for ti, t in enumerate(tasks)
            for mi, m in enumerate(methods)
            if keep_t[ti] and keep_m[mi] and not present[ti, mi]
        ],
        **dict.fromkeys(["task_effect", "method_effect", "ratio", "difference"], math.nan),
        **dict.fromkeys([f"{n}_{end}" for n in INTERVALS for end in ("low", "high")], math.nan),
        **dict.fromkeys(["task_share", "method_share", "interaction_share"], math.nan),
    }
    present = present[keep_t][:, keep_m]
    if (reason := _cannot(row["tasks"], row["methods"], present)) is not None:
        return {**row, "decides": CANNOT, "reason": reason}
    fit, values = design(present), logs[keep_t][:, keep_m][present]
    cell_var, cell_df = variances[keep_t][:, keep_m][present], dfs[keep_t][:, keep_m][present]
    if np.isnan(cell_var).any() or np.isnan(base_var[keep_t]).any():
        plain = {name: float(values @ q @ values) for name, q in fit.forms_of(view).items()}
        return {
            **row,
            **_figures(plain, view),
            "decides": TOO_FEW,
            "reason": "a cell has one run: no noise estimate, so the figures are not debiased and have no interval",
        }
    noise = Noise(cell_var, cell_df, base_var[keep_t], base_df[keep_t])
    debiased = Debiased(fit, values, noise, view)
    row.update(_figures(debiased.values, view))
    for name in ("task", "method"):
        low, high = debiased.interval(name)
        row[f"{name}_low"], row[f"{name}_high"] = math.sqrt(max(low, 0.0)), math.sqrt(max(high, 0.0))
    row["difference_low"], row["difference_high"] = debiased.interval("difference")
    row["ratio_low"], row["ratio_high"] = debiased.ratio_interval()
    verdict = decides(row["difference_low"], row["difference_high"])
    reason = f"{DIFFERENCE_WORDS[view]}'s {CONFIDENCE:.0%} interval " + _where(verdict)
    if math.isnan(row["ratio"]):
        reason += "; no ratio: neither debiased side is above 0"
    return {**row, "decides": verdict, "reason": reason}


DIFFERENCE_WORDS = {  # D in words, per view
    MAIN_EFFECTS: "D = tau^2 - beta^2",
    SPREAD_WITHIN: "D = (spread across tasks)^2 - (spread across methods)^2",
}


def _figures(squares: Mapping[str, float], view: str) -> dict[str, float]:
    """The point figures of one matrix under ``view`` from its (debiased) squared sides; shares under the main
    effects only (the spread within counts the rest on both sides)."""
    share = shares({k: np.asarray(v) for k, v in squares.items()})
    split = view == MAIN_EFFECTS
    return {
        "task_effect": math.sqrt(max(squares["task"], 0.0)),
        "method_effect": math.sqrt(max(squares["method"], 0.0)),
        "ratio": ratio_of(squares["task"], squares["method"]),
        "difference": float(squares["difference"]),
        "task_share": float(share["task"]) if split else math.nan,
        "method_share": float(share["method"]) if split else math.nan,
        "interaction_share": float(share["rest"]) if split else math.nan,
    }


def thesis(cells: pd.DataFrame, baseline: str, methods: Sequence[str] | None = None) -> pd.DataFrame:
    """``thesis_rows`` per temperature of these cells (one machine's), ``methods`` by default every condition but
    the baseline: a row per temperature and view."""
    temperatures = sorted(set(cells.temperature.dropna()))
    rows = [row for t in temperatures for row in thesis_rows(cells, baseline, t, methods)]
    return pd.DataFrame(rows, columns=THESIS_COLUMNS)


SETTING_COLUMNS = [*THESIS_COLUMNS, "setting", "in_place_of"]


def in_place_of(methods: Sequence[str], condition: str) -> str | None:
    """The method a setting stands in for: the longest of ``methods`` its name extends (``ngram-mod-warm-all``:
    ``ngram-mod``), None for none."""
    return max((m for m in methods if condition.startswith(f"{m}-")), key=len, default=None)


def settings_beside(cells: pd.DataFrame, baseline: str, methods: Sequence[str]) -> pd.DataFrame:
    """The thesis with each setting of a method this run has (a condition <method>-<suffix> outside ``methods``: the
    warm n-gram server, DFlash at 15, a sweep's members) in place of its method, per temperature and view: not the run's
    figure, which is over ``methods``, and never mixed into it; shown beside it. ``SETTING_COLUMNS``."""
    rows = []
    for setting in dict.fromkeys(cells.condition.dropna()):
        member = in_place_of(methods, setting) if setting not in (*methods, baseline) else None
        if member is None:
            continue
        swapped = [setting if m == member else m for m in methods]
        for temperature in sorted(set(cells.temperature.dropna())):
            for row in thesis_rows(cells, baseline, temperature, swapped):
                rows.append({**row, "setting": setting, "in_place_of": member})
    return pd.DataFrame(rows, columns=SETTING_COLUMNS)


# --------------------------------------------------------------------------------------------------------------------
# Published multipliers

Published = Mapping[str, Mapping[str, "float | Sequence[float] | None"]]


def _grid(low: float, high: float, points: Sequence[float], steps: int = 7) -> list[float]:
    """The values a [low, high] range is read at: both ends, evenly between, and every published point inside."""
    inside = [p for p in points if low < p < high]
    return sorted({*np.linspace(low, high, steps).tolist(), *inside})


def published_figure(published: Published) -> dict[str, Any]:
    """The figures of a published matrix (task -> method -> multiplier, a [low, high] range, or None where not
    given) under every reading of its ranges, per view (``views``: view -> each figure's lowest and highest value
    over the readings, and what it decides), with the cells read as ranges and the missing ones. A range is read at
    points across it, independently of the others. No noise: the figures are the plain forms', the same as a run's
    before debiasing. Computed from the published multipliers: the study states no figure of its own for the
    thesis."""
    tasks = list(published)
    methods = list(dict.fromkeys(m for row in published.values() for m in row))
    points = [float(v) for row in published.values() for v in row.values() if isinstance(v, (int, float))]
    points += [float(e) for row in published.values() for v in row.values() if isinstance(v, Sequence) for e in v]
    axes, ranged, missing = [], [], []
    present = np.zeros((len(tasks), len(methods)), dtype=bool)
    for (ti, task), (mi, method) in itertools.product(enumerate(tasks), enumerate(methods)):
        value = published[task].get(method)
        if value is None:
            missing.append(f"{task}/{method}")
            continue
        present[ti, mi] = True
        if isinstance(value, Sequence):
            ranged.append(f"{task}/{method} {value[0]:g}-{value[1]:g}x")
            axes.append(_grid(float(value[0]), float(value[1]), points))
        else:
            axes.append([float(value)])
    readings = np.log(np.array(list(itertools.product(*axes)), dtype=float))  # (readings, present cells)
    fit = design(present)
    return {
        "tasks": tasks,
        "methods": methods,
        "matrix": {t: dict(row) for t, row in published.items()},
        "readings": len(readings),
        "ranged": ranged,
        "missing": missing,
        "views": {view: _published_view(readings, fit.forms_of(view), view) for view in VIEWS},
    }


def _published_view(readings: np.ndarray, forms: Mapping[str, np.ndarray], view: str) -> dict[str, Any]:
    """One view's figures over the readings (readings, cells): each as its (lowest, highest), and the answer."""
    squares = {name: np.einsum("rk,kl,rl->r", readings, q, readings) for name, q in forms.items()}
    share = shares(squares)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.sqrt(squares["task"] / squares["method"])
    difference = squares["difference"]

    def span(values: np.ndarray) -> tuple[float, float]:
        return float(values.min()), float(values.max())

    split, nothing = view == MAIN_EFFECTS, (math.nan, math.nan)
    return {
        "task_effect": span(np.sqrt(squares["task"])),
        "method_effect": span(np.sqrt(squares["method"])),
        "ratio": span(ratio),
        "difference": span(difference),
        "task_share": span(share["task"]) if split else nothing,
        "method_share": span(share["method"]) if split else nothing,
        "interaction_share": span(share["rest"]) if split else nothing,
        "decides": TASK if difference.min() > 0 else METHOD if difference.max() < 0 else "depends on the reading",
    }


def factor(log_effect: float) -> float:
    """A log effect as the factor it stands for (0.69 -> 2.0x)."""
    return math.exp(log_effect)
