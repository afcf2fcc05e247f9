"""The real workflow on the tiny model: llama.cpp b11223 built from its source archive, the tiny Qwen3.5 checkpoint
downloaded through huggingface_hub from an offline cache that huggingface_hub's own code laid out (its shards in the
cache-wide store of Xet files), converted with the pinned converter, quantized, verified, then 2 tasks x 4 conditions
x temperature 0 x 2 repeats of real llama-server cells."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import psutil
import pytest

from specbench.analysis.cell_table import read_table
from specbench.analysis.server_log import parse_speculative_log
from specbench.analysis.summaries import tables
from specbench.core.config.backends import CMAKE_OPTIONS
from specbench.core.plan.cells import Cell, run_order, selected_cells
from specbench.core.steps.files import read_json, sha256_file, sha256_text
from specbench.tiny.checkpoints import write_tiny_target
from support.config import load_config
from support.hub_cache import is_large, populate_hf_cache, shared_store_file
from support.paths import OUTPUT_CACHE, REPO
from support.rules import report_outputs
from support.workflow import (
    BACK_HALF,
    copy_workdir,
    copy_workflow,
    fail_message,
    frozen,
    greedy_record,
    job_counts,
    llama_servers_in,
    placed,
    planned,
    signal_mask,
    snakemake,
    write_yaml,
)

pytestmark = pytest.mark.workflow

TINY = REPO / "config" / "tiny.yaml"
HF_REPO = "specbench-test/tiny-qwen35"
TASKS = ["file-rewrite", "essay"]
CONDITIONS = ["off", "ngram-mod", "ngram-mod-warm", "mtp", "dflash"]
REPEATS = 2


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny target checkpoint, written by the same generator the workflow's tiny rule uses: the constructed
    'agree' target (real Qwen3.5 layout; its MTP layer agrees with it on every token), so that MTP and DFlash
    drafts are accepted and the lossless identity checks below compare outputs that speculation really shaped."""
    return write_tiny_target(tmp_path_factory.mktemp("checkpoint") / "tiny-qwen35", seed=0, kind="agree")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, tiny_checkpoint: Path) -> dict:
    """One complete `snakemake all` in a fresh working directory; returns paths and the offline HF setup."""
    work = tmp_path_factory.mktemp("work")
    snakefile = copy_workflow(tmp_path_factory.mktemp("workflow"))  # a user's clone, edited by the rerun tests
    hf_home = tmp_path_factory.mktemp("hf")
    commit = populate_hf_cache(hf_home, HF_REPO, tiny_checkpoint, shared=True)
    env = {"HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1"}
    override = write_yaml(
        work / "test.yaml",
        {
            "name": "workflow test",
            "models": {"target": {"source": "hf", "hf": {"repo": HF_REPO, "revision": commit}}},
            # The constructed model's greedy output cycles through 64 tokens; ngram-mod (24-token match, at least 48
            # drafted) drafts once the cycle has come round, i.e. in the essay's 192 tokens, not the file rewrite's 96.
            "tasks": {"essay": {"max_tokens": 192}},
            "select": {"tasks": TASKS, "conditions": CONDITIONS},
            "temperatures": [0.0],
            "repeats": REPEATS,
            "max_tokens": 96,
            # Other suites run beside this one: CPU contention is recorded, not judged (tests/workflow/test_faults.py
            # judges it on a machine it has to itself).
            "measurement": {"max_foreign_cpu": None},
        },
    )
    configs = [TINY, override]
    result = snakemake(work, ["all"], configs, env=env, snakefile=snakefile)
    assert result.returncode == 0, fail_message(result)
    return {"work": work, "configs": configs, "env": env, "commit": commit, "result": result, "snakefile": snakefile}


@pytest.fixture
def own(run: dict, tmp_path: Path) -> dict:
    """The run in a private copy of its working directory: for a test that deletes, rewrites or remakes what it
    finds there, so that no other test sees what it changed."""
    return {**run, "work": copy_workdir(run["work"], tmp_path / "own-work")}


def _model_file(run: dict, pattern: str) -> Path:
    """The one file of the run's working directory that matches a glob (models live under their identity)."""
    records = (".download.json", ".template.json")  # beside a model's manifest, found only when asked for
    found = sorted(p for p in run["work"].glob(pattern) if pattern.endswith(records) or not p.name.endswith(records))
    assert len(found) == 1, (pattern, found)
    return found[0]


def _tables(run: dict) -> dict[str, pd.DataFrame]:
    return tables(read_table(run["work"] / "results/cells.parquet"), "off")


def test_llama_cpp_was_built_from_the_pinned_archive(run: dict) -> None:
    manifest = read_json(run["work"] / "resources/llama.cpp/bin/manifest.json")
    assert manifest["source"]["kind"] == "pypi-sdist"
    assert manifest["source"]["sha256"] == "c480f03bb3d888542d621ebf3f715131c33dc19febed8aff2de64dee6dcb09c1"
    assert manifest["backend"] == "cpu" and manifest["cuda_architectures"] == []
    declared = (run["work"] / "resources/llama.cpp/src/ggml/CMakeLists.txt").read_text()
    for option in CMAKE_OPTIONS.values():  # every backend's option is one the pinned tree declares, OFF here
        assert f"option({option} " in declared and f"-D{option}=OFF" in manifest["cmake_args"]
    assert manifest["devices"]["devices"] == [] and "Available devices:" in manifest["devices"]["output"]
    assert "-DGGML_NATIVE=OFF" in manifest["cmake_args"]  # no AMX: it faulted on these virtual machines
    for name in ("llama-server", "llama-quantize"):
        binary = run["work"] / "resources/llama.cpp/bin" / manifest["binaries"][name]["path"]
        assert sha256_file(binary) == manifest["binaries"][name]["sha256"]
        assert os.access(binary, os.X_OK)
    assert "version" in manifest["server_version"]


def test_download_conversion_and_verification(run: dict, tiny_checkpoint: Path) -> None:
    download = read_json(_model_file(run, "results/models/specbench-test--*.download.json"))
    assert download["commit"] == run["commit"] and download["repo"] == HF_REPO
    by_path = {f["path"]: f for f in download["files"]}
    # every file of the real repository's layout: four shards and their index, chat_template.jinja, tokenizer files
    stored = sorted(p.name for p in tiny_checkpoint.iterdir())
    assert "model.safetensors.index.json" in stored and "chat_template.jinja" in stored
    assert "generation_config.json" not in stored and "model.safetensors" not in stored
    assert sorted(by_path) == stored
    # the large files (the shards, and the real vocabulary's tokenizer.json over the hub's 10 MB) came out of
    # huggingface_hub's cache-wide store of Xet files, the rest out of the repo's own blobs
    snapshot = Path(download["snapshot"])
    shared = sorted(name for name in stored if shared_store_file(snapshot / name) is not None)
    assert shared == sorted(name for name in stored if is_large(tiny_checkpoint / name)), shared
    shards = {name for name in stored if name.endswith(".safetensors")}
    assert shards and shards <= set(shared)
    for name in stored:
        assert by_path[name]["sha256"] == sha256_file(tiny_checkpoint / name), name
        assert by_path[name]["size"] == (tiny_checkpoint / name).stat().st_size, name
    # its chat template, checked against llama.cpp b11223's own copy before the conversion
    template = read_json(_model_file(run, "results/models/specbench-test--*.template.json"))
    assert template["llama_cpp_template"]["path"] == "models/templates/Qwen3.5-4B.jinja"
    assert template["same_text"] and template["checkpoint_template"]["found_in"] == "chat_template.jinja"
    assert template["checkpoint_template"]["sha256"] == sha256_file(tiny_checkpoint / "chat_template.jinja")
    assert all(p["text"].endswith("<think>\n\n</think>\n\n") for p in template["rendered"])
    model = read_json(_model_file(run, "results/models/specbench-test--*.json"))
    assert model["file_type_name"] == "MOSTLY_Q4_K_M"
    assert model["architecture"] == "qwen35"
    assert model["mtp"]["present"] and model["mtp"]["nextn_predict_layers"] == 1
    assert model["mtp"]["nextn_tensor_count"] > 0
    assert all(".nextn." in name for name in model["mtp"]["nextn_tensors_sample"])
    assert model["sha256"] == sha256_file(_model_file(run, "resources/models/specbench-test--*/Q4_K_M.gguf"))
    draft = read_json(_model_file(run, "results/models/tiny-draft-*.json"))
    assert draft["tensor_count"] > 0
    assert draft["sha256"] == sha256_file(_model_file(run, "resources/models/tiny-draft-*/bf16.gguf"))


def test_every_cell_has_real_server_figures(run: dict) -> None:
    rows = _tables(run)["cells"].set_index("cell_file")
    for task in TASKS:
        for condition in CONDITIONS:
            for repeat in range(1, REPEATS + 1):
                record = greedy_record(run, task, condition, repeat)
                timings = record["response"]["timings"]
                assert timings["predicted_per_second"] > 0 and timings["predicted_n"] > 0
                assert "figures" not in record and "task_check" not in record  # the record holds what was measured
                row = rows.loc[placed(run["work"], Cell(task, condition, 0.0, repeat)).path]  # derived from it
                assert row.tokens_per_s == timings["predicted_per_second"] and row.predicted_n == timings["predicted_n"]
                assert len(record["response"]["tokens"]) == timings["predicted_n"]
                argv = record["server"]["argv"]
                assert argv[argv.index("--host") + 1] == "127.0.0.1"
                assert record["request"]["completion"]["cache_prompt"] is False
                # the sampling every request states is what the server applied (llama.cpp's defaults: no
                # general.sampling in the tiny GGUF)
                stated, applied = record["request"]["completion"], record["server"]["generation_settings"]
                for name, entry in record["provenance"]["sampling"].items():
                    assert stated[name] == entry["value"] == pytest.approx(applied[name], rel=1e-6), name
                    assert entry["from"] == "llama.cpp's default"
                assert record["request"]["apply_template"]["chat_template_kwargs"] == {"enable_thinking": False}
                # Qwen3.5's template, rendered by llama-server's Qwen3-Coder path: reasoning off, checked by the cell
                assert record["request"]["prompt"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
                assert record["request"]["reasoning_check"] == {"thinking_switch": True, "empty_think_block": True}
                assert Path(run["work"] / record["server"]["log"]).is_file()
                assert (
                    record["provenance"]["model"]["sha256"]
                    == read_json(_model_file(run, "results/models/specbench-test--*.json"))["sha256"]
                )
                assert 0 < row.overhead_s < row.cell_wall_s == record["timing"]["cell_wall_s"]


def test_speculative_conditions_drafted(run: dict) -> None:
    for task in TASKS:
        for condition in ("mtp", "dflash"):
            for repeat in range(1, REPEATS + 1):
                record = greedy_record(run, task, condition, repeat)
                assert record["response"]["timings"]["draft_n"] > 0, (task, condition, repeat)
    dflash = greedy_record(run, "essay", "dflash", 1)
    assert any("block_size=16" in line for line in dflash["server"]["log_lines"])  # as the server logged it
    rows = _tables(run)["cells"].set_index("cell_file")
    assert rows.loc[placed(run["work"], Cell("essay", "dflash", 0.0, 1)).path].spec_block_size == 16  # as read
    # ngram-mod drafts where the output repeats earlier text: the essay task's output repeats itself.
    for repeat in range(1, REPEATS + 1):
        record = greedy_record(run, "essay", "ngram-mod", repeat)
        tokens = record["response"]["tokens"]
        repeated = {tuple(tokens[i : i + 4]) for i in range(len(tokens) - 4)}
        assert len(repeated) < len(tokens) - 4, "the essay output should contain a repeated 4-gram"
        assert record["response"]["timings"]["draft_n"] > 0


def test_warm_condition_shares_one_server_fresh_ones_do_not(run: dict) -> None:
    for task in TASKS:
        warm = [greedy_record(run, task, "ngram-mod-warm", r) for r in range(1, REPEATS + 1)]
        assert len({rec["server"]["pid"] for rec in warm}) == 1
        assert [rec["server"]["position"] for rec in warm] == list(range(1, REPEATS + 1))
        assert all(rec["server"]["shared"] and rec["server"]["sequence_length"] == REPEATS for rec in warm)
        assert all(rec["server"]["scope"] == "task" for rec in warm)  # warm_scope's default
        fresh = [greedy_record(run, task, "ngram-mod", r) for r in range(1, REPEATS + 1)]
        assert len({rec["server"]["pid"] for rec in fresh}) == REPEATS
        assert not any(rec["server"]["shared"] for rec in fresh)


def test_the_cells_ran_in_the_interleaved_order_planned(run: dict) -> None:
    """Per task, repeat by repeat, every condition in turn (core.plan.cells.run_order), as measured: each task's fresh
    cells start in the planned order, one task after the other. With the setups at Snakemake's default priority they
    ran condition by condition (a real SmolLM2 run: every 'off' cell, then 20 minutes later every 'ngram-mod' one).
    Which task goes first follows the merged config's key order, which Snakemake and load_config may build apart."""
    config = load_config([REPO / "config" / "config.yaml", *run["configs"]])
    planned = [
        (c.task, c.condition, int(c.repeat))
        for c in run_order(selected_cells(config), list(config["tasks"]), list(config["conditions"]))
        if c.condition != "ngram-mod-warm"
    ]
    cells = read_table(run["work"] / "results/cells.parquet")
    fresh = cells[~cells.server_shared.astype(bool)].sort_values("started_at")
    measured = [
        (task, condition, int(repeat))
        for task, condition, repeat in zip(fresh.task, fresh.condition, fresh.repeat, strict=True)
    ]
    tasks = list(dict.fromkeys(task for task, _, _ in measured))
    assert sorted(tasks) == sorted(TASKS)
    assert measured == [cell for task in tasks for cell in planned if cell[0] == task]


def test_the_terminal_shows_each_stage_and_the_cells_done_with_the_time_left(run: dict) -> None:
    """What `snakemake all` printed while it ran (the logger plugin the default profile selects): running jobs' last
    log lines with their logs' paths, the cells measured in how many of the cell jobs, with the time left, and the
    mean of the cells' recorded wall times."""
    total = len(TASKS) * len(CONDITIONS) * REPEATS
    jobs = len(TASKS) * (len(CONDITIONS) - 1) * REPEATS + len(TASKS)  # the warm condition: one job per task
    lines = [ln for ln in run["result"].stderr.splitlines() if ln.startswith("specbench progress: ")]
    assert any(" so far: " in ln and ln.endswith(".log]") and "  [logs/" in ln for ln in lines), lines
    counts = [ln for ln in lines if ln.startswith("specbench progress: cells ")]
    assert counts[-1].startswith(f"specbench progress: cells {total} measured in {jobs} of {jobs} jobs ("), counts
    estimates = [ln for ln in counts if " left" in ln and "about " in ln]
    assert estimates, counts
    mean = (
        sum(
            greedy_record(run, t, c, r)["timing"]["cell_wall_s"]
            for t in TASKS
            for c in CONDITIONS
            for r in range(1, REPEATS + 1)
        )
        / total
    )
    last = float(counts[-1].rsplit("(", 1)[1].split(" s a cell")[0])
    assert last == pytest.approx(mean, abs=0.051)  # the records' own wall times


def test_watch_and_attempts_are_recorded(run: dict) -> None:
    """What the watch and the runner recorded, whatever else the machine ran: the suites share it, so an attempt
    may fail (a slow start beside another suite) and be made again; every attempt is in the record, its samples and
    the server log, and the kept one is the last."""
    record = greedy_record(run, "essay", "off", 1)
    rejected = record["rejected_attempts"]
    allowed = load_config([REPO / "config" / "config.yaml", *run["configs"]])["measurement"]["max_attempts"]
    assert record["attempt"] == len(rejected) + 1 <= allowed, rejected
    assert [r["attempt"] for r in rejected] == list(range(1, record["attempt"]))
    assert all(r["outcome"] in ("failed", "contended") and r["reason"] for r in rejected), rejected
    assert all(r["outcome"] == "failed" for r in rejected), rejected  # CPU contention is recorded, not judged here
    assert record["contention"]["contended"] is False
    assert record["contention"]["nvml"] == "unavailable"  # a CPU build: NVML is not asked
    assert (record["contention"]["gpu_watch"], record["machine"]["backend"]) == ("cpu", "cpu")
    reason = record["contention"]["reason"]
    assert reason.startswith("accepted: CPU backend, no GPU used; CPU contention recorded, not judged"), reason
    assert record["contention"]["foreign_cpu"]["share"] is not None  # measured, though not judged
    assert record["machine"]["llama_devices"] == [] and record["provenance"]["llama_cpp"]["backend"] == "cpu"
    samples = [json.loads(line) for line in (run["work"] / record["gpu_samples"]).read_text().splitlines()]
    assert sorted({s["attempt"] for s in samples}) == list(range(1, record["attempt"] + 1))  # every attempt's
    kept = [s["phase"] for s in samples if s["attempt"] == record["attempt"]]
    assert kept[0] == "before" and "during" in kept
    assert all(s["loadavg_1m"] is not None for s in samples)
    log = (run["work"] / record["server"]["log"]).read_text(errors="replace")
    assert log.count("--- specbench: attempt ") == record["attempt"]
    assert record["response"]["client_timing"]["decode_tokens_per_s"] > 0


def test_greedy_output_is_identical_for_lossless_conditions(run: dict) -> None:
    for task in TASKS:
        for repeat in range(1, REPEATS + 1):
            off = greedy_record(run, task, "off", repeat)["response"]["tokens"]
            assert off == greedy_record(run, task, "off", 1)["response"]["tokens"]  # off vs off
            for condition in ("ngram-mod", "mtp"):
                assert greedy_record(run, task, condition, repeat)["response"]["tokens"] == off, (task, condition)


def test_aggregate_and_report_trace_to_cells(run: dict) -> None:
    runs = pd.read_csv(run["work"] / "results/runs.csv")
    assert len(runs) == len(TASKS) * len(CONDITIONS) * REPEATS
    typed = _tables(run)
    identity = typed["identity"].set_index(["task", "condition"])
    for task in TASKS:
        assert bool(identity.loc[(task, "ngram-mod"), "all_identical"])
        assert bool(identity.loc[(task, "mtp"), "all_identical"])
        assert identity.loc[(task, "off"), "control"] and bool(identity.loc[(task, "off"), "all_identical"])
    acceptance = typed["acceptance"].set_index(["task", "condition"])
    assert acceptance.loc[("essay", "mtp"), "drafted"] > 0
    assert acceptance.loc[("essay", "off"), "drafted"] == 0
    for row in typed["cells"].itertuples():
        record = read_json(run["work"] / row.cell_file)
        assert row.tokens_per_s == record["response"]["timings"]["predicted_per_second"]
        assert row.draft_n == record["response"]["timings"].get("draft_n", 0)
        assert row.tokens == record["response"]["tokens"]
        assert row.code_fingerprint == record["code_fingerprint"] == typed["cells"].code_fingerprint.iloc[0]
    for row in runs.itertuples():
        record = read_json(run["work"] / row.cell_file)
        assert row.tokens_per_s == pytest.approx(record["response"]["timings"]["predicted_per_second"])
    # the rules hand each other Parquet and schema-checked JSON, never a pickle
    assert not list((run["work"] / "results").rglob("*.pkl"))
    assert {"index.json", "_"} <= {p.name for p in (run["work"] / "results/tables").iterdir()}
    assert read_json(run["work"] / "results/judged.json")["claims"]["rows"]
    summary = pd.read_csv(run["work"] / "results/summary.csv")
    assert set(summary.verdict) <= {"baseline", "faster", "slower", "none", "too few runs"}
    assert (summary[summary.condition == "off"].verdict == "baseline").all()
    report = (run["work"] / "results/report.md").read_text()
    # constructed models: the first line says the model is another, and the opening names no study claim as failed
    assert report.split("\n")[2].startswith("> This run measured **another model** than the study's")
    opening = report.split("## What this run found")[1].split("## Setup")[0]
    assert "not reproduced" not in opening.lower() and "Does the task decide here too?" in opening
    assert "## What this run found" in report.split("## Setup")[0]  # the answer comes first
    assert "## Multiplier vs 'off' and verdict" in report
    assert placed(run["work"], Cell("essay", "ngram-mod", 0.0, 1)).path in report


def test_another_runs_cells_are_imported_as_machines_and_compared(run: dict, tmp_path: Path) -> None:
    """Two local runs with different names: the second measures a slice of its own and imports the first's cells
    (its folder, and an archive of it) as two more machines, without measuring them again."""
    first = tmp_path / "first-run-cells"
    shutil.copytree(run["work"] / "results/cells/local", first)  # as the first run left them
    archive = tmp_path / "first-run-cells.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        out.add(first, arcname="local")
    work = tmp_path / "second"
    work.mkdir()
    override = write_yaml(
        work / "second.yaml",
        {
            "name": "second box",
            "models": {"target": {"source": "hf", "hf": {"repo": HF_REPO, "revision": run["commit"]}}},
            "tasks": {"essay": {"max_tokens": 192}},
            "select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod"]},
            "temperatures": [0.0],
            "repeats": 2,
            "max_tokens": 96,
            "imports": [{"label": "first-box", "path": str(first)}, {"label": "first-box-tar", "path": str(archive)}],
            "measurement": {"max_foreign_cpu": None},  # other suites run beside this one: recorded, not judged
        },
    )
    result = snakemake(work, ["all"], [TINY, override], env=run["env"])
    assert result.returncode == 0, fail_message(result)
    assert len(list((work / "results/cells").rglob("r*.json"))) == 4  # only its own slice was measured
    cells = read_table(work / "results/cells.parquet")
    assert cells.groupby("machine").size().to_dict() == {"local": 4, "first-box": 20, "first-box-tar": 20}
    originals = {Path(*p.relative_to(first).parts[1:]): p for p in first.rglob("r*.json")}  # under their models
    for row in cells[cells.machine != "local"].itertuples():
        copy = work / row.cell_file
        assert copy.is_relative_to(work / "results/imports" / row.machine)
        original = originals[copy.relative_to(work / "results/imports" / row.machine)]
        assert copy.read_bytes() == original.read_bytes()
        assert row.tokens_per_s == read_json(original)["response"]["timings"]["predicted_per_second"]
    report = (work / "results/report.md").read_text()
    assert "## Machines compared" in report and "| local | first-box | first-box-tar |" in report
    speeds = report.split("tokens/s at temperature 0, per machine")[1].split("##")[0]
    first_off = cells[(cells.machine == "first-box") & (cells.task == "essay") & (cells.condition == "off")]
    assert f"{first_off.tokens_per_s.mean():.1f} | {first_off.tokens_per_s.mean():.1f} |" in speeds
    provenance = read_json(work / "results/provenance.json")
    behind = provenance["numbers"]["speedup-essay-mtp-t0.0@first-box"]["cells"]
    assert behind and all(c.startswith("results/imports/first-box/") for c in behind)
    assert provenance["cells"][behind[0]]["server_log"]  # the imported record's own chain


def test_rerun_has_nothing_to_do_and_one_deleted_cell_reruns_alone(own: dict) -> None:
    again = snakemake(own["work"], ["all"], own["configs"], "--dry-run", env=own["env"], snakefile=own["snakefile"])
    assert again.returncode == 0, fail_message(again)
    assert job_counts(again.stdout + again.stderr) == {}, again.stdout
    assert "Nothing to be done" in again.stdout + again.stderr

    deleted = placed(own["work"], Cell("essay", "ngram-mod", 0.0, 2))
    cell = own["work"] / deleted.path
    before = json.loads(cell.read_text())
    cell.unlink()
    plan = snakemake(own["work"], ["all"], own["configs"], "--dry-run", env=own["env"], snakefile=own["snakefile"])
    assert job_counts(plan.stdout + plan.stderr) == {
        "cell": 1,
        "explain_divergence": 1,
        "aggregate": 1,
        **BACK_HALF,
        "all": 1,
    }, plan.stdout
    assert deleted.path in plan.stdout

    redo = snakemake(own["work"], ["all"], own["configs"], env=own["env"], snakefile=own["snakefile"])
    assert redo.returncode == 0, fail_message(redo)
    after = json.loads(cell.read_text())
    assert after["response"]["tokens"] == before["response"]["tokens"]
    assert after["server"]["pid"] != before["server"]["pid"]

    # Rerunning one cell by hand: only the explanations that read it, the aggregate and the report follow it (a
    # baseline cell is the reference of every other condition's cell of its repeat, and of its later repeats)
    forced = snakemake(
        own["work"],
        [placed(own["work"], Cell("file-rewrite", "off", 0.0, 1)).path],
        own["configs"],
        "--forcerun",
        "cell",
        env=own["env"],
        snakefile=own["snakefile"],
    )
    assert forced.returncode == 0, fail_message(forced)
    follow = snakemake(own["work"], ["all"], own["configs"], "--dry-run", env=own["env"], snakefile=own["snakefile"])
    assert job_counts(follow.stdout + follow.stderr) == {
        "explain_divergence": len(CONDITIONS) - 1,
        "explain_control": REPEATS - 1,
        "aggregate": 1,
        **BACK_HALF,
        "all": 1,
    }, follow.stdout


def test_dead_server_names_the_cell_and_its_log(run: dict, tmp_path: Path) -> None:
    good = _model_file(run, "resources/models/specbench-test--*/Q4_K_M.gguf")
    broken = tmp_path / "broken.gguf"
    # A well-formed GGUF whose architecture llama.cpp does not know: the verify step can read it,
    # llama-server cannot load it.
    broken.write_bytes(good.read_bytes().replace(b"qwen35", b"qwen99"))
    work = tmp_path / "work"
    work.mkdir()
    override = write_yaml(
        work / "broken.yaml",
        {
            "models": {"target": {"source": "gguf", "gguf": {"path": str(broken)}}},
            "select": {"tasks": ["file-rewrite"], "conditions": ["off"]},
            "temperatures": [0.0],
            "repeats": 1,
            "max_tokens": 16,
        },
    )
    target = planned([TINY, override], Cell("file-rewrite", "off", 0.0, 1))
    result = snakemake(work, [target.path], [TINY, override], env=run["env"])
    assert result.returncode != 0
    line = next((ln for ln in result.stderr.splitlines() if ln.startswith("specbench: cell ")), None)
    assert line is not None, fail_message(result)
    assert line.startswith("specbench: cell file-rewrite/off/t0.0/r1: llama-server exited with code")
    server_log = target.path.replace(".json", ".server.log")
    assert line.endswith(f"read {server_log}")
    assert "qwen99" in (work / server_log).read_text()
    assert not (work / target.path).exists()
    assert not list((work / "results/cells").rglob("*.json"))
    assert llama_servers_in(work) == []


def test_a_template_that_does_not_render_reasoning_off_is_refused_naming_it(run: dict, tmp_path: Path) -> None:
    """The real Qwen3.5 template with its switch ignored (it opens a think block either way), put into a copy of the
    model: the cell refuses before generating, in one line naming the cell, how the prompt ends and the template."""
    from specbench.tiny.qwen3_5_template import QWEN3_5_CHAT_TEMPLATE

    ignoring = QWEN3_5_CHAT_TEMPLATE.replace("enable_thinking is defined and enable_thinking is false", "false")
    assert ignoring != QWEN3_5_CHAT_TEMPLATE
    template_file = tmp_path / "chat_template.jinja"
    template_file.write_text(ignoring, encoding="utf-8")
    model = tmp_path / "thinking.gguf"
    original = _model_file(run, "resources/models/specbench-test--*/Q4_K_M.gguf")
    tool = [sys.executable, "-m", "gguf.scripts.gguf_new_metadata", "--chat-template-file", str(template_file)]
    subprocess.run(
        [*tool, "--force", str(original), str(model)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "work"
    work.mkdir()
    override = write_yaml(
        work / "thinking.yaml",
        {
            "models": {"target": {"source": "gguf", "gguf": {"path": str(model)}}},
            "select": {"tasks": ["file-rewrite"], "conditions": ["off"]},
            "temperatures": [0.0],
            "repeats": 1,
            "max_tokens": 16,
            "measurement": {"max_foreign_cpu": None},
        },
    )
    target = planned([TINY, override], Cell("file-rewrite", "off", 0.0, 1))
    result = snakemake(work, [target.path], [TINY, override], env=run["env"])
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("specbench: ")]
    assert len(lines) == 1, fail_message(result)
    line = lines[0]
    assert line.startswith(
        "specbench: cell file-rewrite/off/t0.0/r1: reasoning is off (config reasoning: false), but the prompt "
        "rendered with enable_thinking false ends "
    ), line
    assert "<|im_start|>assistant\\n<think>\\n': it opens a think block" in line, line
    template = (
        f"the GGUF's own (tokenizer.chat_template, {len(ignoring):,} characters, sha256 {sha256_text(ignoring)[:12]})"
    )
    assert template in line, line
    assert not (work / target.path).exists()
    assert llama_servers_in(work) == []


def test_a_downloaded_template_unlike_llama_cpps_copy_stops_before_conversion(
    run: dict, tiny_checkpoint: Path, tmp_path: Path
) -> None:
    """The tiny checkpoint with its template's thinking switch ignored, in a hub cache of its own: the run stops
    right after the download, in one line naming the template and the key, and nothing is converted."""
    from specbench.tiny.qwen3_5_template import QWEN3_5_CHAT_TEMPLATE

    checkpoint = Path(shutil.copytree(tiny_checkpoint, tmp_path / "thinking"))
    ignoring = QWEN3_5_CHAT_TEMPLATE.replace("enable_thinking is defined and enable_thinking is false", "false")
    (checkpoint / "chat_template.jinja").write_text(ignoring, encoding="utf-8")
    hf_home = tmp_path / "hf"
    commit = populate_hf_cache(hf_home, HF_REPO, checkpoint, shared=True)
    work = tmp_path / "work"
    work.mkdir()
    hf = {"repo": HF_REPO, "revision": commit}
    override = write_yaml(work / "thinking.yaml", {"models": {"target": {"source": "hf", "hf": hf}}})
    result = snakemake(work, ["convert_target"], [TINY, override], env={**run["env"], "HF_HOME": str(hf_home)})
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("specbench: ")]
    assert len(lines) == 1, fail_message(result)
    assert lines[0].startswith(
        f"specbench: {HF_REPO}@{commit}: its chat template (chat_template.jinja) renders probe 1 differently from "
        "llama.cpp's models/templates/Qwen3.5-4B.jinja with thinking off"
    ), lines[0]
    assert "models.target.template_check" in lines[0]
    assert list(work.glob("results/models/*.download.json"))  # downloaded, then stopped
    assert not list(work.glob("results/models/*.template.json"))
    assert not list(work.glob("resources/models/*/*.gguf")) and not list(work.glob("logs/models/*.convert.log"))


def test_missing_mtp_layer_stops_before_any_mtp_cell(run: dict, tiny_checkpoint: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    override = write_yaml(
        work / "nomtp.yaml",
        {
            "models": {
                "target": {
                    "source": "checkpoint",
                    "checkpoint": {"path": str(tiny_checkpoint)},
                    "convert_args": ["--no-mtp"],
                    "require_mtp": True,
                }
            },
            "select": {"tasks": ["file-rewrite"], "conditions": ["off", "mtp"]},
            "temperatures": [0.0],
            "repeats": 1,
            "max_tokens": 16,
        },
    )
    target = planned([TINY, override], Cell("file-rewrite", "mtp", 0.0, 1))
    result = snakemake(work, [target.path], [TINY, override], env=run["env"])
    assert result.returncode != 0
    assert "has no MTP layer" in result.stderr, fail_message(result)
    assert "--spec-type draft-mtp cannot run on it" in result.stderr
    assert not list(work.glob("results/models/*.json"))
    assert not (work / "results/cells").exists()  # no cell was ever started


def test_tiny_rule_writes_the_same_checkpoint(run: dict, tiny_checkpoint: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = snakemake(work, ["tiny_target_checkpoint"], [TINY], env=run["env"])
    assert result.returncode == 0, fail_message(result)
    [made] = work.glob("resources/models/tiny-target-*/tiny")
    files = sorted(p.name for p in tiny_checkpoint.iterdir())
    assert sorted(p.name for p in made.iterdir() if not p.name.startswith(".")) == files  # Snakemake's own marker
    for path in tiny_checkpoint.iterdir():
        assert sha256_file(made / path.name) == sha256_file(path), path.name


def test_every_reported_number_traces_to_cell_files(run: dict) -> None:
    provenance_file = run["work"] / "results/provenance.json"
    check = subprocess.run(
        [sys.executable, "-m", "specbench", "provenance", "--check", "--file", str(provenance_file)],
        cwd=REPO / "scripts",
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    provenance = read_json(provenance_file)
    assert provenance["context"]["hf_revisions"] == {HF_REPO: run["commit"]}
    key = "speedup-essay-ngram-mod-t0.0"
    assert set(provenance["numbers"][key]["cells"]) == {
        placed(run["work"], Cell("essay", c, 0.0, r)).path for c in ("ngram-mod", "off") for r in range(1, REPEATS + 1)
    }
    chain = subprocess.run(
        [sys.executable, "-m", "specbench", "provenance", key, "--file", str(provenance_file)],
        cwd=REPO / "scripts",
        capture_output=True,
        text=True,
    )
    assert chain.returncode == 0, chain.stderr
    assert placed(run["work"], Cell("essay", "ngram-mod", 0.0, 1)).path.replace(".json", ".server.log") in chain.stdout
    assert "--spec-type ngram-mod" in chain.stdout
    report = (run["work"] / "results/report.html").read_text()
    assert f'id="n-{key}"' in report and f"id='p-{key}'" in report
    claims = pd.read_csv(run["work"] / "results/claims.csv")
    # another model: nothing of the study's is judged; the order of tasks per method is asked of this model
    assert len(claims) > 10 and {"not judged: another model", "background, not checked by a run"} <= set(claims.verdict)
    assert set(claims[claims.scope.isin(["absolute", "relative"])].verdict) == {"not judged: another model"}
    assert set(claims[claims.scope == "transfers"].verdict) <= {
        "yes, on this model too",
        "no, another order on this model",
        "not separated",
        "too few runs",
        "not measured in this run",
    }


def test_report_opens_in_chromium(run: dict, tmp_path: Path) -> None:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium and chromium-driver for the report test")
        pytest.skip("chromium / chromedriver not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    os.environ.setdefault("SE_OFFLINE", "true")
    browser = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        browser.set_window_size(1300, 2400)
        browser.get((run["work"] / "results/report.html").as_uri())
        assert browser.execute_script("return document.readyState") == "complete"
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
        # multipliers, acceptance, timeline, thesis, acceptance by draft position, tokens over time
        assert len(images) == 6 and all(done and w > 0 and h > 0 for done, w, h in images), images
        sections = browser.execute_script("return Array.from(document.querySelectorAll('h2')).map(h => h.id)")
        for section in (
            "thesis",
            "environment",
            "claims",
            "baseline",
            "multipliers",
            "acceptance",
            "identity",
            "runs",
            "missing",
            "provenance",
        ):
            assert section in sections
        assert browser.execute_script("return document.querySelectorAll('table').length") >= 8
        assert browser.execute_script("return document.getElementById('not-study') !== null")
        target = browser.execute_script(
            "const a = document.querySelector('a.n'); return document.getElementById(a.hash.slice(1)) !== null"
        )
        assert target, "a number's provenance link points nowhere"
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == []
        artifacts = Path(os.environ.get("SPECBENCH_TEST_ARTIFACTS", REPO / "test-artifacts"))
        artifacts.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(artifacts / "report.png"))
    finally:
        browser.quit()


def _as_a_foreground_job() -> None:
    """In the child, before exec: what an interactive shell does for a foreground job. SIGINT back at its default
    (a test runner launched as a background job of a non-interactive script inherits it ignored, and so would
    Snakemake and the cell script: nobody would react to Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cell_script(snakemake_pid: int) -> psutil.Process | None:
    """The cell job's script under this Snakemake (bash execs it: a direct child running .snakemake/scripts/...)."""
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(snakemake_pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(".snakemake/scripts/" in arg for arg in child.cmdline()):
                    return child
    return None


def test_interrupt_stops_the_server_leaves_no_cell_and_resumes(own: dict) -> None:
    """Ctrl-C as a terminal delivers it: SIGINT to Snakemake's whole process group (its own session here), which
    holds the cell script. The script must catch SIGINT (checked in /proc before sending), the server is frozen
    while the signal lands (a fast cell cannot finish first), and the one line says which signal stopped it."""
    cell = placed(own["work"], Cell("essay", "dflash", 0.0, 1))
    path, log = own["work"] / cell.path, own["work"] / cell.path.replace(".json", ".server.log")
    argv = [
        sys.executable,
        "-m",
        "snakemake",
        cell.path,
        "--forcerun",
        "cell",
        "--snakefile",
        str(own["snakefile"]),
        "--directory",
        str(own["work"]),
        "--cores",
        "2",
        "--cache",
        "--configfile",
        *map(str, own["configs"]),
    ]
    env = {**os.environ, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE), **own["env"]}
    started = log.stat().st_mtime if log.exists() else 0.0
    proc = subprocess.Popen(
        argv,
        cwd=own["work"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_as_a_foreground_job,
    )
    output = ""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until this run's server is up and generating
            fresh = log.exists() and log.stat().st_mtime > started
            if fresh and "processing task" in log.read_text(errors="replace"):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the cell's server never started")
        script = _cell_script(proc.pid)
        assert script is not None, "no cell script under Snakemake"
        assert signal.SIGINT in signal_mask(script.pid, "SigCgt"), signal_mask(script.pid, "SigIgn")
        [server] = llama_servers_in(own["work"])
        with frozen(server):
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does to the foreground process group
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            output += proc.communicate(timeout=30)[0]
    line = next((ln for ln in output.splitlines() if ln.startswith("specbench: ")), "")
    assert line.startswith(
        f"specbench: cells {cell.label}: stopped (received signal SIGINT); the server was "
        "stopped and no cell file was written"
    ), output[-6000:]
    assert proc.returncode != 0, output[-6000:]
    starting = (own["work"] / f"logs/{cell.path.replace('.json', '.log')}").read_text()
    assert f"cells {cell.label}: starting (watching Snakemake pid {proc.pid}; SIGINT default)" in starting
    time.sleep(1.0)
    assert llama_servers_in(own["work"]) == []
    assert not path.exists()
    assert not list(path.parent.glob(".r1.json.*"))  # no half-written temp file
    resumed = snakemake(own["work"], ["all"], own["configs"], env=own["env"], snakefile=own["snakefile"])
    assert resumed.returncode == 0, fail_message(resumed)
    assert read_json(path)["response"]["timings"]["predicted_n"] > 0


def _plan(run: dict, *configs: Path) -> tuple[dict[str, int], str]:
    """The dry run's job counts (and its output, which names the reasons) for `all` in the run's directory."""
    result = snakemake(
        run["work"], ["all"], [*run["configs"], *configs], "--dry-run", env=run["env"], snakefile=run["snakefile"]
    )
    assert result.returncode == 0, fail_message(result)
    return job_counts(result.stdout + result.stderr), result.stdout + result.stderr


@contextlib.contextmanager
def _edited(path: Path) -> Iterator[None]:
    """A real edit of a workflow file (a comment line), undone afterwards with its old content and mtime."""
    text, stat = path.read_text(), path.stat()
    path.write_text(text + "\n# edited by a test\n")
    try:
        yield
    finally:
        path.write_text(text)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_reruns_follow_the_code_that_made_each_number(run: dict) -> None:
    """An edit of a module inside a sub-package reruns exactly the rules whose scripts import it: the measurement
    and contention code every cell, the interpretation of what was measured (GSM8K scoring, the server log's
    parser) the aggregate and every rule after it, the summaries the tables and every rule after them, a figure
    only the figures and the report, a judge only the claims and the report."""
    package = run["snakefile"].parent / "scripts" / "specbench"
    assert _plan(run)[0] == {}
    fresh = len(TASKS) * (len(CONDITIONS) - 1) * REPEATS  # the warm condition is one sequence job per task
    explained = {"explain_divergence": fresh, "explain_control": len(TASKS) * (REPEATS - 1)}  # they read the cells
    cells = {
        "code_manifest": 1,
        "condition_setup": len(CONDITIONS),
        "cell": fresh,
        "cell_sequence": len(TASKS),
        **explained,
        "aggregate": 1,
        **BACK_HALF,
        "all": 1,
    }
    cases = {
        "engines/client.py": {**cells, "code_manifest": 2},  # the explanations' code too
        "contention/contended.py": cells,
        "measure/explain.py": {"code_manifest": 1, **explained, "aggregate": 1, **BACK_HALF, "all": 1},
        "analysis/gsm8k.py": {"aggregate": 1, **BACK_HALF, "all": 1},
        "analysis/server_log.py": {"aggregate": 1, **BACK_HALF, "all": 1},
        "analysis/summaries.py": {**BACK_HALF, "all": 1},
        "report/figures/multiplier_figure.py": {"figures": 1, "report": 1, "all": 1},
        "claims/judges.py": {"claims": 1, "report": 1, "all": 1},
    }
    for module, expected in cases.items():
        with _edited(package / module):
            counts, output = _plan(run)
            assert counts == expected, (module, output[-3000:])
            assert f"scripts/specbench/{module}" in output  # the reason names the edited file
    assert _plan(run)[0] == {}  # every module's old content again: nothing to do


def test_a_changed_flag_or_max_tokens_reruns_only_the_cells_it_touches(run: dict, tmp_path: Path) -> None:
    # One condition's server flags: that condition's setup, then its cells (not the other conditions')
    flags = write_yaml(
        tmp_path / "flags.yaml", {"conditions": {"mtp": {"args": ["--spec-type", "draft-mtp", "--draft-max", "4"]}}}
    )
    counts, output = _plan(run, flags)
    assert counts == {
        "condition_setup": 1,
        "cell": len(TASKS) * REPEATS,
        "explain_divergence": len(TASKS) * REPEATS,
        "aggregate": 1,
        **BACK_HALF,
        "all": 1,
    }, output[-3000:]
    assert f"results/setup/{placed(run['work'], Cell('essay', 'mtp', 0.0, 1)).models}/mtp.json" in output
    # One task's max_tokens: that task's prompt manifest, then its cells of every condition
    limit = write_yaml(tmp_path / "limit.yaml", {"tasks": {"essay": {"max_tokens": 8}}})
    counts, output = _plan(run, limit)
    assert counts == {
        "render_prompt": 1,
        "cell": (len(CONDITIONS) - 1) * REPEATS,
        "cell_sequence": 1,
        "explain_divergence": (len(CONDITIONS) - 1) * REPEATS,
        "explain_control": REPEATS - 1,
        "aggregate": 1,
        **BACK_HALF,
        "all": 1,
    }, output[-3000:]
    assert _plan(run)[0] == {}  # the config as run: nothing to do


def test_another_model_in_the_same_directory_leaves_this_one_alone(own: dict, tmp_path: Path) -> None:
    # The tiny draft as target: a real GGUF without an MTP layer, which verify refuses (require_mtp).
    draft = {"source": "gguf", "gguf": {"path": str(_model_file(own, "resources/models/tiny-draft-*/bf16.gguf"))}}
    other = write_yaml(tmp_path / "other.yaml", {"models": {"target": draft}, "select": {"conditions": ["off", "mtp"]}})

    def manifests() -> dict[str, tuple[str, int]]:
        return {p.name: (sha256_file(p), p.stat().st_mtime_ns) for p in (own["work"] / "results/models").glob("*.json")}

    before = manifests()
    tried = snakemake(own["work"], ["all"], [*own["configs"], other], env=own["env"], snakefile=own["snakefile"])
    assert tried.returncode != 0 and "has no MTP layer" in tried.stderr, fail_message(tried)
    after = manifests()
    assert {name: after.get(name) for name in before} == before  # this model's files untouched
    assert _plan(own)[0] == {}  # back to the first model: every cell is still current


def test_aggregate_refuses_records_of_other_measurement_code(own: dict) -> None:
    cell = placed(own["work"], Cell("essay", "mtp", 0.0, 1))
    path = own["work"] / cell.path
    original = path.read_text()
    record = json.loads(original)
    record["code_fingerprint"] = "0" * 64
    path.write_text(json.dumps(record))
    try:
        result = snakemake(
            own["work"],
            ["results/cells.parquet"],
            own["configs"],
            "--forcerun",
            "aggregate",
            env=own["env"],
            snakefile=own["snakefile"],
        )
        assert result.returncode != 0
        line = next(ln for ln in result.stderr.splitlines() if ln.startswith("specbench: "))
        assert "other measurement code" in line and cell.path in line, line
        assert "--force " in line
    finally:
        path.write_text(original)
        assert (
            snakemake(
                own["work"],
                ["all"],
                own["configs"],
                "--forcerun",
                "aggregate",
                env=own["env"],
                snakefile=own["snakefile"],
            ).returncode
            == 0
        )


def test_report_snakemake(run: dict, tmp_path: Path) -> None:
    """`snakemake --report`: one self-contained HTML file holding every report()-flagged output, byte for byte,
    with its caption (report/*.rst, Jinja rendered) beside it."""
    import base64
    import html
    import re

    report = tmp_path / "report.html"
    result = snakemake(
        run["work"], [], run["configs"], "--report", str(report), env=run["env"], snakefile=run["snakefile"]
    )
    assert result.returncode == 0, fail_message(result)
    text = report.read_text()
    assert len(text) > 100_000, f"the report is only {len(text)} bytes"
    found = re.search(r"^\s*var results = (\{.*\});$", text, re.MULTILINE)
    assert found, "the report embeds no results"
    results = json.loads(found.group(1))
    flagged = report_outputs()
    assert flagged, "no report(...) outputs with a caption among the workflow's rules"
    assert sorted(results) == sorted(flagged)

    def squeezed(value: str) -> str:
        return "".join(value.split())

    for path, caption_file in flagged.items():
        entry = results[path]
        assert base64.b64decode(entry["data_uri"].split("base64,", 1)[1]) == (run["work"] / path).read_bytes(), path
        caption = squeezed(html.unescape(re.sub(r"<[^>]+>", "", entry["caption"])))
        assert caption and "{{" not in caption, f"{path}: caption {entry['caption']!r}"
        for chunk in re.split(r"\{\{.*?\}\}|\{%.*?%\}", caption_file.read_text(), flags=re.DOTALL):
            assert squeezed(chunk.replace("``", "")) in caption, f"{path}: {chunk!r} not in {entry['caption']!r}"
        if 'snakemake.config["name"]' in caption_file.read_text():
            assert squeezed("workflow test") in caption, f"{path}: the config's name is not in its caption"


# --- the constructed ('agree') target: speculation that is accepted, and identity that means something ----------

MTP_N_MAX = 3  # --spec-draft-n-max default of b11223 (the study's command sets none)


def _steps(timings: dict) -> float:
    """Tokens per target step: every step yields its accepted drafts plus one token of the target's own."""
    return timings["predicted_n"] / (timings["predicted_n"] - timings["draft_n_accepted"])


def test_converted_target_has_a_nextn_layer_and_no_vision_tower(run: dict) -> None:
    from gguf import GGUFReader

    log = _model_file(run, "logs/models/specbench-test--*.convert.log").read_text()
    assert "Model architecture: Qwen3_5ForConditionalGeneration" in log
    reader = GGUFReader(_model_file(run, "resources/models/specbench-test--*/bf16.gguf"))
    names = [t.name for t in reader.tensors]
    assert not [n for n in names if n.startswith(("v.", "mm.")) or "visual" in n or "vision" in n]
    assert int(reader.get_field("qwen35.nextn_predict_layers").parts[-1][0]) == 1
    assert {"blk.4.nextn.eh_proj.weight", "blk.4.nextn.enorm.weight", "blk.4.nextn.hnorm.weight"} <= set(names)
    assert "output.weight" in names  # the untied lm_head of the real layout


def test_the_real_layout_converts_as_the_real_models_would(run: dict, tiny_checkpoint: Path) -> None:
    """The pinned converter on the real repositories' layout: the target's pre-tokenizer, chat template, token types
    and MTP layer; the draft's block size, mask token, target layers and layer count, as the GGUFs state them; the
    manifests record them and the report's Setup shows the draft's own figures."""
    from gguf import GGUFReader, TokenType

    from specbench.tiny import layout

    def field(reader: GGUFReader, key: str) -> object:
        return reader.get_field(key).contents()

    target = GGUFReader(_model_file(run, "resources/models/specbench-test--*/bf16.gguf"))
    assert field(target, "tokenizer.ggml.pre") == "qwen35"
    template = (tiny_checkpoint / "chat_template.jinja").read_text(encoding="utf-8")
    assert sha256_text(field(target, "tokenizer.chat_template")) == sha256_text(template)
    tokens, types = field(target, "tokenizer.ggml.tokens"), field(target, "tokenizer.ggml.token_type")
    assert tokens[248_068] == "<think>" and types[248_068] == TokenType.USER_DEFINED  # not special, as in the real one
    assert tokens[248_045] == "<|im_start|>" and types[248_045] == TokenType.CONTROL
    # of the 12 added tokens not marked special, the converter keeps as control those that look it (<|fim_prefix|>..)
    plain = {tokens[i] for i in range(layout.N_BPE, len(tokens)) if types[i] == TokenType.USER_DEFINED}
    assert plain == {"<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"}
    assert field(target, "qwen35.nextn_predict_layers") == 1
    model = read_json(_model_file(run, "results/models/specbench-test--*.json"))
    assert model["chat_template"]["sha256"] == sha256_text(template) and model["draft"] is None

    draft_gguf = _model_file(run, "resources/models/tiny-draft-*/bf16.gguf")
    draft = GGUFReader(draft_gguf)
    [checkpoint] = run["work"].glob("resources/models/tiny-draft-*/tiny")
    config = read_json(checkpoint / "config.json")
    assert field(draft, "general.architecture") == "dflash"
    assert field(draft, "dflash.block_size") == config["block_size"] == 16
    assert field(draft, "tokenizer.ggml.mask_token_id") == config["dflash_config"]["mask_token_id"] == 248_070
    assert field(draft, "dflash.target_layers") == [i + 1 for i in config["dflash_config"]["target_layer_ids"]]
    assert field(draft, "dflash.block_count") == config["num_hidden_layers"]
    manifest = read_json(_model_file(run, "results/models/tiny-draft-*.json"))
    assert manifest["draft"] == {
        "architecture": "dflash",
        "layers": field(draft, "dflash.block_count"),
        "block_size": 16,
        "mask_token_id": 248_070,
        "target_layers": field(draft, "dflash.target_layers"),
    }
    report = (run["work"] / "results/report.md").read_text()
    layers = field(draft, "dflash.block_count")
    assert f"dflash: {layers} layers, block size 16, mask token id 248070, target layers 1, 2, 3" in report


def test_greedy_output_follows_the_constructed_function(run: dict) -> None:
    from itertools import pairwise

    from specbench.tiny.construction import Construction

    construction = Construction(0, "agree")
    for task in TASKS:
        tokens = greedy_record(run, task, "off", 1)["response"]["tokens"]
        assert all(b == construction.target_next(a) for a, b in pairwise(tokens)), task


def test_mtp_acceptance_is_the_constructed_rate(run: dict) -> None:
    """'agree': the MTP layer agrees on every token, so (nearly) every draft is accepted and each target step
    yields close to n_max + 1 tokens. The band allows for the last steps of a request, which draft fewer."""
    from specbench.tiny.construction import Construction

    construction = Construction(0, "agree")
    for task in TASKS:
        for repeat in range(1, REPEATS + 1):
            record = greedy_record(run, task, "mtp", repeat)
            timings = record["response"]["timings"]
            acceptance = timings["draft_n_accepted"] / timings["draft_n"]
            assert 0.95 <= acceptance <= 1.0, (task, repeat, timings)
            assert _steps(timings) > 1.0 and _steps(timings) >= 0.85 * (MTP_N_MAX + 1), (task, repeat, timings)
            expected = construction.expected_mtp(record["response"]["tokens"][0], timings["predicted_n"], MTP_N_MAX)
            assert abs(timings["draft_n_accepted"] - expected["draft_n_accepted"]) <= MTP_N_MAX, (expected, timings)


def test_dflash_acceptance_is_the_constructed_rate(run: dict) -> None:
    """The hand-built DFlash draft predicts whole blocks right: (nearly) every draft is accepted, close to
    n_max + 1 tokens per target step (the last steps of a request draft fewer)."""
    for task in TASKS:
        for repeat in range(1, REPEATS + 1):
            record = greedy_record(run, task, "dflash", repeat)
            timings = record["response"]["timings"]
            assert (
                parse_speculative_log("\n".join(record["server"]["log_lines"]))["settings"]["draft-dflash"]["n_max"]
                == MTP_N_MAX
            )
            acceptance = timings["draft_n_accepted"] / timings["draft_n"]
            assert 0.95 <= acceptance <= 1.0, (task, repeat, timings)
            assert _steps(timings) >= 0.85 * (MTP_N_MAX + 1), (task, repeat, timings)


def test_accepted_speculation_leaves_greedy_output_unchanged(run: dict) -> None:
    """Lossless at temperature 0 with drafts really accepted: MTP and DFlash equal off for the same repeat."""
    for task in TASKS:
        for repeat in range(1, REPEATS + 1):
            off = greedy_record(run, task, "off", repeat)["response"]["tokens"]
            for condition in ("mtp", "dflash"):
                record = greedy_record(run, task, condition, repeat)
                assert record["response"]["timings"]["draft_n_accepted"] > 0, (task, condition, repeat)
                assert record["response"]["tokens"] == off, (task, condition, repeat)


# --- inside each request: the server's own counts per draft position, and the stream's arrivals ------------------


def test_acceptance_by_draft_position_is_the_servers_own_count(run: dict) -> None:
    """Every speculative cell kept /metrics before and after its request (the warm server's later ones too): the
    difference's per-position counts sum to the response's draft_n_accepted, it covers exactly the request's
    predicted tokens, and the mean accepted length is the server's own log line's; the table says the same."""
    from specbench.analysis.draft_positions import logged_acceptance, mean_accepted_length
    from specbench.core.records.counters import request_counts

    rows = _tables(run)["cells"].set_index("cell_file")
    checked = {"mtp": 0, "dflash": 0, "ngram-mod": 0, "ngram-mod-warm": 0}
    for task in TASKS:
        for condition in checked:
            for repeat in range(1, REPEATS + 1):
                record = greedy_record(run, task, condition, repeat)
                assert "--metrics" in record["server"]["argv"]
                timings = record["response"]["timings"]
                counts = request_counts(record["server"]["metrics"])
                assert counts is not None, record["server"]["metrics"]
                assert counts.predicted == timings["predicted_n"]  # the two scrapes bracket this request alone
                assert sum(counts.per_position) == counts.accepted == timings.get("draft_n_accepted", 0)
                assert counts.drafted == timings.get("draft_n", 0)
                row = rows.loc[placed(run["work"], Cell(task, condition, 0.0, repeat)).path]
                assert row.accepted_per_position == list(counts.per_position)
                if not counts.steps:
                    continue
                logged = logged_acceptance(
                    record["server"]["log_lines"], counts.accepted, counts.drafted, record["server"]["position"]
                )
                assert logged is not None, record["server"]["log_lines"]
                assert round(mean_accepted_length(counts.accepted, counts.steps), 2) == logged["mean_len"]
                assert row.logged_mean_length == logged["mean_len"]
                assert row.mean_accepted_length == pytest.approx(1 + counts.accepted / counts.steps)
                checked[condition] += 1
    assert checked["mtp"] == checked["dflash"] == len(TASKS) * REPEATS and checked["ngram-mod"] >= 1, checked
    mtp = request_counts(greedy_record(run, "essay", "mtp", 1)["server"]["metrics"])
    assert mtp is not None and len(mtp.per_position) == MTP_N_MAX  # MTP drafts only a few tokens: n_max positions


def test_the_stream_arrivals_give_ttft_and_itl(run: dict) -> None:
    from specbench.analysis.chunk_latency import expanded

    rows = _tables(run)["cells"].set_index("cell_file")
    for task in TASKS:
        for condition in CONDITIONS:
            record = greedy_record(run, task, condition, 1)
            timing = record["response"]["client_timing"]
            assert sum(expanded(timing["chunk_tokens"])) == len(record["response"]["tokens"])
            assert timing["chunk_ms"] == sorted(timing["chunk_ms"])
            assert timing["chunk_ms"][-1] <= 1000 * record["timing"]["request_wall_s"]
            row = rows.loc[placed(run["work"], Cell(task, condition, 0.0, 1)).path]
            assert row.ttft_ms == pytest.approx(1000 * timing["first_token_s"], abs=0.01)
            assert 0 <= row.itl_median_ms <= row.itl_p90_ms <= row.itl_p99_ms


def test_the_report_shows_acceptance_by_position_ttft_and_itl(run: dict) -> None:
    report = (run["work"] / "results/report.md").read_text()
    positions = report.split("## Acceptance by draft position")[1].split("\n## ")[0]
    assert "| essay | mtp |" in positions and "| essay | dflash |" in positions
    latency = report.split("## Time to first token and inter-token latency")[1].split("\n## ")[0]
    assert all(f"| essay | {condition} |" in latency for condition in CONDITIONS)
    for name in ("positions.png", "arrivals.png"):
        assert (run["work"] / "results/figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"](figures/{name})" in report
    table = pd.read_csv(run["work"] / "results/positions.csv").set_index(["task", "condition"])
    assert table.loc[("essay", "mtp"), "verification_steps"] > 0
    assert pd.read_csv(run["work"] / "results/latency.csv").ttft_ms.gt(0).all()
