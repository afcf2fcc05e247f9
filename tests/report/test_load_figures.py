"""The load figures (report.figures.load_figure): PNGs of the fixed size for a run with load points, a small "no
data" one without, and both in the report's figure set only where the run has a load dimension."""

from __future__ import annotations

from specbench.analysis.load import load_table
from specbench.report.figures.figure_set import report_figures
from specbench.report.figures.load_figure import load_multiplier_figure, load_pareto_figure
from specbench.report.figures.style import DPI, MULTIPLIER_SIZE, PNG_SIGNATURE
from support.load_points import point_rows


def _size(png: bytes) -> tuple[int, int]:
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _table():
    speeds = {
        (c, n): [[base / n + r] * n for r in range(3)]
        for c, base in (("off", 100.0), ("mtp", 150.0))
        for n in (1, 2, 4)
    }
    return load_table(point_rows(speeds), "off")


def test_load_figures_render_at_the_fixed_size_and_say_when_there_is_nothing() -> None:
    table = _table()
    for draw in (load_multiplier_figure, load_pareto_figure):
        png = draw(table, "off", ["essay"], ["off", "mtp"])
        assert png.startswith(PNG_SIGNATURE)
        assert _size(png) == (round(MULTIPLIER_SIZE[0] * DPI), round(MULTIPLIER_SIZE[1] * DPI))
        empty = draw(table.iloc[:0], "off", ["essay"], ["off", "mtp"])
        assert empty.startswith(PNG_SIGNATURE) and _size(empty)[0] < _size(png)[0]


def test_the_figure_set_adds_the_load_figures_only_for_a_load_run() -> None:
    tables = {"cells": point_rows({}), "summary": None, "acceptance": None, "positions": None, "thesis": None}
    tables = {name: (_table().iloc[:0] if frame is None else frame) for name, frame in tables.items()}
    plain = report_figures({**tables, "load": _table().iloc[:0]}, "off", ["essay"], ["off", "mtp"])
    loaded = report_figures({**tables, "load": _table()}, "off", ["essay"], ["off", "mtp"])
    added = [caption for caption, _ in loaded[len(plain) :]]
    assert len(added) == 2 and all(caption.startswith("Under load") for caption in added)
