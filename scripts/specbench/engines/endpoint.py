"""An endpoint as an engine: a server the user already runs (an endpoint build), never started or stopped here; what
it says about itself (llama-server's ``/props``, vLLM's ``/version``, ``/v1/models``) and, when it listens on this
machine, its processes (so the contention watch counts them as the server, not as other work); asked through
``/v1/chat/completions`` for the model it lists. Its argv is none and its limits under load are the user's."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from specbench.core.config.builds import ENDPOINT, Build
from specbench.engines.chat_client import run_chat_exchange
from specbench.engines.client import Exchange, Generation
from specbench.engines.engine import Engine, no_llama_cpp
from specbench.engines.server_process import ServerError, descendants, listener_pids

if TYPE_CHECKING:
    from specbench.engines.engine import Served, Server

# The routes an endpoint may answer about itself: llama-server's, vLLM's, and any OpenAI-compatible server's
IDENTITY_ROUTES = ("/props", "/version", "/v1/models")
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# /props fields too long or too changeable to keep in every record
_PROPS_LEFT_OUT = ("chat_template", "chat_template_tool_use")


@dataclass
class Endpoint:
    """An endpoint as a cell meets it: its URL, what it reported, the served model's name and its local processes."""

    url: str
    reported: dict[str, Any]
    model: str | None
    pids: list[int] = field(default_factory=list)

    @property
    def pid(self) -> int | None:
        return self.pids[0] if self.pids else None

    @property
    def port(self) -> int | None:
        return urlsplit(self.url).port


def reported_identity(client: httpx.Client, url: str) -> dict[str, Any]:
    """Each identity route's answer as JSON (``/props`` without its chat templates), or why there is none."""
    found: dict[str, Any] = {}
    for route in IDENTITY_ROUTES:
        try:
            answer = client.get(f"{url}{route}")
        except httpx.HTTPError as error:
            found[route] = {"error": f"{type(error).__name__}: {error}"}
            continue
        if answer.status_code != 200:
            found[route] = {"error": f"answered {answer.status_code}"}
            continue
        try:
            body = answer.json()
        except ValueError:
            found[route] = {"error": "not JSON"}
            continue
        found[route] = {k: v for k, v in body.items() if k not in _PROPS_LEFT_OUT} if isinstance(body, dict) else body
    return found


def served_model(reported: dict[str, Any]) -> str | None:
    """The first model ``/v1/models`` lists (the name an OpenAI-compatible request asks for), None if none."""
    data = (reported.get("/v1/models") or {}).get("data") if isinstance(reported.get("/v1/models"), dict) else None
    return str(data[0]["id"]) if data and isinstance(data[0], dict) and "id" in data[0] else None


def local_pids(url: str) -> list[int]:
    """The processes listening on the URL's port when its host is this machine's loopback, then their descendants
    (vLLM's engine and workers); empty otherwise, or when the socket table cannot be read."""
    parts = urlsplit(url)
    if parts.hostname not in _LOCAL_HOSTS:
        return []
    listeners = sorted({pid for pid in listener_pids(parts.port or 80) or [] if pid is not None})
    children = {child for pid in listeners for child in descendants(pid)}
    return [*listeners, *sorted(children - set(listeners))]


def open_endpoint(url: str, log_path: Path, timeout_s: float, header: str) -> Endpoint:
    """The endpoint at ``url`` as it is now, noted in the cell's server log (which says it was not started here);
    ServerError when it does not answer ``/v1/models``."""
    with httpx.Client(timeout=timeout_s) as client:
        reported = reported_identity(client, url)
    endpoint = Endpoint(url, reported, served_model(reported), local_pids(url))
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"{header}\n")
        log.write(
            f"endpoint {url}: not started by this run; local pids {endpoint.pids or 'none (not on this machine)'}; "
            f"model {endpoint.model}\n"
        )
        for route, answer in reported.items():
            log.write(f"{route}: {answer}\n")
    if "error" in (reported.get("/v1/models") or {}) or endpoint.model is None:
        raise ServerError(
            f"endpoint {url} did not list its model on /v1/models ({reported.get('/v1/models')})", log_path
        )
    return endpoint


def endpoint_manifest(url: str) -> dict[str, Any]:
    """What stands for a build manifest when an endpoint serves the condition: its URL, nothing built here."""
    return {"engine": ENDPOINT, "url": url, "backend": ENDPOINT}


class EndpointServer(Engine):
    """A server the user runs, measured as it is."""

    name = ENDPOINT

    def server_args(self, config: Mapping[str, Any], build: Build, condition: str, base: Path) -> list[str]:
        return []

    def endpoint(self, build: Build, condition: str) -> str | None:
        return build.urls[condition]

    def load_args(self, args: list[str], clients: int) -> list[str]:
        return list(args)  # its limits are the user's

    def setup_inputs(self, config: Mapping[str, Any], build: Build, base: Path, draft: bool) -> dict[str, str]:
        return {}

    def describe(self, build: Build) -> str:
        return "endpoint, not started by this run: " + ", ".join(f"{c} at {u}" for c, u in build.urls.items())

    def executable(self, build: Path | None, endpoint: str | None) -> dict[str, Any]:
        assert endpoint is not None
        return {"server_binary": None, "build_manifest": endpoint_manifest(endpoint)}

    @contextlib.contextmanager
    def serve(self, setup: Served, header: str) -> Iterator[Server]:
        assert setup.endpoint is not None
        yield open_endpoint(setup.endpoint, setup.server_log, setup.startup_timeout_s, header)

    def server_record(self, server: Server) -> dict[str, Any]:
        """The endpoint: its URL, its processes on this machine, what it reported; no argv (not started here)."""
        assert isinstance(server, Endpoint)
        return {
            "pid": server.pid,
            "port": server.port,
            "argv": None,
            "started_at": None,
            "endpoint": {"url": server.url, "model": server.model, "reported": server.reported},
            "local_pids": server.pids,
        }

    def ask(
        self, setup: Served, server: Server, messages: list[dict[str, str]], generation: Generation, model: str | None
    ) -> Exchange:
        return run_chat_exchange(server.url, model, messages, generation, timeout_s=setup.request_timeout_s)

    def environment(self, setup: Served) -> dict[str, Any] | None:
        return None  # the user's server: its environment is not ours to know

    def provenance(self, setup: Served) -> dict[str, Any]:
        return no_llama_cpp()

    def request_failure(self, error: Exception, server: Server) -> str:
        return f"the request to endpoint {server.url} failed: {type(error).__name__}: {error}"
