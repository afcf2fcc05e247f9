"""A vLLM build's environment step: an interpreter without vLLM, and a venv whose requirements bring none, fail in one
line that names the environment and the log, and write no manifest (the cells would start nothing that serves)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from specbench.engines.vllm_env import VllmEnvError, env_step, probe


def test_an_interpreter_without_vllm_is_refused_naming_the_key(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    out, log = tmp_path / "manifest.json", tmp_path / "env.log"
    with pytest.raises(SystemExit):
        env_step(sys.executable, tmp_path / "unused.txt", tmp_path / "venv", out, log)
    line = capfd.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"specbench: vLLM environment vllm.python ({sys.executable}):")
    assert "vllm.entrypoints.openai.api_server does not import" in line and "No module named 'vllm'" in line
    assert line.endswith(f"read {log}") and not out.exists() and not (tmp_path / "venv").exists()


def test_a_venv_made_without_vllm_is_refused_naming_its_requirements(
    tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# nothing: no vLLM\n")
    out, log, venv = tmp_path / "manifest.json", tmp_path / "env.log", tmp_path / "venv"
    with pytest.raises(SystemExit):
        env_step(None, requirements, venv, out, log)
    line = capfd.readouterr().err.strip().splitlines()[-1]
    assert f"the venv made from {requirements}" in line and "No module named 'vllm'" in line
    assert (venv / "bin" / "python").exists() and not out.exists()  # made, probed with its own python, refused
    assert "pip install" in log.read_text()


def test_a_python_that_cannot_run_is_an_environment_error(tmp_path: Path) -> None:
    with pytest.raises(VllmEnvError, match="could not be run"):
        probe(tmp_path / "no-such-python")
