"""The one request a cell sends to an OpenAI-compatible server (an endpoint build): the prompt as the server's own
chat template renders it (where the server can say), then a streamed ``/v1/chat/completions``; every chunk's arrival
is kept, and whatever the server adds about the request (llama-server's ``timings``, vLLM's per-request
``metrics``, token ids) is kept as sent."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx

from specbench.engines.client import Chunks, Exchange, Generation, checked_reasoning_off, timed_stream

CHAT_PATH = "/v1/chat/completions"
# The repetition penalty's names: vLLM's (and SGLang's), and llama-server's for one behind an endpoint
PENALTY_NAMES = ("repetition_penalty", "repeat_penalty")


def sampling_fields(sampling: Mapping[str, float], penalty_names: tuple[str, ...]) -> dict[str, float]:
    """The sampling as chat fields: top_k, top_p and min_p as they are, the penalty under each of its names."""
    out = {name: value for name, value in sampling.items() if name != "repeat_penalty"}
    if "repeat_penalty" in sampling:
        out |= dict.fromkeys(penalty_names, sampling["repeat_penalty"])
    return out


def chat_request(
    model: str | None,
    messages: list[dict[str, str]],
    generation: Generation,
    penalty_names: tuple[str, ...] = PENALTY_NAMES,
) -> dict[str, Any]:
    """The ``/v1/chat/completions`` body: streamed with its usage, thinking switched as configured, the sampling
    stated (its penalty under ``penalty_names``), token ids asked for (vLLM's ``return_token_ids``), no prompt cache
    (llama-server's ``cache_prompt``; others ignore it)."""
    body: dict[str, Any] = {
        "messages": messages,
        "max_tokens": generation.max_tokens,
        "temperature": generation.temperature,
        "seed": generation.seed,
        **sampling_fields(generation.sampling, penalty_names),
        "stream": True,
        "stream_options": {"include_usage": True},
        "chat_template_kwargs": {"enable_thinking": generation.reasoning},
        "return_token_ids": True,
        "cache_prompt": False,
    }
    return {"model": model, **body} if model else body


def _chunk_tokens(choice: dict[str, Any]) -> list[int]:
    """The token ids a chunk's choice carries (vLLM's ``token_ids``), or none."""
    ids = choice.get("token_ids")
    return [int(t) for t in ids] if isinstance(ids, list) else []


def assemble_chat_stream(events: Iterable[tuple[float, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Join streamed chat chunks (arrival in s after the request was sent, payload) into one response: the text,
    the token ids where sent, the finish reason, the usage and every field the server added beside them (``timings``,
    ``metrics``, ``prompt_token_ids``: the last one sent of each); plus the client's timing of the chunks that carried
    text (``chunk_ms`` for every chunk, ``chunk_tokens`` counting token ids where sent, else one per text chunk)."""
    content: list[str] = []
    tokens: list[int] = []
    chunks = Chunks()
    text_at: list[float] = []
    extra: dict[str, Any] = {}
    finish_reason = None
    ids_sent = False
    for arrived, event in events:
        choices = event.get("choices") or []
        choice = choices[0] if choices else {}
        text = (choice.get("delta") or {}).get("content") or ""
        own = _chunk_tokens(choice)
        ids_sent = ids_sent or "token_ids" in choice
        chunks.add(arrived, len(own) if ids_sent else int(bool(text)))
        if text or own:
            text_at.append(arrived)
        content.append(text)
        tokens.extend(own)
        finish_reason = choice.get("finish_reason") or finish_reason
        for key in ("usage", "timings", "metrics", "sglext", "prompt_token_ids", "system_fingerprint", "model"):
            if event.get(key) is not None:
                extra[key] = event[key]
        if choice.get("prompt_token_ids") is not None:
            extra["prompt_token_ids"] = choice["prompt_token_ids"]
    if finish_reason is None:
        raise ValueError("the stream ended without a finish reason")
    response = {
        "content": "".join(content),
        "tokens": tokens,
        "token_ids_sent": ids_sent,
        "finish_reason": finish_reason,
    }
    response.update(extra)
    timing = {
        "text_chunks": len(text_at),
        "first_token_s": text_at[0] if text_at else None,
        "last_token_s": text_at[-1] if text_at else None,
        **chunks.timing(),
    }
    return response, timing


def rendered_prompt(client: httpx.Client, base_url: str, messages: list[dict[str, str]], reasoning: bool) -> dict:
    """The prompt as the server's own template renders it, and how it was asked: llama-server's ``/apply-template``,
    else vLLM's ``/tokenize`` (the messages) and ``/detokenize`` (its ids); ``prompt`` None where neither answers."""
    kwargs = {"chat_template_kwargs": {"enable_thinking": reasoning}}
    answer = client.post(f"{base_url}/apply-template", json={"messages": messages, **kwargs})
    if answer.status_code == 200 and "prompt" in answer.json():
        return {"route": "/apply-template", "prompt": answer.json()["prompt"]}
    body = {"messages": messages, "add_generation_prompt": True, **kwargs}
    answer = client.post(f"{base_url}/tokenize", json=body)
    if answer.status_code == 200 and "tokens" in answer.json():
        ids = answer.json()["tokens"]
        text = client.post(f"{base_url}/detokenize", json={"tokens": ids})
        if text.status_code == 200 and "prompt" in text.json():
            return {"route": "/tokenize+/detokenize", "prompt": text.json()["prompt"], "prompt_tokens": ids}
    return {"route": None, "prompt": None}


def run_chat_exchange(
    base_url: str,
    model: str | None,
    messages: list[dict[str, str]],
    generation: Generation,
    *,
    timeout_s: float,
    penalty_names: tuple[str, ...] = PENALTY_NAMES,
    shaped: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Exchange:
    """Ask the server how it renders the messages (with thinking on too, when reasoning is off: the prompt must end
    as reasoning off, else ReasoningNotOff), then generate once, streaming (``shaped``: the chat body as the
    engine sends it, from chat_request's)."""
    with httpx.Client(timeout=timeout_s) as client:
        rendering = rendered_prompt(client, base_url, messages, generation.reasoning)
        check = None
        if rendering["prompt"] is not None and not generation.reasoning:
            on = rendered_prompt(client, base_url, messages, True)["prompt"]
            check = checked_reasoning_off(rendering["prompt"], on)
        body = chat_request(model, messages, generation, penalty_names)
        body = shaped(body) if shaped is not None else body
        response, timing = timed_stream(client, f"{base_url}{CHAT_PATH}", body, assemble_chat_stream)
    return Exchange(
        {"route": rendering["route"], "prompt_tokens": rendering.get("prompt_tokens")},
        rendering["prompt"] or "",
        body,
        response,
        timing,
        check,
    )
