"""Cell records into the per-cell table (analysis.cell_table): each record's row, with the columns derived from it
(the server's figures, the GSM8K score, the text's sources, the logged speculative settings), only from current code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.cell_table import frame_of
from specbench.analysis.chunk_latency import latency_columns
from specbench.analysis.derived import derived_figures
from specbench.analysis.divergence import attach
from specbench.analysis.draft_positions import position_columns
from specbench.analysis.gsm8k import score_gsm8k
from specbench.analysis.load_requests import load_columns
from specbench.analysis.repetition import text_sources
from specbench.analysis.server_log import parse_speculative_log
from specbench.core.plan.coordinates import LAYOUT
from specbench.core.records.draft_budget import draft_length
from specbench.core.records.timings import client_rate, record_timings

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
        "client_tokens_per_s": client_rate(record),
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


def _budget(record: dict[str, Any], speculative: dict[str, Any], positions: dict[str, Any]) -> dict[str, Any]:
    """The draft length the server was set to and where that was read, what it drafted per verification step by
    the counts, and the sampling its request stated."""
    length, source = draft_length(record, speculative["spec_n_max"])
    drafted, steps = positions["counted_drafted"], positions["verification_steps"]
    sampling = record["provenance"].get("sampling") or {}
    return {
        "draft_length": length,
        "draft_length_source": source,
        "drafted_per_step": drafted / steps if drafted is not None and steps else None,
        "sampling": " ".join(f"{name}={entry['value']}" for name, entry in sampling.items()) or None,
    }


def cell_row(record: dict[str, Any], path: str) -> dict[str, Any]:
    """One row: the coordinates, the server's figures, the answer check, how it was measured and by what."""
    prov, server, rejected = record["provenance"], record["server"], record.get("rejected_attempts", [])
    figures = _figures(record)
    positions, speculative = position_columns(record), _speculative(record)
    return {
        **LAYOUT.from_record(record["cell"]),
        **{key: figures.get(key) for key in _FIGURES},
        "tokens": list(record["response"].get("tokens", [])),
        "token_ids": record["response"]["api"] == "completion" or bool(record["response"].get("token_ids_sent")),
        "content": record["response"].get("content") or "",
        **positions,
        **latency_columns(record),
        **load_columns(record),
        **_text_sources(record),
        **_gsm8k(record),
        **speculative,
        **_budget(record, speculative, positions),
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
        "warmup_tokens": (server.get("warmup") or {}).get("max_tokens"),
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
