"""The report's figures: PNG bytes of the fixed size, the right multipliers, robust to empty and partial tables."""

from __future__ import annotations

import base64
import io
import json

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

from specbench.analysis.cell_table import frame_of
from specbench.analysis.speed import cell_multipliers
from specbench.analysis.summaries import tables
from specbench.report.figure_index import png_data_uri
from specbench.report.figures import acceptance_figure as acceptance_module
from specbench.report.figures import multiplier_figure as figures_module
from specbench.report.figures import style as figure_style
from specbench.report.figures import timeline_figure as timeline_module
from specbench.report.figures.acceptance_figure import acceptance_figure
from specbench.report.figures.figure_set import report_figures
from specbench.report.figures.multiplier_figure import multiplier_figure
from specbench.report.figures.requests import arrivals_figure, positions_figure
from specbench.report.figures.style import (
    ACCEPTANCE_SIZE,
    BASELINE_STYLE,
    DPI,
    MULTIPLIER_SIZE,
    NO_DATA_SIZE,
    PNG_SIGNATURE,
    TIMELINE_SIZE,
    condition_styles,
)
from specbench.report.figures.thesis_figure import draw_thesis, thesis_size
from specbench.report.figures.timeline_figure import timeline_figure
from support.paths import TEST_DATA

DATA = TEST_DATA / "report"
STUDY = ["off", "ngram-mod", "mtp", "dflash", "ngram-mod-warm"]
TASKS = ["file-rewrite", "essay"]


def _pixels(png: bytes) -> np.ndarray:
    assert png.startswith(PNG_SIGNATURE)
    return mpimg.imread(io.BytesIO(png), format="png")


def _size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels."""
    image = _pixels(png)
    return image.shape[1], image.shape[0]


def _expected(size: tuple[float, float]) -> tuple[int, int]:
    return round(size[0] * DPI), round(size[1] * DPI)


def _cells(rows: list[tuple[str, str, float, int, float]], baseline: str = "off") -> pd.DataFrame:
    """A typed cell table of (task, condition, temperature, repeat, tokens/s) rows, started 30 s apart."""
    start = pd.Timestamp("2026-11-29T16:40:00+00:00")
    return frame_of(
        [
            {
                "task": task,
                "condition": condition,
                "temperature": temperature,
                "repeat": repeat,
                "tokens_per_s": speed,
                "started_at": start + pd.Timedelta(seconds=30 * i),
                "cell_file": f"results/cells/{task}/{condition}/t{temperature}/r{repeat}.json",
            }
            for i, (task, condition, temperature, repeat, speed) in enumerate(rows)
        ],
        baseline,
    )


def _texts(monkeypatch) -> list[str]:
    """Collects every text a figure draws (axes and figure texts, newlines as spaces) when it is rendered."""
    texts: list[str] = []
    original = figure_style.render

    def spy(fig):
        texts.extend(t.get_text().replace("\n", " ") for ax in fig.axes for t in ax.texts)
        texts.extend(t.get_text().replace("\n", " ") for t in fig.texts)
        return original(fig)

    for module in (figures_module, acceptance_module, timeline_module, figure_style):  # the figures, and "no data"
        monkeypatch.setattr(module, "render", spy)
    return texts


@pytest.fixture
def hand_runs() -> pd.DataFrame:
    """off means 100 (task a, T=0) and 200 (task a, T=1); ngram-mod at 600/650/700 and 300/400/NaN."""
    return _cells(
        [
            ("a", "off", 0.0, 1, 80.0),
            ("a", "off", 0.0, 2, 100.0),
            ("a", "off", 0.0, 3, 120.0),
            ("a", "ngram-mod", 0.0, 1, 600.0),
            ("a", "ngram-mod", 0.0, 2, 650.0),
            ("a", "ngram-mod", 0.0, 3, 700.0),
            ("a", "off", 1.0, 1, 200.0),
            ("a", "off", 1.0, 2, 200.0),
            ("a", "ngram-mod", 1.0, 1, 300.0),
            ("a", "ngram-mod", 1.0, 2, 400.0),
            ("a", "ngram-mod", 1.0, 3, np.nan),
            ("b", "mtp", 0.0, 1, 50.0),  # task b has no baseline at all
        ]
    )


@pytest.fixture(scope="module")
def sample() -> dict[str, pd.DataFrame]:
    """The summaries of a small real run (tests/data/report/cells.json): two tasks, five conditions, T=0."""
    return tables(frame_of(json.loads((DATA / "cells.json").read_text()), "off"), "off")


# -- multipliers (the figure draws speed.cell_multipliers) -------------------------------------------------------


def test_multipliers_divide_by_the_mean_baseline_of_the_same_task_and_temperature(hand_runs):
    table = cell_multipliers(hand_runs, "off")
    assert list(table.columns) == [
        "task",
        "prompt",
        "condition",
        "temperature",
        "repeat",
        "tokens_per_s",
        "identical",
        "cell_file",
        "baseline_mean_tokens_per_s",
        "multiplier",
    ]
    assert "off" not in set(table["condition"])
    t0 = table[(table["task"] == "a") & (table["temperature"] == 0.0)].sort_values("repeat")
    assert t0["baseline_mean_tokens_per_s"].tolist() == [100.0, 100.0, 100.0]
    assert t0["multiplier"].tolist() == pytest.approx([6.0, 6.5, 7.0])
    t1 = table[(table["task"] == "a") & (table["temperature"] == 1.0)].sort_values("repeat")
    assert t1["multiplier"].iloc[:2].tolist() == pytest.approx([1.5, 2.0])
    assert np.isnan(t1["multiplier"].iloc[2])  # the cell's own tokens/s is NaN
    orphan = table[table["task"] == "b"]
    assert len(orphan) == 1 and np.isnan(orphan["multiplier"].iloc[0])  # no baseline for task b


def test_multipliers_ignore_nan_baselines_and_treat_a_zero_baseline_as_missing():
    runs = _cells(
        [
            ("a", "off", 0.0, 1, np.nan),
            ("a", "off", 0.0, 2, 50.0),
            ("a", "ngram-mod", 0.0, 1, 100.0),
            ("b", "off", 0.0, 1, 0.0),
            ("b", "ngram-mod", 0.0, 1, 100.0),
        ]
    )
    table = cell_multipliers(runs, "off").set_index("task")
    assert table.loc["a", "multiplier"] == pytest.approx(2.0)
    assert np.isnan(table.loc["b", "multiplier"])


def test_a_zero_width_interval_is_drawn_around_its_own_multiplier():
    """Equal runs a side (3 of 0.085 tok/s against 3 of 0.05): the interval has no width, and the mean of the points
    (1.7) rounds above it (1.6999999999999997); the whisker belongs to the summary's multiplier, and is drawn there."""
    runs = _cells([("a", c, 0.0, r, v) for c, v in (("off", 0.05), ("mtp", 0.05 * 1.7)) for r in (1, 2, 3)])
    summary = tables(runs, "off")["summary"]
    assert np.mean(cell_multipliers(runs, "off").multiplier) > summary.speedup_ci_high.max()  # the rounding
    assert multiplier_figure(runs, "off", summary=summary)[:8] == b"\x89PNG\r\n\x1a\n"


def test_multipliers_of_a_custom_baseline_and_of_empty_tables():
    runs = _cells([("a", "ref", 0.0, 1, 10.0), ("a", "off", 0.0, 1, 25.0)], baseline="ref")
    assert cell_multipliers(runs, "ref")["multiplier"].tolist() == pytest.approx([2.5])
    empty = cell_multipliers(frame_of([], "off"), "off")
    assert empty.empty and "multiplier" in empty.columns


def test_multipliers_match_the_summary_speedups_of_the_sample(sample):
    table = cell_multipliers(sample["cells"], "off")
    means = table.groupby(["task", "condition", "temperature"])["multiplier"].mean()
    summary = sample["summary"][sample["summary"]["condition"] != "off"]
    assert len(summary) == len(means) > 0
    for row in summary.itertuples():
        assert means[(row.task, row.condition, row.temperature)] == pytest.approx(row.speedup, rel=1e-9)


# -- rendering ------------------------------------------------------------------------------------------------------


def _all(sample: dict[str, pd.DataFrame]) -> dict[str, bytes]:
    return {caption: png for caption, png in report_figures(sample, "off", TASKS, STUDY)}


def test_sample_tables_render_at_the_fixed_size(sample, tmp_path):
    rendered = {
        "multiplier": (multiplier_figure(sample["cells"], "off", TASKS, STUDY, sample["summary"]), MULTIPLIER_SIZE),
        "acceptance": (acceptance_figure(sample["acceptance"], "off", TASKS, STUDY), ACCEPTANCE_SIZE),
        "timeline": (timeline_figure(sample["cells"], "off", STUDY), TIMELINE_SIZE),
        "thesis": (
            draw_thesis(sample["thesis"], "off", None, TASKS, STUDY),
            thesis_size(sample["thesis"].temperature.nunique()),
        ),
    }
    for name, (png, size) in rendered.items():
        assert isinstance(png, bytes) and png.startswith(PNG_SIGNATURE), name
        assert _size(png) == _expected(size), name
        image = _pixels(png)
        assert image[..., :3].std() > 0.05, f"{name} looks blank"
        (tmp_path / f"{name}.png").write_bytes(png)
    inside = [  # then the two of report.figures.requests
        positions_figure(sample["positions"], "off", TASKS, STUDY),
        arrivals_figure(sample["cells"], "off", TASKS, STUDY),
    ]
    assert list(_all(sample).values()) == [png for png, _ in rendered.values()] + inside  # the report's, in order


def test_figures_are_deterministic(sample):
    assert _all(sample) == _all(sample)


def test_figures_do_not_modify_their_inputs(sample):
    copies = {name: frame.copy() for name, frame in sample.items()}
    _all(sample)
    for name, frame in copies.items():
        pd.testing.assert_frame_equal(frame, sample[name])


def test_figures_leave_no_open_pyplot_figures(sample):
    plt = pytest.importorskip("matplotlib.pyplot")
    before = plt.get_fignums()
    _all(sample)
    assert plt.get_fignums() == before


@pytest.mark.parametrize("render", [multiplier_figure, acceptance_figure, timeline_figure])
@pytest.mark.parametrize("table", ["empty", None])
def test_empty_inputs_give_a_no_data_png(render, table):
    empty = tables(frame_of([], "off"), "off")["acceptance" if render is acceptance_figure else "cells"]
    png = render(empty if table == "empty" else None, "off")
    assert png.startswith(PNG_SIGNATURE)
    assert _size(png) == _expected(NO_DATA_SIZE)


def test_no_data_png_is_distinct_from_a_real_figure(sample):
    empty = multiplier_figure(None, "off")
    assert _size(multiplier_figure(sample["cells"], "off")) != _size(empty)
    only_baseline = sample["cells"][sample["cells"]["condition"] == "off"]
    assert _size(multiplier_figure(only_baseline, "off")) == _expected(NO_DATA_SIZE)


def test_partial_tables_render_without_raising(hand_runs):
    # two temperatures, a NaN tokens/s, and task b without any baseline
    assert _size(multiplier_figure(hand_runs, "off")) == _expected(MULTIPLIER_SIZE)
    assert _size(timeline_figure(hand_runs, "off")) == _expected(TIMELINE_SIZE)
    # a single task and a single temperature
    one = hand_runs[(hand_runs["task"] == "a") & (hand_runs["temperature"] == 0.0)]
    assert _size(multiplier_figure(one, "off")) == _expected(MULTIPLIER_SIZE)
    # no baseline anywhere: nothing can be drawn, so the 'no data' PNG
    assert _size(multiplier_figure(hand_runs[hand_runs["task"] == "b"], "off")) == _expected(NO_DATA_SIZE)
    # missing start times are skipped
    odd = hand_runs.copy()
    odd.loc[[0, 1], "started_at"] = pd.NaT
    assert _size(timeline_figure(odd, "off")) == _expected(TIMELINE_SIZE)


def test_missing_baseline_is_named_in_the_footnote(hand_runs, monkeypatch):
    texts = _texts(monkeypatch)
    multiplier_figure(hand_runs, "off")
    joined = " ".join(texts)
    assert "No 'off' baseline for b @ T=0.0: 1 cell(s) skipped." in joined
    assert "1 cell(s) without a tokens/s value not drawn." in joined
    assert "no 'off' baseline" in joined  # and the panel says so where task b stands


def test_log_scale_only_for_ranges_over_ten_times(monkeypatch):
    scales: list[str] = []
    original = figure_style.render

    def spy(fig):
        scales.append(fig.axes[0].get_yscale())
        return original(fig)

    for module in (figures_module, acceptance_module, timeline_module, figure_style):  # the figures, and "no data"
        monkeypatch.setattr(module, "render", spy)
    narrow = _cells([("a", "off", 0.0, 1, 100.0), ("a", "mtp", 0.0, 1, 50.0), ("a", "ngram-mod", 0.0, 1, 400.0)])
    wide = _cells([("a", "off", 0.0, 1, 100.0), ("a", "mtp", 0.0, 1, 20.0), ("a", "ngram-mod", 0.0, 1, 400.0)])
    multiplier_figure(narrow, "off")
    multiplier_figure(wide, "off")
    assert scales == ["linear", "log"]


def _without_drafts(acceptance: pd.DataFrame, where: pd.Series) -> pd.DataFrame:
    partial = acceptance.copy()
    partial.loc[where, ["drafted", "accepted"]] = 0
    partial.loc[where, "pooled_rate"] = np.nan
    return partial


def test_acceptance_edge_cases(sample):
    acceptance = sample["acceptance"]
    # NaN rates, a condition that drafted nothing in one task only, a single temperature
    partial = _without_drafts(acceptance, acceptance["condition"] == "mtp")
    partial.loc[partial.index[0], "pooled_rate"] = np.nan
    assert _size(acceptance_figure(partial, "off")) == _expected(ACCEPTANCE_SIZE)
    # only the baseline, which drafted nothing: no data
    assert _size(acceptance_figure(acceptance[acceptance["condition"] == "off"], "off")) == _expected(NO_DATA_SIZE)


def test_acceptance_marks_conditions_that_drafted_nothing_as_na(sample, monkeypatch):
    texts = _texts(monkeypatch)
    acceptance = sample["acceptance"]
    acceptance_figure(
        _without_drafts(acceptance, (acceptance["condition"] == "mtp") & (acceptance["task"] == "essay")), "off"
    )
    assert texts.count("n/a") == 1
    assert any("drafted nothing anywhere: off" in t for t in texts)  # the baseline is left out, not a zero bar
    assert "0%" in texts  # dflash drafted and had nothing accepted: a real zero


# -- styles and helpers ---------------------------------------------------------------------------------------------


def test_conditions_differ_in_marker_and_colour():
    styles = condition_styles(STUDY, "off")
    assert list(styles) == STUDY
    assert len({s.marker for s in styles.values()}) == len(STUDY)
    assert len({s.colour for s in styles.values()}) == len(STUDY)
    assert len({s.hatch for s in styles.values()}) == len(STUDY)
    okabe_ito = set(figure_style.OKABE_ITO.values())
    assert all(s.colour in okabe_ito for s in styles.values())
    assert styles["off"] == BASELINE_STYLE and BASELINE_STYLE.colour == figure_style.OKABE_ITO["black"]


def test_styles_follow_the_config_order_not_the_names():
    names = ["off", "mtp", *(f"extra-{i}" for i in range(6))]
    styles = condition_styles(names, "off")
    assert styles == condition_styles(names, "off")
    renamed = condition_styles(["base", "eagle3", *names[2:]], "base")
    assert renamed["base"] == styles["off"] and renamed["eagle3"] == styles["mtp"]  # by position, not by name
    assert len({(s.colour, s.marker) for s in styles.values()}) == len(names)
    assert len({s.marker for s in styles.values()}) == len(names)
    # the baseline is black wherever the config lists it; the others keep their order
    moved = condition_styles(["mtp", "off", *names[2:]], "off")
    assert moved["off"] == BASELINE_STYLE and moved["mtp"] == styles["mtp"]


def test_png_data_uri_round_trips(sample):
    png = acceptance_figure(sample["acceptance"], "off")
    uri = png_data_uri(png)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == png


def test_a_cell_whose_output_differs_is_ringed(hand_runs):
    """A multiplier measured on an output that differs from the baseline's carries that in the figure too: a ring
    around the point and a legend entry (the bytes change); without one, the figure is as before."""
    plain = multiplier_figure(hand_runs, "off")
    assert multiplier_figure(hand_runs.assign(identical=True), "off") == plain
    one = hand_runs.copy()
    one.loc[(one.condition == "ngram-mod") & (one.temperature == 0.0) & (one.repeat == 2), "identical"] = False
    ringed = multiplier_figure(one, "off")
    assert ringed != plain and ringed == multiplier_figure(one, "off")  # deterministic
    captured: list[str] = []
    original = figures_module.new_figure

    def spy(size, title, panels, footnotes, handles):
        captured.extend([*footnotes, *(h.get_label() for h in handles)])
        return original(size, title, panels, footnotes, handles)

    figures_module.new_figure = spy
    try:
        multiplier_figure(one, "off")
    finally:
        figures_module.new_figure = original
    assert "output differs from 'off'" in captured
    assert any(f.startswith("Ringed: 1 cell(s) whose temperature-0 output differs") for f in captured)
