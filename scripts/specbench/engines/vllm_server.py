"""vLLM as an engine: a fresh vLLM server per cell, started from its build's environment (engines.vllm_env) on the
Hugging Face checkpoint the GGUF is made from, asked through ``/v1/chat/completions``; its argv per condition (the
build's flags and the condition's) and per load (``--max-num-seqs N``, prefix caching off)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from specbench.core.config.builds import DRAFT_FIELD, VLLM, Build, vllm_manifest
from specbench.core.config.sources import model_source
from specbench.core.plan.models import checkpoint_dir, model_id
from specbench.core.records.counters import PER_REQUEST
from specbench.core.records.draft_budget import SPECULATIVE_CONFIG
from specbench.core.steps.files import read_json
from specbench.engines.chat_client import PENALTY_NAMES, run_chat_exchange
from specbench.engines.client import Exchange, Generation
from specbench.engines.endpoint import reported_identity, served_model
from specbench.engines.engine import Engine, no_llama_cpp, started
from specbench.engines.server_process import descendants, start_server

if TYPE_CHECKING:
    from specbench.core.records.counters import Counts
    from specbench.engines.engine import Served, Server

VLLM_SERVER_MODULE = "vllm.entrypoints.openai.api_server"  # the module entry (the console script differs by package)
# What a speculative server answers each request with its acceptance (metrics.PER_REQUEST) when started with
PER_REQUEST_FLAG = "--per-request-spec-decode-metrics"
# vLLM's own sampling defaults, not the checkpoint's generation_config.json: every request states its sampling
GENERATION_CONFIG = ("--generation-config", "vllm")
# What a cell records of the environment its manifest describes
ENVIRONMENT_FACTS = ("python", "vllm_version", "distribution", "torch_version", "backend", "requirements", "packages")


def server_args(config: Mapping[str, Any], build: Build, condition: str, base: Path) -> list[str]:
    """A vLLM server's argv after its interpreter: the module, the target's Hugging Face checkpoint, the build's flags
    and the condition's (with the draft's checkpoint for ``{draft}``), and ``--generation-config vllm`` unless the
    build sets one (the checkpoint's generation_config.json cannot change what a request states); the cell adds
    --host 127.0.0.1 and the port."""
    draft = checkpoint_dir(config, "draft", base) if "draft" in config["models"] else None
    flags = [f.replace(DRAFT_FIELD, draft) if draft else f for f in build.vllm["conditions"][condition]]
    own = [*build.vllm.get("args", []), *flags]
    generation = [] if GENERATION_CONFIG[0] in own else list(GENERATION_CONFIG)
    return ["-m", VLLM_SERVER_MODULE, "--model", checkpoint_dir(config, "target", base), *own, *generation]


class VllmServer(Engine):
    """A vLLM server of a build's environment per cell."""

    name = VLLM

    def server_args(self, config: Mapping[str, Any], build: Build, condition: str, base: Path) -> list[str]:
        return server_args(config, build, condition, base)

    def load_args(self, args: list[str], clients: int) -> list[str]:
        return [*args, "--max-num-seqs", str(clients), "--no-enable-prefix-caching"]

    def setup_inputs(self, config: Mapping[str, Any], build: Build, base: Path, draft: bool) -> dict[str, str]:
        """The environment's manifest, and the checkpoints it serves with their download records (a Hub model's
        commit and files' sha256; the setup hashes any other checkpoint's files itself)."""
        inputs = {"build": vllm_manifest(build.label)}
        for role in ("target", "draft") if draft else ("target",):
            inputs[f"{role}_checkpoint"] = checkpoint_dir(config, role, base)
            if model_source(dict(config), role)["kind"] == "hf":
                inputs[f"{role}_download"] = f"results/models/{model_id(dict(config), role, base)}.download.json"
        return inputs

    def describe(self, build: Build) -> str:
        where = build.vllm.get("python") or f"a venv of {build.vllm['requirements']}"
        return f"vLLM from {where}, a fresh server per cell"

    def executable(self, build: Path | None, endpoint: str | None) -> dict[str, Any]:
        assert build is not None
        manifest = read_json(build)
        return {"server_binary": manifest["python"], "build_manifest": manifest}

    @contextlib.contextmanager
    def serve(self, setup: Served, header: str) -> Iterator[Server]:
        assert setup.server_binary is not None  # vLLM serves /metrics without a flag
        with start_server(
            setup.server_binary,
            list(setup.server_args),
            setup.server_log,
            setup.startup_timeout_s,
            log_header=header,
            name="vLLM server",
            env=setup.server_env,
        ) as server:
            yield server

    def server_record(self, server: Server) -> dict[str, Any]:
        with httpx.Client(timeout=30.0) as client:
            reported = reported_identity(client, server.url)
        # vLLM's engine core and workers are its children: on a GPU they, not the API server, hold the device
        return {
            **started(server),
            "local_pids": [server.pid, *descendants(server.pid)],
            "reported": reported,
            "model": served_model(reported),
        }

    def ask(
        self, setup: Served, server: Server, messages: list[dict[str, str]], generation: Generation, model: str | None
    ) -> Exchange:
        return run_chat_exchange(
            server.url, model, messages, generation, timeout_s=setup.request_timeout_s, penalty_names=PENALTY_NAMES[:1]
        )

    def acceptance_missing(self, setup: Served, response: Mapping[str, Any], counted: Counts | None) -> str | None:
        """A speculative vLLM server (``--speculative-config``) answers with ``metrics.speculative_decoding`` when
        started with ``--per-request-spec-decode-metrics``, and counts the same on ``/metrics``
        (``vllm:spec_decode_*``); with neither the acceptance would read as 0."""
        if SPECULATIVE_CONFIG not in setup.server_args or (response.get("metrics") or {}).get(PER_REQUEST):
            return None
        if counted is not None:
            return None  # read from the counters (the record says so: counts_source '/metrics')
        version = setup.build_manifest.get("vllm_version") or "of unknown version"
        return (
            f"vLLM {version} answered a speculative request without metrics.{PER_REQUEST}, and its /metrics had no "
            f"vllm:spec_decode_* counters: its acceptance would read as 0; start it with {PER_REQUEST_FLAG} summary "
            "(vllm.conditions' flags)"
        )

    def provenance(self, setup: Served) -> dict[str, Any]:
        """The environment as its manifest recorded it, and the checkpoint its server loaded (``--model``)."""
        args = list(setup.server_args)
        checkpoint = args[args.index("--model") + 1] if "--model" in args[:-1] else None
        environment = {key: setup.build_manifest.get(key) for key in ENVIRONMENT_FACTS}
        return {**no_llama_cpp(), "vllm": {**environment, "checkpoint": checkpoint, "checkpoints": setup.checkpoints}}
