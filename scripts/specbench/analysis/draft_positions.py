"""Acceptance by draft position and the mean accepted length per verification step, from the server's own counts.

What the counters mean (llama-server b11223, ``tools/server/server-context.cpp`` and ``server-task.cpp``): each
verification step of a draft adds its accepted tokens to ``spec_decode_num_accepted_tokens_total``, one to
``spec_decode_num_drafts_total`` (the verification steps) and, for i = 0 .. accepted - 1, one to
``spec_decode_num_accepted_tokens_per_pos_total{position="i"}``: position i counts the steps that accepted at least
i + 1 drafted tokens, so the positions sum to the accepted tokens and position i over the steps is the acceptance
at draft position i + 1. The server adds a request's counts when its slot is released, right after the final chunk
is sent, so the scrapes a cell keeps before and after its request differ by that request's counts alone (a warm
server's earlier requests are in both). Its log line ``draft acceptance = r (a accepted / g generated), mean len = m``
gives m = 1 + a / steps, to two decimals. Counters are printed as doubles (6 significant digits): a total of 10^6 or
more is not read exactly, and its differences are left empty.

An endpoint's vLLM reports the same counts with each answer (``--per-request-spec-decode-metrics``): its
``acceptance_histogram[k]`` is the number of verification steps that accepted k drafted tokens, so position i counts
the steps of the bins above i (``reported_counts``); a record whose scrapes give no llama-server counts is read so."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from specbench.analysis.server_log import parse_speculative_log
from specbench.core.records.timings import record_timings

_LINE_RE = re.compile(r'^llamacpp:(\w+)(?:\{position="(\d+)"\})?\s+(\S+)$')
_TOTALS = {
    "spec_decode_num_draft_tokens_total": "drafted",
    "spec_decode_num_accepted_tokens_total": "accepted",
    "spec_decode_num_drafts_total": "steps",
    "tokens_predicted_total": "predicted",
}
PER_POSITION = "spec_decode_num_accepted_tokens_per_pos_total"
EXACT_BELOW = 1e6  # a double printed with 6 significant digits is an exact integer below this


@dataclass(frozen=True)
class Counts:
    """Speculative counts of a server, or of one request (the difference of two scrapes)."""

    drafted: int
    accepted: int
    steps: int
    predicted: int
    per_position: tuple[int, ...]

    def __sub__(self, other: Counts) -> Counts:
        width = max(len(self.per_position), len(other.per_position))
        own, earlier = (list(c.per_position) + [0] * (width - len(c.per_position)) for c in (self, other))
        return Counts(
            self.drafted - other.drafted,
            self.accepted - other.accepted,
            self.steps - other.steps,
            self.predicted - other.predicted,
            tuple(a - b for a, b in zip(own, earlier, strict=True)),
        )


def parse_counts(lines: Sequence[str]) -> Counts | None:
    """The counts in a scrape's kept lines; None when a total is missing or not exact (see the module docstring)."""
    totals: dict[str, int] = {}
    positions: dict[int, int] = {}
    for line in lines:
        match = _LINE_RE.match(line.strip())
        if not match:
            continue
        name, position, text = match.groups()
        value = float(text)
        if not math.isfinite(value) or abs(value) >= EXACT_BELOW:
            return None
        if name == PER_POSITION and position is not None:
            positions[int(position)] = int(value)
        elif name in _TOTALS:
            totals[_TOTALS[name]] = int(value)
    if set(totals) != set(_TOTALS.values()):
        return None
    per_position = tuple(positions.get(i, 0) for i in range(max(positions) + 1)) if positions else ()
    return Counts(per_position=per_position, **totals)


def request_counts(metrics: dict[str, Any] | None) -> Counts | None:
    """One request's counts: the scrape after it minus the scrape before it; None when either is missing."""
    if not metrics:
        return None
    before, after = ((metrics.get(side) or {}).get("lines") for side in ("before", "after"))
    if before is None or after is None:
        return None
    first, last = parse_counts(before), parse_counts(after)
    return None if first is None or last is None else last - first


def reported_counts(response: dict[str, Any]) -> Counts | None:
    """One request's counts as the server reported them with its answer (vLLM's per-request
    ``metrics.speculative_decoding``): its acceptance histogram (steps by how many drafts they accepted) gives how
    many steps accepted a draft at each position; None when it reported none."""
    spec = (response.get("metrics") or {}).get("speculative_decoding")
    if not spec:
        return None
    histogram = [int(n) for n in spec.get("acceptance_histogram") or []]
    return Counts(
        drafted=int(spec.get("num_draft_tokens") or 0),
        accepted=int(spec.get("num_accepted_draft_tokens") or 0),
        steps=int(spec.get("num_spec_steps") or 0),
        predicted=int((response.get("usage") or {}).get("completion_tokens") or 0),
        per_position=tuple(sum(histogram[k] for k in range(p + 1, len(histogram))) for p in range(len(histogram) - 1)),
    )


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
    counts = request_counts(record["server"].get("metrics")) or reported_counts(record["response"])
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
    }


def accepted_lengths(per_position: Sequence[int], steps: int) -> list[int]:
    """How many verification steps accepted exactly 0, 1, ... n drafted tokens (position i counts the steps that
    accepted more than i)."""
    at_least = [steps, *per_position, 0]
    return [at_least[k] - at_least[k + 1] for k in range(len(per_position) + 1)]
