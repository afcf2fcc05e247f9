"""The thesis figures' noise: each view's squared sides and D debiased by the runs' scatter, with their variances,
Satterthwaite degrees of freedom and symmetric t intervals, and the ratio's Fieller-type interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from specbench.analysis.thesis_fit import MAIN_EFFECTS, Design, ratio_of

CONFIDENCE = 0.95
COMBOS = {"task": (1.0, 0.0), "method": (0.0, 1.0), "difference": (1.0, -1.0)}  # over (task^2, method^2)


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
        point = float(ratio_of(tau2, beta2))
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
