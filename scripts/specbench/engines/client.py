"""The one request a cell sends: render the chat template (unless the config says none), then a streamed
``/completion`` with token ids."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from specbench.core.config.chat_template import EMPTY_THINK, GGUF, raw_prompt, reasoning_off_problem, renders_on_server


@dataclass(frozen=True)
class Exchange:
    """What went to the server and what came back, with client-side timing of the streamed tokens."""

    template_request: dict[str, Any] | None  # None: no template (the prompt's text as it is)
    prompt: str
    request: dict[str, Any]
    response: dict[str, Any]
    client_timing: dict[str, Any]
    reasoning_check: dict[str, Any] | None = None  # how reasoning off was verified (None: nothing rendered it off)


@dataclass(frozen=True)
class Generation:
    """How a cell's one request generates: thinking switched on or off, at most ``max_tokens`` tokens, at this
    temperature and seed, with this sampling (core.config.sampling: top_k, top_p, min_p, repeat_penalty)."""

    reasoning: bool
    max_tokens: int
    temperature: float
    seed: int
    sampling: Mapping[str, float] = field(default_factory=dict)


class ReasoningNotOff(RuntimeError):
    """The chat template did not render reasoning off (the message says how the prompt ends)."""


def completion_request(prompt: str, generation: Generation) -> dict[str, Any]:
    """The ``/completion`` body (the prompt is rendered already, thinking switched in it): streamed, no prompt cache
    (cells must be independent), token ids returned, the sampling stated (llama-server's names)."""
    return {
        "prompt": prompt,
        "n_predict": generation.max_tokens,
        "temperature": generation.temperature,
        "seed": generation.seed,
        **generation.sampling,
        "cache_prompt": False,
        "return_tokens": True,
        "stream": True,
    }


def template_request(messages: list[dict[str, str]], *, reasoning: bool) -> dict[str, Any]:
    """The ``/apply-template`` body: the chat messages with thinking switched on or off."""
    return {"messages": messages, "chat_template_kwargs": {"enable_thinking": reasoning}}


class RequestRefused(RuntimeError):
    """The server answered 4xx: it refuses this request (e.g. the prompt exceeds the context); another try or
    another server would refuse it too."""


def check_response(response: httpx.Response, url: str) -> None:
    """Raise RequestRefused for a 4xx answer from ``url``, HTTPStatusError for any other that is not 200."""
    if response.status_code != 200:
        response.read()
        message = f"{url} answered {response.status_code}: {response.text[:500]}"
        if 400 <= response.status_code < 500:
            raise RequestRefused(f"the server refused the request: {message}")
        raise httpx.HTTPStatusError(message, request=response.request, response=response)


def _post(client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(url, json=body)
    check_response(response, url)
    return response.json()


def sse_events(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON payloads of server-sent ``data:`` lines."""
    for line in lines:
        if line.startswith("data: "):
            payload = line[len("data: ") :].strip()
            if payload and payload != "[DONE]":
                yield json.loads(payload)


def run_lengths(values: Iterable[int]) -> list[list[int]]:
    """``values`` as [value, how many in a row] pairs: [1, 1, 1, 0] -> [[1, 3], [0, 1]]."""
    runs: list[list[int]] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return runs


@dataclass
class Chunks:
    """The client's timing of every streamed chunk, kept as ``chunk_ms`` (its arrival, ms after the request was sent,
    to 0.01 ms) and ``chunk_tokens`` (its token count, as run-length pairs [tokens, chunks])."""

    ms: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def add(self, arrived: float, tokens: int) -> None:
        """A chunk that arrived ``arrived`` s after the request was sent, carrying ``tokens`` tokens."""
        self.ms.append(round(arrived * 1000.0, 2))
        self.tokens.append(tokens)

    def timing(self) -> dict[str, Any]:
        return {"chunk_ms": self.ms, "chunk_tokens": run_lengths(self.tokens)}


def assemble_stream(events: Iterable[tuple[float, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Join streamed chunks (arrival time in s after the request was sent, payload) into one response, plus
    client-side timing: every chunk's arrival and token count (``Chunks``), the final chunk included."""
    content: list[str] = []
    tokens: list[int] = []
    arrivals: list[float] = []
    chunks = Chunks()
    final: dict[str, Any] = {}
    for arrived, event in events:
        chunks.add(arrived, len(event.get("tokens") or []))
        if event.get("stop"):
            final = event
            continue
        own = event.get("tokens") or []
        arrivals.extend([arrived] * len(own))
        content.append(event.get("content", ""))
        tokens.extend(own)
    if not final:
        raise ValueError("the stream ended without a final chunk (no timings)")
    response = {
        **final,
        "content": "".join(content) + final.get("content", ""),
        "tokens": tokens + list(final.get("tokens") or []),
    }
    span = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else 0.0
    timing = {
        "tokens_received": len(tokens),
        "first_token_s": arrivals[0] if arrivals else None,
        "last_token_s": arrivals[-1] if arrivals else None,
        "decode_tokens_per_s": (len(arrivals) - 1) / span if span > 0 else None,
        **chunks.timing(),
    }
    return response, timing


def run_exchange(
    base_url: str,
    messages: list[dict[str, str]],
    generation: Generation,
    *,
    timeout_s: float,
    chat_template: str = GGUF,
) -> Exchange:
    """Render the prompt with the server's chat template (``chat_template`` 'none': take the messages' text as it
    is), then generate once, streaming. With reasoning off, the template's rendering is checked before generating:
    it is rendered with thinking on too, and the prompt must end as reasoning off (``reasoning_off_problem``);
    ReasoningNotOff when it does not."""
    with httpx.Client(timeout=timeout_s) as client:
        template = renders_on_server(chat_template)
        template_body = template_request(messages, reasoning=generation.reasoning) if template else None
        prompt = (
            _post(client, f"{base_url}/apply-template", template_body)["prompt"]
            if template_body is not None
            else raw_prompt(messages)
        )
        check = None
        if template_body is not None and not generation.reasoning:
            on = _post(client, f"{base_url}/apply-template", template_request(messages, reasoning=True))["prompt"]
            check = checked_reasoning_off(prompt, on)
        body = completion_request(prompt, generation)
        response, timing = stream_completion(client, base_url, body)
    return Exchange(template_body, prompt, body, response, timing, check)


def checked_reasoning_off(off: str, on: str) -> dict[str, bool]:
    """How reasoning off was verified, from the prompt rendered with thinking off and on: whether the template has a
    thinking switch and whether the prompt ends with the empty think block; ReasoningNotOff when it does not end as
    reasoning off (``reasoning_off_problem``)."""
    problem = reasoning_off_problem(off, on)
    if problem:
        raise ReasoningNotOff(problem)
    return {"thinking_switch": on != off, "empty_think_block": bool(EMPTY_THINK.search(off))}


Assemble = Callable[[Iterable[tuple[float, dict[str, Any]]]], tuple[dict[str, Any], dict[str, Any]]]


def timed_stream(
    client: httpx.Client, url: str, body: dict[str, Any], assemble: Assemble
) -> tuple[dict[str, Any], dict[str, Any]]:
    """POST a streamed body to ``url``; the response ``assemble`` joins from its events (each with its arrival, in s
    after the request was sent) and the client's timing of it, with the request's wall time and when it was sent."""
    sent_at, start = time.time(), time.perf_counter()
    with client.stream("POST", url, json=body) as stream:
        check_response(stream, url)
        timed = ((time.perf_counter() - start, event) for event in sse_events(stream.iter_lines()))
        response, timing = assemble(timed)
    timing["request_wall_s"] = time.perf_counter() - start
    timing["sent_at_unix_s"] = sent_at  # when it was sent (clients of one load point are placed side by side by it)
    return response, timing


def stream_completion(
    client: httpx.Client, base_url: str, body: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """POST a streamed ``/completion`` body; the joined response and the client's timing of it."""
    return timed_stream(client, f"{base_url}/completion", body, assemble_stream)
