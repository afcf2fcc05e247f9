"""The report's contents: ``build_report`` puts the sections in order under a banner and a lead line, from the
summary tables (analysis.summaries.tables), the claims evaluation and the run's facts, as one ``Report`` that
both renderers show. A section marked ``markdown=False`` appears in the HTML report only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.core.results.judged import Comparability
from specbench.report.document import (
    Facts,
    Figure,
    Note,
    Report,
    Section,
)
from specbench.report.sections.claims import claims_section, settings_section
from specbench.report.sections.context import (
    answer_section,
    comparability_section,
    missing_section,
    prediction_sections,
    provenance_section,
    setup_section,
)
from specbench.report.sections.headline import headline_section
from specbench.report.sections.inside_requests import latency_section, positions_section
from specbench.report.sections.load_section import load_sections
from specbench.report.sections.machines import MachineView, machines_sections
from specbench.report.sections.measurements import (
    acceptance_section,
    ceiling_section,
    contention_section,
    gsm8k_sections,
    identity_section,
    runs_section,
    speed_sections,
    warm_sections,
)
from specbench.report.sections.prompt_set import prompt_set_sections
from specbench.report.sections.thesis_section import thesis_section
from specbench.report.sections.variations import prompt_sections, sweep_sections


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
        answer_section(summary, claims, facts, shown),
        *(headline_section(claims, summary, facts.comparability.comparable) if facts.comparability.same_model else []),
        *machines_sections(machines, baseline, shown),
        *thesis_section(tables.get("thesis"), claims, thesis, shown, tables.get("thesis_settings")),
        setup_section(cells, facts),
        *prompt_set_sections(facts.prompt_set, list(dict.fromkeys(cells.task))),
        comparability_section(facts),
        claims_section(claims),
        *settings_section(claims),
        *prediction_sections(facts),
        *speed_sections(summary, baseline),
        *prompt_sections(tables, baseline),
        *load_sections(tables.get("load"), baseline),
        *sweep_sections(summary, tables["acceptance"], sweeps or {}),
        Section("figures", "Figures", figures=figures, markdown=any(f.file for f in figures)),
        acceptance_section(tables["acceptance"], baseline),
        positions_section(tables["positions"]),
        latency_section(tables["latency"]),
        identity_section(tables["identity"], baseline),
        *gsm8k_sections(cells, facts.stand_in_tasks),
        *warm_sections(cells),
        contention_section(cells),
        ceiling_section(summary, facts),
        runs_section(cells),
        missing_section(facts),
        provenance_section(numbers, facts.run_context),
    ]
    return Report(f"Speculative decoding benchmark: {facts.name}", banner, lead, sections, numbers)
