"""The report's load section (a run with a load dimension, config ``load``): per task, condition, temperature and
concurrency N, the multiplier against the baseline at the same N with its interval, where that interval lies
against 1.0x and N*, aggregate and per-user tokens/s, acceptance, the multiplier's two factors and token identity
under load."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from specbench.analysis.load import ABOVE, BELOW
from specbench.report.document import (
    GROUP_COLUMNS,
    Column,
    Note,
    Section,
    Table,
    digits,
    fmt_interval,
    fmt_multiplier,
    is_missing,
    joined,
    percent,
    records,
)

_TONES = {ABOVE: "good", BELOW: "bad"}


def _change(row: Mapping[str, Any]) -> str:
    """Acceptance's change from N = 1 in percentage points with its interval ('' where there is none)."""
    change = row["acceptance_change"]
    if is_missing(change):
        return ""
    low, high = row["acceptance_change_ci_low"], row["acceptance_change_ci_high"]
    interval = "" if is_missing(low) or is_missing(high) else f" ({100 * low:+.1f} to {100 * high:+.1f})"
    return f"{100 * change:+.1f}{interval}"


def load_sections(load: pd.DataFrame | None, baseline: str) -> list[Section]:
    """The load section, or none for a run without a load dimension."""
    if load is None or load.empty:
        return []
    return [
        Section(
            "load",
            "Under load: requests at once",
            notes=[
                Note(
                    "Each point is one fresh server answering N copies of the cell's request at once (llama-server "
                    "--parallel N, its context scaled by N). Per-user tok/s is the mean of the point's requests' own "
                    "speeds, its multiplier is against "
                    f"'{baseline}' at the same N, with its 95 % interval; N* is the first N whose interval lies "
                    "below 1.0x (a straddling interval is not separated). Aggregate tok/s counts every request's "
                    "tokens while all N were in flight (ramp-up and tail left out); identical: temperature-0 requests "
                    f"whose tokens equal the one-request '{baseline}' control's (same repeat). The multiplier is about "
                    "tokens per verification step (accepted drafts and one token of its own) over the step-time ratio "
                    f"(decode time per step against '{baseline}''s at the same N); 'moved by' names the one whose "
                    "change from the condition's lowest N moved the multiplier most; 'vs N=1' is acceptance's change "
                    "from the condition's one-request point in percentage points, with its 95 % interval."
                )
            ],
            table=Table(
                [
                    *GROUP_COLUMNS,
                    Column("N", "concurrency"),
                    Column("runs", "runs"),
                    Column("per-user tok/s", "per_user_tokens_per_s", digits(1)),
                    Column("multiplier", "speedup", fmt_multiplier),
                    Column("95% interval", lambda r: (r["speedup_ci_low"], r["speedup_ci_high"]), fmt_interval),
                    Column("vs 1.0x", "against_one", text=True, tone=lambda v: _TONES.get(v, "")),
                    Column("N*", "n_star"),
                    Column("aggregate tok/s", "aggregate_tokens_per_s", digits(1)),
                    Column("all in flight", lambda r: f"{r['all_in_flight']}/{r['runs']}", text=True),
                    Column("TTFT ms", "ttft_median_ms", digits(1)),
                    Column(
                        "ITL median / p90 ms", lambda r: f"{r['itl_median_ms']:.1f} / {r['itl_p90_ms']:.1f}", text=True
                    ),
                    Column("acceptance", "acceptance_rate", percent),
                    Column("vs N=1 (points)", _change, text=True),
                    Column("tokens/step", "tokens_per_step", digits(2)),
                    Column("step-time ratio", "step_time_ratio", digits(2)),
                    Column("moved by (vs lowest N)", "moved_by", text=True),
                    Column(
                        "identical / compared",
                        lambda r: (
                            f"{r['requests_identical']}/{r['requests_compared']}" if r["requests_compared"] else ""
                        ),
                        text=True,
                    ),
                ],
                records(load),
                folded=[
                    Column(
                        "acceptance per slot",
                        "acceptance_by_slot",
                        lambda pairs: ", ".join(f"slot {int(s)}: {100 * r:.1f}%" for s, r in pairs),
                    ),
                    Column("cells", "cells", joined, files=True, text=True),
                ],
            ),
        )
    ]
