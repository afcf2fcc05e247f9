"""The sections around the measurements: what this run found, its setup, how it compares with the study's,
the predictions, the missing cells and the provenance, from the summary tables and the run's facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.speed import NOISE_LIMIT
from specbench.core.records.run_setup import model_origin
from specbench.core.results.judged import Comparability
from specbench.report.document import (
    TASK,
    TEMPERATURE,
    Column,
    Facts,
    Note,
    Section,
    Table,
    digits,
    multiplier_cell,
    verdict_tone,
)
from specbench.report.sections.claims import claim_notes, claims_section, question_notes

PROMPTS_NOTE = (
    "The study published none of its prompts: this run's prompts are our own (`config/tasks/`), written "
    "to its task descriptions, so a figure that depends on the exact prompt (token counts, acceptance, "
    "which outputs differ, the GSM8K answers; marked *prompt-dependent*) compares answers to other text."
)


def prompts_note(facts: Facts) -> str:
    """Whose prompts this run asked: our own, written to the study's task descriptions, or a public prompt set's."""
    if not facts.prompt_set:
        return PROMPTS_NOTE
    first = facts.prompt_set[0]
    return (
        f"This run's tasks are categories of a public prompt set, {first['source']} (see Prompt set), not the "
        "study's four tasks: the study's claims about its tasks are not measured here, and the thesis (does the task "
        "or the method decide?) is asked over these categories."
    )


def warmup_line(cells: pd.DataFrame) -> str:
    """Which request of its server each cell timed: the one after a discarded warm-up, or the server's first."""
    warmed = pd.to_numeric(cells["warmup_tokens"], errors="coerce") if "warmup_tokens" in cells else None
    sizes = [] if warmed is None else sorted({int(n) for n in warmed.dropna()})
    first = "a fresh server's first request, as the study timed its cells"
    if not sizes:
        return f"No warm-up request: each cell timed {first} (a warm server's later cells: its next request)."
    unwarmed = int(warmed.isna().sum()) if warmed is not None else 0
    also = f"; {unwarmed} cells had none and timed {first}" if unwarmed else ""
    return (
        f"Each server first answered a discarded warm-up request ({' or '.join(map(str, sizes))} tokens of another "
        "prompt at temperature 0, kept in each record as server.warmup): no cell timed its server's first request, "
        f"which the study's cells did (server.warmup_tokens: 0 times it){also}."
    )


def setup_section(cells: pd.DataFrame, facts: Facts) -> Section:
    """The setup: cell count, the metric and the run's environment, item by item."""
    return Section(
        "environment",
        "Setup",
        [
            Note(f"{len(cells)} cells; metric: server-reported generation tokens/s (prompt processing excluded)."),
            Note(warmup_line(cells)),
        ],
        Table(
            [Column("item", "item", text=True), Column("value", "value", text=True)],
            [{"item": k, "value": v} for k, v in facts.environment.items()],
        ),
    )


def _matrix(summary: pd.DataFrame, baseline: str, conditions: Sequence[str]) -> Table:
    """Task x condition: the multiplier, its interval and the verdict, one row per task and temperature, marked
    where it was measured on outputs that differ from the baseline's."""
    others = summary[summary.condition != baseline]
    shown = [c for c in conditions if c in set(others.condition)]
    rows = []
    for (task, temperature), group in others.groupby(["task", "temperature"], sort=False):
        row: dict[str, Any] = {"task": task, "temperature": temperature}
        for r in group.to_dict("records"):
            row[r["condition"]] = r
        rows.append(row)

    def cell(condition: str) -> Column:
        return Column(
            condition,
            lambda row: row.get(condition),
            lambda r: multiplier_cell(r, baseline),
            text=True,
            tone=lambda r: verdict_tone(r["verdict"]) if isinstance(r, Mapping) else "",
        )

    return Table([TASK, TEMPERATURE, *(cell(c) for c in shown)], rows)


def _scope_line(comparability: Comparability) -> str:
    if comparability.comparable:
        return "the study's setup: every claim is compared."
    if not comparability.same_model:
        return (
            "another model than the study's: the study's claims are not judged; the order of tasks per method is "
            "asked of this model (does the task decide here too?)."
        )
    return (
        "not the study's setup (see Comparable with the study?): absolute figures are not compared, acceptance is "
        "judged where only the GPU differs, verdicts and orders of methods are shown as agreeing or differing, the "
        "order of tasks per method is judged."
    )


def answer_section(
    summary: pd.DataFrame, claims: pd.DataFrame | None, facts: Facts, conditions: Sequence[str]
) -> Section:
    """What this run found, first: on the study's model, what held, what differs, what was not reproduced and what
    could not be told and why (each sentence or claim once; opening.py), or, on another model, the questions asked
    of it; and the multipliers."""
    comparability = facts.comparability
    notes = [Note(f"Measured on **{comparability.device}**; {_scope_line(comparability)}"), Note(prompts_note(facts))]
    items: list[Note] = []
    if claims is not None and not claims.empty and not comparability.same_model:
        items = question_notes(claims)
    elif claims is not None and not claims.empty:
        items = claim_notes(claims, comparability.device, comparability.comparable)[1]
    notes.append(
        Note(
            f"Multiplier vs '{facts.baseline}' (mean over mean) with its 95 % interval and the study's verdict rule "
            "(*too few runs* where chance alone would give its word more often than 1 in 20, as with fewer than 3 "
            f"runs against 3); *noisy*: the baseline's own runs spread by more than {NOISE_LIMIT:.0%} on "
            "that task."
        )
    )
    return Section("answer", "What this run found", notes, _matrix(summary, facts.baseline, conditions), items)


def comparability_section(facts: Facts) -> Section:
    """How this run's setup compares with the study's, fact by fact, and so what is judged."""
    comparability = facts.comparability
    verdict = (
        "Not every fact matches: absolute figures (tokens/s, multipliers, token counts) are shown but not compared; "
        "acceptance, which follows from the model and its settings rather than the GPU, is judged where only the GPU "
        "differs and shown but not compared elsewhere; verdicts and orders of methods are shown beside the study's "
        "(agrees / differs); the order of tasks per method, the one thing the study expects to transfer, is judged "
        "on this setup."
    )
    if comparability.comparable:
        verdict = "Every fact matches: absolute figures are compared with the study's."
    elif not comparability.same_model:
        verdict = (
            "The model differs: the study's claims are about its own model, so none is judged here; the order of "
            "tasks per method is asked of this model instead."
        )
    return Section(
        "comparability",
        "Comparable with the study?",
        [Note(verdict)],
        Table(
            [
                Column("fact", "name", text=True),
                Column("study", "study", text=True),
                Column("this run", "this_run", text=True),
                Column("match", "matches", lambda v: "yes" if v else "no", tone=lambda v: "good" if v else "bad"),
            ],
            [vars(f) for f in comparability.facts],
        ),
    )


def prediction_sections(facts: Facts) -> list[Section]:
    """The predictions stamped before the run and whether they were stamped in time (none without them)."""
    if facts.predictions is None:
        return []
    check = facts.predictions_integrity or {}
    notes = [
        Note(
            f"Stamped {check.get('stamped_at')} (file modified {check.get('modified_at')}), "
            + (
                "before the first cell started."
                if check.get("stamped_before_measuring")
                else "**after** measuring had begun."
            ),
            "" if check.get("stamped_before_measuring") else "bad",
        ),
        Note(
            "The file is unchanged since."
            if not check.get("changed_after_stamp")
            else "**The file changed after it was stamped**: sha256 "
            f"{check.get('recorded_sha256', '')[:12]} then, {check.get('current_sha256', '')[:12]} now.",
            "" if not check.get("changed_after_stamp") else "bad",
        ),
    ]
    return [claims_section(facts.predictions, "Predictions written before measuring", "predictions", notes)]


def missing_section(facts: Facts) -> Section:
    """The configured cells that were not measured."""
    if not facts.missing_cells:
        return Section(
            "missing", "Missing cells", [Note("None: every cell of the configuration was measured.")], markdown=False
        )
    return Section("missing", "Missing cells", items=[Note(m, "bad") for m in facts.missing_cells], markdown=False)


def provenance_section(numbers: Mapping[str, Any], run_context: Mapping[str, Any]) -> Section:
    """Each number's id, value and source files, and the run's context."""
    context = "; ".join(f"{k}: {v}" for k, v in run_context.items())
    return Section(
        "provenance",
        "Provenance",
        [
            Note(
                "Each number's id, value and the cell files it was computed from; each cell's server "
                "log, argv, binary and "
                "model hashes are in `provenance.json` (`python -m specbench provenance ID` prints "
                "the chain). Run context: " + (context or "n/a")
            )
        ],
        Table(
            [
                Column("id", "id", text=True),
                Column("value", "value", digits(3)),
                Column("what", "what", text=True),
                Column("cells", "cells", files=True, text=True),
            ],
            [{"id": key, **number} for key, number in numbers.items()],
            anchor="id",
        ),
        markdown=False,
    )


def real_model_note(model: Mapping[str, Any], study: Mapping[str, Any]) -> str | None:
    """The report's warning when the target is a trained model other than the study's (None for the study's own
    architecture: the study's model, or a tiny constructed one, which has its own note)."""
    if model.get("architecture") == study["model"]["architecture"]:
        return None
    meta = model.get("metadata") or {}
    name = meta.get("general.name") or meta.get("general.basename") or "the model"
    size = meta.get("general.size_label")
    return (
        f"The target is a real trained model, not the study's {study['model']['repo']}: {name}"
        + (f", {size} parameters" if size else "")
        + f" ({model.get('architecture')}, "
        f"{model.get('file_type_name')}, {model_origin(model.get('source') or {})}). Its acceptance, output "
        "identity and answers are this model's own; its multipliers are not the study's."
    )
