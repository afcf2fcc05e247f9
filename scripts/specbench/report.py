"""The report as data, and its Markdown renderer.

``build_report`` turns the summary tables (see summaries) and the run's facts into one ``Report``: a list of
``Section``s, each a title, notes, figures and at most one ``Table`` whose ``Column``s name the row value they show
and the formatter that turns it into text. Values stay typed in the report; only a renderer (``render_markdown`` here,
``html_report.render_html``) calls the formatters, so both documents come from the same list of sections. A section
marked ``markdown=False`` appears in the HTML report only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from .analysis.summaries import NOISE_LIMIT
from .claims import NOT_MEASURED
from .comparability import Comparability, device_label

Row = Mapping[str, Any]


def is_missing(value: Any) -> bool:
    """None, NaN, NaT or pandas' NA (not a list)."""
    return not isinstance(value, (list, tuple)) and (value is None or bool(pd.isna(value)))


def fmt(value: Any, digits: int = 2) -> str:
    """Numbers with fixed digits, flags as yes/no; missing values as n/a."""
    if is_missing(value):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def digits(n: int) -> Callable[[Any], str]:
    """A formatter with ``n`` decimals."""
    return lambda value: fmt(value, n)


def percent(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{100 * value:.1f}%"


def joined(values: Sequence[Any], separator: str = ", ") -> str:
    return separator.join(str(v) for v in values)


@dataclass(frozen=True)
class Column:
    """One table column: its header, the row field it shows (or a function of the row), the formatter, and whether
    the HTML report links the value to its provenance entry (``link``: the number's kind, see provenance.row_id),
    links it as cell file(s) (``files``), aligns it as text, or colours it (``tone``: value -> a CSS class)."""

    header: str
    value: str | Callable[[Row], Any]
    show: Callable[[Any], str] = fmt
    link: str | None = None
    files: bool = False
    text: bool = False
    tone: Callable[[Any], str] | None = None

    def get(self, row: Row) -> Any:
        return row[self.value] if isinstance(self.value, str) else self.value(row)


@dataclass(frozen=True)
class Table:
    """Rows (typed values) and the columns that show them; ``anchor``: the row field holding the number id that the
    row is the provenance entry of."""

    columns: Sequence[Column]
    rows: Sequence[Row]
    anchor: str | None = None


@dataclass(frozen=True)
class Note:
    """A paragraph (or list item); ``**bold**`` and ``*italic*`` as in Markdown; tone: '', 'warn' or 'bad'."""

    text: str
    tone: str = ""


@dataclass(frozen=True)
class Figure:
    caption: str
    uri: str


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    notes: Sequence[Note] = ()
    table: Table | None = None
    items: Sequence[Note] = ()
    figures: Sequence[Figure] = ()
    markdown: bool = True


@dataclass(frozen=True)
class Report:
    """Everything both renderers show; ``numbers``: the provenance numbers by id (the HTML links to them)."""

    name: str
    banner: Note | None
    lead: Note
    sections: Sequence[Section]
    numbers: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Facts:
    """What the report shows besides the tables: the run's name and setup, and what the manifests say."""

    name: str
    baseline: str
    comparability: Comparability
    environment: Mapping[str, str]
    device: Mapping[str, Any]
    model_bytes: int
    missing_cells: Sequence[str] = ()
    stand_in_tasks: Sequence[str] = ()
    run_context: Mapping[str, Any] = field(default_factory=dict)
    predictions: pd.DataFrame | None = None
    predictions_integrity: Mapping[str, Any] | None = None
    model_note: str | None = None


def missing_cells(expected: Sequence[str], cells: pd.DataFrame) -> list[str]:
    """Cells the configuration asks for that have no row in the cell table."""
    present = set(cells.cell_file)
    return [path for path in expected if path not in present]


def environment(build: dict[str, Any], model: dict[str, Any], draft: dict[str, Any] | None, index: dict[str, Any],
                cells: pd.DataFrame, run_context: Mapping[str, Any]) -> dict[str, str]:
    """The environment block: device, driver, CUDA, llama.cpp, models, software versions, run dates."""
    gpu = index.get("device", {})
    devices = ", ".join(f"{d.get('name')} ({d.get('uuid')})" for d in gpu.get("devices", [])) or \
        f"no NVIDIA GPU seen (NVML: {gpu.get('error') or gpu.get('nvml')})"
    source = build.get("source", {})
    started = cells.started_at.dropna()
    return {
        "device": devices,
        "host": f"{index.get('machine', {}).get('hostname')} ({build.get('host_cpu')}, "
                f"{index.get('machine', {}).get('cpu_count')} CPUs)",
        "NVIDIA driver / CUDA driver": f"{gpu.get('driver') or 'n/a'} / {gpu.get('cuda_driver_version') or 'n/a'}",
        "llama.cpp": f"{source.get('label')} ({source.get('kind')}; commit {source.get('commit') or 'n/a'}; "
                     f"archive sha256 {source.get('sha256') or 'n/a'})",
        "llama.cpp build": f"CUDA {'on' if build.get('cuda') else 'off'}; {' '.join(build.get('cmake_args', []))}; "
                           f"{build.get('compiler', {}).get('cxx_version', '')}",
        "llama-server": f"{build.get('server_version', '').splitlines()[0] if build.get('server_version') else ''}; "
                        f"sha256 {build.get('binaries', {}).get('llama-server', {}).get('sha256')}",
        "model": f"{model.get('path')} ({model.get('file_type_name')}, {model.get('size_bytes')} bytes, MTP layer "
                 f"{'present' if model.get('mtp', {}).get('present') else 'absent'}; sha256 {model.get('sha256')})",
        "draft": f"{draft.get('path')} ({draft.get('size_bytes')} bytes; sha256 {draft.get('sha256')})" if draft
        else "none",
        "Hugging Face revisions": ", ".join(f"{k}@{v}" for k, v in run_context["hf_revisions"].items()) or "none",
        "software": ", ".join(f"{k} {v}" for k, v in index.get("software", {}).items()),
        "run dates": f"{started.min()} .. {started.max()}" if len(started) else "no cells",
        "config sha256": run_context["config_sha256"],
        "workflow commit": run_context["workflow_commit"],
    }


def bandwidth(device: Mapping[str, Any]) -> tuple[float, dict[str, Any]] | None:
    """The first GPU's memory bandwidth in bytes/s (bus width x max memory clock x 2, double data rate) and that
    GPU; None without NVML's figures (a CPU machine)."""
    gpus = [d for d in device.get("devices", []) if d.get("memory_bus_width_bits") and d.get("max_mem_clock_mhz")]
    if not gpus:
        return None
    gpu = gpus[0]
    return gpu["memory_bus_width_bits"] / 8 * gpu["max_mem_clock_mhz"] * 1e6 * 2, gpu


def ceiling_rows(device: Mapping[str, Any], model_bytes: int, speeds: pd.DataFrame) -> tuple[str, list[dict]]:
    """Decode tokens/s as a fraction of the memory-bandwidth ceiling (bandwidth / bytes read per token): a note
    saying how the ceiling was computed, and per row of ``speeds`` its median tokens/s and ``of_ceiling``."""
    known = bandwidth(device)
    if known is None:
        return ("Device memory bandwidth unknown (NVML unavailable on the machine that ran the cells): no ceiling.", [])
    bandwidth_bps, gpu = known
    ceiling = bandwidth_bps / model_bytes
    note = (f"{gpu['name']}: bus {gpu['memory_bus_width_bits']} bit x max memory clock "
            f"{gpu['max_mem_clock_mhz']} MHz x 2 (double data rate) = {bandwidth_bps / 1e9:.0f} GB/s; each token reads "
            f"the whole GGUF ({model_bytes / 1e9:.2f} GB), so the ceiling is {ceiling:.0f} tokens/s.")
    rows = [{"task": r["task"], "temperature": r["temperature"], "median_tokens_per_s": r["median_tokens_per_s"],
             "of_ceiling": r["median_tokens_per_s"] / ceiling} for r in speeds.to_dict("records")]
    return note, rows


# ---------------------------------------------------------------------------------------------------------------
# The sections

TASK = Column("task", "task", text=True)
CONDITION = Column("condition", "condition", text=True)
TEMPERATURE = Column("temp", "temperature", digits(1))
REPEAT = Column("rep", "repeat")


def _speeds_vs(baseline: str) -> Callable[[Any], str]:
    def show(pair: tuple[list[float], list[float]]) -> str:
        own, base = pair
        return f"[{', '.join(f'{v:.2f}' for v in own)}] vs {baseline} [{', '.join(f'{v:.2f}' for v in base)}]"
    return show


def _gsm8k_wrong(wrong: list[dict[str, Any]]) -> str:
    return "; ".join(f"problem {w['problem']}: {w['extracted']} vs {w['reference']}" for w in wrong) or "none"


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dict("records")


def _setup(cells: pd.DataFrame, facts: Facts) -> Section:
    return Section("environment", "Setup", [
        Note(f"{len(cells)} cells; metric: server-reported generation tokens/s (prompt processing excluded).")],
        Table([Column("item", "item", text=True), Column("value", "value", text=True)],
              [{"item": k, "value": v} for k, v in facts.environment.items()]))


VERDICT_TONES = {"reproduced": "good", "same direction": "warn", "not reproduced": "bad", "faster": "good",
                 "slower": "bad"}


def _verdict_tone(value: Any) -> str:
    return VERDICT_TONES.get(str(value), "")


def _multiplier(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{value:.2f}x"


def _interval(pair: tuple[Any, Any]) -> str:
    low, high = pair
    return "n/a" if is_missing(low) or is_missing(high) else f"{low:.2f}-{high:.2f}"


def _claim_columns(with_t1: bool) -> list[Column]:
    columns = [Column("claim", "id", text=True), Column("text", "text", text=True),
               Column("scope", "scope", text=True),
               Column("prompt-dependent", "prompt_dependent", lambda v: "yes" if v is True else "", text=True),
               Column("published", "published_text", text=True), Column("this run (T=0)", "measured_text", text=True),
               Column("verdict", "verdict", text=True, tone=_verdict_tone)]
    if with_t1:
        columns += [Column("this run (T=1.0)", "measured_t1_text", lambda v: "" if is_missing(v) else str(v),
                           text=True),
                    Column("verdict (T=1.0)", "verdict_t1", lambda v: "" if is_missing(v) else str(v), text=True,
                           tone=_verdict_tone)]
    return [*columns, Column("detail", "detail", text=True)]


def _claims(claims: pd.DataFrame | None, title: str = "Published claims vs this run", key: str = "claims",
            notes: Sequence[Note] = ()) -> Section:
    if claims is None or claims.empty:
        return Section(key, title, [*notes, Note("No claims were evaluated.")])
    return Section(key, title, [*notes, *_variant_notes(claims)],
                   Table(_claim_columns("verdict_t1" in claims), _records(claims)))


def _variant_notes(claims: pd.DataFrame) -> list[Note]:
    """Which setting of a condition with variants (DFlash: the published command vs its documented 15 tokens)
    matches the study: how many of its claims each reproduced."""
    if "variant_of" not in claims or claims.variant_of.isna().all():
        return []
    variants = claims[claims.variant_of.notna()]
    bases = claims[claims.id.isin(set(variants.variant_of))]
    suffixes = sorted({i.split("@", 1)[1] for i in variants.id})
    counts = [f"the claims as published: {int((bases.verdict == 'reproduced').sum())} of {len(bases)} reproduced"]
    for name in suffixes:
        rows = variants[variants.id.str.endswith("@" + name)]
        counts.append(f"with {name}: {int((rows.verdict == 'reproduced').sum())} of {len(rows)}")
    return [Note("Claims judged against two settings (rows `id@variant`): " + "; ".join(counts) + ".")]


def _verdict_counts(claims: pd.DataFrame) -> str:
    counts = claims.verdict.value_counts()
    return ", ".join(f"**{n}** {verdict}" for verdict, n in counts.items())


def _matrix(summary: pd.DataFrame, baseline: str, conditions: Sequence[str]) -> Table:
    """Task x condition: the multiplier, its interval and the verdict, one row per task and temperature."""
    others = summary[summary.condition != baseline]
    shown = [c for c in conditions if c in set(others.condition)]
    rows = []
    for (task, temperature), group in others.groupby(["task", "temperature"], sort=False):
        row: dict[str, Any] = {"task": task, "temperature": temperature}
        for r in group.to_dict("records"):
            row[r["condition"]] = r
        rows.append(row)

    def cell(condition: str) -> Column:
        def show(r: Any) -> str:
            if not isinstance(r, Mapping):
                return ""
            noisy = " (noisy)" if r["noisy"] is True else ""
            return f"{_multiplier(r['speedup'])} [{_interval((r['speedup_ci_low'], r['speedup_ci_high']))}] " \
                   f"{r['verdict']}{noisy}"
        return Column(condition, lambda row: row.get(condition), show, text=True,
                      tone=lambda r: _verdict_tone(r["verdict"]) if isinstance(r, Mapping) else "")
    return Table([TASK, TEMPERATURE, *(cell(c) for c in shown)], rows)


def _answer(summary: pd.DataFrame, claims: pd.DataFrame | None, facts: Facts, conditions: Sequence[str]) -> Section:
    """What this run found, first: the claims' verdicts (counts, then the rows that failed) and the multipliers."""
    comparability = facts.comparability
    notes = [Note(f"Measured on **{comparability.device}**; "
                  + ("the study's setup: every claim is compared." if comparability.comparable else
                     "not the study's setup (see Comparable with the study?): absolute figures are not compared, "
                     "orderings and verdicts are."))]
    items: list[Note] = []
    if claims is not None and not claims.empty:
        notes.append(Note(f"Claims: {_verdict_counts(claims)}."))
        failed = claims[claims.verdict == "not reproduced"]
        items = [Note(f"Not reproduced: **{r['id']}**: {r['text']} (published {r['published_text']}; this run "
                      f"{r['measured_text']})", "bad") for r in _records(failed)]
    notes.append(Note(f"Multiplier vs '{facts.baseline}' (mean over mean) with its 95 % interval and the study's "
                      "verdict rule; *noisy*: the baseline's own runs spread by more than "
                      f"{NOISE_LIMIT:.0%} on that task."))
    return Section("answer", "What this run found", notes, _matrix(summary, facts.baseline, conditions), items)


def _comparability(facts: Facts) -> Section:
    comparability = facts.comparability
    verdict = ("Every fact matches: absolute figures are compared with the study's." if comparability.comparable
               else "Not every fact matches: absolute figures (tokens/s, multipliers, acceptance, token counts) are "
                    "shown but not compared; ordering and verdict claims are checked on this setup.")
    return Section("comparability", "Comparable with the study?", [Note(verdict)], Table(
        [Column("fact", "name", text=True), Column("study", "study", text=True),
         Column("this run", "this_run", text=True),
         Column("match", "matches", lambda v: "yes" if v else "no", tone=lambda v: "good" if v else "bad")],
        [vars(f) for f in comparability.facts]))


def _predictions(facts: Facts) -> list[Section]:
    if facts.predictions is None:
        return []
    check = facts.predictions_integrity or {}
    notes = [Note(f"Stamped {check.get('stamped_at')} (file modified {check.get('modified_at')}), "
                  + ("before the first cell started." if check.get("stamped_before_measuring") else
                     "**after** measuring had begun."), "" if check.get("stamped_before_measuring") else "bad"),
             Note("The file is unchanged since." if not check.get("changed_after_stamp") else
                  "**The file changed after it was stamped**: sha256 "
                  f"{check.get('recorded_sha256', '')[:12]} then, {check.get('current_sha256', '')[:12]} now.",
                  "" if not check.get("changed_after_stamp") else "bad")]
    return [_claims(facts.predictions, "Predictions written before measuring", "predictions", notes)]


def _speed_sections(summary: pd.DataFrame, baseline: str) -> list[Section]:
    base, others = summary[summary.condition == baseline], summary[summary.condition != baseline]
    mean = Column("mean tok/s", "mean_tokens_per_s", digits(1))
    noisy = sorted({f"{r['task']} (T={r['temperature']:g}: {r['baseline_spread']:.1%})"
                    for r in _records(others) if r["noisy"] is True})
    chance = sorted({round(v, 4) for v in others.verdict_chance.dropna()})
    notes = [
        Note("Multiplier = mean tokens/s over the baseline's mean tokens/s of the same task and temperature (the "
             "study's arithmetic); *x median* is the same with medians. Interval: 95 % Welch t-interval on the log of "
             "the ratio of means (delta method); with 3 runs a side it is wide, and that is the point."),
        Note("Verdict (the study's rule): *faster* if every run beats every baseline run, *slower* if every run is "
             "below, else *none*. With nothing different, 3 runs all beating 3 happens by chance 1 time in 20: an "
             "exact one-sided rank test" + (f" (here: {', '.join(f'{c:.3g}' for c in chance)})." if chance else ".")),
    ]
    if noisy:
        notes.append(Note(f"The '{baseline}' runs themselves spread by more than {NOISE_LIMIT:.0%} on: "
                          f"{', '.join(noisy)}. No multiplier there is trusted to better than that spread.", "warn"))
    return [
        Section("baseline", f"'{baseline}' tokens/s per task", table=Table(
            [TASK, TEMPERATURE, Column("runs", "runs"), replace(mean, link="speed"),
             Column("median", "median_tokens_per_s", digits(1)), Column("min", "min_tokens_per_s", digits(1)),
             Column("max", "max_tokens_per_s", digits(1)), Column("CV", "cv", percent)],
            _records(base))),
        Section("multipliers", f"Multiplier vs '{baseline}' and verdict", notes, Table(
            [TASK, CONDITION, TEMPERATURE, mean,
             Column("x", "speedup", _multiplier, link="speedup"),
             Column("95 % interval", lambda r: (r["speedup_ci_low"], r["speedup_ci_high"]), _interval),
             Column("x median", "speedup_median", _multiplier), Column("CV", "cv", percent),
             Column(f"{baseline} spread", "baseline_spread", percent,
                    tone=lambda v: "warn" if not is_missing(v) and v > NOISE_LIMIT else ""),
             Column("runs for +-5 %", "runs_for_5pct", lambda v: "n/a" if is_missing(v) else f"{v:.0f}"),
             Column("verdict", "verdict", text=True, tone=_verdict_tone),
             Column("runs vs baseline (tok/s)", lambda r: (r["tokens_per_s_values"], r["baseline_tokens_per_s_values"]),
                    _speeds_vs(baseline), text=True)],
            _records(others))),
    ]


def _acceptance(acceptance: pd.DataFrame, baseline: str) -> Section:
    return Section("acceptance", "Acceptance", [Note(
        "Tokens per step = generated / (generated - accepted): the mean tokens one target-model step yields.")], Table(
        [TASK, CONDITION, TEMPERATURE, Column("drafted", "drafted"), Column("accepted", "accepted"),
         Column("rate", "pooled_rate", digits(3), link="acceptance"), Column("tokens/step", "tokens_per_step"),
         Column("n_max (logged)", "spec_n_max", lambda v: "" if is_missing(v) else f"{v:.0f}"),
         Column("note", "drafted", lambda drafted: "drafted nothing" if drafted == 0 else "", text=True)],
        _records(acceptance[acceptance.condition != baseline])))


def _identity(identity: pd.DataFrame, baseline: str) -> Section:
    return Section("identity", f"Output identity at temperature 0 (token ids vs '{baseline}', same repeat; control: "
                               f"'{baseline}' repeats vs its repeat 1)", table=Table(
        [TASK, Column("condition", lambda r: r["condition"] + (" (control: r1)" if r["control"] else ""), text=True),
         Column("identical / compared", lambda r: (r["identical"], r["repeats_compared"]),
                lambda pair: f"{pair[0]}/{pair[1]}", link="identity"),
         Column("not compared", "missing"), Column("all identical", "all_identical"),
         Column("tokens where different (cond vs base)", "token_counts",
                lambda pairs: "; ".join(f"{a} vs {b}" for a, b in pairs)),
         Column("first difference", "first_differences", joined)],
        _records(identity)))


def _gsm8k(cells: pd.DataFrame, stand_in_tasks: Sequence[str]) -> list[Section]:
    checked = cells[cells.gsm8k_total.notna()]
    if checked.empty:
        return []
    stand_in = sorted(set(checked.task) & set(stand_in_tasks))
    notes = [Note(f"Stand-in problems, not the dataset, for: {', '.join(stand_in)}.", "warn")] if stand_in else []
    return [Section("task-checks", "Task checks (GSM8K answers)", notes, Table(
        [TASK, CONDITION, TEMPERATURE, REPEAT,
         Column("correct", lambda r: (r["gsm8k_correct"], r["gsm8k_total"]), lambda p: f"{p[0]}/{p[1]}"),
         Column("wrong answers (extracted vs reference)", "gsm8k_wrong", _gsm8k_wrong, text=True)],
        _records(checked)))]


# What one server of a warm condition answered, by the scope its records name (config 'warm_scope').
WARM_SCOPES = {
    "task": "per task (`warm_scope: task`): one server per task and temperature answered that task's repeats in "
            "order, so each task started from an empty n-gram table",
    "condition": "the whole condition (`warm_scope: condition`): one server answered every cell of the condition in "
                 "the study's order (tasks in config order, per task its temperatures ascending, per temperature its "
                 "repeats one after another), so a task also met the n-gram table the tasks before it left",
}


def _warm(cells: pd.DataFrame) -> list[Section]:
    shared = cells.server_shared.fillna(False).astype(bool)
    scopes = cells.server_scope.where(cells.server_scope.notna(), shared.map({True: "task", False: "fresh"}))
    warm = cells[scopes != "fresh"].assign(server_scope=scopes[scopes != "fresh"])
    if warm.empty:
        return []
    ran = warm.groupby("condition", sort=False).server_scope.agg(lambda s: list(dict.fromkeys(s)))
    notes = [Note(f"Warm scope that ran for {condition}: "
                  + "; ".join(WARM_SCOPES.get(scope, str(scope)) for scope in scopes_ran) + ".")
             for condition, scopes_ran in ran.items()]
    return [Section("warm", "Fresh vs warm n-gram server", [Note(
        "A warm condition answers several cells in order on one server (position 1, 2, ...); the fresh one starts a "
        "server per cell."), *notes], Table(
        [TASK, CONDITION, TEMPERATURE, REPEAT, Column("scope", "server_scope", text=True),
         Column("position", "server_position"), Column("server pid", "server_pid"),
         Column("tok/s", "tokens_per_s", digits(1), link="run")],
        _records(warm)))]


def _contention(cells: pd.DataFrame) -> Section:
    rejected = cells[cells.rejected_attempts > 0]
    note = Note(f"{int(cells.rejected_attempts.sum())} attempt(s) rejected as contended and measured again, in "
                f"{len(rejected)} cell(s).")
    table = Table([Column("cell", "cell_file", files=True, text=True), Column("rejected attempts", "rejected_attempts"),
                   Column("reasons", "rejected_reasons", lambda r: joined(r, "; "), text=True)], _records(rejected))
    return Section("contention", "Contention", [note], table if len(rejected) else None)


def _ceiling(summary: pd.DataFrame, facts: Facts) -> Section:
    note, rows = ceiling_rows(facts.device, facts.model_bytes, summary[summary.condition == facts.baseline])
    table = Table([TASK, TEMPERATURE, Column(f"{facts.baseline} tok/s", "median_tokens_per_s", digits(1)),
                   Column("of ceiling", "of_ceiling", percent)], rows)
    return Section("ceiling", "Memory-bandwidth ceiling", [Note(note)], table if rows else None, markdown=False)


def _runs(cells: pd.DataFrame) -> Section:
    return Section("runs", "Runs", table=Table(
        [Column("cell", "cell_file", files=True, text=True),
         Column("tok/s (server)", "tokens_per_s", digits(1), link="run"),
         Column("tok/s (client)", "client_tokens_per_s", digits(1)), Column("tokens", "predicted_n"),
         Column("drafted", "draft_n"), Column("accepted", "draft_n_accepted"), Column("server pid", "server_pid"),
         Column("pos", "server_position"), Column("attempt", "attempt"), Column("overhead s", "overhead_s")],
        _records(cells)))


def _missing(facts: Facts) -> Section:
    if not facts.missing_cells:
        return Section("missing", "Missing cells", [Note("None: every cell of the configuration was measured.")],
                       markdown=False)
    return Section("missing", "Missing cells", items=[Note(m, "bad") for m in facts.missing_cells], markdown=False)


def _provenance(numbers: Mapping[str, Any], run_context: Mapping[str, Any]) -> Section:
    context = "; ".join(f"{k}: {v}" for k, v in run_context.items())
    return Section("provenance", "Provenance", [Note(
        "Each number's id, value and the cell files it was computed from; each cell's server log, argv, binary and "
        "model hashes are in `provenance.json` (`python -m specbench provenance ID` prints the chain). Run context: "
        + (context or "n/a"))], Table(
        [Column("id", "id", text=True), Column("value", "value", digits(3)), Column("what", "what", text=True),
         Column("cells", "cells", files=True, text=True)],
        [{"id": key, **number} for key, number in numbers.items()], anchor="id"), markdown=False)


@dataclass(frozen=True)
class MachineView:
    """One machine of a several-machine report: its label, a short device name, where its cells came from, its
    summary tables (summaries.tables), its relative claims judged there, and facts to show beside it."""

    label: str
    device: str
    tables: Mapping[str, pd.DataFrame]
    claims: pd.DataFrame | None
    facts: Mapping[str, str]
    bandwidth_bps: float | None = None
    model_bytes: int | None = None


def _by_machine(views: Sequence[MachineView], key: str, show: Callable[[Any], str],
                tone: Callable[[Any], str] | None = None) -> list[Column]:
    """One column per machine, showing ``row[key][machine label]``."""
    return [Column(view.label, lambda row, label=view.label: row[key].get(label), show, text=True, tone=tone)
            for view in views]


def _machines(views: Sequence[MachineView], baseline: str, conditions: Sequence[str]) -> list[Section]:
    """Machines side by side (only when there are several): what each is, the baseline's speed and every
    multiplier at temperature 0 per machine, whether the study's ordering and verdict claims hold on each, and each
    device's memory-bandwidth ceiling."""
    if len(views) < 2:
        return []
    facts = Table([Column("", "item", text=True),
                   *_by_machine(views, "values", str)],
                  [{"item": item, "values": {v.label: v.facts.get(item, "") for v in views}}
                   for item in dict.fromkeys(k for v in views for k in v.facts)])
    speed: dict[str, dict[str, Any]] = {}
    multipliers: dict[tuple[str, str], dict[str, Any]] = {}
    for view in views:
        greedy = view.tables["summary"][view.tables["summary"].temperature == 0.0]
        for r in _records(greedy):
            if r["condition"] == baseline:
                speed.setdefault(r["task"], {})[view.label] = r["mean_tokens_per_s"]
            else:
                multipliers.setdefault((r["task"], r["condition"]), {})[view.label] = r
    order = {c: i for i, c in enumerate(conditions)}
    speed_rows = [{"task": task, "values": values} for task, values in speed.items()]
    speed_rows += [{"task": "ceiling (bandwidth / model size)", "values": {
        v.label: v.bandwidth_bps / v.model_bytes for v in views if v.bandwidth_bps and v.model_bytes}}]
    multiplier_rows = [{"task": task, "condition": condition, "values": values} for (task, condition), values in
                       sorted(multipliers.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order))))]

    def multiplier(r: Any) -> str:
        if not isinstance(r, Mapping):
            return ""
        return f"{_multiplier(r['speedup'])} [{_interval((r['speedup_ci_low'], r['speedup_ci_high']))}] {r['verdict']}"

    claims: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    for view in views:
        if view.claims is None:
            continue
        for r in _records(view.claims[view.claims.scope == "relative"]):
            claims.setdefault(r["id"], {})[view.label] = r["verdict"]
            texts[r["id"]] = r["text"]
    judged = {key: values for key, values in claims.items() if set(values.values()) - {NOT_MEASURED}}
    claim_rows = [{"id": key, "text": texts[key], "values": values} for key, values in judged.items()]
    held = "; ".join(f"{v.label}: {sum(row['values'].get(v.label) == 'reproduced' for row in claim_rows)} of "
                     f"{len(claim_rows)} reproduced" for v in views)
    unmeasured = len(claims) - len(judged)
    if unmeasured:
        held += (f". {unmeasured} more need tasks, conditions or temperatures no machine measured in this run (see "
                 "Published claims vs this run)")
    return [
        Section("machines", "Machines compared", [Note(
            f"{len(views)} machines, each summarised on its own cells only (a multiplier never divides one "
            "machine's speed by another's). The study expects absolute multipliers to differ between machines and "
            "the ordering across tasks to hold.")], facts),
        Section("machines-speed", f"{baseline} tokens/s at temperature 0, per machine", [Note(
            "Mean over the runs; the last row is each device's memory-bandwidth ceiling for this model (NVML's bus "
            "width x memory clock x 2 over the GGUF's size; none for a CPU or without NVML).")],
            Table([TASK, *_by_machine(views, "values", digits(1))], speed_rows)),
        Section("machines-multipliers", f"Multipliers vs {baseline} at temperature 0, per machine", [Note(
            "Mean over mean, its 95 % interval and the study's verdict rule, as in What this run found.")],
            Table([TASK, CONDITION, *_by_machine(views, "values", multiplier,
                                                 tone=lambda r: _verdict_tone(r["verdict"])
                                                 if isinstance(r, Mapping) else "")], multiplier_rows)),
        Section("machines-claims", "The study's ordering and verdict claims, per machine", [Note(
            f"Claims that hold on any hardware (scope relative), judged on each machine's cells: {held}.")],
            Table([Column("claim", "id", text=True), Column("text", "text", text=True),
                   *_by_machine(views, "values", lambda v: "" if v is None else str(v),
                                tone=_verdict_tone)], claim_rows)),
    ]


def machine_view(label: str, tables: Mapping[str, pd.DataFrame], where: Mapping[str, Any],
                 claims: pd.DataFrame | None, model: Mapping[str, Any], description: str = "") -> MachineView:
    """A machine's view from its tables, the cell index's entry for it (device, host, where imported cells came
    from), its judged claims, this run's model manifest (its size is the ceiling's bytes per token when the
    machine ran the same model file) and the config's description of it."""
    cells, device, host = tables["cells"], where.get("device", {}), where.get("machine", {})
    known = bandwidth(device)
    models = sorted(set(cells.model_sha256.dropna()))
    same_model = models == [model.get("sha256")]
    origin = where.get("imported_from") or {}

    def short(values: pd.Series) -> str:
        return ", ".join(str(v)[:12] for v in sorted(set(values.dropna()))) or "n/a"

    facts = {
        **({"description": description} if description else {}),
        "device": device_label(device, host),
        "host": f"{host.get('hostname') or 'n/a'} ({host.get('cpu_count') or '?'} CPUs)",
        "cells": str(len(cells)),
        "measured": ("here" if not origin else f"elsewhere, imported from {origin.get('source')} (measured as "
                     f"'{origin.get('measured_as')}')"),
        "llama-server sha256": short(cells.server_sha256),
        "model sha256": short(cells.model_sha256),
        "measurement code": short(cells.code_fingerprint),
        "memory bandwidth": f"{known[0] / 1e9:.0f} GB/s ({known[1].get('name')})" if known else "unknown (no NVML)",
    }
    return MachineView(label, facts["device"], tables, claims, facts, known[0] if known else None,
                       int(model["size_bytes"]) if same_model and model.get("size_bytes") else None)


def build_report(tables: Mapping[str, pd.DataFrame], *, facts: Facts, claims: pd.DataFrame | None,
                 numbers: Mapping[str, Any], figures: Sequence[Figure] = (), conditions: Sequence[str] = (),
                 machines: Sequence[MachineView] = ()) -> Report:
    """The report's sections, in order, from the summary tables (summaries.tables), the claims evaluation, the
    provenance numbers and the figures."""
    cells, summary, baseline = tables["cells"], tables["summary"], facts.baseline
    differing = [f.name for f in facts.comparability.facts if not f.matches]
    warnings = [] if facts.comparability.comparable else [
        f"This run is **not** on the published study's setup ({', '.join(differing)} differ): absolute figures are "
        f"not compared with the published ones; orderings and verdicts are checked on {facts.comparability.device}."]
    warnings += [facts.model_note] if facts.model_note else []
    banner = Note(" ".join(warnings), "warn") if warnings else None
    count = len(facts.missing_cells)
    several = len(machines) > 1
    per_machine = {v.label: len(v.tables["cells"]) for v in machines}
    measured = (f"{sum(per_machine.values())} cells measured on {len(machines)} machines ("
                + ", ".join(f"{label}: {n}" for label, n in per_machine.items()) + ")" if several
                else f"{len(cells)} cells measured")
    lead = Note(measured + "; " + (f"{count} missing (listed under Missing cells)" if count else "none missing")
                + ". Every number links to its provenance entry."
                + (f" The sections after Machines compared show the first machine, **{machines[0].label}** "
                   f"({machines[0].device})." if several else ""), "bad" if count else "")
    shown = conditions or list(dict.fromkeys(summary.condition))
    sections = [
        _answer(summary, claims, facts, shown),
        *_machines(machines, baseline, shown),
        _setup(cells, facts),
        _comparability(facts),
        _claims(claims),
        *_predictions(facts),
        *_speed_sections(summary, baseline),
        Section("figures", "Figures", figures=figures, markdown=False),
        _acceptance(tables["acceptance"], baseline),
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


# ---------------------------------------------------------------------------------------------------------------
# Markdown


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(c.header for c in table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(_markdown_cell(c.show(c.get(row))) for c in table.columns) + " |"
              for row in table.rows]
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    """The report's Markdown sections as one document."""
    parts = [f"# {report.name}", ""]
    if report.banner:
        parts += [f"> {report.banner.text}", ""]
    for section in report.sections:
        if not section.markdown:
            continue
        parts += [f"## {section.title}", ""]
        parts += [line for note in section.notes for line in (note.text, "")]
        parts += [f"- {item.text}" for item in section.items] + ([""] if section.items else [])
        if section.table is not None:
            parts += [markdown_table(section.table), ""]
    return "\n".join(parts)
