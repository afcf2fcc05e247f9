"""A record's timings in llama-server's terms (``predicted_per_second``, ``predicted_n``, ``draft_n``, ...) whatever
answered it: llama-server's own, as it reported them; an endpoint's chat stream, from what it reported (llama-server
behind it sends the same ``timings``; vLLM its ``usage``, per-request ``metrics.speculative_decoding`` and, with
``--enable-per-request-metrics``, its own decode time) and, for the speed where the server reported none, the
arrival of its chunks as this client saw them (``source`` says which); its drafted and accepted tokens
from what it reported with the answer, else from its ``/metrics`` counters around the request (records.counters)."""

from __future__ import annotations

from typing import Any

from specbench.core.records.counters import counts_of

SERVER = "server"  # the server's own timings
CLIENT = "client stream"  # tokens and times from the usage and the chunks' arrival
HELD_BACK = "client stream, held back: whole request"  # ... of a stream that arrived in one burst
# A stream arrived held back when at least half its tokens (and BURST_TOKENS or more) came within BURST_SHARE of the
# request's time to its last token (at least BURST_MS): the server generated them before sending (a starved API
# process on a CPU); their arrival then says nothing of the decode, and the rate is the whole request's
BURST_SHARE, BURST_MS, BURST_TOKENS = 0.01, 5.0, 8


def record_timings(record: dict[str, Any]) -> dict[str, Any]:
    """The record's timings (llama-server's keys) and where they come from (``source``)."""
    response = record["response"]
    if response.get("timings"):
        return {**response["timings"], "source": SERVER}
    counts, source = counts_of(record)
    alone = int((record.get("load") or {}).get("concurrency") or 1) == 1  # else the scrapes count every request
    drafts = (counts.drafted, counts.accepted) if counts is not None and (source == "response" or alone) else (0, 0)
    timings = stream_timings(response, drafts)
    held = timings.pop("held_back")
    own = reported_timings(response, timings["predicted_n"])
    if own is not None:
        return {**timings, **own, "source": SERVER}
    return {**timings, "source": HELD_BACK if held else CLIENT}


def reported_timings(response: dict[str, Any], predicted: int) -> dict[str, float] | None:
    """The times a chat server reported with its answer (vLLM's per-request ``metrics`` with
    ``--enable-per-request-metrics``: ``generation_time_ms`` from its first output token to its last,
    ``time_to_first_token_ms`` from scheduling), in llama-server's keys; None where it reported none."""
    metrics = response.get("metrics") or {}
    decode_ms = metrics.get("generation_time_ms")
    if not decode_ms or predicted < 2:
        return None
    return {
        "predicted_ms": float(decode_ms),
        "predicted_per_second": (predicted - 1) * 1000.0 / float(decode_ms),
        "prompt_ms": float(metrics.get("time_to_first_token_ms") or 0.0),
    }


def client_rate(record: dict[str, Any]) -> float | None:
    """The decode rate by the client stream's clock (the same measure for every engine): the chunk timing's own
    (llama-server's ``/completion`` stream), else a chat stream's rate as stream_timings reads it."""
    timing = record["response"].get("client_timing") or {}
    if timing.get("decode_tokens_per_s") is not None:
        return float(timing["decode_tokens_per_s"])
    if not (record["response"].get("usage") or {}).get("completion_tokens"):
        return None
    return float(stream_timings(record["response"])["predicted_per_second"])


def stream_timings(response: dict[str, Any], drafts: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    """Timings of a chat stream without server timings: tokens from its ``usage``, the decode time from the first
    text chunk's arrival to the last (its rate counts the tokens after the first chunk), the prompt time as the time
    to the first text chunk (a stream that arrived held back: the whole request's rate, ``held_back``); ``drafts``:
    the request's drafted and accepted tokens (counts_of)."""
    usage = response.get("usage") or {}
    timing = response.get("client_timing") or {}
    predicted = int(usage.get("completion_tokens") or 0)
    first, last = timing.get("first_token_s"), timing.get("last_token_s")
    span_ms = (last - first) * 1000.0 if first is not None and last is not None else 0.0
    decoded = max(predicted - _first_chunk_tokens(timing), 0)
    rate = decoded * 1000.0 / span_ms if span_ms > 0 else 0.0
    held = held_back(timing)
    if held and last:  # the whole request's rate: its tokens over the time to its last one
        rate = predicted / last
    return {
        "predicted_n": predicted,
        "predicted_ms": span_ms,
        "predicted_per_second": rate,
        "held_back": held,
        "prompt_n": int(usage.get("prompt_tokens") or 0),
        "prompt_ms": first * 1000.0 if first is not None else 0.0,
        "draft_n": drafts[0],
        "draft_n_accepted": drafts[1],
    }


def _first_chunk_tokens(timing: dict[str, Any]) -> int:
    """How many tokens the first chunk that carried any held (1 where the stream sent no token ids)."""
    for count, chunks in timing.get("chunk_tokens") or []:
        if count > 0 and chunks > 0:
            return int(count)
    return 1


def held_back(timing: dict[str, Any]) -> bool:
    """Whether a stream's tokens arrived held back (see BURST_SHARE): from each chunk's arrival (``chunk_ms``) and
    its token count (``chunk_tokens``, run-length pairs [tokens, chunks])."""
    arrivals: list[float] = []
    at = iter(timing.get("chunk_ms") or [])
    for count, chunks in timing.get("chunk_tokens") or []:
        for _ in range(int(chunks)):
            arrived = next(at, None)
            if arrived is not None and count > 0:
                arrivals.extend([float(arrived)] * int(count))
    if len(arrivals) < BURST_TOKENS or not timing.get("last_token_s"):
        return False
    window = max(BURST_SHARE * float(timing["last_token_s"]) * 1000.0, BURST_MS)
    arrivals.sort()
    most, start = 0, 0
    for end, arrived in enumerate(arrivals):
        while arrived - arrivals[start] > window:
            start += 1
        most = max(most, end - start + 1)
    return most * 2 >= len(arrivals)
