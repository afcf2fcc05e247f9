"""How a cell meets its server, per engine: a fresh llama-server or vLLM server started for it (and stopped after), or
an endpoint found as it is; what its record says about that server; the request it is sent; why a request failed."""

from __future__ import annotations

import contextlib
import datetime as dt
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx

from specbench.core.config.builds import LLAMA_CPP
from specbench.core.plan.cells import Cell
from specbench.measure.chat_client import run_chat_exchange
from specbench.measure.client import Exchange, Generation, run_exchange
from specbench.measure.condition_setup import Setup
from specbench.measure.endpoint import Endpoint, open_endpoint, reported_identity, served_model
from specbench.measure.metrics_scrape import METRICS_FLAG
from specbench.measure.server_process import RunningServer, descendants, exit_description, start_server


@contextlib.contextmanager
def serving(setup: Setup, header: str) -> Iterator[RunningServer | Endpoint]:
    """The cell's server for the ``with`` block: a fresh llama-server or vLLM server (stopped after), or the endpoint
    as it is."""
    if setup.endpoint is not None:
        yield open_endpoint(setup.endpoint, setup.server_log, setup.startup_timeout_s, header)
        return
    assert setup.server_binary is not None
    llama = setup.engine == LLAMA_CPP
    with start_server(
        setup.server_binary,
        [*setup.server_args, METRICS_FLAG] if llama else list(setup.server_args),  # vLLM serves /metrics always
        setup.server_log,
        setup.startup_timeout_s,
        log_header=header,
        name="llama-server" if llama else "vLLM server",
    ) as server:
        yield server


def server_record(server: RunningServer | Endpoint, engine: str) -> dict[str, Any]:
    """What the record says about the server: the process started (pid, port, argv, start; for vLLM also its
    processes and what it reported about itself), or the endpoint (its URL, its processes on this machine, what it
    reported; no argv: it was not started here)."""
    if isinstance(server, Endpoint):
        return {
            "pid": server.pid,
            "port": server.port,
            "argv": None,
            "started_at": None,
            "endpoint": {
                "url": server.url,
                "model": server.model,
                "reported": server.reported,
            },
            "local_pids": server.pids,
        }
    started = {
        "pid": server.pid,
        "port": server.port,
        "argv": server.argv,
        "started_at": dt.datetime.fromtimestamp(server.started_at, dt.UTC).isoformat(),
    }
    if engine == LLAMA_CPP:
        return started
    with httpx.Client(timeout=30.0) as client:
        reported = reported_identity(client, server.url)
    # vLLM's engine core and workers are its children: on a GPU they, not the API server, hold the device
    return {
        **started,
        "local_pids": [server.pid, *descendants(server.pid)],
        "reported": reported,
        "model": served_model(reported),
    }


def ask(setup: Setup, server: RunningServer | Endpoint, cell: Cell, served: str | None) -> Exchange:
    """The cell's one request: llama-server's own ``/completion``, or ``/v1/chat/completions`` of a vLLM server or an
    endpoint, asking for the model it lists (``served``)."""
    generation = Generation(setup.reasoning, setup.max_tokens[cell.key], cell.temperature, cell.seed(setup.base_seed))
    messages = setup.prompt_manifests[cell.key]["messages"]
    timeout_s = setup.request_timeout_s
    if setup.engine != LLAMA_CPP:
        return run_chat_exchange(server.url, served, messages, generation, timeout_s=timeout_s)
    return run_exchange(server.url, messages, generation, timeout_s=timeout_s, chat_template=setup.chat_template)


def request_failure(error: Exception, server: RunningServer | Endpoint) -> str:
    """Why a request failed: the server died (and how), or the error itself."""
    if isinstance(server, Endpoint):
        return f"the request to endpoint {server.url} failed: {type(error).__name__}: {error}"
    code = server.process.poll()
    if code is None:  # it may be dying right now: give it a moment to say so
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = server.process.wait(timeout=1.0)
    if code is not None:
        return f"{server.name} (pid {server.pid}) {exit_description(code)} during the request"
    return f"the request to {server.name} (pid {server.pid}) failed: {type(error).__name__}: {error}"
