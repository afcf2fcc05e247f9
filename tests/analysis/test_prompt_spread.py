"""Task, prompt or repeat? The spread of the multiplier across a task's prompts beside its spread across repeats
(specbench.analysis.prompt_spread), on hand-made tables whose answer is known."""

from __future__ import annotations

import pytest

from specbench.analysis.cell_table import frame_of
from specbench.analysis.record_reader import as_current
from specbench.analysis.record_rows import cell_row
from specbench.analysis.summaries import tables
from specbench.core.records.version import RECORD_VERSION
from specbench.report.sections.variations import prompt_sections

NOISE = (0.98, 1.0, 1.02)  # each repeat's factor: about +-2 % between repeats


def _rows(gains: dict[tuple[str, str], float], base: float = 100.0) -> list[dict]:
    """off at ``base`` tok/s and ngram-mod at base x gain, per (task, prompt), three noisy repeats each."""
    rows = []
    for (task, prompt), gain in gains.items():
        for condition, factor in (("off", 1.0), ("ngram-mod", gain)):
            rows += [
                {
                    "task": task,
                    "prompt": prompt,
                    "condition": condition,
                    "temperature": 0.0,
                    "repeat": r,
                    "tokens_per_s": base * factor * noise,
                    "cell_file": f"{task}.{prompt}/{condition}/r{r}",
                }
                for r, noise in zip((1, 2, 3), NOISE[:: 1 if condition == "off" else -1], strict=True)
            ]
    return rows


def _summaries(gains: dict[tuple[str, str], float]) -> dict:
    return tables(frame_of(_rows(gains), "off"), "off")


def test_when_the_tasks_differ_and_their_prompts_do_not_the_task_decides() -> None:
    summaries = _summaries(
        {
            ("rewrite", "a"): 3.0,
            ("rewrite", "b"): 3.05,
            ("rewrite", "c"): 2.95,
            ("essay", "a"): 1.0,
            ("essay", "b"): 1.02,
            ("essay", "c"): 0.99,
        }
    )
    spread = summaries["spread"].set_index("task")
    assert spread.loc["rewrite", "prompt_names"] == ["a", "b", "c"]
    assert spread.loc["rewrite", "prompt_multipliers"] == pytest.approx([3.0, 3.05, 2.95])
    assert spread.loc["rewrite", "across_prompts_sd"] == pytest.approx(0.0167, abs=1e-3)
    assert spread.loc["rewrite", "across_repeats_sd"] == pytest.approx(0.02, abs=1e-3)  # log(1.02) about
    assert set(spread.deciding) == {"repeats"}  # three prompts within the repeats' noise
    [row] = summaries["deciding"].to_dict("records")
    assert row["deciding"] == "task" and row["task_p"] < 0.05
    assert row["across_tasks_sd"] > 10 * row["across_prompts_sd"]
    assert row["task_names"] == ["essay", "rewrite"]


def test_when_a_tasks_prompts_spread_as_widely_as_the_tasks_the_prompt_decides() -> None:
    summaries = _summaries(
        {
            ("rewrite", "a"): 3.0,
            ("rewrite", "b"): 1.1,
            ("rewrite", "c"): 2.0,
            ("essay", "a"): 1.0,
            ("essay", "b"): 2.8,
            ("essay", "c"): 1.6,
        }
    )
    spread = summaries["spread"].set_index("task")
    assert set(spread.deciding) == {"prompt"} and (spread.prompt_p < 1e-3).all()
    assert spread.loc["rewrite", "prompt_min"] == pytest.approx(1.1) and spread.loc["rewrite", "prompt_max"] == 3.0
    [row] = summaries["deciding"].to_dict("records")
    assert row["deciding"] == "prompt" and row["task_p"] > 0.05
    decide, per_task, per_category = prompt_sections(summaries, "off")
    assert decide.table.columns[-1].show(row["deciding"]).startswith("the prompt")
    assert "rewrite" in {r["task"] for r in per_task.table.rows}
    rewrite = next(r for r in per_category.table.rows if r["task"] == "rewrite")
    assert rewrite["multiplier"] == pytest.approx((3.0 * 1.1 * 2.0) ** (1 / 3), rel=1e-3)  # the prompts' geometric mean
    assert rewrite["low"] < rewrite["multiplier"] < rewrite["high"] and rewrite["prompts"] == 3


def test_one_prompt_per_task_has_no_spread_section() -> None:
    summaries = tables(
        frame_of(
            [{k: v for k, v in r.items() if k != "prompt"} for r in _rows({("rewrite", ""): 3.0, ("essay", ""): 1.0})],
            "off",
        ),
        "off",
    )
    assert summaries["spread"].empty and summaries["deciding"].empty
    assert prompt_sections(summaries, "off") == []
    assert list(summaries["summary"].task) == ["essay", "essay", "rewrite", "rewrite"]


def test_a_prompts_multiplier_uses_the_baseline_runs_of_that_prompt() -> None:
    rows = _rows({("rewrite", "a"): 2.0, ("rewrite", "b"): 2.0})
    for row in rows:  # prompt b is twice as fast under both conditions: its multiplier stays 2
        if row["prompt"] == "b":
            row["tokens_per_s"] *= 2
    summaries = tables(frame_of(rows, "off"), "off")
    per_prompt = summaries["prompts"].set_index(["prompt", "condition"])
    assert per_prompt.loc[("a", "ngram-mod"), "speedup"] == pytest.approx(2.0)
    assert per_prompt.loc[("b", "ngram-mod"), "speedup"] == pytest.approx(2.0)
    assert per_prompt.loc[("b", "ngram-mod"), "verdict"] == "faster"
    task = summaries["summary"].set_index("condition").loc["ngram-mod"]
    assert task.runs == 6 and task.speedup == pytest.approx(2.0)  # the task pools its prompts' runs
    assert summaries["spread"].across_prompts_sd.iloc[0] == pytest.approx(0.0, abs=1e-9)  # the same 2x on both


def test_a_version_7_record_is_read_with_the_one_prompt_coordinate() -> None:
    v7 = {
        "record_version": 7,
        "code_fingerprint": "c",
        "seed": 1,
        "attempt": 1,
        "rejected_attempts": [],
        "cell": {
            "machine": "local",
            "task": "essay",
            "condition": "off",
            "temperature": 0.0,
            "repeat": 2,
            "label": "essay/off/t0.0/r2",
        },
        "server": {"pid": 7, "log": "s.log", "scope": "fresh", "log_lines": []},
        "references": None,
        "response": {
            "content": "",
            "tokens": [1],
            "stop_type": "eos",
            "client_timing": {},
            "timings": {
                "predicted_per_second": 50.0,
                "predicted_n": 1,
                "predicted_ms": 20.0,
                "prompt_n": 3,
                "prompt_ms": 1.0,
            },
        },
        "timing": {"cell_wall_s": 1.0},
        "provenance": {"server_binary": {"sha256": "s"}, "model": {"sha256": "m"}, "prompt_sha256": "p"},
        "started_at": "2026-11-30T10:00:00+00:00",
        "ended_at": "2026-11-30T10:00:01+00:00",
    }
    record = as_current(v7)
    assert record["record_version"] == RECORD_VERSION and record["cell"]["prompt"] == ""
    assert "prompt" not in v7["cell"]  # the record read is not changed
    assert cell_row(record, "c.json")["prompt"] == ""
