"""An endpoint build for real: config/tiny-endpoint.yaml with two llama-servers this test starts itself (the user's
servers: off, and MTP), measured by the workflow without being started or stopped by it, beside b11223's fresh
servers; the records hold what those servers reported, and the report says in its first lines what was given up."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest
import yaml

from specbench.core.steps.files import read_json
from specbench.engines.server_process import free_port
from support.paths import REPO
from support.prepare import PREPARED, wait_for
from support.workflow import snakemake, write_yaml

# The user's servers: what tiny.yaml's server args and the condition's flags would start, on ports of their own
SERVER_ARGS = ["-ngl", "99", "-fa", "on", "--parallel", "1", "-c", "4096", "--jinja", "--metrics"]
OWN_SERVERS = {"off": [], "mtp": ["--spec-type", "draft-mtp"]}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Two llama-servers of the prepared tiny models' build on 127.0.0.1, started here, stopped after the suite."""
    wait_for("tiny-models")
    binary = PREPARED / "tiny-models" / "resources" / "llama.cpp" / "bin" / "llama-server"
    model = next((PREPARED / "tiny-models" / "resources" / "models").glob("tiny-target-*/Q4_K_M.gguf"))
    logs = tmp_path_factory.mktemp("own-servers")
    started = {}
    for condition, flags in OWN_SERVERS.items():
        port = free_port()
        argv = [str(binary), "-m", str(model), *SERVER_ARGS, *flags, "--host", "127.0.0.1", "--port", str(port)]
        with open(logs / f"{condition}.log", "wb") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        started[condition] = {"process": process, "url": f"http://127.0.0.1:{port}", "log": logs / f"{condition}.log"}
    try:
        for server in started.values():
            _wait_ready(server["url"], server["process"])
        yield started
    finally:
        for server in started.values():
            server["process"].terminate()
            server["process"].wait(timeout=30)


def _wait_ready(url: str, process: subprocess.Popen, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the test's own llama-server at {url} exited"
        try:
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the test's own llama-server at {url} was not ready in {timeout_s} s")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, servers: dict) -> dict:
    work = tmp_path_factory.mktemp("endpoint")
    shipped = yaml.safe_load((REPO / "config" / "tiny-endpoint.yaml").read_text())
    builds = shipped["builds"]
    builds[1]["endpoint"]["urls"] = {c: s["url"] for c, s in servers.items()}
    # The user's servers run beside the cells: record CPU contention, do not judge it here.
    override = write_yaml(work / "override.yaml", {"builds": builds, "measurement": {"max_foreign_cpu": None}})
    configs = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-endpoint.yaml", override]
    result = snakemake(work, ["all"], configs, env={"HF_HUB_OFFLINE": "1"}, start_from="tiny-models")
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}"
    return {"work": work, "servers": servers}


def _endpoint_records(work: Path) -> dict[str, dict]:
    return {
        str(p.relative_to(work)): read_json(p) for p in sorted((work / "results/cells/local/mine").rglob("r*.json"))
    }


@pytest.mark.workflow
def test_the_endpoint_cells_were_served_by_the_users_servers_untouched(run: dict) -> None:
    work, servers = run["work"], run["servers"]
    records = _endpoint_records(work)
    conditions = sorted({r["cell"]["condition"] for r in records.values()})
    assert conditions == ["mtp", "off"] and len(records) == 4  # ngram-mod has no URL: left out of this build
    for record in records.values():
        own = servers[record["cell"]["condition"]]
        assert record["provenance"]["engine"] == "endpoint" and record["provenance"]["server_binary"] is None
        assert record["server"]["argv"] is None and record["server"]["endpoint"]["url"] == own["url"]
        assert record["server"]["pid"] == own["process"].pid  # the listener found on this machine is the one we started
        others = (record["contention"].get("foreign_cpu") or {}).get("top") or []
        assert own["process"].pid not in {p["pid"] for p in others}  # its CPU time is the cell's own, not another's
        assert "build_info" in record["server"]["endpoint"]["reported"]["/props"]
        assert record["response"]["api"] == "chat-completions" and record["response"]["content"]
        assert record["request"]["apply_template"]["route"] == "/apply-template"
        assert record["request"]["prompt"].endswith("<think>\n\n</think>\n\n")  # reasoning off, as rendered by it
    for server in servers.values():  # measured, never stopped: both still answer
        assert server["process"].poll() is None
        assert httpx.get(f"{server['url']}/health", timeout=5.0).status_code == 200
    assert not (work / "resources/llama.cpp/builds/mine").exists()  # nothing built for it


@pytest.mark.workflow
def test_the_tables_hold_the_numbers_the_endpoint_reported(run: dict) -> None:
    work = run["work"]
    runs = pd.read_csv(work / "results" / "runs.csv")
    mine = runs[runs.build == "mine"].set_index(["condition", "repeat"])
    assert set(mine.engine) == {"endpoint"} and set(runs[runs.build == "b11223"].engine) == {"llama.cpp"}
    for path, record in _endpoint_records(work).items():
        timings = record["response"]["timings"]
        row = mine.loc[(record["cell"]["condition"], record["cell"]["repeat"])]
        assert row.tokens_per_s == pytest.approx(timings["predicted_per_second"])
        assert row.predicted_n == timings["predicted_n"] == record["response"]["usage"]["completion_tokens"]
        assert row.draft_n == timings.get("draft_n", 0) and row.timings_source == "server"
        assert row.cell_file == path
    mtp = mine.loc["mtp"]
    assert (mtp.draft_n > 0).all() and (mtp.draft_n_accepted > 0).all()  # the MTP layer drafted, and was accepted
    assert (mine.loc["off"].draft_n == 0).all()


@pytest.mark.workflow
def test_the_report_says_first_what_an_endpoint_gives_up(run: dict) -> None:
    text = (run["work"] / "results" / "report.md").read_text()
    opening = text.split("\n## ", 1)[0]
    assert "4 cells were measured on a server this run did not start" in opening
    assert "no fresh server per cell" in opening and run["servers"]["mtp"]["url"] in opening
    table = text.split("## Builds compared", 1)[1].split("\n## ", 1)[0]
    assert "Not measured: ngram-mod on mine (endpoint build 'mine' names no server for it" in table
    line = next(row for row in table.splitlines() if row.startswith("| essay | mtp "))
    assert len(re.findall(r"\d+\.\d\dx \[\d+\.\d\d-\d+\.\d\d\]", line)) == 2, line
    assert "yes (2/2 by text)" in line, line  # the same binary and model behind both: the same greedy text
    print(opening)
    print(table)
