"""The thesis figure computed from the study's published multipliers (``published_figure``): no noise, each figure
the span over every reading of the cells published as ranges, under each view of analysis.thesis_fit."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from specbench.analysis.thesis_fit import VIEWS, decides, design, point_figures

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
    spans = {name: (float(np.min(v)), float(np.max(v))) for name, v in point_figures(squares, view).items()}
    return {**spans, "decides": decides(*spans["difference"], neither="depends on the reading")}
