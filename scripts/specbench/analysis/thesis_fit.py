"""The thesis matrix's additive decomposition (task x method log multipliers, with gaps) under its two views
(analysis.thesis describes them), the point figures a view's squared sides give, and the answer D's interval gives."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

TASK, METHOD, SEPARATED_NOT, TOO_FEW, CANNOT = "task", "method", "not separated", "too few runs", "cannot be judged"
MAIN_EFFECTS = "main effects (interaction apart)"
SPREAD_WITHIN = "spread within (interaction counted on both sides)"
VIEWS = (MAIN_EFFECTS, SPREAD_WITHIN)


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


def ratio_of(tau2: np.ndarray | float, beta2: np.ndarray | float) -> np.ndarray:
    """tau / beta from the (debiased) squares clipped at 0; infinity where only beta is 0, NaN where both are."""
    tau, beta = np.sqrt(np.maximum(tau2, 0.0)), np.sqrt(np.maximum(beta2, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(beta > 0, tau / np.where(beta > 0, beta, 1.0), np.where(tau > 0, np.inf, np.nan))


def point_figures(squares: Mapping[str, np.ndarray | float], view: str) -> dict[str, np.ndarray]:
    """The point figures under ``view`` from its squared sides (one matrix's, or one per reading): each side, their
    ratio and difference, and the shares under the main effects only (the spread within counts the rest on both
    sides)."""
    share = shares({k: np.asarray(v, dtype=float) for k, v in squares.items()})
    split = view == MAIN_EFFECTS
    nothing = np.full(np.shape(squares["task"]), np.nan)
    return {
        "task_effect": np.sqrt(np.maximum(squares["task"], 0.0)),
        "method_effect": np.sqrt(np.maximum(squares["method"], 0.0)),
        "ratio": ratio_of(squares["task"], squares["method"]),
        "difference": np.asarray(squares["difference"], dtype=float),
        "task_share": share["task"] if split else nothing,
        "method_share": share["method"] if split else nothing,
        "interaction_share": share["rest"] if split else nothing,
    }


def decides(low: float, high: float, neither: str = SEPARATED_NOT) -> str:
    """'task' where D = task side^2 - method side^2 lies above 0 over [low, high], 'method' below, ``neither``
    otherwise."""
    if low > 0:
        return TASK
    if high < 0:
        return METHOD
    return neither


def factor(log_effect: float) -> float:
    """A log effect as the factor it stands for (0.69 -> 2.0x)."""
    return math.exp(log_effect)
