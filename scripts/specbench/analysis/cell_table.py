"""The per-cell table: one typed row per cell record (analysis.record_rows makes them), the single source of every
summary, figure, claim and provenance link. Numbers stay numbers and lists stay lists (Parquet); only the renderers
make strings.

Identity: a speculative condition at temperature 0 should reproduce the baseline's tokens exactly; each such cell is
compared with the baseline cell of the same task, prompt and repeat, and the baseline's own repeats with its first
repeat (the control, "off vs off across repeats"). The comparison is stored per cell (``identical``,
``first_difference``, ``compared_repeat``, ``baseline_length``)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from specbench.core.config.builds import ONE_BUILD
from specbench.core.plan.cells import DEFAULT_MACHINE, ONE_PROMPT
from specbench.core.plan.coordinates import LAYOUT
from specbench.core.records.explanations import first_difference, reference_repeat
from specbench.core.steps.files import write_atomic

COORDINATES = LAYOUT.crossed  # the coordinates the matrix crosses: task, prompt, condition, temperature, repeat
GROUP = ["task", "condition", "temperature"]  # a task's figures: over its prompts and repeats
PROMPT_GROUP = ["task", "prompt", "condition", "temperature"]  # one prompt's figures: over its repeats
MACHINE = "machine"  # the label of the machine a cell was measured on: summaries are made per machine
BUILD = "build"  # the label of the llama.cpp build that served it ('' without builds): summaries per build too

TEXT, INT, FLOAT, FLAG, TEXTS = pa.string(), pa.int64(), pa.float64(), pa.bool_(), pa.list_(pa.string())
TIME = pa.timestamp("ms", tz="UTC")
_ARROW_TYPE = {str: TEXT, int: INT, float: FLOAT}
SETTING = pa.struct([("implementation", TEXT), ("key", TEXT), ("value", TEXT)])
WRONG = pa.struct([("problem", INT), ("extracted", TEXT), ("reference", TEXT)])
# column -> pyarrow type, a group of columns per line; the order is the table's column order
SCHEMA = pa.schema(
    [
        *((c.name, _ARROW_TYPE[c.parse]) for c in LAYOUT.coordinates if c.recorded),  # the record's coordinates
        # what the server reported (derived_figures), and the client's view
        ("tokens_per_s", FLOAT),
        ("client_tokens_per_s", FLOAT),
        ("predicted_n", INT),
        ("decode_ms", FLOAT),
        ("prompt_n", INT),
        ("prompt_ms", FLOAT),
        ("draft_n", INT),
        ("draft_n_accepted", INT),
        ("acceptance_rate", FLOAT),
        # inside the request: the server's own counts around it (analysis.draft_positions) and the stream's chunk
        # arrivals (analysis.chunk_latency)
        ("verification_steps", INT),
        ("counted_drafted", INT),
        ("counted_accepted", INT),
        ("counted_predicted", INT),
        ("accepted_per_position", pa.list_(INT)),
        ("mean_accepted_length", FLOAT),
        ("logged_mean_length", FLOAT),
        ("counts_source", TEXT),  # where the counts come from: the server's answer ('response'), else '/metrics'
        ("counters_agree", FLAG),  # whether the /metrics counters agree with the answer's counts (both present)
        ("ttft_ms", FLOAT),
        ("itl_median_ms", FLOAT),
        ("itl_p90_ms", FLOAT),
        ("itl_p99_ms", FLOAT),
        ("chunk_ms", pa.list_(FLOAT)),
        ("chunk_tokens", pa.list_(INT)),
        # wall times measured around it
        ("cell_wall_s", FLOAT),
        ("server_ready_s", FLOAT),
        ("request_wall_s", FLOAT),
        ("overhead_s", FLOAT),
        ("loadavg_1m_at_end", FLOAT),
        # a load point's requests, in client order (analysis.load_requests; empty for a one-request cell), and
        # whether the cell is one of the study's one-request cells (no load dimension, or concurrency 1)
        ("one_request", FLAG),
        ("load_tokens_per_s", pa.list_(FLOAT)),
        ("load_predicted_n", pa.list_(INT)),
        ("load_decode_ms", pa.list_(FLOAT)),
        ("load_draft_n", pa.list_(INT)),
        ("load_draft_n_accepted", pa.list_(INT)),
        ("load_slot", pa.list_(INT)),
        ("load_sent_s", pa.list_(FLOAT)),
        ("load_first_token_s", pa.list_(FLOAT)),
        ("load_last_token_s", pa.list_(FLOAT)),
        ("load_itl_median_ms", pa.list_(FLOAT)),
        ("load_itl_p90_ms", pa.list_(FLOAT)),
        ("load_tokens", pa.list_(pa.list_(INT))),
        ("load_window_s", FLOAT),
        ("load_aggregate_tokens_per_s", FLOAT),
        # the tokens and their identity with the baseline's
        ("tokens", pa.list_(INT)),
        ("token_ids", FLAG),  # whether the server sent the token ids (an endpoint may not: then tokens is empty)
        ("content", TEXT),  # the generated text (what a cell without token ids is compared by)
        ("identical", FLAG),
        ("compared_repeat", INT),
        ("first_difference", INT),
        ("baseline_length", INT),
        # where n-gram lookup could have drafted the text from (analysis.repetition): the prompt, or its own
        # earlier text
        ("from_prompt_share", FLOAT),
        ("from_output_share", FLOAT),
        # where they differ, what the model itself ranked there (analysis.divergence, from the explanation record)
        ("explanation_file", TEXT),
        ("divergence_token", INT),
        ("divergence_reference_token", INT),
        ("divergence_text", TEXT),
        ("divergence_reference_text", TEXT),
        ("divergence_before", TEXT),
        ("divergence_after", TEXT),
        ("divergence_reference_after", TEXT),
        ("margin_sequential", FLOAT),
        ("margin_batched", FLOAT),
        ("rank_sequential", INT),
        ("rank_batched", INT),
        ("divergence_flipped", FLAG),
        ("replay_matches", FLAG),
        ("divergence_kind", TEXT),
        ("gsm8k_correct", INT),
        ("gsm8k_answered", INT),
        ("gsm8k_total", INT),
        ("gsm8k_wrong", pa.list_(WRONG)),
        ("gsm8k_references", TEXTS),
        # the speculative settings the server logged
        ("spec_implementations", TEXTS),
        ("spec_n_max", INT),
        ("spec_n_min", INT),
        ("spec_p_min", FLOAT),
        ("spec_block_size", INT),
        ("spec_settings", pa.list_(SETTING)),
        # the draft length it was set to (core.records.draft_budget: its answer, argv or log say), and where from
        ("draft_length", INT),
        ("draft_length_source", TEXT),
        ("drafted_per_step", FLOAT),  # what it drafted per verification step, by the counts
        ("sampling", TEXT),  # the sampling every request stated, 'top_k=40 top_p=0.95 ...'
        # how it was measured
        ("chat_template", TEXT),  # what rendered the prompt: 'gguf', 'none' or a built-in template's name
        ("seed", INT),
        ("attempt", INT),
        ("rejected_attempts", INT),
        ("rejected_reasons", TEXTS),
        ("contention", TEXT),
        ("quiet_waits", INT),
        ("quiet_wait_s", FLOAT),
        ("backend", TEXT),
        ("engine", TEXT),  # what served it: llama.cpp (started here) or endpoint (a server the user runs)
        ("timings_source", TEXT),  # the speed's source: the server's own timings, or the client's view of the stream
        ("gpu_watch", TEXT),
        ("server_pid", INT),
        ("server_shared", FLAG),
        ("server_position", INT),
        ("server_scope", TEXT),
        ("warmup_tokens", INT),  # the discarded warm-up request its server answered first (None: no warm-up)
        ("run_order", INT),
        ("started_at", TIME),
        ("ended_at", TIME),
        # by what, and where its files are
        ("server_sha256", TEXT),
        ("model_sha256", TEXT),
        ("draft_sha256", TEXT),
        ("prompt_sha256", TEXT),
        ("code_fingerprint", TEXT),
        ("cell_file", TEXT),
        ("server_log", TEXT),
        ("gpu_samples", TEXT),
    ]
)
LIST_COLUMNS = [f.name for f in SCHEMA if pa.types.is_list(f.type)]
_TIMES = [f.name for f in SCHEMA if pa.types.is_timestamp(f.type)]


def _identity(rows: list[dict[str, Any]], baseline: str) -> None:
    """Fill the identity columns of the temperature-0 rows in place (see the module docstring; at a load point, the
    baseline's cell of the same load)."""
    base = {
        (r[MACHINE], r[BUILD], r["task"], r["prompt"], r["concurrency"], r["repeat"]): r
        for r in rows
        if r["temperature"] == 0.0 and r["condition"] == baseline
    }
    for row in rows:
        row.update(identical=None, compared_repeat=None, first_difference=None, baseline_length=None)
        if row["temperature"] != 0.0:
            continue
        repeat = reference_repeat(row["condition"], row["repeat"], baseline)
        if repeat is None:
            continue
        reference = base.get((row[MACHINE], row[BUILD], row["task"], row["prompt"], row["concurrency"], repeat))
        row["compared_repeat"] = repeat
        if reference is None or not (token_ids_known(row) and token_ids_known(reference)):
            continue
        first = first_difference(row["tokens"], reference["tokens"])
        row.update(identical=first is None, first_difference=first, baseline_length=len(reference["tokens"]))


def token_ids_known(row: Mapping[str, Any]) -> bool:
    """Whether a row holds the token ids it generated (a table from before the column: it does); an endpoint that
    sends none leaves them empty, and its text is what it can be compared by."""
    known = row.get("token_ids", True)
    return True if known is None or known is pd.NA else bool(known)


def machines_of(cells: pd.DataFrame, order: Sequence[str] = ()) -> list[str]:
    """The machines in a cell table: those of ``order`` first, in that order, then any others as they come."""
    return _labels_of(cells, MACHINE, order)


def builds_of(cells: pd.DataFrame, order: Sequence[str] = ()) -> list[str]:
    """The builds in a cell table ('' for a run without builds), those of ``order`` first, then any others."""
    return _labels_of(cells, BUILD, order)


def _labels_of(cells: pd.DataFrame, column: str, order: Sequence[str]) -> list[str]:
    present = list(dict.fromkeys(cells[column]))
    return [m for m in order if m in present] + [m for m in present if m not in order]


def frame_of(rows: Sequence[dict[str, Any]], baseline: str) -> pd.DataFrame:
    """The typed table of rows holding some of the columns (the others empty), with identity filled in."""
    full = [
        {name: ([] if name in LIST_COLUMNS else None) for name in SCHEMA.names}
        | {MACHINE: DEFAULT_MACHINE, BUILD: ONE_BUILD, "prompt": ONE_PROMPT}
        | dict(row)
        for row in rows
    ]
    for row in full:
        row["one_request"] = row["concurrency"] in (None, 1)
    for row in full:
        for column in _TIMES:
            if isinstance(row[column], str):
                row[column] = dt.datetime.fromisoformat(row[column])
    _identity(full, baseline)
    order = {start: rank for rank, start in enumerate(sorted({r["started_at"] for r in full} - {None}), start=1)}
    for row in full:
        row["run_order"] = order.get(row["started_at"])
    arrow = pa.Table.from_pylist(full, schema=SCHEMA)
    return from_arrow(arrow).sort_values([MACHINE, *COORDINATES], kind="stable").reset_index(drop=True)


def from_arrow(arrow: pa.Table) -> pd.DataFrame:
    """Arrow -> pandas with nullable integer/boolean columns and plain Python lists in list columns."""
    frame = arrow.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}.get)
    for column in LIST_COLUMNS:
        frame[column] = [v.tolist() if hasattr(v, "tolist") else list(v or []) for v in frame[column]]
    return frame


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Write the per-cell table as Parquet, atomically."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(frame, schema=SCHEMA, preserve_index=False), sink)
    write_atomic(Path(path), sink.getvalue().to_pybytes())


ONE_REQUEST = {"one_request": True}  # the column and value that select the study's one-request cells


def one_request(cells: pd.DataFrame) -> pd.DataFrame:
    """The study's cells of a per-cell table: one request at a time (a load run's concurrency-1 cells among them);
    every summary but the load table's is made of them."""
    return cells[cells.one_request.fillna(True).astype(bool)].reset_index(drop=True)


def read_table(path: Path) -> pd.DataFrame:
    """Read the per-cell table written by ``write_table``."""
    return from_arrow(pq.read_table(path, schema=SCHEMA))


def csv_copy(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy for people who open CSV files: list and mapping columns as JSON, token ids, text and chunk arrivals
    left out."""
    out = frame.drop(columns=["tokens", "content", "chunk_ms", "chunk_tokens", "load_tokens"], errors="ignore").copy()
    for column in out.columns:
        if out[column].map(lambda v: isinstance(v, (list, dict))).any():
            out[column] = out[column].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    return out
