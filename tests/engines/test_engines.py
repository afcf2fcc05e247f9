"""Every engine behind one interface (engines.engine.Engine, found by engines.registry): one per name the config's
schema allows, each giving the same record keys; and neither the plan nor the cell names an engine, so a new engine
is a new module and a line in the registry."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from specbench.core.config.builds import ENDPOINT, LLAMA_CPP, SGLANG, VLLM, Build
from specbench.engines.engine import Engine
from specbench.engines.registry import ENGINES, engine
from support.paths import REPO

PACKAGE = REPO / "scripts" / "specbench"


def test_one_engine_for_each_name_the_config_allows() -> None:
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    allowed = schema["properties"]["builds"]["items"]["properties"]["engine"]["enum"]
    assert sorted(ENGINES) == sorted(allowed) == sorted([LLAMA_CPP, VLLM, ENDPOINT, SGLANG])
    assert all(isinstance(e, Engine) and e.name == name for name, e in ENGINES.items())
    assert [name for name, e in ENGINES.items() if e.serves_gguf] == [LLAMA_CPP]
    with pytest.raises(KeyError):
        engine("tgi")


def _setup() -> SimpleNamespace:
    """The fields an engine reads of a condition's setup (measure.condition_setup.Setup's)."""
    return SimpleNamespace(
        server_binary=Path("/x/bin/llama-server"),
        server_args=["-m", "vllm.entrypoints.openai.api_server", "--model", "/ckpt", "--enforce-eager"],
        server_log=Path("/x/server.log"),
        startup_timeout_s=1.0,
        request_timeout_s=1.0,
        endpoint="http://127.0.0.1:9/",
        chat_template="gguf",
        server_env={},
        checkpoints={},
        build_manifest={
            "source": "pypi-sdist",
            "backend": "cpu",
            "binaries": {"llama-server": {"sha256": "ab"}},
            "python": "/venv/bin/python",
            "vllm_version": "0.32",
        },
    )


def test_every_engine_gives_a_cell_the_same_provenance_keys() -> None:
    parts = {name: e.provenance(_setup()) for name, e in ENGINES.items()}
    assert all({"llama_cpp", "server_binary"} <= set(p) for p in parts.values())
    assert parts[LLAMA_CPP]["server_binary"] == {"path": "/x/bin/llama-server", "sha256": "ab"}
    assert parts[LLAMA_CPP]["llama_cpp"]["backend"] == "cpu"
    assert parts[VLLM]["server_binary"] is None and parts[VLLM]["vllm"]["checkpoint"] == "/ckpt"
    assert parts[ENDPOINT] == {"llama_cpp": dict.fromkeys(parts[LLAMA_CPP]["llama_cpp"]), "server_binary": None}


def test_each_engine_describes_its_build_and_says_where_its_condition_is_served() -> None:
    llama = Build("b1", {"source": "git", "git": {"label": "b11223"}}, "/builds/b1")
    vllm = Build("v", {}, "", engine=VLLM, vllm={"requirements": "envs/vllm-cpu.txt", "conditions": {"off": []}})
    mine = Build("mine", {}, "", engine=ENDPOINT, urls={"off": "http://127.0.0.1:8080"})
    assert engine(LLAMA_CPP).describe(llama) == "b11223"
    assert engine(VLLM).describe(vllm) == "vLLM from a venv of envs/vllm-cpu.txt, a fresh server per cell"
    assert engine(ENDPOINT).describe(mine) == "endpoint, not started by this run: off at http://127.0.0.1:8080"
    assert engine(ENDPOINT).endpoint(mine, "off") == "http://127.0.0.1:8080"
    assert engine(LLAMA_CPP).endpoint(llama, "off") is None and engine(VLLM).endpoint(vllm, "off") is None
    assert engine(LLAMA_CPP).setup_inputs({}, llama, REPO, draft=False) == {
        "build": "resources/llama.cpp/builds/b1/bin"
    }
    assert engine(ENDPOINT).setup_inputs({}, mine, REPO, draft=True) == {}


def test_neither_the_plan_nor_the_cell_names_an_engine() -> None:
    """No engine's name, and no branch on one, outside the engines and the config's checks of their blocks."""
    named = re.compile(r"\b(LLAMA_CPP|VLLM|ENDPOINT)\b|engine\s*[!=]=")
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for folder in ("measure", "workflow")
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if named.search(line)
    ]
    assert not found, "\n".join(found)
