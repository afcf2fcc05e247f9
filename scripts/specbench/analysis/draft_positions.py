"""Acceptance by draft position and the mean accepted length per verification step, from the server's own counts.

The counts (core.records.counters): what the server reported with its answer (vLLM's per-request
acceptance), else the difference of the ``/metrics`` scrapes a cell keeps before and after its request (the server adds
a request's counts when its slot is released, right after the final chunk is sent, so a warm server's earlier
requests are in both scrapes). Position i counts the steps that accepted at least i + 1 drafted tokens, so the
positions sum to the accepted tokens and position i over the steps is the acceptance at draft position i + 1.
llama-server's log line ``draft acceptance = r (a accepted / g generated), mean len = m`` gives m = 1 + a / steps, to
two decimals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from specbench.analysis.server_log import parse_speculative_log
from specbench.core.records.counters import counters_agree, counts_of
from specbench.core.records.timings import record_timings


def mean_accepted_length(accepted: float, steps: float) -> float:
    """Tokens one verification step yields on average, as the server computes it: 1 + accepted / steps."""
    return 1.0 + accepted / steps if steps and steps > 0 else math.nan


def logged_acceptance(log_lines: Sequence[str], accepted: int, drafted: int, position: int) -> dict[str, Any] | None:
    """The server's ``draft acceptance`` line for this request: the one whose counts are the response's; where a
    warm server logged several with those counts, the one at the request's position among them, else None."""
    found = [a for a in parse_speculative_log("\n".join(log_lines))["acceptance"] if a["generated"] == drafted]
    matching = [a for a in found if a["accepted"] == accepted]
    if len(matching) == 1:
        return matching[0]
    if len(matching) > 1 and 0 < position <= len(found) and found[position - 1] in matching:
        return found[position - 1]
    return None


def position_columns(record: dict[str, Any]) -> dict[str, Any]:
    """A cell's columns from the counters its record kept and its log line (empty where it kept none)."""
    counts, source = counts_of(record)
    timings = record_timings(record)
    logged = logged_acceptance(
        record["server"].get("log_lines") or [],
        int(timings.get("draft_n_accepted", 0) or 0),
        int(timings.get("draft_n", 0) or 0),
        int(record["server"].get("position", 1) or 1),
    )
    return {
        "counted_drafted": None if counts is None else counts.drafted,
        "counted_accepted": None if counts is None else counts.accepted,
        "counted_predicted": None if counts is None else counts.predicted,
        "verification_steps": None if counts is None else counts.steps,
        "accepted_per_position": [] if counts is None else list(counts.per_position),
        "mean_accepted_length": None if counts is None else mean_accepted_length(counts.accepted, counts.steps),
        "logged_mean_length": None if logged is None else logged["mean_len"],
        "counts_source": source,
        "counters_agree": counters_agree(record),
    }


def accepted_lengths(per_position: Sequence[int], steps: int) -> list[int]:
    """How many verification steps accepted exactly 0, 1, ... n drafted tokens (position i counts the steps that
    accepted more than i)."""
    at_least = [steps, *per_position, 0]
    return [at_least[k] - at_least[k + 1] for k in range(len(per_position) + 1)]
