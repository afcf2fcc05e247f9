"""The report's sections on what happens inside a request: acceptance by draft position and the mean accepted length
(analysis.acceptance.positions, the server's own counts), and time to first token and inter-token latency
(analysis.latency_summary, the stream's chunk arrivals)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from specbench.report.document import GROUP_COLUMNS, Column, Note, Section, Table, digits, is_missing, records

SHOWN_POSITIONS = 8  # positions listed in the table; the figure draws more


def _rates(rates: Sequence[float]) -> str:
    shown = ", ".join(f"{100 * r:.0f}%" for r in rates[:SHOWN_POSITIONS])
    return shown + (f", ... ({len(rates)} positions)" if len(rates) > SHOWN_POSITIONS else "")


def _lengths(counts: Sequence[int]) -> str:
    """Steps that accepted exactly k tokens, as shares: '0: 12%, 1: 30%, ...' (k with no step left out)."""
    total = sum(counts)
    return ", ".join(f"{k}: {100 * n / total:.0f}%" for k, n in enumerate(counts) if n) if total else ""


def _logged(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def positions_section(positions: pd.DataFrame) -> Section:
    notes = [
        Note(
            "From llama-server's own counters, read from `/metrics` right before and right after each request (the "
            "difference is that request's): *steps* are verification steps of a draft; *mean accepted length* = 1 + "
            "accepted / steps, the tokens one step yields (the server's `mean len`; its log line per cell is beside "
            "it); *by position*: the share of steps whose first 1, 2, ... drafted tokens were all accepted; "
            "*accepted per step*: the share of steps that accepted exactly 0, 1, ... drafted tokens."
        )
    ]
    if positions.empty:
        notes.append(Note("No verification step was counted: no speculative condition drafted, or no counters."))
    return Section(
        "positions",
        "Acceptance by draft position",
        notes,
        Table(
            [
                *GROUP_COLUMNS,
                Column("runs counted", lambda r: (r["counted_runs"], r["runs"]), lambda p: f"{p[0]}/{p[1]}"),
                Column("steps", "verification_steps"),
                Column("accepted", "accepted"),
                Column("mean accepted length", "mean_accepted_length", digits(2)),
                Column("logged (per cell)", "logged_mean_lengths", _logged, text=True),
                Column("by position", "position_rates", _rates, text=True),
                Column("accepted per step", "accepted_lengths", _lengths, text=True),
            ],
            records(positions),
        ),
    )


def _ms(value: object) -> str:
    return "" if is_missing(value) else f"{float(value):.2f}"


def latency_section(latency: pd.DataFrame) -> Section:
    return Section(
        "latency",
        "Time to first token and inter-token latency",
        [
            Note(
                "From the arrival of every streamed chunk at the client, in ms: *TTFT* from sending the request to "
                "the first token (prompt processing included); *ITL* the time between one token's arrival and the "
                "next one's (llama-server streams one token per chunk, so the tokens a verification step accepted "
                "arrive microseconds apart: a low median and a p90/p99 near the step's time). Each figure is the "
                "median over the cells of the group of each cell's own value."
            )
        ],
        Table(
            [
                *GROUP_COLUMNS,
                Column("runs timed", lambda r: (r["timed_runs"], r["runs"]), lambda p: f"{p[0]}/{p[1]}"),
                Column("TTFT ms", "ttft_ms", _ms),
                Column("ITL median ms", "itl_median_ms", _ms),
                Column("ITL p90 ms", "itl_p90_ms", _ms),
                Column("ITL p99 ms", "itl_p99_ms", _ms),
            ],
            records(latency),
        ),
    )
