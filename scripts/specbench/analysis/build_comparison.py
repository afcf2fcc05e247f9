"""Builds side by side (a run with two or more builds: llama.cpp builds, or a server the user runs): per task,
condition and temperature each build's multiplier with its 95 % interval (each against its own build's baseline),
whether each later build's interval is separated from the first build's, the baseline's tokens/s per build, the
tokens each verification step yielded per build, the temperature-0 outputs of each later build against the first
build's (same prompt and repeat), and the speculative settings each build's server logged."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.cell_table import token_ids_known
from specbench.core.config.builds import LLAMA_CPP
from specbench.core.records.explanations import first_difference

COMPARISON_COLUMNS = [
    "task",
    "condition",
    "temperature",
    "speedup",  # build -> the multiplier (mean over its own build's baseline mean)
    "ci_low",  # build -> the interval's bounds
    "ci_high",
    "verdict",  # build -> the study's verdict rule on its own build
    "separated",  # later build -> True / False (its interval and the first build's overlap), None: no interval
    "baseline_tokens_per_s",  # build -> the baseline's mean tokens/s on that task and temperature (its own clock)
    "clock",  # build -> where that figure is from: the server's own timings, or the client stream
    "baseline_client_tokens_per_s",  # build -> the same by the client stream's clock, the same for every engine
    "draft_length",  # build -> the draft length its cells were set to ('3', '2 / 3'; '' for the baseline)
    "drafted_per_step",  # build -> tokens drafted per verification step by the counts, mean over its cells
    "sampling",  # build -> the sampling its requests stated
    "accepted_length",  # build -> tokens one verification step yielded, mean over its cells (the server's counts)
    "outputs",  # later build -> {"compared", "identical", "first_differences"} against the first build (t = 0)
    "settings",  # build -> the speculative settings its server logged, 'implementation: key=value'
    "changed_settings",  # settings that differ between builds, 'key: value (build) -> value (build)'
    "cells",  # every cell file behind the row
]


def separated(a: tuple[float, float], b: tuple[float, float]) -> bool | None:
    """Whether two intervals do not overlap; None when either is missing (too few runs for an interval)."""
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (*a, *b)):
        return None
    return bool(a[1] < b[0] or b[1] < a[0])


def _settings(cells: pd.DataFrame) -> dict[str, str]:
    """'implementation: key' -> the value(s) the cells' server logs gave it (several values joined)."""
    found: dict[str, set[str]] = {}
    for entries in cells.spec_settings:
        for entry in [] if entries is None else list(entries):
            found.setdefault(f"{entry['implementation']}: {entry['key']}", set()).add(str(entry["value"]))
    return {key: " / ".join(sorted(values)) for key, values in sorted(found.items())}


def _outputs(cells: pd.DataFrame, first: pd.DataFrame) -> dict[str, Any]:
    """Temperature-0 cells against the first build's of the same prompt and repeat: how many compared, how many
    identical, and where each other one first differs (``by`` 'tokens'; 'text' where either side sent no token
    ids, e.g. an endpoint: then the first differing character of the texts, ``_text``)."""
    reference = {(r.prompt, int(r.repeat)): r._asdict() for r in first.itertuples()}
    compared, identical, differences, by = 0, 0, [], "tokens"
    for r in cells.itertuples():
        other = reference.get((r.prompt, int(r.repeat)))
        if other is None:
            continue
        compared += 1
        own = r._asdict()
        if token_ids_known(own) and token_ids_known(other):
            at = first_difference(list(own["tokens"]), list(other["tokens"]))
        else:
            by = "text"
            at = first_difference(_text(own), _text(other))
        if at is None:
            identical += 1
        else:
            differences.append(int(at))
    return {"compared": compared, "identical": identical, "first_differences": differences, "by": by}


def _values(cells: pd.DataFrame, column: str) -> str:
    """The distinct values of a column over the cells, joined ('' where none has one)."""
    if column not in cells:
        return ""
    return " / ".join(sorted({str(v) for v in cells[column].dropna()}))


def _mean(cells: pd.DataFrame, column: str) -> float | None:
    """The column's mean over the cells that have it (None where none has)."""
    if column not in cells:
        return None
    values = pd.to_numeric(cells[column], errors="coerce").dropna()
    return float(values.mean()) if len(values) else None


def _text(row: Mapping[str, Any]) -> list[str]:
    """A row's text as compared between builds: without the whitespace at its ends, which a chat API trims from the
    message it returns and llama-server's ``/completion`` keeps."""
    return list((row.get("content") or "").strip())


def compare_builds(by_build: Mapping[str, Mapping[str, pd.DataFrame]], baseline: str) -> pd.DataFrame:
    """The comparison rows from each build's tables (one machine's: summaries.tables), builds in mapping order; the
    first build is the one each later build's interval and outputs are compared with."""
    labels: Sequence[str] = list(by_build)
    if len(labels) < 2:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    first = labels[0]
    keys = ["task", "condition", "temperature"]
    summaries = {b: t["summary"].set_index(keys) for b, t in by_build.items()}
    cells = {b: t["cells"] for b, t in by_build.items()}
    rows = []
    for key in dict.fromkeys(k for s in summaries.values() for k in s.index):
        task, condition, temperature = key
        own = {b: s.loc[key] for b, s in summaries.items() if key in s.index}
        group = {
            b: c[(c.task == task) & (c.condition == condition) & (c.temperature == temperature)]
            for b, c in cells.items()
        }
        base = {
            b: c[(c.task == task) & (c.condition == baseline) & (c.temperature == temperature)]
            for b, c in cells.items()
        }
        bounds = {b: (r["speedup_ci_low"], r["speedup_ci_high"]) for b, r in own.items()}
        rows.append(
            {
                "task": task,
                "condition": condition,
                "temperature": temperature,
                "speedup": {b: r["speedup"] for b, r in own.items()},
                "ci_low": {b: low for b, (low, _) in bounds.items()},
                "ci_high": {b: high for b, (_, high) in bounds.items()},
                "verdict": {b: r["verdict"] for b, r in own.items()},
                "separated": {
                    b: None if condition == baseline or first not in bounds else separated(bounds[b], bounds[first])
                    for b in labels[1:]
                    if b in bounds
                },
                "baseline_tokens_per_s": {b: r["baseline_mean_tokens_per_s"] for b, r in own.items()},
                "clock": {b: _values(base[b], "timings_source") for b in own},
                "baseline_client_tokens_per_s": {b: _mean(base[b], "client_tokens_per_s") for b in own},
                "draft_length": {b: _values(g, "draft_length") for b, g in group.items() if len(g)},
                "drafted_per_step": {b: _mean(g, "drafted_per_step") for b, g in group.items() if len(g)},
                "sampling": {b: _values(g, "sampling") for b, g in group.items() if len(g)},
                "accepted_length": {
                    b: _mean(g, "mean_accepted_length")
                    for b, g in group.items()
                    if _mean(g, "mean_accepted_length") is not None
                },
                "outputs": {
                    b: _outputs(group[b], group[first]) for b in labels[1:] if temperature == 0.0 and len(group[b])
                },
                "settings": {b: _settings(group[b]) for b in _logging(group, labels)},
                "changed_settings": _changed(
                    {b: _settings(group[b]) for b in _logging(group, labels)}, _logging(group, labels)
                ),
                "cells": sorted(f for g in group.values() for f in g.cell_file),
            }
        )
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def _logging(group: Mapping[str, pd.DataFrame], labels: Sequence[str]) -> list[str]:
    """The builds whose settings a comparison reads: those that measured the row with llama-server, whose log lines
    say its effective speculative settings (vLLM's and an endpoint's logs say theirs in other words, or not at all;
    a table from before the engine column is llama.cpp's)."""
    return [b for b in labels if len(group[b]) and bool((_engines(group[b]) == LLAMA_CPP).all())]


def _engines(cells: pd.DataFrame) -> pd.Series:
    """Each cell's engine (llama.cpp in a table from before the engine column)."""
    return cells.engine.fillna(LLAMA_CPP) if "engine" in cells else pd.Series(LLAMA_CPP, index=cells.index)


def _changed(settings: Mapping[str, Mapping[str, str]], labels: Sequence[str]) -> list[str]:
    """Each setting whose logged value differs between builds (or that one build logged and another did not), as
    'implementation: key: value (build) -> value (build)'."""
    out = []
    for name in dict.fromkeys(k for s in settings.values() for k in s):
        values = {b: settings.get(b, {}).get(name) for b in labels}
        if len(set(values.values())) > 1:
            out.append(
                f"{name}: " + " -> ".join(f"{v if v is not None else 'not logged'} ({b})" for b, v in values.items())
            )
    return out
