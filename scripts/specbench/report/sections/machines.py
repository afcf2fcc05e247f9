"""Machines side by side, when a run has several (measured here or imported): what each is, the baseline's speed
and every multiplier per machine, and the study's relative claims (those not absolute figures) on each machine's
own cells."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from specbench.claims.claim import AGREES, NOT_MEASURED, REPRODUCED
from specbench.core.records.run_setup import device_label
from specbench.report.document import (
    CONDITION,
    TASK,
    Column,
    Note,
    Section,
    Table,
    digits,
    multiplier_cell,
    records,
    verdict_tone,
)
from specbench.report.sections.environment import bandwidth


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


def _by_machine(
    views: Sequence[MachineView], key: str, show: Callable[[Any], str], tone: Callable[[Any], str] | None = None
) -> list[Column]:
    """One column per machine, showing ``row[key][machine label]``."""
    return [
        Column(view.label, lambda row, label=view.label: row[key].get(label), show, text=True, tone=tone)
        for view in views
    ]


def machines_sections(views: Sequence[MachineView], baseline: str, conditions: Sequence[str]) -> list[Section]:
    """Machines side by side (only when there are several): what each is, the baseline's speed and every
    multiplier at temperature 0 per machine, whether the study's ordering and verdict claims hold on each, and each
    device's memory-bandwidth ceiling."""
    if len(views) < 2:
        return []
    facts = Table(
        [Column("", "item", text=True), *_by_machine(views, "values", str)],
        [
            {"item": item, "values": {v.label: v.facts.get(item, "") for v in views}}
            for item in dict.fromkeys(k for v in views for k in v.facts)
        ],
    )
    speed: dict[str, dict[str, Any]] = {}
    multipliers: dict[tuple[str, str], dict[str, Any]] = {}
    for view in views:
        greedy = view.tables["summary"][view.tables["summary"].temperature == 0.0]
        for r in records(greedy):
            if r["condition"] == baseline:
                speed.setdefault(r["task"], {})[view.label] = r["mean_tokens_per_s"]
            else:
                multipliers.setdefault((r["task"], r["condition"]), {})[view.label] = r
    order = {c: i for i, c in enumerate(conditions)}
    speed_rows = [{"task": task, "values": values} for task, values in speed.items()]
    speed_rows += [
        {
            "task": "ceiling (bandwidth / model size)",
            "values": {v.label: v.bandwidth_bps / v.model_bytes for v in views if v.bandwidth_bps and v.model_bytes},
        }
    ]
    multiplier_rows = [
        {"task": task, "condition": condition, "values": values}
        for (task, condition), values in sorted(
            multipliers.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order)))
        )
    ]

    def multiplier(r: Any) -> str:
        return multiplier_cell(r, baseline)

    claims: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    for view in views:
        if view.claims is None:
            continue
        for r in records(view.claims[view.claims.scope.isin(["relative", "transfers"])]):
            claims.setdefault(r["id"], {})[view.label] = r["verdict"]
            texts[r["id"]] = r["text"]
    judged = {key: values for key, values in claims.items() if set(values.values()) - {NOT_MEASURED}}
    claim_rows = [{"id": key, "text": texts[key], "values": values} for key, values in judged.items()]
    held = "; ".join(
        f"{v.label}: {sum(row['values'].get(v.label) in (REPRODUCED, AGREES) for row in claim_rows)} "
        f"of {len(claim_rows)} reproduced or agreeing"
        for v in views
    )
    unmeasured = len(claims) - len(judged)
    if unmeasured:
        held += (
            f". {unmeasured} more need tasks, conditions or temperatures no machine measured in this run (see "
            "Published claims vs this run)"
        )
    return [
        Section(
            "machines",
            "Machines compared",
            [
                Note(
                    f"{len(views)} machines, each summarised on its own cells only (a multiplier never divides one "
                    "machine's speed by another's). The study expects absolute multipliers to differ "
                    "between machines and "
                    "the ordering across tasks to hold."
                )
            ],
            facts,
        ),
        Section(
            "machines-speed",
            f"{baseline} tokens/s at temperature 0, per machine",
            [
                Note(
                    "Mean over the runs; the last row is each device's memory-bandwidth ceiling for "
                    "this model (NVML's bus "
                    "width x memory clock x 2 over the GGUF's size; none for a CPU or without NVML)."
                )
            ],
            Table([TASK, *_by_machine(views, "values", digits(1))], speed_rows),
        ),
        Section(
            "machines-multipliers",
            f"Multipliers vs {baseline} at temperature 0, per machine",
            [
                Note(
                    "Mean over mean, its 95 % interval and the study's verdict rule, as in What this run found, marked "
                    f"where the outputs differ from {baseline}'s."
                )
            ],
            Table(
                [
                    TASK,
                    CONDITION,
                    *_by_machine(
                        views,
                        "values",
                        multiplier,
                        tone=lambda r: verdict_tone(r["verdict"]) if isinstance(r, Mapping) else "",
                    ),
                ],
                multiplier_rows,
            ),
        ),
        Section(
            "machines-claims",
            "The study's ordering and verdict claims, per machine",
            [
                Note(
                    "On each machine's cells: the order of tasks per method (scope transfers, the one thing the study "
                    "expects to hold elsewhere) judged; verdicts and orders of methods (scope "
                    "relative) shown as agreeing "
                    f"or differing with the study: {held}. Where the text gives no temperature, at temperature 0."
                )
            ],
            Table(
                [
                    Column("claim", "id", text=True),
                    Column("text", "text", text=True),
                    *_by_machine(views, "values", lambda v: "" if v is None else str(v), tone=verdict_tone),
                ],
                claim_rows,
            ),
        ),
    ]


def machine_view(
    label: str,
    tables: Mapping[str, pd.DataFrame],
    where: Mapping[str, Any],
    claims: pd.DataFrame | None,
    model: Mapping[str, Any],
    description: str = "",
) -> MachineView:
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
        "measured": (
            "here"
            if not origin
            else f"elsewhere, imported from {origin.get('source')} (measured as '{origin.get('measured_as')}')"
        ),
        "llama-server sha256": short(cells.server_sha256),
        "model sha256": short(cells.model_sha256),
        "measurement code": short(cells.code_fingerprint),
        "memory bandwidth": f"{known[0] / 1e9:.0f} GB/s ({known[1].get('name')})" if known else "unknown (no NVML)",
    }
    return MachineView(
        label,
        facts["device"],
        tables,
        claims,
        facts,
        known[0] if known else None,
        int(model["size_bytes"]) if same_model and model.get("size_bytes") else None,
    )
