"""Provenance mapping: every number id resolves to the cell files it came from; missing cells are named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import tables
from specbench.report.provenance import describe, number_id, report_numbers, row_id, unresolved
from specbench.report.sections.environment import missing_cells
from support.paths import TEST_DATA


def _runs() -> pd.DataFrame:
    """Two repeats of off and mtp on the essay at temperature 0, mtp's second repeat different from off's."""
    rows = []
    for condition, speeds in (("off", [100.0, 110.0]), ("mtp", [150.0, 160.0])):
        for repeat, speed in enumerate(speeds, start=1):
            rows.append(
                {
                    "task": "essay",
                    "condition": condition,
                    "temperature": 0.0,
                    "repeat": repeat,
                    "tokens_per_s": speed,
                    "draft_n": 10 if condition == "mtp" else 0,
                    "draft_n_accepted": 4 if condition == "mtp" else 0,
                    "tokens": [1, 2, 3] if (condition, repeat) != ("mtp", 2) else [1, 2, 4, 5],
                    "cell_file": f"results/cells/essay/{condition}/t0.0/r{repeat}.json",
                }
            )
    return frame_of(rows, "off")


def _chain(path: str) -> dict:
    return {
        "cell_file": path,
        "label": path,
        "server_log": path.replace(".json", ".server.log"),
        "gpu_samples": path.replace(".json", ".gpu.jsonl"),
        "server_argv": ["llama-server", "-m", "m.gguf"],
        "server_pid": 1,
        "attempt": 1,
        "llama_cpp": {"label": "b11223", "commit": None, "archive_sha256": "ab"},
        "server_binary_sha256": "cd",
        "model": {"path": "m.gguf", "sha256": "ef"},
        "draft": None,
        "prompt_sha256": "12",
        "device": "cpu",
        "started_at": "t0",
        "ended_at": "t1",
    }


def test_ids_are_stable_and_path_like() -> None:
    assert number_id("speedup", "essay", "mtp", 0.0) == "speedup-essay-mtp-t0.0"
    assert number_id("run", "essay", "off", 1.0, "r3") == "run-essay-off-t1.0-r3"
    assert number_id("identity", "essay", "off (control: r1)") == "identity-essay-off_control_r1_"
    assert row_id("identity", {"task": "essay", "condition": "off", "control": True}) == "identity-essay-off-control"
    assert row_id("identity", {"task": "essay", "condition": "mtp", "control": False}) == "identity-essay-mtp"
    assert (
        row_id("run", {"task": "essay", "condition": "off", "temperature": 1.0, "repeat": 3}) == "run-essay-off-t1.0-r3"
    )


def test_a_run_of_a_prompt_set_has_its_own_id() -> None:
    """Two prompts of one task measured at the same repeat are two numbers (their prompt key, as in cell paths)."""
    short, long = ({"task": "essay", "prompt": p, "condition": "off", "temperature": 0.0, "repeat": 1} for p in "sl")
    assert row_id("run", short) == "run-essay.s-off-t0.0-r1" != row_id("run", long) == "run-essay.l-off-t0.0-r1"
    assert row_id("run", {**short, "prompt": ""}) == "run-essay-off-t0.0-r1"
    rows = [
        {**coords, "tokens_per_s": speed, "cell_file": f"results/cells/essay.{coords['prompt']}/off/t0.0/r1.json"}
        for coords, speed in ((short, 10.0), (long, 20.0))
    ]
    numbers = report_numbers(tables(frame_of(rows, "off"), "off"), "off")
    assert [numbers[row_id("run", r)]["cells"] for r in rows] == [[r["cell_file"]] for r in rows]


def test_the_baseline_speed_is_the_mean_the_report_shows() -> None:
    """The baseline's tokens/s entry holds the mean (the number its table shows, the multiplier's denominator)."""
    rows = [
        {"task": "essay", "condition": "off", "temperature": 0.0, "repeat": r, "tokens_per_s": v, "cell_file": f"r{r}"}
        for r, v in ((1, 100.0), (2, 101.0), (3, 130.0))
    ]
    numbers = report_numbers(tables(frame_of(rows, "off"), "off"), "off")
    assert numbers["speed-essay-off-t0.0"]["value"] == pytest.approx(331 / 3)
    assert numbers["speed-essay-off-t0.0"]["what"].startswith("mean tokens/s")


def test_every_number_maps_to_its_cells(tmp_path: Path) -> None:
    summaries = tables(_runs(), "off")
    numbers = report_numbers(summaries, "off")
    off = ["results/cells/essay/off/t0.0/r1.json", "results/cells/essay/off/t0.0/r2.json"]
    mtp = ["results/cells/essay/mtp/t0.0/r1.json", "results/cells/essay/mtp/t0.0/r2.json"]
    assert numbers["speed-essay-off-t0.0"]["cells"] == off
    assert numbers["speed-essay-off-t0.0"]["value"] == pytest.approx(105.0)
    assert numbers["speedup-essay-mtp-t0.0"]["cells"] == sorted(mtp + off)
    assert numbers["speedup-essay-mtp-t0.0"]["value"] == pytest.approx(155 / 105)
    assert numbers["acceptance-essay-mtp-t0.0"]["cells"] == mtp
    assert numbers["acceptance-essay-mtp-t0.0"]["value"] == pytest.approx(0.4)
    assert numbers["identity-essay-mtp"]["cells"] == sorted(mtp + off)
    assert numbers["identity-essay-mtp"]["value"] == 1 and "of 2 compared" in numbers["identity-essay-mtp"]["what"]
    assert numbers["identity-essay-off-control"]["cells"] == off
    assert numbers["run-essay-mtp-t0.0-r2"]["cells"] == [mtp[1]]
    assert numbers["run-essay-mtp-t0.0-r2"]["value"] == 160.0
    # the cells behind each summary number are the summary tables' own, not recomputed here
    for name, kind in (("acceptance", "acceptance"), ("identity", "identity")):
        for row in summaries[name].to_dict("records"):
            assert numbers[row_id(kind, row)]["cells"] == row["cells"]
    json.dumps(numbers, allow_nan=True)  # plain JSON values, no numpy or pandas scalars

    provenance = {
        "context": {"workflow_commit": "abc"},
        "numbers": numbers,
        "cells": {path: _chain(path) for path in off + mtp},
    }
    for path in off + mtp:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("{}")
    assert unresolved(provenance, tmp_path) == []
    (tmp_path / mtp[0]).unlink()
    assert set(unresolved(provenance, tmp_path)) == {
        "speedup-essay-mtp-t0.0",
        "acceptance-essay-mtp-t0.0",
        "identity-essay-mtp",
        "run-essay-mtp-t0.0-r1",
    }
    text = describe(provenance, "run-essay-mtp-t0.0-r1")
    assert "results/cells/essay/mtp/t0.0/r1.server.log" in text and "sha256 cd" in text
    with pytest.raises(KeyError, match="no number with id 'speedup-x'"):
        describe(provenance, "speedup-x")


def test_partial_run_names_the_missing_cells() -> None:
    runs = _runs()
    expected = [*runs.cell_file, "results/cells/essay/mtp/t0.0/r3.json", "results/cells/gsm8k/off/t0.0/r1.json"]
    partial = runs[runs.cell_file != "results/cells/essay/off/t0.0/r2.json"]
    assert missing_cells(expected, partial) == [
        "results/cells/essay/off/t0.0/r2.json",
        "results/cells/essay/mtp/t0.0/r3.json",
        "results/cells/gsm8k/off/t0.0/r1.json",
    ]
    assert missing_cells(list(runs.cell_file), runs) == []


def test_html_report_of_a_partial_run_lists_what_is_missing() -> None:
    from specbench.core.results.judged import Comparability
    from specbench.report.contents import build_report
    from specbench.report.document import Facts
    from specbench.report.html import render_html

    rows = json.loads((TEST_DATA / "report" / "cells.json").read_text())
    dropped = rows[0]["cell_file"]
    summaries = tables(frame_of(rows[1:], "off"), "off")
    numbers = report_numbers(summaries, "off")
    facts = Facts(
        name="partial",
        baseline="off",
        comparability=Comparability([], "CPU (x86_64, 2 cores)"),
        environment={"device": "cpu"},
        device={"nvml": "unavailable", "devices": []},
        model_bytes=70_000_000,
        missing_cells=missing_cells([r["cell_file"] for r in rows], summaries["cells"]),
    )
    page = render_html(build_report(summaries, facts=facts, claims=None, numbers=numbers))
    assert f"<li class='bad'>{dropped}</li>" in page
    assert f"<p class='bad'>{len(rows) - 1} cells measured; 1 missing (listed under Missing cells)." in page
    assert "Device memory bandwidth unknown" in page
