"""The report's sections, in order: ``build_report`` turns the summary tables (analysis.summaries.tables), the claims
evaluation and the run's facts into one ``Report``, which both renderers show. A section marked ``markdown=False``
appears in the HTML report only."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from specbench.analysis.repetition import WINDOW
from specbench.analysis.speed import NOISE_LIMIT
from specbench.analysis.summaries import methods
from specbench.analysis.thesis import settings_beside
from specbench.analysis.verdict import VERDICT_LEVEL
from specbench.core.config.backends import WATCH_NONE
from specbench.core.records.explanations import TOP_K
from specbench.report.comparability import Comparability
from specbench.report.document import (
    CONDITION,
    GROUP_COLUMNS,
    REPEAT,
    TASK,
    TEMPERATURE,
    Column,
    Facts,
    Figure,
    Note,
    Report,
    Section,
    Table,
    digits,
    fmt_divergence,
    fmt_interval,
    fmt_multiplier,
    fmt_outputs,
    is_missing,
    joined,
    multiplier_cell,
    percent,
    records,
    verdict_tone,
)
from specbench.report.sections.claims import claim_notes, claims_section, question_notes, settings_section
from specbench.report.sections.environment import ceiling_rows
from specbench.report.sections.machines import MachineView, machines_sections
from specbench.report.sections.opening import headline_section
from specbench.report.sections.requests import latency_section, positions_section
from specbench.report.sections.thesis import thesis_section
from specbench.report.sections.variations import prompt_column, prompt_sections, sweep_sections

# ---------------------------------------------------------------------------------------------------------------
# The sections

PROMPTS_NOTE = (
    "The study published none of its prompts: this run's prompts are our own (`config/tasks/`), written "
    "to its task descriptions, so a figure that depends on the exact prompt (token counts, acceptance, "
    "which outputs differ, the GSM8K answers; marked *prompt-dependent*) compares answers to other text."
)


def _speeds_vs(baseline: str) -> Callable[[Any], str]:
    def show(pair: tuple[list[float], list[float]]) -> str:
        own, base = pair
        return f"[{', '.join(f'{v:.2f}' for v in own)}] vs {baseline} [{', '.join(f'{v:.2f}' for v in base)}]"

    return show


def _gsm8k_wrong(wrong: list[dict[str, Any]]) -> str:
    return "; ".join(f"problem {w['problem']}: {w['extracted']} vs {w['reference']}" for w in wrong) or "none"


def _setup(cells: pd.DataFrame, facts: Facts) -> Section:
    return Section(
        "environment",
        "Setup",
        [Note(f"{len(cells)} cells; metric: server-reported generation tokens/s (prompt processing excluded).")],
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


def _answer(summary: pd.DataFrame, claims: pd.DataFrame | None, facts: Facts, conditions: Sequence[str]) -> Section:
    """What this run found, first: on the study's model, what held, what differs, what was not reproduced and what
    could not be told and why (each sentence or claim once; opening.py), or, on another model, the questions asked
    of it; and the multipliers."""
    comparability = facts.comparability
    notes = [Note(f"Measured on **{comparability.device}**; {_scope_line(comparability)}"), Note(PROMPTS_NOTE)]
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


def _comparability(facts: Facts) -> Section:
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


def _predictions(facts: Facts) -> list[Section]:
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


def _speed_sections(summary: pd.DataFrame, baseline: str) -> list[Section]:
    base, others = summary[summary.condition == baseline], summary[summary.condition != baseline]
    mean = Column("mean tok/s", "mean_tokens_per_s", digits(1))
    noisy = sorted(
        {
            f"{r['task']} (T={r['temperature']:g}: {r['baseline_spread']:.1%})"
            for r in records(others)
            if r["noisy"] is True
        }
    )
    chance = sorted({round(v, 4) for v in others.verdict_chance.dropna()})
    notes = [
        Note(
            "Multiplier = mean tokens/s over the baseline's mean tokens/s of the same task and temperature (the "
            "study's arithmetic); *x median* is the same with medians. Interval: 95 % Welch t-interval on the log of "
            "the ratio of means (delta method); with 3 runs a side it is wide, and that is the point."
        ),
        Note(
            "Verdict (the study's rule): *faster* if every run beats every baseline run, *slower* if every run is "
            "below, else *none*. With nothing different, 3 runs all beating 3 happens by chance 1 time in 20: an "
            "exact one-sided rank test"
            + (f" (here: {', '.join(f'{c:.3g}' for c in chance)})" if chance else "")
            + f". Where chance would give the word more often than {VERDICT_LEVEL:.0%} (1 run against 1: 1 in 2; 2 "
            "against 2: 1 in 6), the verdict is *too few runs*."
        ),
    ]
    if noisy:
        notes.append(
            Note(
                f"The '{baseline}' runs themselves spread by more than {NOISE_LIMIT:.0%} on: "
                f"{', '.join(noisy)}. No multiplier there is trusted to better than that spread.",
                "warn",
            )
        )
    return [
        Section(
            "baseline",
            f"'{baseline}' tokens/s per task",
            table=Table(
                [
                    TASK,
                    TEMPERATURE,
                    Column("runs", "runs"),
                    replace(mean, link="speed"),
                    Column("median", "median_tokens_per_s", digits(1)),
                    Column("min", "min_tokens_per_s", digits(1)),
                    Column("max", "max_tokens_per_s", digits(1)),
                    Column("CV", "cv", percent),
                ],
                records(base),
            ),
        ),
        Section(
            "multipliers",
            f"Multiplier vs '{baseline}' and verdict",
            notes,
            Table(
                [
                    *GROUP_COLUMNS,
                    mean,
                    Column("x", "speedup", fmt_multiplier, link="speedup"),
                    Column("95 % interval", lambda r: (r["speedup_ci_low"], r["speedup_ci_high"]), fmt_interval),
                    Column("x median", "speedup_median", fmt_multiplier),
                    Column("CV", "cv", percent),
                    Column(
                        f"{baseline} spread",
                        "baseline_spread",
                        percent,
                        tone=lambda v: "warn" if not is_missing(v) and v > NOISE_LIMIT else "",
                    ),
                    Column("runs for +-5 %", "runs_for_5pct", lambda v: "n/a" if is_missing(v) else f"{v:.0f}"),
                    Column("verdict", "verdict", text=True, tone=verdict_tone),
                    Column(
                        f"output vs {baseline} (T=0)",
                        lambda r: fmt_outputs(r, baseline),
                        str,
                        text=True,
                        tone=lambda v: "warn" if v.startswith("differs") else "",
                    ),
                    Column(
                        "runs vs baseline (tok/s)",
                        lambda r: (r["tokens_per_s_values"], r["baseline_tokens_per_s_values"]),
                        _speeds_vs(baseline),
                        text=True,
                    ),
                ],
                records(others),
            ),
        ),
    ]


def _share(value: float | None) -> str:
    return "" if is_missing(value) else f"{value:.0%}"


def _acceptance(acceptance: pd.DataFrame, baseline: str) -> Section:
    return Section(
        "acceptance",
        "Acceptance",
        [
            Note("Tokens per step = generated / (generated - accepted): the mean tokens one target-model step yields."),
            Note(
                "Text from the prompt: the share of the response's characters inside a "
                f"{WINDOW}-character span that also "
                "occurs in the rendered prompt (what prompt n-gram lookup copies); repeated: inside "
                "one that occurs earlier in "
                "the response and not in the prompt (the model repeating itself, which the lookup drafts from too)."
            ),
        ],
        Table(
            [
                *GROUP_COLUMNS,
                Column("drafted", "drafted"),
                Column("accepted", "accepted"),
                Column("rate", "pooled_rate", digits(3), link="acceptance"),
                Column("tokens/step", "tokens_per_step"),
                Column("n_max (logged)", "spec_n_max", lambda v: "" if is_missing(v) else f"{v:.0f}"),
                Column("text from the prompt", "from_prompt_share", _share),
                Column("repeated", "from_output_share", _share),
                Column("note", "drafted", lambda drafted: "drafted nothing" if drafted == 0 else "", text=True),
            ],
            records(acceptance[acceptance.condition != baseline]),
        ),
    )


def _identity(identity: pd.DataFrame, baseline: str) -> Section:
    return Section(
        "identity",
        f"Output identity at temperature 0 (token ids vs '{baseline}', same repeat; control: "
        f"'{baseline}' repeats vs its repeat 1)",
        table=Table(
            [
                TASK,
                Column("condition", lambda r: r["condition"] + (" (control: r1)" if r["control"] else ""), text=True),
                Column(
                    "identical / compared",
                    lambda r: (r["identical"], r["repeats_compared"]),
                    lambda pair: f"{pair[0]}/{pair[1]}",
                    link="identity",
                ),
                Column("not compared", "missing"),
                Column("all identical", "all_identical"),
                Column(
                    "tokens where different (cond vs base)",
                    "token_counts",
                    lambda pairs: "; ".join(f"{a} vs {b}" for a, b in pairs),
                ),
                Column("first difference", "first_differences", joined),
                Column(
                    "which (prompt, repeat)",
                    lambda r: list(zip(r["differing_prompts"], r["differing_repeats"], strict=True)),
                    lambda pairs: ", ".join(f"{p + ' ' if p else ''}r{n}" for p, n in pairs),
                    text=True,
                ),
                Column(
                    "why (the baseline's own log-probabilities there)",
                    "divergences",
                    lambda ds: "; ".join(fmt_divergence(d, TOP_K) for d in ds),
                    text=True,
                ),
            ],
            records(identity),
        ),
    )


def _gsm8k(cells: pd.DataFrame, stand_in_tasks: Sequence[str]) -> list[Section]:
    checked = cells[cells.gsm8k_total.notna()]
    if checked.empty:
        return []
    stand_in = sorted(set(checked.task) & set(stand_in_tasks))
    notes = [Note(f"Stand-in problems, not the dataset, for: {', '.join(stand_in)}.", "warn")] if stand_in else []
    notes.append(
        Note(
            "What counts as an answer: the last 'Answer N:' line for problem N; else, in that problem's part "
            "of the text, '#### x', a boxed number, 'the answer is x' or 'Answer: x'; else the last number "
            "of that part, when the text moved on to the next problem or ended by itself (a text cut off "
            "at the token limit inside a problem gives none there). *answered*: problems with an answer so "
            "read; a text that only repeats itself answers nothing."
        )
    )
    return [
        Section(
            "task-checks",
            "Task checks (GSM8K answers)",
            notes,
            Table(
                [
                    TASK,
                    *prompt_column(checked),
                    CONDITION,
                    TEMPERATURE,
                    REPEAT,
                    Column("answered", lambda r: (r["gsm8k_answered"], r["gsm8k_total"]), lambda p: f"{p[0]}/{p[1]}"),
                    Column("correct", lambda r: (r["gsm8k_correct"], r["gsm8k_total"]), lambda p: f"{p[0]}/{p[1]}"),
                    Column("wrong answers (extracted vs reference)", "gsm8k_wrong", _gsm8k_wrong, text=True),
                ],
                records(checked),
            ),
        )
    ]


# What one server of a warm condition answered, by the scope its records name (config 'warm_scope').
WARM_SCOPES = {
    "task": "per task (`warm_scope: task`): one server per task and temperature answered that task's repeats in "
    "order, so each task started from an empty n-gram table",
    "condition": "the whole condition (`warm_scope: condition`): one server answered every cell of the condition in "
    "the study's order (tasks in config order, per task its temperatures ascending, per temperature its "
    "repeats one after another), so a task also met the n-gram table the tasks before it left",
}


def _beside(tables: Mapping[str, pd.DataFrame], baseline: str) -> pd.DataFrame | None:
    """The thesis with each setting of a method in place of that method (shown beside the run's, never in it)."""
    cells = tables.get("cells")
    if cells is None or cells.empty or tables.get("thesis") is None:
        return None
    return settings_beside(cells, baseline, methods(cells, baseline))


def _warm(cells: pd.DataFrame) -> list[Section]:
    shared = cells.server_shared.fillna(False).astype(bool)
    scopes = cells.server_scope.where(cells.server_scope.notna(), shared.map({True: "task", False: "fresh"}))
    warm = cells[scopes != "fresh"].assign(server_scope=scopes[scopes != "fresh"])
    if warm.empty:
        return []
    ran = warm.groupby("condition", sort=False).server_scope.agg(lambda s: list(dict.fromkeys(s)))
    notes = [
        Note(
            f"Warm scope that ran for {condition}: "
            + "; ".join(WARM_SCOPES.get(scope, str(scope)) for scope in scopes_ran)
            + "."
        )
        for condition, scopes_ran in ran.items()
    ]
    return [
        Section(
            "warm",
            "Fresh vs warm n-gram server",
            [
                Note(
                    "A warm condition answers several cells in order on one server (position 1, 2, "
                    "...); the fresh one starts a "
                    "server per cell."
                ),
                *notes,
            ],
            Table(
                [
                    TASK,
                    *prompt_column(warm),
                    CONDITION,
                    TEMPERATURE,
                    REPEAT,
                    Column("scope", "server_scope", text=True),
                    Column("position", "server_position"),
                    Column("server pid", "server_pid"),
                    Column("tok/s", "tokens_per_s", digits(1), link="run"),
                ],
                records(warm),
            ),
        )
    ]


def _unwatched(cells: pd.DataFrame) -> list[Note]:
    """A warning naming the backends whose cells' GPU was not watched (no per-process accounting, or no NVML)."""
    unwatched = cells[cells.gpu_watch == WATCH_NONE]
    if unwatched.empty:
        return []
    backends = ", ".join(sorted(set(unwatched.backend.dropna()))) or "unknown"
    return [
        Note(
            f"**GPU not watched** in {len(unwatched)} of {len(cells)} cell(s) (backend {backends}: no "
            "per-process GPU accounting, or no NVML): another process on that GPU would not have been seen, so "
            "those cells are marked *not watched* under Runs; CPU contention was still judged.",
            "warn",
        )
    ]


def _contention(cells: pd.DataFrame) -> Section:
    """Attempts rejected as contended and the waits for a quiet machine: their count, and the table of the cells that
    had any (none when none had)."""
    rejected = cells[cells.rejected_attempts > 0]
    note = Note(
        f"{int(cells.rejected_attempts.sum())} attempt(s) rejected as contended and measured again, in "
        f"{len(rejected)} cell(s); {int(cells.quiet_waits.sum())} wait(s) for a quiet machine before "
        f"measuring again, {float(cells.quiet_wait_s.sum()):.0f} s in all."
    )
    table = Table(
        [
            Column("cell", "cell_file", files=True, text=True),
            Column("rejected attempts", "rejected_attempts"),
            Column("waited s", "quiet_wait_s", digits(1)),
            Column("reasons", "rejected_reasons", lambda r: joined(r, "; "), text=True),
        ],
        records(rejected),
    )
    return Section("contention", "Contention", [note, *_unwatched(cells)], table if len(rejected) else None)


def _ceiling(summary: pd.DataFrame, facts: Facts) -> Section:
    note, rows = ceiling_rows(facts.device, facts.model_bytes, summary[summary.condition == facts.baseline])
    table = Table(
        [
            TASK,
            TEMPERATURE,
            Column(f"{facts.baseline} tok/s", "median_tokens_per_s", digits(1)),
            Column("of ceiling", "of_ceiling", percent),
        ],
        rows,
    )
    return Section("ceiling", "Memory-bandwidth ceiling", [Note(note)], table if rows else None, markdown=False)


def _watch_mark(watch: Any) -> str:
    """How a cell's GPU was watched, as the Runs table shows it ('not watched' stands out)."""
    return "not watched" if watch == WATCH_NONE else "" if is_missing(watch) else str(watch)


def _runs(cells: pd.DataFrame) -> Section:
    return Section(
        "runs",
        "Runs",
        table=Table(
            [
                Column("cell", "cell_file", files=True, text=True),
                Column("tok/s (server)", "tokens_per_s", digits(1), link="run"),
                Column("tok/s (client)", "client_tokens_per_s", digits(1)),
                Column("tokens", "predicted_n"),
                Column("drafted", "draft_n"),
                Column("accepted", "draft_n_accepted"),
                Column("server pid", "server_pid"),
                Column("pos", "server_position"),
                Column("attempt", "attempt"),
                Column("overhead s", "overhead_s"),
                Column(
                    "GPU watch", "gpu_watch", _watch_mark, text=True, tone=lambda v: "warn" if v == WATCH_NONE else ""
                ),
            ],
            records(cells),
        ),
    )


def _missing(facts: Facts) -> Section:
    if not facts.missing_cells:
        return Section(
            "missing", "Missing cells", [Note("None: every cell of the configuration was measured.")], markdown=False
        )
    return Section("missing", "Missing cells", items=[Note(m, "bad") for m in facts.missing_cells], markdown=False)


def _provenance(numbers: Mapping[str, Any], run_context: Mapping[str, Any]) -> Section:
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


def _scope_warning(comparability: Comparability) -> str:
    """The report's first line off the study's setup: what differs, and so what is judged (docs/claims.md, Scope)."""
    differing = ", ".join(comparability.differing)
    if not comparability.same_model:
        return (
            f"This run measured **another model** than the study's ({differing} differ): none of the study's claims "
            "is judged (they are about its model); whether the task decides the multiplier here too is asked of this "
            "model instead."
        )
    return (
        f"This run is **not** on the published study's setup ({differing} differ): absolute figures are not compared "
        f"with the published ones; the order of tasks per method is judged on {comparability.device}, verdicts and "
        "orders of methods are shown as agreeing or differing."
    )


def build_report(
    tables: Mapping[str, pd.DataFrame],
    *,
    facts: Facts,
    claims: pd.DataFrame | None,
    numbers: Mapping[str, Any],
    figures: Sequence[Figure] = (),
    conditions: Sequence[str] = (),
    machines: Sequence[MachineView] = (),
    sweeps: Mapping[str, Mapping[str, Any]] | None = None,
    thesis: Figure | None = None,
    opening: Sequence[Section] = (),
) -> Report:
    """The report's sections, in order, from the summary tables (summaries.tables), the claims evaluation, the
    provenance numbers and the figures (``sweeps``: each swept condition's facts; ``thesis``: the thesis section's
    figure; ``opening``: sections shown first, the builds compared)."""
    cells, summary, baseline = tables["cells"], tables["summary"], facts.baseline
    warnings = [facts.endpoint_note] if facts.endpoint_note else []
    warnings += [_scope_warning(facts.comparability)] if not facts.comparability.comparable else []
    warnings += [facts.model_note] if facts.model_note else []
    banner = Note(" ".join(warnings), "warn") if warnings else None
    count = len(facts.missing_cells)
    several = len(machines) > 1
    per_machine = {v.label: len(v.tables["cells"]) for v in machines}
    measured = (
        f"{sum(per_machine.values())} cells measured on {len(machines)} machines ("
        + ", ".join(f"{label}: {n}" for label, n in per_machine.items())
        + ")"
        if several
        else f"{len(cells)} cells measured"
    )
    lead = Note(
        measured
        + "; "
        + (f"{count} missing (listed under Missing cells)" if count else "none missing")
        + ". Every number links to its provenance entry."
        + (
            f" The sections after Machines compared show the first machine, **{machines[0].label}** "
            f"({machines[0].device})."
            if several
            else ""
        ),
        "bad" if count else "",
    )
    shown = conditions or list(dict.fromkeys(summary.condition))
    sections = [
        *opening,
        _answer(summary, claims, facts, shown),
        *(headline_section(claims, summary, facts.comparability.comparable) if facts.comparability.same_model else []),
        *machines_sections(machines, baseline, shown),
        *thesis_section(tables.get("thesis"), claims, thesis, shown, _beside(tables, baseline)),
        _setup(cells, facts),
        _comparability(facts),
        claims_section(claims),
        *settings_section(claims),
        *_predictions(facts),
        *_speed_sections(summary, baseline),
        *prompt_sections(tables, baseline),
        *sweep_sections(summary, tables["acceptance"], sweeps or {}),
        Section("figures", "Figures", figures=figures, markdown=any(f.file for f in figures)),
        _acceptance(tables["acceptance"], baseline),
        positions_section(tables["positions"]),
        latency_section(tables["latency"]),
        _identity(tables["identity"], baseline),
        *_gsm8k(cells, facts.stand_in_tasks),
        *_warm(cells),
        _contention(cells),
        _ceiling(summary, facts),
        _runs(cells),
        _missing(facts),
        _provenance(numbers, facts.run_context),
    ]
    return Report(f"Speculative decoding benchmark: {facts.name}", banner, lead, sections, numbers)
