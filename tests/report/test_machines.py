"""Several machines: every cell once per machine, each machine's resources on its cell jobs, summaries made per
machine only, number ids that name their machine, and the report's side-by-side section."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

import pandas as pd
import pytest

from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import combined, tables, tables_by_machine
from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.results.judged import Comparability, Fact
from specbench.report.contents import build_report
from specbench.report.document import Facts, Report
from specbench.report.html import render_html
from specbench.report.markdown import render_markdown
from specbench.report.provenance import report_numbers, row_id
from specbench.report.sections.machines import machine_view
from support.paths import REPO
from support.workflow import write_yaml

A100 = {
    "nvml": "ok",
    "devices": [
        {
            "index": 0,
            "name": "NVIDIA A100 80GB PCIe",
            "uuid": "GPU-a",
            "memory_bus_width_bits": 5120,
            "max_mem_clock_mhz": 1512,
        }
    ],
}


def _rows() -> list[dict]:
    """Two machines: 'fast' has twice the speeds of 'slow', and MTP is 1.5x on both."""
    rows = []
    for machine, scale in (("slow", 1.0), ("fast", 2.0)):
        for condition, speed in (("off", 100.0), ("mtp", 150.0)):
            for repeat, wobble in enumerate((-1.0, 0.0, 1.0), start=1):
                rows.append(
                    {
                        "machine": machine,
                        "task": "essay",
                        "condition": condition,
                        "temperature": 0.0,
                        "repeat": repeat,
                        "tokens_per_s": scale * (speed + wobble),
                        "predicted_n": 100,
                        "tokens": [1, 2, 3],
                        "model_sha256": "m" * 64,
                        "server_sha256": "s" * 64,
                        "code_fingerprint": "c" * 64,
                        "cell_file": f"results/cells/{machine}/essay/{condition}/t0.0/r{repeat}.json",
                    }
                )
    return rows


def test_a_multiplier_never_divides_one_machines_speed_by_anothers() -> None:
    cells = frame_of(_rows(), "off")
    with pytest.raises(ValueError, match="one machine"):
        tables(cells, "off")
    by_machine = tables_by_machine(cells, "off", ["fast", "slow"])
    assert list(by_machine) == ["fast", "slow"]  # the configured order
    for machine, scale in (("slow", 1.0), ("fast", 2.0)):
        summary = by_machine[machine]["summary"].set_index("condition")
        assert summary.loc["off", "mean_tokens_per_s"] == pytest.approx(100 * scale)
        assert summary.loc["mtp", "speedup"] == pytest.approx(1.5)
        assert all(f"/{machine}/" in c for c in summary.loc["mtp", "cells"])
        assert set(summary.machine) == {machine}
    # identity compares a machine's cells with the same machine's baseline
    assert by_machine["fast"]["identity"].all_identical.all()
    csv = combined(by_machine)["summary"]
    assert list(csv.columns[:2]) == ["machine", "task"] and sorted(set(csv.machine)) == ["fast", "slow"]


def test_number_ids_name_their_machine_unless_it_is_the_only_local_one() -> None:
    row = {"task": "essay", "condition": "mtp", "temperature": 0.0}
    assert row_id("speedup", row) == row_id("speedup", {**row, "machine": "local"}) == "speedup-essay-mtp-t0.0"
    assert row_id("speedup", {**row, "machine": "h200"}) == "speedup-essay-mtp-t0.0@h200"
    by_machine = tables_by_machine(frame_of(_rows(), "off"), "off")
    numbers = {k: v for t in by_machine.values() for k, v in report_numbers(t, "off").items()}
    assert numbers["speedup-essay-mtp-t0.0@fast"]["value"] == pytest.approx(1.5)
    assert all("/fast/" in c for c in numbers["speedup-essay-mtp-t0.0@fast"]["cells"])
    assert numbers["speed-essay-off-t0.0@slow"]["cells"] != numbers["speed-essay-off-t0.0@fast"]["cells"]


def _report(views: list, render: Callable[[Report], str] = render_markdown) -> str:
    by_machine = tables_by_machine(frame_of(_rows(), "off"), "off", ["slow", "fast"])
    first = by_machine["slow"]
    comparability = Comparability([Fact("GPU", "A100", "CPU", False)], "CPU (x86_64, 2 cores)")
    facts = Facts(
        name="two machines",
        baseline="off",
        comparability=comparability,
        environment={},
        device={},
        model_bytes=1_000_000_000,
    )
    return render(build_report(first, facts=facts, claims=None, numbers={}, machines=views))


def test_the_report_compares_machines_side_by_side() -> None:
    by_machine = tables_by_machine(frame_of(_rows(), "off"), "off", ["slow", "fast"])
    model = {"sha256": "m" * 64, "size_bytes": 1_000_000_000}
    claims = pd.DataFrame(
        [
            {"id": "order", "text": "essay is slowest", "scope": "relative", "verdict": "reproduced"},
            {"id": "gsm8k", "text": "math faster", "scope": "relative", "verdict": "not measured in this run"},
        ]
    )
    views = [
        machine_view(
            "slow",
            by_machine["slow"],
            {"device": {}, "machine": {"hostname": "box", "cpu_count": 2, "machine": "x86_64"}},
            claims,
            model,
        ),
        machine_view(
            "fast",
            by_machine["fast"],
            {
                "device": A100,
                "machine": {"hostname": "gpu1"},
                "imported_from": {"source": "/runs/a100.tar.gz", "measured_as": "local"},
            },
            claims.assign(verdict=["not reproduced", "not measured in this run"]),
            model,
        ),
    ]
    assert views[1].bandwidth_bps == pytest.approx(5120 / 8 * 1512e6 * 2)
    text = _report(views)
    assert "## Machines compared" in text and "imported from /runs/a100.tar.gz" in text
    assert "12 cells measured on 2 machines (slow: 6, fast: 6)" in _report(views, render_html)
    speeds = text.split("tokens/s at temperature 0, per machine")[1].split("##")[0]
    assert "| essay | 100.0 | 200.0 |" in speeds
    assert "| ceiling (bandwidth / model size) | n/a | 1935.4 |" in speeds  # 1935 GB/s over a 1 GB model; none on CPU
    multipliers = text.split("Multipliers vs off at temperature 0, per machine")[1].split("##")[0]
    assert multipliers.count("1.50x") == 2
    claims_part = text.split("ordering and verdict claims, per machine")[1]
    assert "slow: 1 of 1 reproduced or agreeing; fast: 0 of 1 reproduced or agreeing. 1 more need tasks" in claims_part
    assert "math faster" not in claims_part  # measured on no machine: counted, not listed
    assert "| order | essay is slowest | reproduced | not reproduced |" in claims_part
    assert "Machines compared" not in _report(views[:1])  # one machine: no comparison


def test_machine_and_import_labels_are_checked(study_config: dict, tmp_path) -> None:
    twice = {**study_config, "machines": [{"label": "a100"}, {"label": "a100"}]}
    with pytest.raises(ConfigError, match=r"machines\[1\]\.label.*already"):
        validate_config(twice, REPO)
    clash = {**study_config, "machines": [{"label": "a100"}], "imports": [{"label": "a100", "path": str(tmp_path)}]}
    with pytest.raises(ConfigError, match=r"imports\[0\]\.label"):
        validate_config(clash, REPO)
    missing = {**study_config, "imports": [{"label": "lab", "path": str(tmp_path / "nowhere")}]}
    with pytest.raises(ConfigError, match=r"imports\[0\]\.path.*does not exist"):
        validate_config(missing, REPO)
    with pytest.raises(ConfigError, match=r"machines\.0\.label"):
        validate_config({**study_config, "machines": [{"label": "a/b"}]}, REPO)


def _dry_run(tmp_path, override: dict) -> subprocess.CompletedProcess:
    configs = [REPO / "config" / "tiny.yaml", write_yaml(tmp_path / "machines.yaml", override)]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "all",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            *map(str, configs),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_each_machines_resources_pick_its_cell_jobs(tmp_path) -> None:
    override = {
        "machines": [
            {"label": "kind-a", "resources": {"slurm_partition": "part-a"}},
            {"label": "kind-b", "resources": {"slurm_partition": "part-b"}},
        ],
        "resources": {"conditions": {"mtp": {"slurm_partition": "cond-mtp"}}},
        "select": {"tasks": ["essay"], "conditions": ["off", "mtp"]},
        "temperatures": [0.0],
        "repeats": 1,
    }
    result = _dry_run(tmp_path, override)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = result.stdout.split("\nrule ")
    cells = [job for job in jobs if job.startswith("cell:")]
    assert len(cells) == 4  # 1 task x 2 conditions x 1 repeat, once per machine
    for job in cells:
        machine = job.split("wildcards: machine=")[1].split(",")[0]
        assert re.search(f"output: results/cells/{machine}/[^/]+/essay/", job)  # after the machine: its models
        assert f"slurm_partition=part-{machine[-1]}" in job  # the machine's, over the condition's and the default
    others = [job for job in jobs if job.startswith("aggregate:")]
    assert others and "slurm_partition" not in others[0]  # the profile's, for every other rule: none here
    override["resources"] = {}  # every machine names its partition
    alone = _dry_run(tmp_path, override)
    assert alone.returncode == 0 and "slurm_partition=part-b" in alone.stdout, alone.stderr[-3000:]
    override["machines"][1]["resources"] = {}  # one machine without, and no condition's: refused before any job
    refused = _dry_run(tmp_path, override)
    message = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "config error at 'machines'" in message and "slurm_partition" in message
