"""The self-contained HTML report: the study's tables and figures from this run, the published claims beside this
run's values, the environment, and a provenance entry for every number (each links to its cell files)."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from .provenance import number_id
from .report import fmt

STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
color:#111;line-height:1.45}
table{border-collapse:collapse;margin:.6em 0 1.4em;font-size:.9em}
th,td{border:1px solid #bbb;padding:.25em .55em;text-align:right;vertical-align:top}
th{background:#eee}td.t,th.t{text-align:left}
.banner{border:2px solid #b35c00;background:#fff4e5;padding:.6em 1em;font-weight:600}
.ok{color:#005a9c}.warn{color:#b35c00}.bad{color:#a00}
a.n{color:inherit;text-decoration:none;border-bottom:1px dotted #777}
img{max-width:100%;border:1px solid #ddd}
code{font-size:.88em}
@media print{a.n{border:none}}
"""


def esc(value: Any) -> str:
    """HTML-escaped text."""
    return html.escape(str(value))


def linked(value: Any, key: str, numbers: dict[str, Any], digits: int = 2) -> str:
    """A number that links to its provenance entry (and carries its id)."""
    if key not in numbers:
        return esc(fmt(value, digits))
    return f'<a class="n" id="n-{esc(key)}" href="#p-{esc(key)}" title="provenance: {esc(key)}">' \
           f"{esc(fmt(value, digits))}</a>"


def table(headers: list[str], rows: list[list[str]], text_columns: int = 1) -> str:
    """An HTML table; cells are already-escaped HTML; the first ``text_columns`` are left-aligned."""
    head = "".join(f'<th class="{"t" if i < text_columns else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"t" if i < text_columns else ""}">{c}</td>' for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def ceiling_rows(device: dict[str, Any], model_bytes: int, off_speeds: pd.DataFrame) -> tuple[str, list[list[str]]]:
    """Decode tokens/s as a fraction of the memory-bandwidth ceiling (bandwidth / bytes read per token)."""
    gpus = [d for d in device.get("devices", []) if d.get("memory_bus_width_bits") and d.get("max_mem_clock_mhz")]
    if not gpus:
        return ("Device memory bandwidth unknown (NVML unavailable on the machine that ran the cells): no ceiling.", [])
    gpu = gpus[0]
    bandwidth = gpu["memory_bus_width_bits"] / 8 * gpu["max_mem_clock_mhz"] * 1e6 * 2  # double data rate
    ceiling = bandwidth / model_bytes
    note = (f"{esc(gpu['name'])}: bus {gpu['memory_bus_width_bits']} bit x max memory clock "
            f"{gpu['max_mem_clock_mhz']} MHz x 2 (double data rate) = {bandwidth / 1e9:.0f} GB/s; each token reads "
            f"the whole GGUF ({model_bytes / 1e9:.2f} GB), so the ceiling is {ceiling:.0f} tokens/s.")
    rows = [[esc(r.task), fmt(r.temperature, 1), fmt(r.median_tokens_per_s, 1),
             fmt(r.median_tokens_per_s / ceiling * 100, 1) + "%"] for r in off_speeds.itertuples()]
    return note, rows


def render_html(tables: dict[str, pd.DataFrame], *, figures: dict[str, str], claims: pd.DataFrame | None,
                provenance: dict[str, Any], context: dict[str, Any]) -> str:
    """The whole report as one HTML document (figures are data URIs)."""
    baseline, numbers = context["baseline"], provenance["numbers"]
    summary, runs = tables["summary"], tables["runs"]
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{esc(context['name'])}</title>"
             f"<style>{STYLE}</style></head><body><h1>Speculative decoding benchmark: {esc(context['name'])}</h1>"]
    if not context["is_study_setup"]:
        parts.append("<p class='banner' id='not-study'>This run is not the published study's setup (model, build or "
                     "hardware differ). Its numbers show the pipeline at work; the claims below are not compared.</p>")
    missing = context.get("missing_cells", [])
    parts.append(f"<p>{len(runs)} cells measured"
                 + (f"; <span class='bad'>{len(missing)} missing</span> (listed under Missing cells)" if missing
                    else "; none missing") + ". Every number links to its provenance entry.</p>")
    parts.append("<h2 id='environment'>Environment</h2>" + table(["item", "value"], [
        [esc(k), esc(v)] for k, v in context["environment"].items()], text_columns=2))
    if claims is not None and not claims.empty:
        parts.append("<h2 id='claims'>Published claims vs this run</h2>" + table(
            ["claim", "published", "this run", "verdict", "detail"],
            [[f"<b>{esc(c.id)}</b><br>{esc(c.text)}", esc(c.published), esc(c.measured), esc(c.verdict),
              esc(c.detail)] for c in claims.itertuples()], text_columns=5))
    base = summary[summary.condition == baseline]
    parts.append(f"<h2 id='baseline'>'{esc(baseline)}' tokens/s per task</h2>" + table(
        ["task", "temp", "runs", "median tok/s", "min", "max"],
        [[esc(r.task), fmt(r.temperature, 1), str(r.runs),
          linked(r.median_tokens_per_s, number_id("speed", r.task, r.condition, r.temperature), numbers, 1),
          fmt(r.min_tokens_per_s, 1), fmt(r.max_tokens_per_s, 1)] for r in base.itertuples()]))
    others = summary[summary.condition != baseline]
    parts.append(f"<h2 id='multipliers'>Multiplier vs '{esc(baseline)}' and verdict</h2>"
                 "<p>Verdict: <i>faster</i> if every run beats every baseline run, <i>slower</i> if every run is "
                 "below, else <i>none</i>. The runs behind each verdict are listed beside it.</p>" + table(
                     ["task", "condition", "temp", "median tok/s", "x median", "x min", "x max", "verdict",
                      "runs vs baseline (tok/s)"],
                     [[esc(r.task), esc(r.condition), fmt(r.temperature, 1), fmt(r.median_tokens_per_s, 1),
                       linked(r.speedup_median, number_id("speedup", r.task, r.condition, r.temperature), numbers),
                       fmt(r.speedup_min), fmt(r.speedup_max), esc(r.verdict), esc(r.verdict_inputs)]
                      for r in others.itertuples()], text_columns=2))
    parts.append("<h2 id='figures'>Figures</h2>" + "".join(
        f"<figure><img src='{uri}' alt='{esc(caption)}'><figcaption>{esc(caption)}</figcaption></figure>"
        for caption, uri in figures.items()))
    acceptance = tables["acceptance"]
    parts.append("<h2 id='acceptance'>Acceptance</h2><p>Tokens per step = generated / (generated - accepted): "
                 "the mean tokens one target-model step yields.</p>" + table(
                     ["task", "condition", "temp", "drafted", "accepted", "rate", "tokens/step", "note"],
                     [[esc(r.task), esc(r.condition), fmt(r.temperature, 1), str(r.drafted), str(r.accepted),
                       linked(r.pooled_rate, number_id("acceptance", r.task, r.condition, r.temperature), numbers, 3),
                       fmt(r.tokens_per_step), esc(r.note if isinstance(r.note, str) else "")]
                      for r in acceptance[acceptance.condition != baseline].itertuples()], text_columns=2))
    identity = tables["identity_summary"]
    parts.append(f"<h2 id='identity'>Output identity at temperature 0 (token ids vs '{esc(baseline)}')</h2>" + table(
        ["task", "condition", "identical / compared", "token counts where different (cond vs base)",
         "first difference"],
        [[esc(r.task), esc(r.condition), linked(f"{r.identical}/{r.repeats_compared}",
                                                number_id("identity", r.task, r.condition), numbers),
          esc(r.token_counts if isinstance(r.token_counts, str) else ""),
          esc(r.first_differences if isinstance(r.first_differences, str) else "")]
         for r in identity.itertuples()], text_columns=2))
    checks = runs[runs.task_check.notna() & (runs.task_check != "")]
    if not checks.empty:
        stand_in = sorted(set(checks.task) & set(context.get("stand_in_tasks", [])))
        note = (f"<p class='warn'>Stand-in problems, not the dataset, for: {esc(', '.join(stand_in))}.</p>"
                if stand_in else "")
        parts.append("<h2 id='task-checks'>GSM8K answers</h2>" + note + table(
            ["task", "condition", "temp", "repeat", "result"],
            [[esc(r.task), esc(r.condition), fmt(r.temperature, 1), str(r.repeat), esc(r.task_check)]
             for r in checks.itertuples()], text_columns=2))
    warm = runs[runs.server_shared.astype(bool)]
    if not warm.empty:
        parts.append("<h2 id='warm'>Fresh vs warm n-gram server</h2><p>A warm condition answers its repeats in "
                     "order on one server (position 1, 2, ...); the fresh one starts a server per cell.</p>" + table(
                         ["task", "condition", "temp", "repeat", "position", "server pid", "tok/s"],
                         [[esc(r.task), esc(r.condition), fmt(r.temperature, 1), str(r.repeat),
                           str(r.server_position), str(r.server_pid),
                           linked(r.tokens_per_s, number_id("run", r.task, r.condition, r.temperature,
                                                            f"r{r.repeat}"), numbers, 1)]
                          for r in warm.itertuples()], text_columns=2))
    rejected = runs[runs.rejected_attempts > 0]
    parts.append(f"<h2 id='contention'>Contention</h2><p>{int(runs.rejected_attempts.sum())} attempt(s) rejected as "
                 f"contended and measured again, in {len(rejected)} cell(s).</p>" + (table(
                     ["cell", "rejected attempts", "reason"],
                     [[esc(r.cell_file), str(r.rejected_attempts), esc(r.contended_reason)]
                      for r in rejected.itertuples()], text_columns=3) if not rejected.empty else ""))
    note, rows = ceiling_rows(context["device"], context["model_bytes"], base)
    parts.append("<h2 id='ceiling'>Memory-bandwidth ceiling</h2><p>" + note + "</p>"
                 + (table(["task", "temp", "off tok/s", "of ceiling"], rows) if rows else ""))
    parts.append("<h2 id='runs'>Runs</h2>" + table(
        ["cell", "tok/s (server)", "tok/s (client)", "tokens", "drafted", "accepted", "attempt", "overhead s"],
        [[f"<a href='{esc(_rel(r.cell_file))}'>{esc(r.cell_file)}</a>",
          linked(r.tokens_per_s, number_id("run", r.task, r.condition, r.temperature, f"r{r.repeat}"), numbers, 1),
          fmt(r.client_tokens_per_s, 1), str(r.predicted_n), str(r.draft_n), str(r.draft_n_accepted),
          str(r.attempt), fmt(r.overhead_s)] for r in runs.itertuples()]))
    parts.append("<h2 id='missing'>Missing cells</h2>" + (
        "<ul>" + "".join(f"<li class='bad'>{esc(m)}</li>" for m in missing) + "</ul>" if missing
        else "<p>None: every cell of the configuration was measured.</p>"))
    parts.append("<h2 id='provenance'>Provenance</h2><p>Each number's id, value and the cell files it was computed "
                 "from; each cell's server log, argv, binary and model hashes are in <code>provenance.json</code> "
                 "(<code>python -m specbench provenance ID</code> prints the chain). Run context: "
                 + esc(provenance["context"]) + "</p><ul>")
    for key, number in provenance["numbers"].items():
        cells = ", ".join(f"<a href='{esc(_rel(c))}'>{esc(c)}</a>" for c in number["cells"])
        parts.append(f"<li id='p-{esc(key)}'><code>{esc(key)}</code> = {esc(fmt(number['value'], 3))} "
                     f"({esc(number['what'])}): {cells}</li>")
    parts.append("</ul></body></html>")
    return "\n".join(parts)


def _rel(cell_file: str) -> str:
    """A cell file's link relative to the report (which sits in results/)."""
    return cell_file.removeprefix("results/")
