"""The whole back half on one generated run (support.cell_tables): its per-cell table and cell index written as the
aggregate rule writes them, then the work of the rules after it (tables: summaries; claims: claims and
predictions; figures; report: Markdown and HTML report, provenance), each on the files the one before wrote, and the
properties every run must have: every interval
holds its point estimate (or has none, for a reason the estimator gives), every verdict is one of the documented
words, every number the report links resolves in provenance. Shared by tests/report/test_back_half_properties.py
and bench/back_half_properties.py; the example counts are hypothesis profiles (``CI_PROFILE``, ``BENCH_PROFILE``)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, Phase, settings

from specbench.analysis import thesis_fit as thesis_words
from specbench.analysis.cell_table import frame_of, read_table, write_table
from specbench.analysis.summaries import combined_builds
from specbench.analysis.tabulate import SUMMARY_FILES, write_tables
from specbench.analysis.verdict_rule import VERDICTS
from specbench.claims import claim as claim_words
from specbench.claims.judging import ClaimInputs, ClaimSettings, write_claims
from specbench.claims.predictions import stamp as take_stamp
from specbench.core.results.judged import Judged, read_judged
from specbench.core.results.tables import read_table_folder
from specbench.report.assemble import ReportInputs, ReportSettings, write_report
from specbench.report.document import Report, Section, Table
from specbench.report.figures.drawing import FigureSettings, write_figures
from specbench.report.figures.figure_set import FIGURE_FILES
from specbench.report.provenance import describe, row_id, unresolved
from specbench.report.sections.variations import DECIDING_WORDS
from support.cell_tables import STUDY, GeneratedRun, names
from support.paths import REPO
from support.same_tables import assert_same_judged, assert_same_table

CI_PROFILE, BENCH_PROFILE = "back-half-ci", "back-half-bench"
CI_EXAMPLES = 8
# Each example runs the whole report (seconds): a failing one is reported as drawn (its draws are its repr), not
# shrunk for minutes; derandomized, so every run tries the same tables.
_BOUNDED = {
    "derandomize": True,
    "deadline": None,
    "phases": (Phase.explicit, Phase.generate),
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    "print_blob": True,
}
settings.register_profile(CI_PROFILE, max_examples=CI_EXAMPLES, **_BOUNDED)
settings.register_profile(BENCH_PROFILE, max_examples=1000, **_BOUNDED)

# What the run recorded about where it ran: the study's setup, the study's model elsewhere, another model
SETUPS = ("study", "study model elsewhere", "another model")
_A100 = {"nvml": "ok", "devices": [{"name": "NVIDIA A100 80GB PCIe", "uuid": "GPU-1", "memory_total_mb": 81920}]}
_CPU = {"nvml": "unavailable", "error": "NVMLError_LibraryNotFound", "devices": []}
_HOST = {"hostname": "box", "machine": "x86_64", "cpu_count": 2}


@dataclass(frozen=True)
class Written:
    """The output files of the rules after aggregate."""

    markdown: Path
    html: Path
    claims: Path
    provenance: Path
    summaries: Mapping[str, Path]
    figures: Mapping[str, Path]
    tables: Path
    judged: Path
    figure_index: Path


@dataclass(frozen=True)
class BackHalf:
    """What those rules computed: the summaries (as the CSV files hold them, typed), the claims, the report."""

    summaries: Mapping[str, pd.DataFrame]
    claims: pd.DataFrame
    report: Report
    provenance: dict[str, Any]
    judged: Judged


def _chain(row: Mapping[str, Any]) -> dict[str, Any]:
    """A cell's provenance chain as the cell index holds it (analysis.cell_index.cell_chain)."""
    return {
        "cell_file": row["cell_file"],
        "label": row["cell_file"],
        "server_log": row["server_log"],
        "gpu_samples": row["gpu_samples"],
        "server_argv": ["llama-server", "-m", "model.gguf"],
        "server_pid": row["server_pid"],
        "attempt": row["attempt"],
        "llama_cpp": {"kind": "git", "label": "b8000", "commit": "4da6337", "archive_sha256": None, "cmake_args": []},
        "server_binary_sha256": row["server_sha256"],
        "model": {"path": "model.gguf", "sha256": row["model_sha256"]},
        "draft": None,
        "prompt_sha256": row["prompt_sha256"],
        "device": "no NVML (n/a)",
        "started_at": str(row.get("started_at")),
        "ended_at": str(row.get("ended_at")),
    }


def _facts(setup: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """(device, build manifest, model, draft) as a run on this setup records them."""
    study = STUDY["study_setup"]
    model = {
        "path": "m.gguf",
        "size_bytes": 5 * 10**9,
        "sha256": "cd" * 32,
        "architecture": study["model"]["architecture"],
        "file_type_name": study["model"]["file_type"],
        "mtp": {"present": True},
        "source": {"kind": "hf", "repo": study["model"]["repo"]},
    }
    draft = {"path": "d.gguf", "sha256": "ee", "source": {"kind": "hf", "repo": study["draft"]["repo"]}}
    build = {"source": {"kind": "git", "label": "b8000", "commit": study["llama_cpp"]["commit"]}, "binaries": {}}
    if setup == "study":
        return _A100, build, model, draft
    if setup == "study model elsewhere":
        return _CPU, {"source": {"kind": "pypi-sdist"}, "binaries": {}}, model, draft
    other = {**model, "architecture": "llama", "file_type_name": "MOSTLY_Q8_0", "source": {"kind": "hf", "repo": "x/y"}}
    return _CPU, {"source": {"kind": "pypi-sdist"}, "binaries": {}}, other, None


def write_inputs(run: GeneratedRun, root: Path, setup: str) -> ClaimInputs:
    """The files the rules after aggregate read, as the aggregate rule (and the earlier ones) would write them (the
    typed tables' path among them, still to be written); every cell file exists under ``root`` (provenance resolves
    to files)."""
    frame = frame_of(run.rows, run.baseline)
    write_table(frame, root / "cells.parquet")
    device, build, model, draft = _facts(setup)
    where = {"device": device, "machine": {**_HOST, "backend": "cuda" if device is _A100 else "cpu"}}
    machines = {
        label: {
            **where,
            "imported_from": {"source": "lab.tar", "measured_as": ["local"]} if label in run.imported else None,
        }
        for label in run.machines
    }
    index = {"cells": {r["cell_file"]: _chain(r) for r in run.rows}, **where, "machines": machines, "software": {}}
    (root / "index.json").write_text(json.dumps(index, default=str))
    (root / "bin").mkdir()
    (root / "bin/manifest.json").write_text(json.dumps(build))
    (root / "model.json").write_text(json.dumps(model))
    if draft:
        (root / "draft.json").write_text(json.dumps(draft))
    predictions = REPO / "config" / "predictions.yaml"
    stamp = {"stamped_at": "2026-11-28T00:00:00+00:00", "modified_at": "2026-11-27T00:00:00+00:00"}
    (root / "stamp.json").write_text(json.dumps({**take_stamp(predictions), **stamp}))
    for row in run.rows:
        (root / row["cell_file"]).parent.mkdir(parents=True, exist_ok=True)
        (root / row["cell_file"]).touch()
    return ClaimInputs(
        table=root / "cells.parquet",
        tables=root / "results/tables",
        cells_index=root / "index.json",
        build=root / "bin",
        model=root / "model.json",
        claims=REPO / "config" / "claims.yaml",
        draft=root / "draft.json" if draft else None,
        predictions=predictions,
        predictions_stamp=root / "stamp.json",
    )


def report_settings(run: GeneratedRun) -> tuple[ClaimSettings, FigureSettings, ReportSettings]:
    """What the claims, figures and report rules' params say of this run's config."""
    claims = ClaimSettings(
        baseline=run.baseline,
        names=names(run),
        study_setup=STUDY["study_setup"],
        server_args=STUDY["server"]["args"],
    )
    figures = FigureSettings(
        baseline=run.baseline,
        names=names(run),
        task_order=list(run.tasks),
        condition_order=list(run.conditions),
        sweeps=dict(run.sweeps) or None,
    )
    report = ReportSettings(
        name="generated",
        baseline=run.baseline,
        study_setup=STUDY["study_setup"],
        condition_order=list(run.conditions),
        expected_cells=run.expected_cells,
        config_sha256="c0",
        workflow_commit="w1",
        sweeps=dict(run.sweeps) or None,
    )
    return claims, figures, report


def run_back_half(run: GeneratedRun, root: Path, setup: str) -> tuple[BackHalf, Written]:
    """The rules after aggregate, each on the files the one before wrote, every output written under ``root``."""
    inputs = write_inputs(run, root, setup)
    results = root / "results"
    out = Written(
        markdown=results / "report.md",
        html=results / "report.html",
        claims=results / "claims.csv",
        provenance=results / "provenance.json",
        summaries={name: results / f"{name}.csv" for name in SUMMARY_FILES},
        figures={name: results / "figures" / name for name in FIGURE_FILES},
        tables=inputs.tables,
        judged=results / "judged.json",
        figure_index=results / "figures/index.json",
    )
    claim_settings, figure_settings, settings = report_settings(run)
    summaries = write_tables(
        root / "cells.parquet",
        baseline=run.baseline,
        machines=list(run.machines),
        builds=list(run.builds),
        store=out.tables,
        summaries=out.summaries,
    )
    judged = write_claims(inputs, claim_settings, claims_csv=out.claims, store=out.judged)
    write_figures(inputs.table, out.tables, inputs.claims, figure_settings, index=out.figure_index, figures=out.figures)
    report_inputs = ReportInputs(
        table=inputs.table,
        tables=out.tables,
        claims=out.judged,
        figures=out.figure_index,
        cells_index=inputs.cells_index,
        build=inputs.build,
        model=inputs.model,
        draft=inputs.draft,
    )
    done = write_report(report_inputs, settings, markdown=out.markdown, html=out.html, provenance=out.provenance)
    return BackHalf(summaries, judged.claims, done.report, done.provenance, judged), out


# ---------------------------------------------------------------------------------------------------------------
# The properties


def _finite(value: Any) -> bool:
    return value is not None and value is not pd.NA and isinstance(value, (int, float)) and math.isfinite(value)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _interval_fault(row: Mapping[str, Any], triples: list[tuple[str, str, str]]) -> str | None:
    """The first (point, low, high) of ``row`` whose finite interval does not hold its point, or whose interval is
    half missing; None when each holds it or is missing whole."""
    for point, low, high in triples:
        bounds = (row[low], row[high])
        if all(_missing(b) for b in bounds):
            continue
        if any(_missing(b) for b in bounds):
            return f"{low}/{high} half missing: {bounds}"
        if not (row[low] <= row[point] <= row[high]):
            return f"{point} {row[point]!r} outside [{row[low]!r}, {row[high]!r}]"
    return None


def _no_interval_reason(row: Mapping[str, Any]) -> str | None:
    """Why a summary row's multiplier has no interval (summaries, intervals.ratio_interval), None where it should."""
    if not (_finite(row["speedup"]) and row["speedup"] > 0):
        return "no multiplier"
    if _missing(row["baseline_cv"]):
        return "no baseline runs, or one"
    if row["runs"] < 2:
        return "one run"
    if _missing(row["cv"]):
        return "no spread"
    return None


def check_intervals(done: BackHalf) -> None:
    """Every interval holds its point estimate, or the estimator says why there is none."""
    for name in ("summary", "prompts"):
        for row in done.summaries[name].to_dict("records"):
            where = f"{name} row {row['task']}/{row.get('prompt', '')}/{row['condition']}/t{row['temperature']}"
            fault = _interval_fault(row, [("speedup", "speedup_ci_low", "speedup_ci_high")])
            assert fault is None, f"{where}: {fault}"
            if _missing(row["speedup_ci_low"]):
                assert _no_interval_reason(row), f"{where}: no interval, and nothing says why: {row}"
            if _finite(row["speedup"]):  # the mean lies between the slowest and the fastest run
                runs = (row["speedup_min"] * (1 - 1e-12), row["speedup_max"] * (1 + 1e-12))
                assert runs[0] <= row["speedup"] <= runs[1], f"{where}: {row['speedup']} outside its runs' {runs}"
    for row in done.summaries["acceptance"].to_dict("records"):
        if _finite(row["pooled_rate"]) and _finite(row["min_rate"]):
            assert row["min_rate"] - 1e-12 <= row["pooled_rate"] <= row["max_rate"] + 1e-12, row
    for row in done.summaries["thesis"].to_dict("records"):
        triples = [
            (f"{n}_effect" if n in ("task", "method") else n, f"{n}_low", f"{n}_high")
            for n in ("task", "method", "ratio", "difference")
        ]
        assert _interval_fault(row, triples) is None, row
        if _missing(row["ratio_low"]):
            assert row["reason"], f"thesis at t{row['temperature']}: no interval, and no reason: {row}"


def check_verdicts(done: BackHalf) -> None:
    """Every verdict is one of the words its code documents: the claims' and predictions' (and each machine's, in
    the report), the verdict rule's, the thesis's, the prompt spread's."""
    words = set(claim_words.VERDICTS)
    judged = [*done.claims.verdict, *done.claims.verdict_t1.dropna()]
    for section in done.report.sections:
        rows = section.table.rows if section.table is not None else []
        if section.id == "predictions":
            judged += [r["verdict"] for r in rows] + [r["verdict_t1"] for r in rows if r["verdict_t1"] is not None]
        if section.id == "machines-claims":
            judged += [v for r in rows for v in r["values"].values() if v is not None]
    assert set(judged) <= words, set(judged) - words
    assert set(done.summaries["summary"].verdict) <= set(VERDICTS)
    assert set(done.summaries["prompts"].verdict) <= set(VERDICTS)
    decisions = {thesis_words.TASK, thesis_words.METHOD, thesis_words.SEPARATED_NOT, thesis_words.TOO_FEW}
    assert set(done.summaries["thesis"].decides) <= decisions | {thesis_words.CANNOT}
    assert set(done.summaries["spread"].deciding) <= set(DECIDING_WORDS)


def _tables(sections: list[Section]) -> Iterator[Table]:
    for section in sections:
        if section.table is not None:
            yield section.table


def _same(shown: Any, recorded: Any) -> bool:
    """A linked value against its provenance entry's (a pair shows its first number)."""
    value = shown[0] if isinstance(shown, tuple) else shown
    if _missing(value) or _missing(recorded):
        return _missing(value) and _missing(recorded)
    return math.isclose(float(value), float(recorded), rel_tol=1e-9, abs_tol=0.0)


def check_provenance(run: GeneratedRun, done: BackHalf, out: Written) -> None:
    """Every number the report links is a provenance entry of the value it shows, whose cells are the run's files,
    each in the cell index and on disk; every link of the HTML report finds its entry."""
    numbers = done.report.numbers
    provenance = json.loads(out.provenance.read_text())
    assert provenance["numbers"] == json.loads(json.dumps(done.provenance["numbers"]))
    files = {r["cell_file"] for r in run.rows}
    root = out.markdown.parent.parent
    assert unresolved(provenance, root) == [], unresolved(provenance, root)[:5]
    for key, number in numbers.items():
        assert number["cells"] and set(number["cells"]) <= files, (key, number)
    rows = sum(len(done.summaries[name]) for name in ("summary", "acceptance", "identity")) + len(run.rows)
    assert len(numbers) == rows, f"{rows} numbers (one per summary row and cell) under {len(numbers)} ids"
    for data in _tables(list(done.report.sections)):
        for column in data.columns:
            if not column.link:
                continue
            for row in data.rows:
                key = row_id(column.link, row)
                assert key in numbers, f"'{column.header}' {column.get(row)!r} links to {key}, which has no entry"
                shown = column.get(row)
                assert _same(shown, numbers[key]["value"]), (
                    f"'{column.header}' shows {shown!r} but its provenance entry {key} holds {numbers[key]['value']!r}"
                )
                if column.link == "run":
                    assert numbers[key]["cells"] == [row["cell_file"]], (key, row["cell_file"], numbers[key]["cells"])
                assert all(path in describe(provenance, key) for path in numbers[key]["cells"])
    page = out.html.read_text()
    targets = set(re.findall(r"id='p-([^']+)'", page))
    links = set(re.findall(r'href="#p-([^"]+)"', page))
    assert links <= targets, sorted(links - targets)[:5]


def check_outputs(run: GeneratedRun, done: BackHalf, out: Written) -> None:
    """Every file written, complete: the Markdown and HTML reports, every summary, the claims, every figure a PNG;
    no value shown as 'nan'; every cell the config asked for and no run measured listed as missing."""
    measured = {r["cell_file"] for r in run.rows}
    missing = next(s for s in done.report.sections if s.id == "missing")
    assert [n.text for n in missing.items] == [p for p in run.expected_cells if p not in measured]
    markdown, page = out.markdown.read_text(), out.html.read_text()
    assert markdown.startswith("# ") and page.rstrip().endswith("</html>")
    for text, what in ((markdown, "Markdown"), (re.sub(r"data:image/png;base64,[^'\"]*", "", page), "HTML")):
        shown = re.findall(r"[^\n]{0,60}\bnan\b[^\n]{0,20}", text, flags=re.IGNORECASE)
        assert not shown, f"{what} report shows a NaN: {shown[:3]}"
    for name, path in out.summaries.items():
        if len(done.summaries[name]):
            assert len(pd.read_csv(path)) == len(done.summaries[name]), name
    assert len(pd.read_csv(out.claims)) == len(done.claims)
    for path in out.figures.values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def check_files(done: BackHalf, out: Written) -> None:
    """What each rule wrote is read back as it computed it, from files any tool reads (Parquet, JSON): every
    summary of every build and machine, every judgement; no pickle anywhere."""
    root = out.markdown.parent.parent
    assert not list(root.rglob("*.pkl")), list(root.rglob("*.pkl"))
    by_build = read_table_folder(out.tables, read_table(root / "cells.parquet"))
    for name, table in combined_builds(by_build).items():
        if name in done.summaries:
            assert_same_table(done.summaries[name], table, name)
    assert_same_judged(done.judged, read_judged(out.judged))


def check_engines(run: GeneratedRun, done: BackHalf, out: Written) -> None:
    """Cells an endpoint served are counted in the report's first words (none: no such words); the builds compared
    say an output was compared by text only where an endpoint sent no token ids, and then for every one of its
    compared outputs."""
    served = [r for r in run.rows if r.get("engine") == "endpoint"]
    banner = done.report.banner.text if done.report.banner else ""
    if not served:
        assert "did not start" not in banner
        return
    assert banner.startswith(f"{len(served)} cells were measured on a server this run did not start"), banner
    markdown = out.markdown.read_text()
    if "\n## Builds compared" not in markdown:
        return
    table = markdown.split("\n## Builds compared", 1)[1].split("\n## ", 1)[0]
    compared = re.findall(r"\| (yes \(\d+/\d+[^)]*\)|no: \d+/\d+ differ[^|]*) \|", table)
    by_text = [c for c in compared if "by text" in c]
    assert len(by_text) == (len(compared) if run.draws.endpoint == "text" else 0), compared


def check_back_half(run: GeneratedRun, root: Path, setup: str) -> BackHalf:
    """Run the whole back half on ``run`` under ``root`` and check every property (see the module docstring)."""
    done, out = run_back_half(run, root, setup)
    check_outputs(run, done, out)
    check_files(done, out)
    check_intervals(done)
    check_verdicts(done)
    check_provenance(run, done, out)
    check_engines(run, done, out)
    return done
