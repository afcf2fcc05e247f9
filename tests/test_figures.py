"""The report's figures: PNG bytes of the fixed size, the right multipliers, robust to empty and partial tables."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

from specbench import figures
from specbench.figures import (
    ACCEPTANCE_SIZE,
    CONDITION_STYLE,
    DPI,
    MULTIPLIER_SIZE,
    NO_DATA_SIZE,
    PNG_SIGNATURE,
    TIMELINE_SIZE,
    acceptance_figure,
    condition_style,
    condition_styles,
    multiplier_figure,
    multipliers,
    png_data_uri,
    timeline_figure,
)

DATA = Path(__file__).resolve().parent / "data" / "report"


def _pixels(png: bytes) -> np.ndarray:
    assert png.startswith(PNG_SIGNATURE)
    return mpimg.imread(io.BytesIO(png), format="png")


def _size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels."""
    image = _pixels(png)
    return image.shape[1], image.shape[0]


def _expected(size: tuple[float, float]) -> tuple[int, int]:
    return round(size[0] * DPI), round(size[1] * DPI)


def _runs(rows: list[tuple[str, str, float, int, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["task", "condition", "temperature", "repeat", "tokens_per_s"])
    start = pd.Timestamp("2026-11-29T16:40:00+00:00")
    frame["started_at"] = [(start + pd.Timedelta(seconds=30 * i)).isoformat() for i in range(len(frame))]
    return frame


@pytest.fixture
def hand_runs() -> pd.DataFrame:
    """off medians 100 (task a, T=0) and 200 (task a, T=1); ngram-mod at 600/650/700 and 300/400/NaN."""
    return _runs([
        ("a", "off", 0.0, 1, 90.0), ("a", "off", 0.0, 2, 100.0), ("a", "off", 0.0, 3, 130.0),
        ("a", "ngram-mod", 0.0, 1, 600.0), ("a", "ngram-mod", 0.0, 2, 650.0), ("a", "ngram-mod", 0.0, 3, 700.0),
        ("a", "off", 1.0, 1, 200.0), ("a", "off", 1.0, 2, 200.0),
        ("a", "ngram-mod", 1.0, 1, 300.0), ("a", "ngram-mod", 1.0, 2, 400.0), ("a", "ngram-mod", 1.0, 3, np.nan),
        ("b", "mtp", 0.0, 1, 50.0),  # task b has no baseline at all
    ])


@pytest.fixture(scope="module")
def sample() -> dict[str, pd.DataFrame]:
    return {name: pd.read_csv(DATA / f"{name}.csv") for name in ("runs", "acceptance", "summary")}


# -- multipliers ---------------------------------------------------------------------------------------------------


def test_multipliers_divide_by_the_median_baseline_of_the_same_task_and_temperature(hand_runs):
    table = multipliers(hand_runs, "off")
    assert list(table.columns) == ["task", "condition", "temperature", "repeat", "tokens_per_s",
                                   "baseline_median_tokens_per_s", "multiplier"]
    assert "off" not in set(table["condition"])
    t0 = table[(table["task"] == "a") & (table["temperature"] == 0.0)].sort_values("repeat")
    assert t0["baseline_median_tokens_per_s"].tolist() == [100.0, 100.0, 100.0]
    assert t0["multiplier"].tolist() == pytest.approx([6.0, 6.5, 7.0])
    t1 = table[(table["task"] == "a") & (table["temperature"] == 1.0)].sort_values("repeat")
    assert t1["multiplier"].iloc[:2].tolist() == pytest.approx([1.5, 2.0])
    assert np.isnan(t1["multiplier"].iloc[2])  # the cell's own tokens/s is NaN
    orphan = table[table["task"] == "b"]
    assert len(orphan) == 1 and np.isnan(orphan["multiplier"].iloc[0])  # no baseline for task b


def test_multipliers_ignore_nan_baselines_and_treat_a_zero_baseline_as_missing():
    runs = _runs([("a", "off", 0.0, 1, np.nan), ("a", "off", 0.0, 2, 50.0), ("a", "ngram-mod", 0.0, 1, 100.0),
                  ("b", "off", 0.0, 1, 0.0), ("b", "ngram-mod", 0.0, 1, 100.0)])
    table = multipliers(runs, "off").set_index("task")
    assert table.loc["a", "multiplier"] == pytest.approx(2.0)
    assert np.isnan(table.loc["b", "multiplier"])


def test_multipliers_of_a_custom_baseline_and_of_empty_tables():
    runs = _runs([("a", "ref", 0.0, 1, 10.0), ("a", "off", 0.0, 1, 25.0)])
    assert multipliers(runs, "ref")["multiplier"].tolist() == pytest.approx([2.5])
    empty = multipliers(pd.DataFrame(), "off")
    assert empty.empty and "multiplier" in empty.columns


def test_multipliers_match_the_summary_speedups_of_the_sample(sample):
    table = multipliers(sample["runs"], "off")
    medians = table.groupby(["task", "condition", "temperature"])["multiplier"].median()
    summary = sample["summary"][sample["summary"]["condition"] != "off"]
    assert len(summary) == len(medians) > 0
    for row in summary.itertuples():
        assert medians[(row.task, row.condition, row.temperature)] == pytest.approx(row.speedup_median, rel=1e-9)


# -- rendering ------------------------------------------------------------------------------------------------------


def test_sample_tables_render_at_the_fixed_size(sample, tmp_path):
    rendered = {
        "multiplier": (multiplier_figure(sample["runs"]), MULTIPLIER_SIZE),
        "acceptance": (acceptance_figure(sample["acceptance"]), ACCEPTANCE_SIZE),
        "timeline": (timeline_figure(sample["runs"]), TIMELINE_SIZE),
    }
    for name, (png, size) in rendered.items():
        assert isinstance(png, bytes) and png.startswith(PNG_SIGNATURE), name
        assert _size(png) == _expected(size), name
        image = _pixels(png)
        assert image[..., :3].std() > 0.05, f"{name} looks blank"
        (tmp_path / f"{name}.png").write_bytes(png)


def test_figures_are_deterministic(sample):
    assert multiplier_figure(sample["runs"]) == multiplier_figure(sample["runs"])
    assert acceptance_figure(sample["acceptance"]) == acceptance_figure(sample["acceptance"])
    assert timeline_figure(sample["runs"]) == timeline_figure(sample["runs"])


def test_figures_do_not_modify_their_inputs(sample):
    runs, acceptance = sample["runs"].copy(), sample["acceptance"].copy()
    multiplier_figure(runs)
    timeline_figure(runs)
    acceptance_figure(acceptance)
    pd.testing.assert_frame_equal(runs, sample["runs"])
    pd.testing.assert_frame_equal(acceptance, sample["acceptance"])


def test_figures_leave_no_open_pyplot_figures(sample):
    plt = pytest.importorskip("matplotlib.pyplot")
    before = plt.get_fignums()
    multiplier_figure(sample["runs"])
    acceptance_figure(sample["acceptance"])
    timeline_figure(sample["runs"])
    assert plt.get_fignums() == before


@pytest.mark.parametrize("render", [multiplier_figure, acceptance_figure, timeline_figure])
@pytest.mark.parametrize("table", [pd.DataFrame(), pd.DataFrame(columns=["task", "condition", "temperature",
                                                                         "tokens_per_s", "started_at", "drafted",
                                                                         "accepted", "pooled_rate"]), None])
def test_empty_inputs_give_a_no_data_png(render, table):
    png = render(table)
    assert png.startswith(PNG_SIGNATURE)
    assert _size(png) == _expected(NO_DATA_SIZE)


def test_no_data_png_is_distinct_from_a_real_figure(sample):
    empty = multiplier_figure(pd.DataFrame())
    assert _size(multiplier_figure(sample["runs"])) != _size(empty)
    only_baseline = sample["runs"][sample["runs"]["condition"] == "off"]
    assert _size(multiplier_figure(only_baseline)) == _expected(NO_DATA_SIZE)


def test_partial_tables_render_without_raising(hand_runs):
    # two temperatures, a NaN tokens/s, and task b without any baseline
    assert _size(multiplier_figure(hand_runs)) == _expected(MULTIPLIER_SIZE)
    assert _size(timeline_figure(hand_runs)) == _expected(TIMELINE_SIZE)
    # a single task and a single temperature
    one = hand_runs[(hand_runs["task"] == "a") & (hand_runs["temperature"] == 0.0)]
    assert _size(multiplier_figure(one)) == _expected(MULTIPLIER_SIZE)
    # no baseline anywhere: nothing can be drawn, so the 'no data' PNG
    assert _size(multiplier_figure(hand_runs[hand_runs["task"] == "b"])) == _expected(NO_DATA_SIZE)
    # unparseable and missing start times are skipped
    odd = hand_runs.copy()
    odd.loc[0, "started_at"] = "not a time"
    odd.loc[1, "started_at"] = None
    assert _size(timeline_figure(odd)) == _expected(TIMELINE_SIZE)
    # a table without temperatures
    assert _size(multiplier_figure(hand_runs.drop(columns="temperature"))) == _expected(MULTIPLIER_SIZE)


def test_missing_baseline_is_named_in_the_footnote(hand_runs, monkeypatch):
    texts: list[str] = []
    original = figures._layout

    def spy(fig, panels, **kwargs):
        texts.extend(kwargs["footnotes"])
        return original(fig, panels, **kwargs)

    monkeypatch.setattr(figures, "_layout", spy)
    multiplier_figure(hand_runs)
    joined = " ".join(texts)
    assert "No 'off' baseline for b @ T=0.0: 1 cell(s) skipped." in joined
    assert "1 cell(s) without a tokens/s value not drawn." in joined


def test_log_scale_only_for_ranges_over_ten_times(monkeypatch):
    scales: list[str] = []
    original = figures._render

    def spy(fig):
        scales.append(fig.axes[0].get_yscale())
        return original(fig)

    monkeypatch.setattr(figures, "_render", spy)
    narrow = _runs([("a", "off", 0.0, 1, 100.0), ("a", "mtp", 0.0, 1, 50.0), ("a", "ngram-mod", 0.0, 1, 400.0)])
    wide = _runs([("a", "off", 0.0, 1, 100.0), ("a", "mtp", 0.0, 1, 20.0), ("a", "ngram-mod", 0.0, 1, 400.0)])
    multiplier_figure(narrow)
    multiplier_figure(wide)
    assert scales == ["linear", "log"]


def test_acceptance_edge_cases(sample):
    acceptance = sample["acceptance"]
    # NaN rates, a condition that drafted nothing in one task only, a single temperature
    partial = acceptance.copy()
    partial.loc[partial["condition"] == "mtp", ["drafted", "accepted", "pooled_rate"]] = [0, 0, np.nan]
    partial.loc[partial.index[0], "pooled_rate"] = np.nan
    assert _size(acceptance_figure(partial)) == _expected(ACCEPTANCE_SIZE)
    # only the baseline, which drafted nothing: no data
    assert _size(acceptance_figure(acceptance[acceptance["condition"] == "off"])) == _expected(NO_DATA_SIZE)
    # without pooled_rate the rate comes from accepted / drafted
    assert _size(acceptance_figure(acceptance.drop(columns=["pooled_rate", "min_rate", "max_rate"]))) == \
        _expected(ACCEPTANCE_SIZE)


def test_acceptance_marks_conditions_that_drafted_nothing_as_na(sample, monkeypatch):
    texts: list[str] = []
    original = figures._render

    def spy(fig):
        texts.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        texts.extend(t.get_text() for t in fig.texts)
        return original(fig)

    monkeypatch.setattr(figures, "_render", spy)
    partial = sample["acceptance"].copy()
    gone = (partial["condition"] == "mtp") & (partial["task"] == "essay")
    partial.loc[gone, ["drafted", "accepted", "pooled_rate"]] = [0, 0, np.nan]
    acceptance_figure(partial)
    assert texts.count("n/a") == 1
    assert any("drafted nothing anywhere: off" in t for t in texts)  # the baseline is left out, not a zero bar
    assert "0%" in texts  # dflash drafted and had nothing accepted: a real zero


# -- styles and helpers ---------------------------------------------------------------------------------------------


def test_conditions_differ_in_marker_and_colour():
    study = ["off", "ngram-mod", "ngram-mod-warm", "mtp", "dflash"]
    styles = [condition_style(c) for c in study]
    assert len({s.marker for s in styles}) == len(study)
    assert len({s.colour for s in styles}) == len(study)
    assert len({s.hatch for s in styles}) == len(study)
    okabe_ito = set(figures.OKABE_ITO.values())
    assert all(s.colour in okabe_ito for s in styles)
    assert set(CONDITION_STYLE) == set(study)


def test_unknown_conditions_get_stable_distinct_styles():
    assert condition_style("eagle3") == condition_style("eagle3")
    assert condition_style("eagle3").marker not in {s.marker for s in CONDITION_STYLE.values()}
    names = ["off", "mtp", *(f"extra-{i}" for i in range(6))]
    styles = condition_styles(names)
    assert styles == condition_styles(list(reversed(names)))
    assert styles["mtp"] == CONDITION_STYLE["mtp"]
    pairs = {(s.colour, s.marker) for s in styles.values()}
    assert len(pairs) == len(names)
    assert len({s.marker for s in styles.values()}) == len(names)


def test_png_data_uri_round_trips(sample):
    png = acceptance_figure(sample["acceptance"])
    uri = png_data_uri(png)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == png
