"""The server's own counters, read from ``/metrics`` (a llama-server started here runs with ``--metrics``) before and
after each request, outside the request's timed window: the lines of the scrape that count speculation, as served."""

from __future__ import annotations

from typing import Any

import httpx

METRICS_FLAG = "--metrics"
# The counter lines a cell keeps: every speculative counter (drafted, accepted, verification steps, accepted per
# draft position) and the predicted tokens, which show that a pair of scrapes brackets exactly one request; an
# endpoint's vLLM counts the same under its own names.
KEPT_PREFIXES = (
    "llamacpp:spec_decode_",
    "llamacpp:tokens_predicted_total",
    "vllm:spec_decode_",
    "vllm:generation_tokens_total",
)


def kept_lines(text: str) -> list[str]:
    """The counter lines of a ``/metrics`` text that a cell keeps (comments and other metrics left out)."""
    return [line.strip() for line in text.splitlines() if line.strip().startswith(KEPT_PREFIXES)]


def scrape(base_url: str, timeout_s: float = 10.0) -> dict[str, Any]:
    """The server's kept counter lines now (``lines``), or why they could not be read (``error``): a server that
    cannot say does not fail the cell, whose request is measured either way."""
    try:
        response = httpx.get(f"{base_url}/metrics", timeout=timeout_s)
    except httpx.HTTPError as error:
        return {"lines": None, "error": f"{type(error).__name__}: {error}"}
    if response.status_code != 200:
        return {"lines": None, "error": f"/metrics answered {response.status_code}: {response.text[:200]}"}
    return {"lines": kept_lines(response.text), "error": None}
