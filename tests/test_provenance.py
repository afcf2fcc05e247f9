"""Provenance mapping: every number id resolves to the cell files it came from; missing cells are named."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from specbench.aggregate import summarise
from specbench.provenance import describe, number_id, report_numbers, unresolved
from specbench.report import missing_cells


def _runs() -> pd.DataFrame:
    rows = []
    for condition, speeds in (("off", [100.0, 110.0]), ("mtp", [150.0, 160.0])):
        for repeat, speed in enumerate(speeds, start=1):
            rows.append({"task": "essay", "condition": condition, "temperature": 0.0, "repeat": repeat,
                         "tokens_per_s": speed, "draft_n": 10 if condition == "mtp" else 0,
                         "draft_n_accepted": 4 if condition == "mtp" else 0,
                         "cell_file": f"results/cells/essay/{condition}/t0.0/r{repeat}.json"})
    return pd.DataFrame(rows)


def _tables(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    acceptance = pd.DataFrame([{"task": "essay", "condition": "mtp", "temperature": 0.0, "pooled_rate": 0.4}])
    identity = pd.DataFrame([{"task": "essay", "condition": "mtp", "identical": 2, "repeats_compared": 2},
                             {"task": "essay", "condition": "off (control: r1)", "identical": 1,
                              "repeats_compared": 1}])
    return {"runs": runs, "summary": summarise(runs, "off"), "acceptance": acceptance, "identity_summary": identity}


def _chain(path: str) -> dict:
    return {"cell_file": path, "label": path, "server_log": path.replace(".json", ".server.log"),
            "gpu_samples": path.replace(".json", ".gpu.jsonl"), "server_argv": ["llama-server", "-m", "m.gguf"],
            "server_pid": 1, "attempt": 1, "llama_cpp": {"label": "b11223", "commit": None, "archive_sha256": "ab"},
            "server_binary_sha256": "cd", "model": {"path": "m.gguf", "sha256": "ef"}, "draft": None,
            "prompt_sha256": "12", "device": "cpu", "started_at": "t0", "ended_at": "t1"}


def test_ids_are_stable_and_path_like() -> None:
    assert number_id("speedup", "essay", "mtp", 0.0) == "speedup-essay-mtp-t0.0"
    assert number_id("run", "essay", "off", 1.0, "r3") == "run-essay-off-t1.0-r3"
    assert number_id("identity", "essay", "off (control: r1)") == "identity-essay-off_control_r1_"


def test_every_number_maps_to_its_cells(tmp_path: Path) -> None:
    runs = _runs()
    numbers = report_numbers(_tables(runs), "off")
    off = ["results/cells/essay/off/t0.0/r1.json", "results/cells/essay/off/t0.0/r2.json"]
    mtp = ["results/cells/essay/mtp/t0.0/r1.json", "results/cells/essay/mtp/t0.0/r2.json"]
    assert numbers["speed-essay-off-t0.0"]["cells"] == off
    assert numbers["speed-essay-off-t0.0"]["value"] == pytest.approx(105.0)
    assert numbers["speedup-essay-mtp-t0.0"]["cells"] == sorted(mtp + off)
    assert numbers["speedup-essay-mtp-t0.0"]["value"] == pytest.approx(155 / 105)
    assert numbers["acceptance-essay-mtp-t0.0"]["cells"] == mtp
    assert numbers["identity-essay-mtp"]["cells"] == sorted(mtp + off)
    assert numbers["identity-essay-off_control_r1_"]["cells"] == off
    assert numbers["run-essay-mtp-t0.0-r2"]["cells"] == [mtp[1]]

    provenance = {"context": {"workflow_commit": "abc"}, "numbers": numbers,
                  "cells": {path: _chain(path) for path in off + mtp}}
    for path in off + mtp:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("{}")
    assert unresolved(provenance, tmp_path) == []
    (tmp_path / mtp[0]).unlink()
    assert set(unresolved(provenance, tmp_path)) == {"speedup-essay-mtp-t0.0", "acceptance-essay-mtp-t0.0",
                                                     "identity-essay-mtp", "run-essay-mtp-t0.0-r1"}
    text = describe(provenance, "run-essay-mtp-t0.0-r1")
    assert "results/cells/essay/mtp/t0.0/r1.server.log" in text and "sha256 cd" in text
    with pytest.raises(KeyError, match="no number with id 'speedup-x'"):
        describe(provenance, "speedup-x")


def test_partial_run_names_the_missing_cells() -> None:
    runs = _runs()
    expected = [*runs.cell_file, "results/cells/essay/mtp/t0.0/r3.json", "results/cells/gsm8k/off/t0.0/r1.json"]
    partial = runs[runs.cell_file != "results/cells/essay/off/t0.0/r2.json"]
    assert missing_cells(expected, partial) == [
        "results/cells/essay/off/t0.0/r2.json", "results/cells/essay/mtp/t0.0/r3.json",
        "results/cells/gsm8k/off/t0.0/r1.json"]
    assert missing_cells(list(runs.cell_file), runs) == []


def test_html_report_of_a_partial_run_lists_what_is_missing() -> None:
    from specbench.html_report import render_html
    from specbench.measures import IDENTITY_SUMMARY_COLUMNS

    data = Path(__file__).parent / "data" / "report"
    runs = pd.read_csv(data / "runs.csv")
    dropped = runs.cell_file.iloc[0]
    partial = runs.iloc[1:].reset_index(drop=True)
    tables = {"runs": partial, "summary": summarise(partial, "off"),
              "acceptance": pd.read_csv(data / "acceptance.csv"),
              "identity_summary": pd.DataFrame(columns=IDENTITY_SUMMARY_COLUMNS)}
    numbers = report_numbers(tables, "off")
    context = {"name": "partial", "baseline": "off", "is_study_setup": False,
               "missing_cells": missing_cells(list(runs.cell_file), partial),
               "environment": {"device": "cpu"}, "device": {"nvml": "unavailable", "devices": []},
               "model_bytes": 70_000_000}
    page = render_html(tables, figures={}, claims=None, provenance={"context": {}, "numbers": numbers, "cells": {}},
                       context=context)
    assert f"<li class='bad'>{dropped}</li>" in page
    assert "<span class='bad'>1 missing</span>" in page
    assert f"{len(partial)} cells measured" in page
    assert "Device memory bandwidth unknown" in page
