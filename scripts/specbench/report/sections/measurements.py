"""The report's measurement sections: speeds, acceptance, identical outputs, GSM8K answers, warm servers,
contention, the ceiling and the runs, each from the summary tables and the cell table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from specbench.analysis.repetition import WINDOW
from specbench.analysis.speed import NOISE_LIMIT
from specbench.analysis.verdict_rule import VERDICT_LEVEL
from specbench.core.config.backends import WATCH_NONE
from specbench.core.records.explanations import TOP_K
from specbench.report.document import (
    CONDITION,
    GROUP_COLUMNS,
    REPEAT,
    TASK,
    TEMPERATURE,
    Column,
    Facts,
    Note,
    Section,
    Table,
    digits,
    fmt_divergence,
    fmt_interval,
    fmt_multiplier,
    fmt_outputs,
    is_missing,
    joined,
    percent,
    records,
    verdict_tone,
)
from specbench.report.sections.environment import ceiling_rows
from specbench.report.sections.variations import prompt_column


def _speeds_vs(baseline: str) -> Callable[[Any], str]:
    def show(pair: tuple[list[float], list[float]]) -> str:
        own, base = pair
        return f"[{', '.join(f'{v:.2f}' for v in own)}] vs {baseline} [{', '.join(f'{v:.2f}' for v in base)}]"

    return show


def _gsm8k_wrong(wrong: list[dict[str, Any]]) -> str:
    return "; ".join(f"problem {w['problem']}: {w['extracted']} vs {w['reference']}" for w in wrong) or "none"


def speed_sections(summary: pd.DataFrame, baseline: str) -> list[Section]:
    """The speed tables: each condition's tokens/s per task and temperature and its multiplier over the baseline."""
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


def acceptance_section(acceptance: pd.DataFrame, baseline: str) -> Section:
    """Acceptance per cell: drafted and accepted tokens, tokens per step and the text taken from the prompt."""
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


def identity_section(identity: pd.DataFrame, baseline: str) -> Section:
    """Whether each condition's temperature-0 outputs equal the baseline's, token for token, beside the control."""
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


def gsm8k_sections(cells: pd.DataFrame, stand_in_tasks: Sequence[str]) -> list[Section]:
    """The GSM8K answers checked per cell (none when no cell was checked)."""
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


def warm_sections(cells: pd.DataFrame) -> list[Section]:
    """The cells whose server answered earlier cells first, and what that server had seen (none when none did)."""
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


def contention_section(cells: pd.DataFrame) -> Section:
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


def ceiling_section(summary: pd.DataFrame, facts: Facts) -> Section:
    """The baseline's speed as a share of the device's memory-bandwidth ceiling."""
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


def runs_section(cells: pd.DataFrame) -> Section:
    """One row per cell: its files, server and client speeds and the contention watch's mark."""
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
