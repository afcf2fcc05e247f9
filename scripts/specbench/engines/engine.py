"""One interface for what serves a run's cells (``Engine``): the server's argv per condition and per load, the files a
condition's setup needs from its build, the executable its cells start and the manifest of what it is, the server
started and ready (an endpoint: found as it is), what the record says of that server, the request and what its
response reports, and the engine's part of a cell's provenance. Each engine is one module (llama_server,
vllm_server, endpoint); ``registry.engine`` finds it by the config's name."""

from __future__ import annotations

import contextlib
import datetime as dt
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from specbench.engines.server_process import RunningServer, exit_description, server_environment

if TYPE_CHECKING:
    from specbench.core.config.builds import Build
    from specbench.core.records.counters import Counts
    from specbench.engines.client import Exchange, Generation


class Server(Protocol):
    """A server a cell talks to: one started for it (server_process.RunningServer) or an endpoint found as it is
    (endpoint.Endpoint)."""

    @property
    def url(self) -> str: ...

    @property
    def pid(self) -> int | None: ...

    @property
    def port(self) -> int | None: ...


class Served(Protocol):
    """What an engine reads of a condition's setup (measure.condition_setup.Setup has these)."""

    server_binary: Path | None
    server_args: list[str]
    server_log: Path
    startup_timeout_s: float
    request_timeout_s: float
    endpoint: str | None
    build_manifest: dict[str, Any]
    chat_template: str
    server_env: dict[str, str]


class Engine(ABC):
    """What serves cells; one subclass per engine. ``serves_gguf``: a llama.cpp build of this run serving its GGUFs,
    so the cell checks the GGUF's requirements, lists the build's devices, and an explanation can ask its server for
    log-probabilities (the others load their own weights)."""

    name: ClassVar[str]
    serves_gguf: ClassVar[bool] = False

    # --- when the run is planned

    @abstractmethod
    def server_args(self, config: Mapping[str, Any], build: Build, condition: str, base: Path) -> list[str]:
        """The argv after the executable for one condition (models and flags; the cell adds host and port)."""

    def endpoint(self, build: Build, condition: str) -> str | None:
        """The URL of a server the user runs for this condition (None: the cell starts its own)."""
        return None

    @abstractmethod
    def load_args(self, args: list[str], clients: int) -> list[str]:
        """A condition's argv for ``clients`` requests at once; ValueError where it cannot serve them."""

    @abstractmethod
    def setup_inputs(self, config: Mapping[str, Any], build: Build, base: Path, draft: bool) -> dict[str, str]:
        """The files a condition's setup reads from the build (``build``) and the models it serves beside the
        verified GGUFs (``draft``: the condition loads a draft)."""

    @abstractmethod
    def describe(self, build: Build) -> str:
        """The build as the report describes it (e.g. 'b11223', 'vLLM from a venv of ...')."""

    # --- when a condition's setup is resolved

    @abstractmethod
    def executable(self, build: Path | None, endpoint: str | None) -> dict[str, Any]:
        """``server_binary`` (what a cell starts; None for an endpoint) and ``build_manifest`` (what it is), from
        the setup's ``build`` input."""

    # --- when a cell runs

    @abstractmethod
    def serve(self, setup: Served, header: str) -> contextlib.AbstractContextManager[Server]:
        """The condition's server for a ``with`` block, ready to answer (``header`` opens its log section)."""

    @abstractmethod
    def server_record(self, server: Server) -> dict[str, Any]:
        """What the cell record says about the server (``pid``, ``port``, ``argv``, ``started_at``, and the
        engine's own: the processes the contention watch counts as the server's, what it reported, its model)."""

    @abstractmethod
    def ask(
        self, setup: Served, server: Server, messages: list[dict[str, str]], generation: Generation, model: str | None
    ) -> Exchange:
        """One request and its streamed response, with what the response reports (tokens, timings, acceptance)."""

    def environment(self, setup: Served) -> dict[str, Any] | None:
        """The environment of a server started here as its record keeps it: what the build set (its ``env``) and
        the variables that change a server's work it inherited; None where the server is not started here."""
        return server_environment(setup.server_env)

    def acceptance_missing(self, setup: Served, response: Mapping[str, Any], counted: Counts | None) -> str | None:
        """Why a speculative request's acceptance cannot be read, where the engine must say it (None: its response
        said it, its ``/metrics`` counters around the request did (``counted``: their difference), or the engine's
        silence means nothing was drafted): the cell fails on it rather than record 0."""
        return None

    @abstractmethod
    def provenance(self, setup: Served) -> dict[str, Any]:
        """The engine's part of a cell's provenance: the llama.cpp build and binary, or the vLLM environment
        (None where the engine has no such thing, so every record has the same keys)."""

    def request_failure(self, error: Exception, server: Server) -> str:
        """Why a request failed: the server started for it (a RunningServer) died (and how), or the error itself."""
        assert isinstance(server, RunningServer)
        code = server.process.poll()
        if code is None:  # it may be dying right now: give it a moment to say so
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = server.process.wait(timeout=1.0)
        if code is not None:
            return f"{server.name} (pid {server.pid}) {exit_description(code)} during the request"
        return f"the request to {server.name} (pid {server.pid}) failed: {type(error).__name__}: {error}"


def started(server: Any) -> dict[str, Any]:
    """A started server as every record gives it: pid, port, argv, when it started."""
    return {
        "pid": server.pid,
        "port": server.port,
        "argv": server.argv,
        "started_at": dt.datetime.fromtimestamp(server.started_at, dt.UTC).isoformat(),
    }


# The llama.cpp build's facts a record keeps (None for an engine without one)
LLAMA_CPP_FACTS = ("source", "cmake_args", "backend", "compiler", "server_version")


def no_llama_cpp() -> dict[str, Any]:
    """Provenance of a cell no llama.cpp build served."""
    return {"llama_cpp": dict.fromkeys(LLAMA_CPP_FACTS), "server_binary": None}
