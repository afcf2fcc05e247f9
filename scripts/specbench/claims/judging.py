"""Rule claims: the study's claims judged on the first machine's tables under what differs from the study's setup
(comparability), each machine's on its own cells when there are several, and the predictions with their stamp's
integrity; written as claims.csv and as results/judged.json (core.results.judged), which the report reads without the
judges."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from specbench.analysis.cell_table import csv_copy, read_table
from specbench.claims.claim import Claim
from specbench.claims.claims_file import about_the_study, load_claims
from specbench.claims.comparability import assess
from specbench.claims.evaluate import Setup, evaluate
from specbench.claims.predictions import integrity
from specbench.core.records.run_setup import device_label
from specbench.core.results.judged import Comparability, Judged, write_judged
from specbench.core.results.tables import first_tables, read_table_folder
from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import read_json, write_atomic


@dataclass(frozen=True)
class ClaimInputs:
    """The files the claims are judged from (rule claims' inputs, by name: core.steps.entry.inputs_of)."""

    table: Path
    tables: Path
    cells_index: Path
    build: Path
    model: Path
    claims: Path
    draft: Path | None = None
    predictions: Path | None = None
    predictions_stamp: Path | None = None


@dataclass(frozen=True)
class ClaimSettings:
    """What the config says about judging (rule claims' params)."""

    baseline: str
    names: Mapping[str, Any]  # the config's tasks and conditions (rule_params.names), for checking the claims files
    study_setup: Mapping[str, Any]
    server_args: Sequence[str]


def setup_of(comparability: Comparability) -> Setup:
    """What the claims' judging needs to know of the setup (claims.evaluate.Setup)."""
    return Setup(comparability.comparable, comparability.same_model, comparability.device, comparability.same_settings)


def predictions_setup(path: Path, setup: Setup) -> Setup:
    """Predictions are judged on the model they name: the study's (``about: study``) as the study's claims are, so
    not on another model; a user's own (the default) are about this run, on its own setup: judged in full."""
    return setup if about_the_study(path) else replace(setup, same_model=True, comparable=True)


def machine_claims(
    study: Sequence[Claim],
    by_machine: Mapping[str, Mapping[str, pd.DataFrame]],
    index: Mapping[str, Any],
    baseline: str,
    comparability: Comparability,
) -> dict[str, pd.DataFrame]:
    """With several machines, the study's claims judged on each one's own cells, on its own device (never
    comparable: the report shows only the relative claims per machine; on another model, the questions; what the
    model computes, as the main judgement does, where nothing but the GPU differs from the study's setup); none for
    one machine."""
    if len(by_machine) < 2:
        return {}
    judged = {}
    for label, tables in by_machine.items():
        where = index["machines"].get(label, {})
        device = device_label(where.get("device", {}), where.get("machine", {}))
        setup = replace(setup_of(comparability), comparable=False, device=device)
        judged[label] = evaluate(study, tables, baseline=baseline, setup=setup)
    return judged


def judge(inputs: ClaimInputs, settings: ClaimSettings) -> Judged:
    """Every judgement the report shows, from the typed tables, the manifests and the claims files."""
    by_build = read_table_folder(inputs.tables, read_table(inputs.table))
    tables = first_tables(by_build)
    index = read_json(inputs.cells_index)
    comparability = assess(
        settings.study_setup,
        device=index["device"],
        machine=index["machine"],
        build=read_json(inputs.build / "manifest.json"),
        model=read_json(inputs.model),
        draft=read_json(inputs.draft) if inputs.draft else None,
        server_args=settings.server_args,
    )
    study = load_claims(inputs.claims, settings.names)
    claims = evaluate(study, tables, baseline=settings.baseline, setup=setup_of(comparability))
    predictions, integrity_check = None, None
    if inputs.predictions:
        predictions = evaluate(
            load_claims(inputs.predictions, settings.names),
            tables,
            baseline=settings.baseline,
            setup=predictions_setup(inputs.predictions, setup_of(comparability)),
        )
        started = tables["cells"].started_at.dropna()
        integrity_check = integrity(
            read_json(inputs.predictions_stamp),
            inputs.predictions,
            started.min().to_pydatetime() if len(started) else None,
        )
    by_machine = next(iter(by_build.values()))
    machines = machine_claims(study, by_machine, index, settings.baseline, comparability)
    return Judged(comparability, claims, predictions, integrity_check, machines)


def write_claims(
    inputs: ClaimInputs, settings: ClaimSettings, *, claims_csv: Path, store: Path, log: Path | None = None
) -> Judged:
    """Judge the claims and write claims.csv and the judgements to ``store`` (results/judged.json; each
    atomically; output to ``log`` while it runs)."""
    with logged_to(log) if log else contextlib.nullcontext():
        judged = judge(inputs, settings)
        write_judged(store, judged)
        write_atomic(claims_csv, csv_copy(judged.claims).to_csv(index=False).encode("utf-8"))
        print(f"claims: {len(judged.claims)} claim rows, {len(judged.machines or {})} machine(s) judged apart")
    return judged
