"""The back half as its four rules' work, each on the files the one before wrote: tables (the summaries as CSV and
typed), claims (judged once per machine), figures (files and their index) and report (Markdown, HTML, provenance);
what each writes is a file any tool reads (Parquet, schema-checked JSON), never a pickle; and each rule's params, one
function of the config, as its settings take them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from specbench.analysis.cell_table import frame_of, read_table, write_table
from specbench.analysis.tabulate import SUMMARY_FILES, write_tables
from specbench.claims.judging import ClaimInputs, ClaimSettings, write_claims
from specbench.core.results.documents import DocumentError
from specbench.core.results.judged import read_judged
from specbench.core.results.tables import read_table_folder
from specbench.core.steps.entry import inputs_of
from specbench.report.assemble import ReportInputs, ReportSettings, assemble, write_report
from specbench.report.figure_index import THESIS_FIGURE, read_figure_index
from specbench.report.figures.drawing import FigureSettings, write_figures
from specbench.report.figures.figure_set import FIGURE_FILES
from specbench.workflow import rule_params
from specbench.workflow.plan import Plan
from support.config import load_config
from support.paths import REPO

ROWS = json.loads((REPO / "tests/data/report/cells.json").read_text())
STUDY = yaml.safe_load((REPO / "config/config.yaml").read_text())
CPU = {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound", "devices": []}
NAMES = {"tasks": list(STUDY["tasks"]), "conditions": list(STUDY["conditions"])}


def _aggregated(tmp_path: Path, machines: list[str], extra: dict | None = None, where: dict | None = None) -> None:
    """What the aggregate rule (and the earlier ones) would have written for ROWS measured on ``machines``."""
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


def _tables(tmp_path: Path, machines: list[str]) -> dict[str, pd.DataFrame]:
    return write_tables(
        tmp_path / "cells.parquet",
        baseline="off",
        machines=machines,
        builds=[],
        store=tmp_path / "tables",
        summaries={name: tmp_path / f"{name}.csv" for name in SUMMARY_FILES},
        log=tmp_path / "tables.log",
    )


def _claims(tmp_path: Path) -> None:
    inputs = inputs_of(
        ClaimInputs,
        {
            "table": tmp_path / "cells.parquet",
            "tables": tmp_path / "tables",
            "cells_index": tmp_path / "index.json",
            "build": tmp_path / "bin",
            "model": tmp_path / "model.json",
            "claims": REPO / "config/claims.yaml",
            "claims_schema": REPO / "config/claims.schema.yaml",
            "code": ["ignored.py"],
        },
    )
    settings = ClaimSettings(
        baseline="off", names=NAMES, study_setup=STUDY["study_setup"], server_args=STUDY["server"]["args"]
    )
    write_claims(inputs, settings, claims_csv=tmp_path / "claims.csv", store=tmp_path / "judged.json")


def _figures(tmp_path: Path, files: bool = False) -> dict[str, Path]:
    figures = {name: tmp_path / "figures" / name for name in FIGURE_FILES} if files else {}
    settings = FigureSettings(
        baseline="off", names=NAMES, task_order=NAMES["tasks"], condition_order=NAMES["conditions"]
    )
    write_figures(
        tmp_path / "cells.parquet",
        tmp_path / "tables",
        REPO / "config/claims.yaml",
        settings,
        index=tmp_path / "figures/index.json",
        figures=figures,
    )
    return figures


def _files(tmp_path: Path, machines: list[str], extra: dict | None = None, where: dict | None = None) -> ReportInputs:
    """Every rule before the report run on ROWS: the report's inputs."""
    _aggregated(tmp_path, machines, extra, where)
    _tables(tmp_path, machines)
    _claims(tmp_path)
    _figures(tmp_path)
    return _report_inputs(tmp_path)


def _report_inputs(tmp_path: Path) -> ReportInputs:
    return inputs_of(
        ReportInputs,
        {
            "table": tmp_path / "cells.parquet",
            "tables": tmp_path / "tables",
            "claims": tmp_path / "judged.json",
            "figures": tmp_path / "figures/index.json",
            "cells_index": tmp_path / "index.json",
            "build": tmp_path / "bin",
            "model": tmp_path / "model.json",
            "downloads": [],
            "code": ["ignored.py"],
        },
    )


def _settings() -> ReportSettings:
    return ReportSettings(
        name="assembled",
        baseline="off",
        study_setup=STUDY["study_setup"],
        condition_order=list(STUDY["conditions"]),
        expected_cells=[r["cell_file"] for r in ROWS],
        config_sha256="c0",
        workflow_commit="w1",
    )


def test_the_summaries_are_written_as_csv_and_read_back_typed(tmp_path: Path) -> None:
    _aggregated(tmp_path, ["local"])
    combined = _tables(tmp_path, ["local"])
    for name in SUMMARY_FILES:  # the summaries the report shows, as the CSV files users get
        written = pd.read_csv(tmp_path / f"{name}.csv")
        assert list(written.columns) == list(combined[name].columns) and len(written) == len(combined[name])
    assert len(combined["summary"]) and set(pd.read_csv(tmp_path / "summary.csv").machine) == {"local"}
    typed = read_table_folder(tmp_path / "tables", read_table(tmp_path / "cells.parquet"))[""]["local"]
    summary = typed["summary"]
    assert summary.cells.map(lambda c: isinstance(c, list) and bool(c)).all()  # lists stay lists, not JSON text
    pd.testing.assert_frame_equal(summary.drop(columns="machine"), combined["summary"].drop(columns="machine"))
    assert "tables:" in (tmp_path / "tables.log").read_text()
    pd.testing.assert_frame_equal(typed["cells"], read_table(tmp_path / "cells.parquet"))  # read, not copied
    assert not list((tmp_path / "tables").rglob("cells*"))


def test_one_machine_claims_numbers_and_the_report_files(tmp_path: Path) -> None:
    inputs = _files(tmp_path, ["local"])
    judged = read_judged(tmp_path / "judged.json")
    ids = {c["id"] for c in yaml.safe_load((REPO / "config/claims.yaml").read_text())["claims"]}
    assert ids <= set(judged.claims.id)  # every study claim judged once (and its variants beside it)
    assert set(pd.read_csv(tmp_path / "claims.csv").id) == set(judged.claims.id)
    assert not judged.machines and judged.predictions is None  # one machine; no predictions file
    out = {name: tmp_path / f"out.{name}" for name in ("md", "html", "json")}
    done = write_report(
        inputs, _settings(), markdown=out["md"], html=out["html"], provenance=out["json"], log=tmp_path / "report.log"
    )
    numbers = json.loads(out["json"].read_text())["numbers"]
    assert numbers["speedup-essay-mtp-t0.0"]["cells"] and numbers == done.provenance["numbers"]
    assert "What this run found" in out["md"].read_text() and "<html" in out["html"].read_text()
    assert "report:" in (tmp_path / "report.log").read_text()
    assert not any(s.id == "machines" for s in done.report.sections)  # one machine: no comparison
    shown = {row["id"] for s in done.report.sections if s.table is not None for row in s.table.rows if "id" in row}
    assert set(judged.claims.id) <= shown  # the report shows the claims rule's judgements


def test_several_machines_each_judged_on_its_own_cells(tmp_path: Path) -> None:
    done = assemble(_files(tmp_path, ["a100", "h200"]), _settings())
    assert set(read_judged(tmp_path / "judged.json").machines) == {"a100", "h200"}
    titles = [s.id for s in done.report.sections]
    assert titles[:2] == ["answer", "machines"] and "machines-claims" in titles
    claims = next(s for s in done.report.sections if s.id == "machines-claims").table
    assert claims.rows and all(set(row["values"]) == {"a100", "h200"} for row in claims.rows)
    assert {"speedup-essay-mtp-t0.0@a100", "speedup-essay-mtp-t0.0@h200"} <= done.report.numbers.keys()


def test_a_missing_input_is_named(tmp_path: Path) -> None:
    inputs = _files(tmp_path, ["local"])
    (tmp_path / "model.json").unlink()
    with pytest.raises(FileNotFoundError, match="model.json"):
        assemble(inputs, _settings())


def test_the_figures_index_lists_files_and_keeps_the_others(tmp_path: Path) -> None:
    """Each figure written as a file is listed by its name and its path beside the index; one without a file (a
    sweep's) is kept in the index; reading the index gives every figure back, in order, with its bytes."""
    _aggregated(tmp_path, ["local"])
    _tables(tmp_path, ["local"])
    figures = _figures(tmp_path, files=True)
    entries = json.loads((tmp_path / "figures/index.json").read_text())["figures"]
    assert [e["file"] for e in entries] == list(FIGURE_FILES)
    names = [e["name"] for e in entries]
    assert names == [Path(name).stem for name in FIGURE_FILES] and THESIS_FIGURE in names
    drawn = read_figure_index(tmp_path / "figures/index.json")
    assert [d.file for d in drawn] == [figures[name] for name in FIGURE_FILES]
    assert all(d.png == figures[name].read_bytes() for d, name in zip(drawn, FIGURE_FILES, strict=True))
    _figures(tmp_path)  # none as a file: every figure in the index
    kept = read_figure_index(tmp_path / "figures/index.json")
    assert [d.file for d in kept] == [None] * len(FIGURE_FILES)
    assert [d.png[:8] for d in kept] == [b"\x89PNG\r\n\x1a\n"] * len(FIGURE_FILES)
    assert [d.caption for d in kept] == [d.caption for d in drawn]
    index = tmp_path / "figures/index.json"
    index.write_text(json.dumps({"figures": [{"name": "thesis", "caption": "c", "file": "/abs/thesis.png"}]}))
    with pytest.raises(DocumentError, match=rf"^{index}: not a figures document .* at figures/0/file: "):
        read_figure_index(index)


@pytest.mark.parametrize("config", ["config.yaml", "tiny.yaml"])
def test_each_rules_params_are_what_its_settings_take(config: str) -> None:
    """One function of the config per rule: its params build the rule's settings (no missing or unknown field)."""
    loaded = load_config(
        [REPO / "config/config.yaml", *([REPO / "config" / config] if config != "config.yaml" else [])]
    )
    ClaimSettings(**rule_params.claims_params(loaded))
    FigureSettings(**rule_params.figures_params(loaded))
    ReportSettings(**rule_params.report_params(loaded, expected_cells=[], config_sha256="c", workflow_commit="w"))
    tables = rule_params.tables_params(loaded)
    assert tables["machines"] == ["local"] and tables["builds"] == [] and tables["baseline"] == loaded["baseline"]
    assert rule_params.claims_params(loaded)["server_args"][: len(loaded["server"]["args"])] == loaded["server"]["args"]


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
    _aggregated(tmp_path, ["local"], {"backend": "vulkan", "gpu_watch": "unwatched"}, VULKAN)
    _tables(tmp_path, ["local"])
    _claims(tmp_path)
    figures = _figures(tmp_path, files=True)
    out = {name: tmp_path / f"out.{name}" for name in ("md", "html", "json")}
    done = write_report(
        _report_inputs(tmp_path), _settings(), markdown=out["md"], html=out["html"], provenance=out["json"]
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


@pytest.mark.parametrize("config", ["config.yaml", "tiny.yaml", "smollm2.yaml"])
def test_the_claims_and_report_steps_take_their_rules_inputs_by_name(config: str) -> None:
    """The claims and report rules' named inputs (the plan's, as Snakemake passes them) fill every field of the
    steps' inputs, each with the path the rule names: renaming one side and not the other fails here."""
    paths = [REPO / "config/config.yaml", *([REPO / "config" / config] if config != "config.yaml" else [])]
    plan = Plan(load_config(paths), REPO, lambda: True)
    claims_named = plan.claims_inputs(None)
    claims = inputs_of(ClaimInputs, claims_named)
    report_named = plan.report_inputs(["results/figures/thesis.png"])
    report = inputs_of(ReportInputs, report_named)
    for step, named in ((claims, claims_named), (report, report_named)):
        for field in dataclasses.fields(step):
            value = getattr(step, field.name)
            if field.name in named:
                given = named[field.name]
                assert value == ([Path(p) for p in given] if isinstance(given, list) else Path(given)), field.name
            else:
                assert value == field.default, field.name
    assert claims.build == report.build == Path(plan.llama_bin_dir)
    assert (claims.draft is None) == ("draft" not in plan.used_roles) == (report.draft is None)


def test_inputs_of_reads_required_optional_and_listed_paths_and_names_a_missing_one() -> None:
    """A field without a default must be given (its name in the error); an optional one absent is None; a listed
    one is a list of paths; names that are no field are ignored."""
    named = {"table": "a.parquet", "tables": "t", "claims": "c.json", "figures": "f.json", "cells_index": "i.json"}
    named |= {"build": "bin", "model": "m.json", "code": ["x.py"], "downloads": ["d1.json", "d2.json"]}
    inputs = inputs_of(ReportInputs, named)
    assert inputs.table == Path("a.parquet") and inputs.draft is None
    assert inputs.downloads == [Path("d1.json"), Path("d2.json")]
    assert inputs_of(ReportInputs, {**named, "draft": "d.json"}).draft == Path("d.json")
    with pytest.raises(KeyError, match="model"):
        inputs_of(ReportInputs, {k: v for k, v in named.items() if k != "model"})
