"""A record's timings in llama-server's terms (``predicted_per_second``, ``predicted_n``, ``draft_n``, ...) whatever
answered it: llama-server's own, as it reported them; an endpoint's chat stream, from what it reported (llama-server
behind it sends the same ``timings``; vLLM its ``usage`` and per-request ``metrics.speculative_decoding``) and, for
the speed, the arrival of its chunks as this client saw them (``source`` says which)."""

from __future__ import annotations

from typing import Any

SERVER = "server"  # the server's own timings
CLIENT = "client stream"  # tokens and times from the usage and the chunks' arrival


def record_timings(record: dict[str, Any]) -> dict[str, Any]:
    """The record's timings (llama-server's keys) and where they come from (``source``)."""
    response = record["response"]
    if response.get("timings"):
        return {**response["timings"], "source": SERVER}
    return {**stream_timings(response), "source": CLIENT}


def stream_timings(response: dict[str, Any]) -> dict[str, Any]:
    """Timings of a chat stream without server timings: tokens from its ``usage``, the decode time from the first
    text chunk's arrival to the last (its rate counts the tokens after the first chunk), the prompt time as the time
    to the first text chunk, drafted and accepted tokens from vLLM's per-request metrics (0 without them)."""
    usage = response.get("usage") or {}
    timing = response.get("client_timing") or {}
    predicted = int(usage.get("completion_tokens") or 0)
    first, last = timing.get("first_token_s"), timing.get("last_token_s")
    span_ms = (last - first) * 1000.0 if first is not None and last is not None else 0.0
    decoded = max(predicted - _first_chunk_tokens(timing), 0)
    spec = (response.get("metrics") or {}).get("speculative_decoding") or {}
    return {
        "predicted_n": predicted,
        "predicted_ms": span_ms,
        "predicted_per_second": decoded * 1000.0 / span_ms if span_ms > 0 else 0.0,
        "prompt_n": int(usage.get("prompt_tokens") or 0),
        "prompt_ms": first * 1000.0 if first is not None else 0.0,
        "draft_n": int(spec.get("num_draft_tokens") or 0),
        "draft_n_accepted": int(spec.get("num_accepted_draft_tokens") or 0),
    }


def _first_chunk_tokens(timing: dict[str, Any]) -> int:
    """How many tokens the first chunk that carried any held (1 where the stream sent no token ids)."""
    for count, chunks in timing.get("chunk_tokens") or []:
        if count > 0 and chunks > 0:
            return int(count)
    return 1
