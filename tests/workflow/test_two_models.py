"""Two models in one working directory: the tiny demo's model on a slice of its matrix, then the SmolLM2 GGUF (out of
its pinned wheel, as "Your own model" in docs/builds-and-models.md gives a ready GGUF) on the same coordinates. The
second run measures into its own models folder: no cell file of the first changes (sha256 and modification time,
before and after), each run's report names its own model and its own cells, and the first config has nothing left to
measure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from specbench.analysis.cell_table import read_table
from specbench.core.plan.cells import Cell
from specbench.core.steps.files import read_json, sha256_file
from support.paths import REPO
from support.workflow import BACK_HALF, fail_message, job_counts, placed, planned, snakemake, tiny_run, write_yaml

pytestmark = pytest.mark.workflow

TINY = REPO / "config" / "tiny.yaml"
SLICE = {
    "select": {"tasks": ["essay"]},
    "temperatures": [0.0],
    "repeats": 2,
    "max_tokens": 32,
    "measurement": {"max_foreign_cpu": None},  # other suites run beside this one: contention recorded, not judged
}
FIRST = {**SLICE, "name": "first model", "select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod", "dflash"]}}
SECOND = {
    **SLICE,
    "name": "second model",
    # "Your own model" (docs/builds-and-models.md): a ready GGUF, the conditions it can run; the same task,
    # temperatures and repeats
    "models": {"target": {**yaml.safe_load((REPO / "config" / "smollm2.yaml").read_text())["models"]["target"]}},
    "select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod"]},
}
CELL_FILES = "results/cells/**/r*.json"


def _cells(work: Path) -> dict[str, tuple[str, int]]:
    """Every cell file of the working directory: its sha256 and modification time."""
    return {str(p.relative_to(work)): (sha256_file(p), p.stat().st_mtime_ns) for p in sorted(work.glob(CELL_FILES))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("two-models")
    tiny_run(work, "first", FIRST)
    first = {"cells": _cells(work), "report": (work / "results/report.md").read_text()}
    first["table"] = read_table(work / "results/cells.parquet")
    # a cell file from before models folders, at the coordinates both runs measure: left alone, named in one line
    old = Path(Cell("essay", "off", 0.0, 1).path)
    (work / old).parent.mkdir(parents=True)
    shutil.copy2(work / placed(work, Cell("essay", "off", 0.0, 1)).path, work / old)
    second_yaml = write_yaml(work / "second.yaml", SECOND)
    result = snakemake(
        work, ["all"], [TINY, second_yaml], env={"HF_HUB_OFFLINE": "1"}, prepared=("llama-cpp", "smollm2")
    )
    assert result.returncode == 0, fail_message(result)
    return {"work": work, "first": first, "second": result, "old": old, "configs": [TINY, work / "first.yaml"]}


def test_the_second_model_leaves_every_cell_file_of_the_first_as_it_was(runs: dict) -> None:
    work, before = runs["work"], runs["first"]["cells"]
    assert len(before) == 2 * 3  # essay x (off, ngram-mod, dflash) x 2 repeats
    after = _cells(work)
    assert {path: after.get(path) for path in before} == before  # same bytes, never rewritten
    added = sorted(set(after) - set(before) - {str(runs["old"])})
    assert len(added) == 2 * 2  # essay x (off, ngram-mod) x 2 repeats, all its own
    own = {Cell.from_path(p).models for p in added}
    assert len(own) == 1 and own.isdisjoint(Cell.from_path(p).models for p in before)
    for path in added:  # the same coordinates as the first's, in another folder
        cell = Cell.from_path(path)
        assert planned(runs["configs"], cell).path in before
        assert (
            read_json(work / path)["provenance"]["model"]["sha256"]
            != read_json(work / planned(runs["configs"], cell).path)["provenance"]["model"]["sha256"]
        )


def test_each_report_names_its_own_model_and_only_its_own_cells(runs: dict) -> None:
    work, first = runs["work"], runs["first"]
    second = {"report": (work / "results/report.md").read_text(), "table": read_table(work / "results/cells.parquet")}
    assert set(first["table"].cell_file) == set(first["cells"])
    assert len(second["table"]) == 4 and not set(second["table"].cell_file) & set(first["cells"])
    models = [
        {read_json(work / f)["provenance"]["model"]["sha256"] for f in run["table"].cell_file}
        for run in (first, second)
    ]
    assert all(len(m) == 1 for m in models) and models[0] != models[1]
    for run, (own,), (other,) in ((first, *models), (second, *reversed(models))):
        setup = next(line for line in run["report"].splitlines() if line.startswith("| model | ") and "sha256" in line)
        assert own in setup and other not in run["report"]  # its model as verified, and never the other's
        for cell_file in run["table"].cell_file:
            assert cell_file in run["report"]  # every cell of its own, by its path
    assert "SmolLM2-135M-Instruct" in second["report"] and "SmolLM2" not in first["report"]


def test_old_layout_cells_are_left_and_named_in_one_line(runs: dict) -> None:
    lines = [ln for ln in runs["second"].stderr.splitlines() if "layout from before models folders" in ln]
    assert len(lines) == 1 and lines[0].startswith("specbench: 1 cell file(s)") and str(runs["old"]) in lines[0]
    work = runs["work"]
    first_cell = planned(runs["configs"], Cell("essay", "off", 0.0, 1)).path
    assert sha256_file(work / runs["old"]) == runs["first"]["cells"][first_cell][0]  # the copy, untouched


def test_the_first_config_has_nothing_left_to_measure(runs: dict) -> None:
    plan = snakemake(runs["work"], ["all"], runs["configs"], "--dry-run", env={"HF_HUB_OFFLINE": "1"})
    assert plan.returncode == 0, fail_message(plan)
    counts = job_counts(plan.stdout + plan.stderr)
    assert counts == {"aggregate": 1, **BACK_HALF, "all": 1}, plan.stdout[-3000:]  # its tables again, no cell
