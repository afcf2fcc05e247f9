"""The one request a cell sends: render the chat template, then ``/completion`` with token ids returned."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Exchange:
    """What went to the server and what came back, with client-side wall times."""

    template_request: dict[str, Any]
    prompt: str
    request: dict[str, Any]
    response: dict[str, Any]
    request_wall_s: float


def completion_request(prompt: str, *, max_tokens: int, temperature: float, seed: int) -> dict[str, Any]:
    """The ``/completion`` body: no prompt cache (cells must be independent), token ids returned."""
    return {
        "prompt": prompt,
        "n_predict": max_tokens,
        "temperature": temperature,
        "seed": seed,
        "cache_prompt": False,
        "return_tokens": True,
        "stream": False,
    }


def template_request(messages: list[dict[str, str]], *, reasoning: bool) -> dict[str, Any]:
    """The ``/apply-template`` body: the chat messages with thinking switched on or off."""
    return {"messages": messages, "chat_template_kwargs": {"enable_thinking": reasoning}}


def _post(client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(url, json=body)
    if response.status_code != 200:
        raise httpx.HTTPStatusError(
            f"{url} answered {response.status_code}: {response.text[:500]}", request=response.request, response=response
        )
    return response.json()


def run_exchange(
    base_url: str,
    messages: list[dict[str, str]],
    *,
    reasoning: bool,
    max_tokens: int,
    temperature: float,
    seed: int,
    timeout_s: float,
) -> Exchange:
    """Render the prompt with the server's own chat template, then generate once."""
    with httpx.Client(timeout=timeout_s) as client:
        template_body = template_request(messages, reasoning=reasoning)
        prompt = _post(client, f"{base_url}/apply-template", template_body)["prompt"]
        body = completion_request(prompt, max_tokens=max_tokens, temperature=temperature, seed=seed)
        start = time.perf_counter()
        response = _post(client, f"{base_url}/completion", body)
        wall = time.perf_counter() - start
    return Exchange(template_body, prompt, body, response, wall)
