"""A server's environment (engines.server_process): what a build's ``env`` sets reaches the server process started
here, and each record keeps it beside the inherited variables that change a server's work, nothing else."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.builds import builds
from specbench.core.config.load import ConfigError, validate_config
from specbench.engines.server_process import server_environment, start_server
from support.paths import REPO

# A server of a few lines: answers /health, and /env with its own environment (it binds the host and port given)
SERVER = f"""#!{sys.executable}
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
host, port = sys.argv[sys.argv.index("--host") + 1], int(sys.argv[sys.argv.index("--port") + 1])
class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(dict(os.environ) if self.path == "/env" else {{"status": "ok"}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
HTTPServer((host, port), Handler).serve_forever()
"""


def test_a_builds_env_reaches_its_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "server"
    binary.write_text(SERVER)
    binary.chmod(0o755)
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "DEBUG")
    own = {"GGML_CUDA_ENABLE_UNIFIED_MEMORY": "1", "VLLM_LOGGING_LEVEL": "INFO"}
    with start_server(binary, [], tmp_path / "log", 30.0, name="test server", env=own) as server:
        seen = httpx.get(f"{server.url}/env", timeout=10.0).json()
    assert seen["GGML_CUDA_ENABLE_UNIFIED_MEMORY"] == "1" and seen["VLLM_LOGGING_LEVEL"] == "INFO"  # its own over ours
    assert seen["PATH"]  # the rest of the workflow's environment is inherited as it is


def test_the_record_keeps_what_was_set_and_what_changes_a_servers_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setenv("LLAMA_ARG_CTX_SIZE", "4096")
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "DEBUG")
    monkeypatch.setenv("SPECBENCH_UNRELATED", "x")
    kept = server_environment({"VLLM_LOGGING_LEVEL": "INFO"})
    assert kept["set"] == {"VLLM_LOGGING_LEVEL": "INFO"}
    assert kept["inherited"]["CUDA_VISIBLE_DEVICES"] == "1" and kept["inherited"]["LLAMA_ARG_CTX_SIZE"] == "4096"
    assert "VLLM_LOGGING_LEVEL" not in kept["inherited"] and "SPECBENCH_UNRELATED" not in kept["inherited"]
    assert "PATH" not in kept["inherited"]


def test_a_builds_env_is_validated_and_resolved(study_config: dict) -> None:
    update_config(study_config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
    config = {**copy.deepcopy(study_config), "builds": [{"label": "b11223", "env": {"GGML_SCHED_MAX_COPIES": 1}}]}
    assert builds(validate_config(config, REPO))[0].env == {"GGML_SCHED_MAX_COPIES": "1"}
    bad = {**copy.deepcopy(study_config), "builds": [{"label": "b11223", "env": {"NOT-A-NAME": "1"}}]}
    with pytest.raises(ConfigError) as caught:
        validate_config(bad, REPO)
    assert caught.value.key == "builds.0.env" and "NOT-A-NAME" in caught.value.problem
