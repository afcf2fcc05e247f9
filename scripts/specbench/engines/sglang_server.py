"""SGLang as an engine: an SGLang server the user runs (an sglang build, one URL per condition), measured as an
endpoint is (engines.endpoint: never started or stopped here), but asked as SGLang is asked: each streamed
``/v1/chat/completions`` request asks for the request's speculative details (``return_spec_tokens_details``, which
the answer's last chunk carries under ``sglext``; core.records.sglang_reply reads them), and leaves out what SGLang
refuses in a stream (``return_token_ids``). What the server says of itself is recorded beside the endpoint's routes:
``/server_info`` (its settings: ``speculative_algorithm``, ``speculative_num_steps``, ``speculative_eagle_topk``,
``speculative_num_draft_tokens``, ``speculative_draft_model_path``, ..., and its ``version``) and ``/model_info``,
or their older names ``/get_server_info`` and ``/get_model_info`` (SGLang 0.5.23: python/sglang/srt/entrypoints/
http_server.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from specbench.core.config.builds import SGLANG, Build
from specbench.core.records.sglang_reply import REQUEST_FIELD, STATS, spec_details
from specbench.engines.chat_client import PENALTY_NAMES, run_chat_exchange
from specbench.engines.client import Exchange, Generation
from specbench.engines.endpoint import Endpoint, EndpointServer, endpoint_manifest

if TYPE_CHECKING:
    from specbench.core.records.counters import Counts
    from specbench.engines.engine import Served, Server

# What an SGLang server answers about itself, each under its current route, else its older one (deprecated in 0.5.23)
INFO_ROUTES = (("/server_info", "/get_server_info"), ("/model_info", "/get_model_info"))
# The settings of /server_info that say how the server speculates (its log names them)
SPECULATIVE_FACTS = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
)
# Request fields of the generic chat request that SGLang refuses in a stream or does not know
_NOT_SENT = ("return_token_ids", "cache_prompt")
# /server_info settings no record keeps (secrets)
_INFO_LEFT_OUT = ("api_key", "admin_api_key")


def sglang_body(body: dict[str, Any]) -> dict[str, Any]:
    """The chat body as SGLang is asked (from engines.chat_client.chat_request's, the penalty under SGLang's name,
    repetition_penalty): without ``return_token_ids`` (SGLang 0.5.23 refuses it in a stream) and llama-server's
    ``cache_prompt``, asking for the speculative details (``return_spec_tokens_details``)."""
    return {**{k: v for k, v in body.items() if k not in _NOT_SENT}, REQUEST_FIELD: True}


def _answer(client: httpx.Client, url: str, route: str) -> Any:
    """A route's JSON answer, or {'error': why there is none}."""
    try:
        answer = client.get(f"{url}{route}")
    except httpx.HTTPError as error:
        return {"error": f"{type(error).__name__}: {error}"}
    if answer.status_code != 200:
        return {"error": f"answered {answer.status_code}"}
    try:
        return answer.json()
    except ValueError:
        return {"error": "not JSON"}


def sglang_reported(client: httpx.Client, url: str) -> dict[str, Any]:
    """What the server says about itself, by route: of each pair of INFO_ROUTES the first that answers (both, with
    why not, where neither does); ``/server_info`` without its API keys."""
    found: dict[str, Any] = {}
    for routes in INFO_ROUTES:
        for route in routes:
            body = _answer(client, url, route)
            found[route] = body
            if not (isinstance(body, dict) and "error" in body):
                if isinstance(body, dict):
                    found[route] = {k: v for k, v in body.items() if k not in _INFO_LEFT_OUT}
                break
    return found


def server_info(reported: Mapping[str, Any]) -> dict[str, Any] | None:
    """The server's ``/server_info`` (or ``/get_server_info``) answer among what it reported, None where neither
    answered."""
    for route in INFO_ROUTES[0]:
        body = reported.get(route)
        if isinstance(body, dict) and "error" not in body:
            return body
    return None


def speculates(info: Mapping[str, Any]) -> bool:
    """Whether a server's settings (its /server_info) say it speculates (a speculative_algorithm, not None)."""
    algorithm = info.get("speculative_algorithm")
    return algorithm is not None and str(algorithm).upper() != "NONE"


class SglangServer(EndpointServer):
    """An SGLang server the user runs, measured as it is and asked for its speculative details."""

    name = SGLANG

    def __init__(self) -> None:
        # base URL -> its /server_info, as read when a cell's attempt opened it (None: it did not answer)
        self._info: dict[str, dict[str, Any] | None] = {}

    def describe(self, build: Build) -> str:
        return "SGLang, not started by this run: " + ", ".join(f"{c} at {u}" for c, u in build.urls.items())

    def executable(self, build: Path | None, endpoint: str | None) -> dict[str, Any]:
        assert endpoint is not None
        return {"server_binary": None, "build_manifest": {**endpoint_manifest(endpoint), "engine": SGLANG}}

    @contextlib.contextmanager
    def serve(self, setup: Served, header: str) -> Iterator[Server]:
        """The endpoint (engines.endpoint.open_endpoint), with SGLang's own routes among what it reported (so the
        record keeps them) and its speculative settings noted in the cell's server log."""
        with super().serve(setup, header) as endpoint:
            assert isinstance(endpoint, Endpoint)
            with httpx.Client(timeout=setup.startup_timeout_s) as client:
                own = sglang_reported(client, endpoint.url)
            endpoint.reported.update(own)
            info = server_info(own)
            self._info[endpoint.url] = info
            with open(setup.server_log, "a", encoding="utf-8") as log:
                if info is None:
                    log.write(f"SGLang {' nor '.join(INFO_ROUTES[0])}: {own[INFO_ROUTES[0][-1]]}\n")
                else:
                    facts = ", ".join(f"{k} {info.get(k)}" for k in SPECULATIVE_FACTS)
                    log.write(f"SGLang {info.get('version')}: {facts}\n")
            yield endpoint

    def ask(
        self, setup: Served, server: Server, messages: list[dict[str, str]], generation: Generation, model: str | None
    ) -> Exchange:
        return run_chat_exchange(
            server.url,
            model,
            messages,
            generation,
            timeout_s=setup.request_timeout_s,
            penalty_names=PENALTY_NAMES[:1],
            shaped=sglang_body,
        )

    def acceptance_missing(self, setup: Served, response: Mapping[str, Any], counted: Counts | None) -> str | None:
        """A server whose /server_info names a speculative_algorithm (or that did not say) answers a request it
        verified drafts for with ``sglext.spec_tokens_details``; without them (an SGLang that does not know
        ``return_spec_tokens_details``) its acceptance would read as 0. None where they came, where ``/metrics``
        counted the request, where it made at most one token (the prefill's: nothing verified) or where the server
        says it does not speculate."""
        if spec_details(response) is not None or counted is not None:
            return None
        if int((response.get("usage") or {}).get("completion_tokens") or 0) <= 1:
            return None
        info = self._info.get(setup.endpoint or "")
        if info is not None and not speculates(info):
            return None
        said = (
            f"{info.get('version') or 'of unknown version'} ({info.get('speculative_algorithm')})"
            if info is not None
            else "of unknown version (its /server_info did not answer)"
        )
        return (
            f"SGLang {said} answered without {STATS} though asked for it ({REQUEST_FIELD}): its "
            "acceptance would read as 0; run an SGLang whose chat requests take it (0.5.23 does)"
        )
