"""The report rule's work as one function (specbench.report.assemble): the files it reads, the claims judged once per
machine, and the four files it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from specbench.analysis.cell_table import frame_of, write_table
from specbench.report.assemble import SUMMARY_FILES, ReportInputs, ReportSettings, assemble, write_report
from specbench.report.figures import FIGURE_FILES
from support.paths import REPO

ROWS = json.loads((REPO / "tests/data/report/cells.json").read_text())
STUDY = yaml.safe_load((REPO / "config/config.yaml").read_text())
CPU = {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound", "devices": []}


def _files(tmp_path: Path, machines: list[str], extra: dict | None = None, where: dict | None = None) -> ReportInputs:
    rows = [
        {
            **row,
            "machine": machine,
            "cell_file": row["cell_file"].replace("cells/", f"cells/{machine}/"),
            **(extra or {}),
        }
        for machine in machines
        for row in ROWS
    ]
    write_table(frame_of(rows, "off"), tmp_path / "cells.parquet")
    where = where or {"device": CPU, "machine": {"hostname": "box", "machine": "x86_64", "cpu_count": 2}}
    index = {"cells": {}, **where, "machines": {m: where for m in machines}, "software": {}}
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/manifest.json").write_text(json.dumps({"source": {"kind": "pypi-sdist"}, "binaries": {}}))
    (tmp_path / "model.json").write_text(
        json.dumps({"path": "m.gguf", "size_bytes": 10, "sha256": "ab", "mtp": {"present": True}})
    )
    return ReportInputs.of(
        {
            "table": tmp_path / "cells.parquet",
            "cells_index": tmp_path / "index.json",
            "build": tmp_path / "bin",
            "model": tmp_path / "model.json",
            "claims": REPO / "config/claims.yaml",
            "downloads": [],
            "code": ["ignored.py"],
        }
    )


def _settings(machines: list[str]) -> ReportSettings:
    return ReportSettings(
        name="assembled",
        baseline="off",
        machines=machines,
        names={"tasks": list(STUDY["tasks"]), "conditions": list(STUDY["conditions"])},
        study_setup=STUDY["study_setup"],
        server_args=STUDY["server"]["args"],
        task_order=list(STUDY["tasks"]),
        condition_order=list(STUDY["conditions"]),
        expected_cells=[r["cell_file"] for r in ROWS],
        config_sha256="c0",
        workflow_commit="w1",
    )


def test_one_machine_claims_numbers_and_the_four_files(tmp_path: Path) -> None:
    inputs = _files(tmp_path, ["local"])
    out = {name: tmp_path / f"out.{name}" for name in ("md", "html", "csv", "json")}
    done = write_report(
        inputs,
        _settings(["local"]),
        markdown=out["md"],
        html=out["html"],
        claims_csv=out["csv"],
        provenance=out["json"],
        summaries={name: tmp_path / f"{name}.csv" for name in SUMMARY_FILES},
        log=tmp_path / "report.log",
    )
    for name in SUMMARY_FILES:  # the summaries the report shows, as the CSV files users get
        written = pd.read_csv(tmp_path / f"{name}.csv")
        assert list(written.columns) == list(done.summaries[name].columns) and len(written) == len(done.summaries[name])
    assert len(done.summaries["summary"]) and set(pd.read_csv(tmp_path / "summary.csv").machine) == {"local"}
    ids = {c["id"] for c in yaml.safe_load((REPO / "config/claims.yaml").read_text())["claims"]}
    assert ids <= set(done.claims.id)  # every study claim judged once (and its variants beside it)
    assert set(pd.read_csv(out["csv"]).id) == set(done.claims.id)
    numbers = json.loads(out["json"].read_text())["numbers"]
    assert numbers["speedup-essay-mtp-t0.0"]["cells"] and numbers == done.provenance["numbers"]
    assert "What this run found" in out["md"].read_text() and "<html" in out["html"].read_text()
    assert "report:" in (tmp_path / "report.log").read_text()
    assert not any(s.id == "machines" for s in done.report.sections)  # one machine: no comparison


def test_several_machines_each_judged_on_its_own_cells(tmp_path: Path) -> None:
    done = assemble(_files(tmp_path, ["a100", "h200"]), _settings(["a100", "h200"]))
    titles = [s.id for s in done.report.sections]
    assert titles[:2] == ["answer", "machines"] and "machines-claims" in titles
    claims = next(s for s in done.report.sections if s.id == "machines-claims").table
    assert claims.rows and all(set(row["values"]) == {"a100", "h200"} for row in claims.rows)
    assert {"speedup-essay-mtp-t0.0@a100", "speedup-essay-mtp-t0.0@h200"} <= done.report.numbers.keys()


def test_a_missing_input_is_named(tmp_path: Path) -> None:
    inputs = _files(tmp_path, ["local"])
    (tmp_path / "model.json").unlink()
    with pytest.raises(FileNotFoundError, match="model.json"):
        assemble(inputs, _settings(["local"]))


VULKAN = {
    "device": {"nvml": "not used", "devices": []},
    "machine": {
        "hostname": "box",
        "machine": "x86_64",
        "cpu_count": 2,
        "backend": "vulkan",
        "devices": [],
        "llama_devices": [
            {
                "name": "Vulkan0",
                "description": "llvmpipe (LLVM 15.0.6, 256 bits)",
                "memory_total_mib": 2048,
                "memory_free_mib": 2048,
            }
        ],
    },
}


def test_cells_whose_gpu_was_not_watched_are_marked_and_the_figures_are_files(tmp_path: Path) -> None:
    """A Vulkan run: the device named from llama.cpp's own list, each cell marked as not watched, and the figures
    written as files that the Markdown report shows."""
    inputs = _files(tmp_path, ["local"], {"backend": "vulkan", "gpu_watch": "unwatched"}, VULKAN)
    out = {name: tmp_path / f"out.{name}" for name in ("md", "html", "csv", "json")}
    figures = {name: tmp_path / "figures" / name for name in FIGURE_FILES}
    done = write_report(
        inputs,
        _settings(["local"]),
        markdown=out["md"],
        html=out["html"],
        claims_csv=out["csv"],
        provenance=out["json"],
        figures=figures,
    )
    markdown, page = out["md"].read_text(), out["html"].read_text()
    assert f"**GPU not watched** in {len(ROWS)} of {len(ROWS)} cell(s) (backend vulkan" in markdown
    assert "Measured on **llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan0, 2048 MiB)**" in markdown
    runs = next(s for s in done.report.sections if s.id == "runs").table
    watch = next(c for c in runs.columns if c.header == "GPU watch")
    assert {watch.show(watch.get(row)) for row in runs.rows} == {"not watched"}
    assert page.count('<td class="t warn">not watched</td>') == len(ROWS)
    for name, path in figures.items():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"](figures/{name})" in markdown
