"""llama.cpp as an engine: a fresh llama-server of one of this run's builds per cell (or per warm sequence), serving
the run's GGUFs, asked through its own ``/completion`` with the prompt its ``/apply-template`` renders; its argv per
condition and per load (slots, context, batch)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specbench.core.config import chat_template
from specbench.core.config.builds import LLAMA_CPP, Build
from specbench.core.plan.models import model_gguf
from specbench.core.records.draft_budget import LLAMA_DRAFT_MAX
from specbench.core.steps.files import read_json
from specbench.engines.client import Exchange, Generation, run_exchange
from specbench.engines.engine import LLAMA_CPP_FACTS, Engine, started
from specbench.engines.metrics_scrape import METRICS_FLAG
from specbench.engines.server_process import start_server

if TYPE_CHECKING:
    from specbench.engines.engine import Served, Server

# llama-server's flags for its slots, context and batch (common/arg.cpp), and its default draft length
PARALLEL, CONTEXT = ("--parallel", "-np"), ("-c", "--ctx-size")
BATCH, UBATCH = ("-b", "--batch-size"), ("-ub", "--ubatch-size")
DEFAULT_DRAFT_MAX = 16


def server_args(config: Mapping[str, Any], condition: str, base: Path) -> list[str]:
    """The server's argv after the binary: the model, the study's flags, the chat template's (a built-in one by
    name), the condition's flags (with the draft's path); the cell adds only --host 127.0.0.1 and the port it picks."""
    draft = model_gguf(config, "draft", base) if "draft" in config["models"] else None
    args = config["conditions"][condition]["args"]
    return [
        "-m",
        model_gguf(config, "target", base),
        *config["server"]["args"],
        *chat_template.server_flags(chat_template.setting(config)),
        *(a.replace("{draft}", draft) if draft else a for a in args),
    ]


def load_args(args: list[str], clients: int) -> list[str]:
    """A condition's argv for ``clients`` requests at once: ``--parallel N`` and the context scaled by N (each slot
    keeps the per-slot context it had alone); ValueError where a set batch cannot hold N x (draft + 1) tokens."""
    out = list(args)
    context = _value(out, CONTEXT)
    if context is not None:
        out[context] = str(int(out[context]) * clients)
    draft_at = _value(out, LLAMA_DRAFT_MAX)
    needed = clients * ((int(out[draft_at]) if draft_at is not None else DEFAULT_DRAFT_MAX) + 1)
    for flags in (BATCH, UBATCH):
        at = _value(out, flags)
        if at is not None and int(out[at]) < needed:
            raise ValueError(
                f"{out[at - 1]} {out[at]} cannot hold {clients} requests' drafts at once ({clients} x (draft + 1) = "
                f"{needed} tokens): raise it, or leave it to llama-server's default"
            )
    parallel = _value(out, PARALLEL)
    if parallel is None:
        return [*out, PARALLEL[0], str(clients)]
    out[parallel] = str(clients)
    return out


def _value(args: list[str], flags: tuple[str, ...]) -> int | None:
    """The index of the value of the last of ``flags`` in ``args`` (llama-server takes the last), None if absent."""
    found = [i + 1 for i, a in enumerate(args[:-1]) if a in flags]
    return found[-1] if found else None


class LlamaServer(Engine):
    """A llama-server of this run's build per cell."""

    name = LLAMA_CPP
    serves_gguf = True

    def server_args(self, config: Mapping[str, Any], build: Build, condition: str, base: Path) -> list[str]:
        return server_args(config, condition, base)

    def load_args(self, args: list[str], clients: int) -> list[str]:
        return load_args(args, clients)

    def setup_inputs(self, config: Mapping[str, Any], build: Build, base: Path, draft: bool) -> dict[str, str]:
        return {"build": f"{build.root}/bin"}

    def describe(self, build: Build) -> str:
        return str(build.llama_cpp[build.llama_cpp["source"]].get("label") or "")

    def executable(self, build: Path | None, endpoint: str | None) -> dict[str, Any]:
        assert build is not None
        return {"server_binary": str(build / "llama-server"), "build_manifest": read_json(build / "manifest.json")}

    @contextlib.contextmanager
    def serve(self, setup: Served, header: str) -> Iterator[Server]:
        assert setup.server_binary is not None
        args = [*setup.server_args, METRICS_FLAG]  # its /metrics counters, read around each request
        with start_server(
            setup.server_binary,
            args,
            setup.server_log,
            setup.startup_timeout_s,
            log_header=header,
            name="llama-server",
            env=setup.server_env,
        ) as server:
            yield server

    def server_record(self, server: Server) -> dict[str, Any]:
        return started(server)

    def ask(
        self, setup: Served, server: Server, messages: list[dict[str, str]], generation: Generation, model: str | None
    ) -> Exchange:
        return run_exchange(
            server.url, messages, generation, timeout_s=setup.request_timeout_s, chat_template=setup.chat_template
        )

    def provenance(self, setup: Served) -> dict[str, Any]:
        manifest = setup.build_manifest
        return {
            "llama_cpp": {key: manifest.get(key) for key in LLAMA_CPP_FACTS},
            "server_binary": {
                "path": str(setup.server_binary),
                "sha256": manifest["binaries"]["llama-server"]["sha256"],
            },
        }
