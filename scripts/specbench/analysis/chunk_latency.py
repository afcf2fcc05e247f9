"""Time to first token and inter-token latency, from the arrival of every streamed chunk the client recorded
(``response.client_timing``: ``chunk_ms``, ms after the request was sent, and ``chunk_tokens``, run-length pairs
[tokens, chunks]). A token arrives with its chunk; the time to first token is the arrival of the first chunk that
carries one (prompt processing included); an inter-token latency is the time between one token's arrival and the
next one's (0 between tokens of one chunk; llama-server b11223 streams one token per chunk, so a verification step's
accepted tokens arrive as a burst of chunks microseconds apart)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

QUANTILES = {"median": 50, "p90": 90, "p99": 99}


def expanded(run_lengths: Sequence[Sequence[int]]) -> list[int]:
    """Run-length pairs [value, count] as the values: [[1, 3], [0, 1]] -> [1, 1, 1, 0]."""
    return [int(value) for value, count in run_lengths for _ in range(int(count))]


def token_arrivals(chunk_ms: Sequence[float], chunk_tokens: Sequence[int]) -> list[float]:
    """The arrival (ms) of every token: its chunk's, once per token the chunk carries."""
    if len(chunk_ms) != len(chunk_tokens):
        raise ValueError(f"{len(chunk_ms)} chunk arrivals but {len(chunk_tokens)} chunk token counts")
    return [float(at) for at, n in zip(chunk_ms, chunk_tokens, strict=True) for _ in range(int(n))]


def latency_columns(record: dict[str, Any]) -> dict[str, Any]:
    """A cell's chunk arrivals and token counts (as lists) and its time to first token and inter-token latency
    quantiles in ms; empty for a record that kept no arrivals."""
    timing = record["response"].get("client_timing") or {}
    chunk_ms = [float(v) for v in timing.get("chunk_ms") or []]
    chunk_tokens = expanded(timing.get("chunk_tokens") or [])
    arrivals = token_arrivals(chunk_ms, chunk_tokens)
    gaps = np.diff(arrivals)
    return {
        "chunk_ms": chunk_ms,
        "chunk_tokens": chunk_tokens,
        "ttft_ms": arrivals[0] if arrivals else None,
        **{f"itl_{name}_ms": float(np.percentile(gaps, q)) if len(gaps) else None for name, q in QUANTILES.items()},
    }
