"""Every engine by the name a build's config gives it (core.config.builds: llama.cpp, vllm, endpoint, sglang)."""

from __future__ import annotations

from specbench.engines.endpoint import EndpointServer
from specbench.engines.engine import Engine
from specbench.engines.llama_server import LlamaServer
from specbench.engines.sglang_server import SglangServer
from specbench.engines.vllm_server import VllmServer

ENGINES: dict[str, Engine] = {e.name: e for e in (LlamaServer(), VllmServer(), EndpointServer(), SglangServer())}


def engine(name: str) -> Engine:
    """The engine a build names (its config was validated: an unknown name is a bug, a KeyError here)."""
    return ENGINES[name]
