"""The per-cell table: one typed row per cell record, the single source of every summary, figure, claim and
provenance link. Numbers stay numbers and lists stay lists (Parquet); only the renderers make strings.

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

from specbench.analysis.chunk_latency import latency_columns
from specbench.analysis.derived import derived_figures
from specbench.analysis.divergence import attach
from specbench.analysis.draft_positions import position_columns
from specbench.analysis.gsm8k import score_gsm8k
from specbench.analysis.repetition import text_sources
from specbench.analysis.server_log import parse_speculative_log
from specbench.core.config.builds import ONE_BUILD
from specbench.core.plan.cells import DEFAULT_MACHINE, ONE_PROMPT
from specbench.core.records.explanations import first_difference, reference_repeat
from specbench.core.records.timings import record_timings
from specbench.core.steps.files import write_atomic

COORDINATES = ["task", "prompt", "condition", "temperature", "repeat"]
GROUP = ["task", "condition", "temperature"]  # a task's figures: over its prompts and repeats
PROMPT_GROUP = ["task", "prompt", "condition", "temperature"]  # one prompt's figures: over its repeats
MACHINE = "machine"  # the label of the machine a cell was measured on: summaries are made per machine
BUILD = "build"  # the label of the llama.cpp build that served it ('' without builds): summaries per build too

TEXT, INT, FLOAT, FLAG, TEXTS = pa.string(), pa.int64(), pa.float64(), pa.bool_(), pa.list_(pa.string())
TIME = pa.timestamp("ms", tz="UTC")
SETTING = pa.struct([("implementation", TEXT), ("key", TEXT), ("value", TEXT)])
WRONG = pa.struct([("problem", INT), ("extracted", TEXT), ("reference", TEXT)])
# column -> pyarrow type, a group of columns per line; the order is the table's column order
SCHEMA = pa.schema(
    [
        (MACHINE, TEXT),
        (BUILD, TEXT),
        ("task", TEXT),
        ("prompt", TEXT),
        ("condition", TEXT),
        ("temperature", FLOAT),
        ("repeat", INT),
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
_FIGURES = [
    "tokens_per_s",
    "client_tokens_per_s",
    "predicted_n",
    "decode_ms",
    "prompt_n",
    "prompt_ms",
    "draft_n",
    "draft_n_accepted",
    "acceptance_rate",
    "cell_wall_s",
    "server_ready_s",
    "request_wall_s",
    "overhead_s",
    "loadavg_1m_at_end",
]


class MixedCodeError(RuntimeError):
    """Cell records made by different measurement code would be mixed in one table."""


def _gsm8k(record: dict[str, Any]) -> dict[str, Any]:
    """The answer's score against the references the cell was asked about (computed here, from the response text)."""
    refs = record.get("references")
    if not refs:
        return {
            "gsm8k_correct": None,
            "gsm8k_answered": None,
            "gsm8k_total": None,
            "gsm8k_wrong": [],
            "gsm8k_references": [],
        }
    response = record["response"]
    complete = response.get("stop_type") not in ("limit", None)
    check = score_gsm8k(response.get("content", ""), [r["reference"] for r in refs], complete=complete)
    wrong = [
        {"problem": p["problem"], "extracted": p["extracted"], "reference": p["reference"]}
        for p in check["per_problem"]
        if not p["correct"]
    ]
    answered = sum(p["extracted"] is not None for p in check["per_problem"])
    return {
        "gsm8k_correct": check["correct"],
        "gsm8k_answered": answered,
        "gsm8k_total": check["total"],
        "gsm8k_wrong": wrong,
        "gsm8k_references": [str(r["reference"]) for r in refs],  # the problems asked, in order
    }


def _figures(record: dict[str, Any]) -> dict[str, Any]:
    """The server's figures (``derived_figures`` of its timings), the wall times, the client's decode rate, and the
    overhead: the cell's wall time beyond the server's own prompt and decode time."""
    timings = record_timings(record)
    figures = {**derived_figures(timings), "source": timings["source"]}
    timing = record["timing"]
    server_s = (figures["prompt_ms"] + figures["decode_ms"]) / 1000.0
    wall = timing.get("cell_wall_s")
    return {
        **figures,
        **timing,
        "client_tokens_per_s": record["response"]["client_timing"].get("decode_tokens_per_s"),
        "overhead_s": None if wall is None else wall - server_s,
    }


def _text_sources(record: dict[str, Any]) -> dict[str, float | None]:
    """The shares of the response's text also in the rendered prompt, or repeated from its own earlier text."""
    shares = text_sources((record.get("request") or {}).get("prompt") or "", record["response"].get("content") or "")
    return {"from_prompt_share": shares["from_prompt"], "from_output_share": shares["from_output"]}


def _first(settings: dict[str, dict[str, Any]], key: str) -> Any:
    return next((values[key] for values in settings.values() if key in values), None)


def _speculative(record: dict[str, Any]) -> dict[str, Any]:
    """The effective speculative settings the server logged (n_max, n_min, p_min, block size; all as logged), parsed
    here from the log lines the record kept."""
    spec = parse_speculative_log("\n".join(record["server"].get("log_lines") or []))
    settings: dict[str, dict[str, Any]] = spec["settings"]
    return {
        "spec_implementations": list(spec["implementations"]),
        **{f"spec_{key}": _first(settings, key) for key in ("n_max", "n_min", "p_min", "block_size")},
        "spec_settings": [
            {"implementation": impl, "key": key, "value": str(value)}
            for impl, values in settings.items()
            for key, value in values.items()
        ],
    }


def cell_row(record: dict[str, Any], path: str) -> dict[str, Any]:
    """One row: the coordinates, the server's figures, the answer check, how it was measured and by what."""
    prov, server, rejected = record["provenance"], record["server"], record.get("rejected_attempts", [])
    figures = _figures(record)
    return {
        MACHINE: record["cell"].get(MACHINE, DEFAULT_MACHINE),
        BUILD: record["cell"].get(BUILD, ONE_BUILD),
        **{key: record["cell"][key] for key in COORDINATES if key != "prompt"},
        "prompt": record["cell"].get("prompt", ONE_PROMPT),
        **{key: figures.get(key) for key in _FIGURES},
        "tokens": list(record["response"].get("tokens", [])),
        "token_ids": record["response"]["api"] == "completion" or bool(record["response"].get("token_ids_sent")),
        "content": record["response"].get("content") or "",
        **position_columns(record),
        **latency_columns(record),
        **_text_sources(record),
        **_gsm8k(record),
        **_speculative(record),
        "chat_template": ((record.get("request") or {}).get("chat_template") or {}).get("setting"),
        "seed": record["seed"],
        "attempt": record["attempt"],
        "rejected_attempts": len(rejected),
        "rejected_reasons": [r["reason"] for r in rejected],
        "contention": (record.get("contention") or {}).get("reason"),
        "quiet_waits": len(record["quiet_waits"]),
        "quiet_wait_s": sum(w["waited_s"] for w in record["quiet_waits"]),
        "backend": record.get("machine", {}).get("backend"),
        "engine": prov["engine"],
        "timings_source": figures["source"],
        "gpu_watch": (record.get("contention") or {}).get("gpu_watch"),
        "server_pid": server["pid"],
        "server_shared": bool(server.get("shared", False)),
        "server_position": server.get("position", 1),
        "server_scope": server["scope"],
        "started_at": record["started_at"],
        "ended_at": record["ended_at"],
        "server_sha256": (prov["server_binary"] or {}).get("sha256"),
        "model_sha256": prov["model"]["sha256"],
        "draft_sha256": (prov.get("draft") or {}).get("sha256"),
        "prompt_sha256": prov["prompt_sha256"],
        "code_fingerprint": record.get("code_fingerprint"),
        "cell_file": path,
        "server_log": server["log"],
        "gpu_samples": record.get("gpu_samples"),
    }


def _identity(rows: list[dict[str, Any]], baseline: str) -> None:
    """Fill the identity columns of the temperature-0 rows in place (see the module docstring)."""
    base = {
        (r[MACHINE], r[BUILD], r["task"], r["prompt"], r["repeat"]): r
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
        reference = base.get((row[MACHINE], row[BUILD], row["task"], row["prompt"], repeat))
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


def check_code(records: Sequence[tuple[str, dict[str, Any]]], expected: str) -> None:
    """Refuse to mix records made by other measurement code than the workflow's current code (``expected``, the
    fingerprint of the cell runner's import closure), naming the cells and how to rerun them."""
    stale = sorted(path for path, record in records if record.get("code_fingerprint") != expected)
    if not stale:
        return
    shown = " ".join(stale[:8]) + (" ..." if len(stale) > 8 else "")
    raise MixedCodeError(
        f"{len(stale)} cell record(s) were made by other measurement code than the workflow's current code "
        f"({expected[:12]}): {shown}. Measure them again: snakemake --cores 1 --force {' '.join(stale)} "
        f"&& snakemake --cores 1 all"
    )


def cell_table(
    records: Sequence[tuple[str, dict[str, Any]]],
    baseline: str,
    explanations: Sequence[tuple[str, dict[str, Any]]] = (),
    sha256: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The typed per-cell table of some cell records, sorted by coordinates, with what the explanation records
    (path, record) say about the cells they explain (``sha256``: the current sha256 of each explained cell file and
    its reference's, which the records must name)."""
    rows = [cell_row(record, path) for path, record in records]
    attach(rows, explanations, sha256 or {})
    return frame_of(rows, baseline)


def frame_of(rows: Sequence[dict[str, Any]], baseline: str) -> pd.DataFrame:
    """The typed table of rows holding some of the columns (the others empty), with identity filled in."""
    full = [
        {name: ([] if name in LIST_COLUMNS else None) for name in SCHEMA.names}
        | {MACHINE: DEFAULT_MACHINE, BUILD: ONE_BUILD, "prompt": ONE_PROMPT}
        | dict(row)
        for row in rows
    ]
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


def read_table(path: Path) -> pd.DataFrame:
    """Read the per-cell table written by ``write_table``."""
    return from_arrow(pq.read_table(path, schema=SCHEMA))


def csv_copy(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy for people who open CSV files: list and mapping columns as JSON, token ids, text and chunk arrivals
    left out."""
    out = frame.drop(columns=["tokens", "content", "chunk_ms", "chunk_tokens"], errors="ignore").copy()
    for column in out.columns:
        if out[column].map(lambda v: isinstance(v, (list, dict))).any():
            out[column] = out[column].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    return out
