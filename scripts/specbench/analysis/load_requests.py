"""A load point's requests as columns of its cell's row (from the record's ``load`` section): each request's
server-reported speed, tokens, drafted and accepted tokens and slot, in client order; its send, first and last token
times on one clock (s after the point's first send); and the aggregate tokens/s while every request was in flight
(tokens arriving between the last request's first token and the first request's last token, over that window:
ramp-up and tail excluded). Empty for a cell without a load section."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from specbench.analysis.chunk_latency import expanded, token_arrivals
from specbench.core.records.timings import record_timings

LOAD_LIST_COLUMNS = (
    "load_tokens_per_s",
    "load_predicted_n",
    "load_decode_ms",
    "load_draft_n",
    "load_draft_n_accepted",
    "load_slot",
    "load_sent_s",
    "load_first_token_s",
    "load_last_token_s",
    "load_itl_median_ms",
    "load_itl_p90_ms",
    "load_tokens",
)


def load_columns(record: dict[str, Any]) -> dict[str, Any]:
    """The load columns of a record's row (empty lists and no window without a load section)."""
    requests = (record.get("load") or {}).get("requests") or []
    if not requests:
        return {**{name: [] for name in LOAD_LIST_COLUMNS}, "load_window_s": None, "load_aggregate_tokens_per_s": None}
    timings = [record_timings({"response": {**r["response"], "client_timing": r["client_timing"]}}) for r in requests]
    sent = [float(r["client_timing"]["sent_at_unix_s"]) for r in requests]
    origin = min(sent)
    arrivals = [
        [
            at / 1000.0 + s - origin
            for at in token_arrivals(
                r["client_timing"].get("chunk_ms") or [], expanded(r["client_timing"].get("chunk_tokens") or [])
            )
        ]
        for r, s in zip(requests, sent, strict=True)
    ]
    window = all_in_flight(arrivals)
    return {
        "load_tokens_per_s": [float(t["predicted_per_second"]) for t in timings],
        "load_predicted_n": [int(t["predicted_n"]) for t in timings],
        "load_decode_ms": [float(t["predicted_ms"]) for t in timings],
        "load_draft_n": [int(t.get("draft_n") or 0) for t in timings],
        "load_draft_n_accepted": [int(t.get("draft_n_accepted") or 0) for t in timings],
        "load_slot": [r.get("slot") for r in requests],
        "load_sent_s": [s - origin for s in sent],
        "load_first_token_s": [a[0] if a else None for a in arrivals],
        "load_last_token_s": [a[-1] if a else None for a in arrivals],
        **{f"load_itl_{name}_ms": [_itl(a, q) for a in arrivals] for name, q in (("median", 50), ("p90", 90))},
        "load_tokens": [list(r["response"].get("tokens") or []) for r in requests],
        "load_window_s": None if window is None else window[1] - window[0],
        "load_aggregate_tokens_per_s": aggregate_rate(arrivals, window),
    }


def _itl(arrivals: Sequence[float], quantile: float) -> float | None:
    """A request's inter-token latency quantile in ms (its tokens' arrivals in s), None under two tokens."""
    return float(np.percentile(np.diff(arrivals), quantile) * 1000.0) if len(arrivals) > 1 else None


def all_in_flight(arrivals: Sequence[Sequence[float]]) -> tuple[float, float] | None:
    """The window in which every request was generating: from the latest first token to the earliest last token;
    None where there is none (a request without tokens, or one that ended before another's first token)."""
    if not arrivals or any(not a for a in arrivals):
        return None
    start, end = max(a[0] for a in arrivals), min(a[-1] for a in arrivals)
    return (start, end) if end > start else None


def aggregate_rate(arrivals: Sequence[Sequence[float]], window: tuple[float, float] | None) -> float | None:
    """Tokens of every request arriving within ``window`` (its end included, its start not: the token that opens it
    was generated before), per second of it."""
    if window is None:
        return None
    start, end = window
    return sum(start < at <= end for a in arrivals for at in a) / (end - start)
