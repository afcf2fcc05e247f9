"""A request's speculative counts: as the server reported them with its answer (vLLM's per-request
``metrics.speculative_decoding``, SGLang's ``sglext``), or from its ``/metrics`` counters scraped before and after
the request (llama-server's ``llamacpp:`` lines, vLLM's ``vllm:`` lines: the same counter names under another
prefix, with ``engine`` and ``model_name`` labels, summed over engines).

What the counters mean (llama-server b11223, ``tools/server/server-context.cpp``; vLLM 0.32's ``spec_decode``
metrics): each verification step adds its accepted tokens to ``spec_decode_num_accepted_tokens_total``, one to
``spec_decode_num_drafts_total`` (the verification steps), its drafted tokens to
``spec_decode_num_draft_tokens_total`` and, for i = 0 .. accepted - 1, one to
``spec_decode_num_accepted_tokens_per_pos_total{position="i"}``. Counters are printed as doubles; llama-server's
with 6 significant digits, so a total of 10^6 or more is not read exactly, and its counts are left empty."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from specbench.core.records.sglang_reply import sglang_speculation

# A counter line: its prefix, its name, its labels (if any) and its value
_LINE_RE = re.compile(r"^(?:llamacpp|vllm):(\w+)(?:\{([^}]*)\})?\s+(\S+)$")
_POSITION_RE = re.compile(r'(?:^|,)\s*position="(\d+)"')
_TOTALS = {
    "spec_decode_num_draft_tokens_total": "drafted",
    "spec_decode_num_accepted_tokens_total": "accepted",
    "spec_decode_num_drafts_total": "steps",
    "tokens_predicted_total": "predicted",  # llama-server's
    "generation_tokens_total": "predicted",  # vLLM's
}
PER_POSITION = "spec_decode_num_accepted_tokens_per_pos_total"
EXACT_BELOW = 1e6  # a double printed with 6 significant digits is an exact integer below this
PER_REQUEST = "speculative_decoding"  # vLLM's per-request acceptance, under the response's ``metrics``


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
    """The counts in a scrape's kept lines (each counter summed over its label sets but the position); None when a
    total is missing or one of them is not exact (see the module docstring)."""
    totals: dict[str, float] = {}
    positions: dict[int, float] = {}
    for line in lines:
        match = _LINE_RE.match(line.strip())
        if not match:
            continue
        name, labels, text = match.groups()
        if name != PER_POSITION and name not in _TOTALS:
            continue  # e.g. vLLM's ``_created`` timestamps
        value = float(text)
        if not math.isfinite(value) or abs(value) >= EXACT_BELOW:
            return None
        position = _POSITION_RE.search(labels or "")
        if name == PER_POSITION and position is not None:
            at = int(position.group(1))
            positions[at] = positions.get(at, 0.0) + value
        elif name in _TOTALS:
            totals[_TOTALS[name]] = totals.get(_TOTALS[name], 0.0) + value
    if set(totals) != {"drafted", "accepted", "steps", "predicted"}:
        return None
    per_position = tuple(int(positions.get(i, 0)) for i in range(max(positions) + 1)) if positions else ()
    return Counts(per_position=per_position, **{k: int(v) for k, v in totals.items()})


def request_counts(metrics: Mapping[str, Any] | None) -> Counts | None:
    """One request's counts: the scrape after it minus the scrape before it; None when either is missing."""
    if not metrics:
        return None
    before, after = ((metrics.get(side) or {}).get("lines") for side in ("before", "after"))
    if before is None or after is None:
        return None
    first, last = parse_counts(before), parse_counts(after)
    return None if first is None or last is None else last - first


def reported_counts(response: Mapping[str, Any]) -> Counts | None:
    """One request's counts as the server reported them with its answer (vLLM's per-request
    ``metrics.speculative_decoding``, or SGLang's ``sglext.spec_tokens_details`` read in that shape): its acceptance
    histogram (steps by how many drafts they accepted) gives how many steps accepted a draft at each position; None
    when it reported none."""
    spec = (response.get("metrics") or {}).get(PER_REQUEST) or sglang_speculation(response)
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


def counts_of(record: Mapping[str, Any]) -> tuple[Counts | None, str | None]:
    """A record's counts and where they come from: what the server reported with its answer ('response'), else the
    difference of its ``/metrics`` scrapes ('/metrics': at a load point of N > 1, all N requests' counts);
    (None, None) where it has neither."""
    reported = reported_counts(record["response"])
    if reported is not None:
        return reported, "response"
    counted = request_counts((record.get("server") or {}).get("metrics"))
    return (counted, "/metrics") if counted is not None else (None, None)


def counters_agree(record: Mapping[str, Any]) -> bool | None:
    """Whether the ``/metrics`` counters of a request the server also reported on agree with its report (drafted,
    accepted and steps; only one request in flight between the scrapes); None where either is missing."""
    reported = reported_counts(record["response"])
    counted = request_counts((record.get("server") or {}).get("metrics"))
    if reported is None or counted is None:
        return None
    return (reported.drafted, reported.accepted, reported.steps) == (counted.drafted, counted.accepted, counted.steps)
