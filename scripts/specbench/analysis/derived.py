"""What the server's ``timings`` say once divided out: tokens/s, token counts, times, drafted and accepted tokens
and the acceptance rate (never dividing by zero)."""

from __future__ import annotations

from typing import Any


def derived_figures(timings: dict[str, Any]) -> dict[str, Any]:
    """Tokens/s and acceptance from the server's ``timings``; never divides by zero."""
    draft_n = int(timings.get("draft_n", 0) or 0)
    accepted = int(timings.get("draft_n_accepted", 0) or 0)
    return {
        "tokens_per_s": float(timings["predicted_per_second"]),
        "predicted_n": int(timings["predicted_n"]),
        "decode_ms": float(timings["predicted_ms"]),
        "prompt_n": int(timings["prompt_n"]),
        "prompt_ms": float(timings["prompt_ms"]),
        "draft_n": draft_n,
        "draft_n_accepted": accepted,
        "acceptance_rate": accepted / draft_n if draft_n > 0 else None,
    }
