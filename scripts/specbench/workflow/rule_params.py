"""The params of the back half's rules (tables, claims, figures, report): each value one function of the validated
config, and each rule's params as one dict (what its settings, e.g. judging.ClaimSettings, take)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from specbench.core.config import builds as config_builds
from specbench.core.config import chat_template
from specbench.core.plan.cells import machine_labels, selected_conditions
from specbench.core.plan.models import model_note
from specbench.engines import registry

Config = Mapping[str, Any]


def report_machines(config: Config) -> list[str]:
    """Every machine of the tables and the report, in order: those measured here, then the imported ones."""
    return [*machine_labels(config), *(entry["label"] for entry in config["imports"])]


def build_labels(config: Config) -> list[str]:
    """The builds' labels as the tables and the report name them (none for the one build of a run without builds)."""
    return [b.label for b in config_builds.builds(config)] if config_builds.declared(config) else []


def names(config: Config) -> dict[str, Any]:
    """The config's tasks and conditions, for checking the claims files (and the prompt set the tasks came from:
    then a claim's tasks are the study's, not this run's)."""
    named: dict[str, Any] = {"tasks": list(config["tasks"]), "conditions": list(config["conditions"])}
    return {**named, "prompt_set": dict(config["prompt_set"])} if config.get("prompt_set") else named


def sweeps(config: Config) -> dict[str, Any]:
    return {n: c["swept"] for n, c in config["conditions"].items() if "swept" in c}


def tables_params(config: Config) -> dict[str, Any]:
    """Rule tables: the baseline the multipliers divide by, and the machines' and builds' order."""
    return {"baseline": config["baseline"], "machines": report_machines(config), "builds": build_labels(config)}


def claims_params(config: Config) -> dict[str, Any]:
    """Rule claims (judging.ClaimSettings): the study's setup and the flags every condition shares, the config's
    and the chat template's (a built-in one by name), which the judging compares with this run's."""
    return {
        "baseline": config["baseline"],
        "names": names(config),
        "study_setup": config["study_setup"],
        "server_args": claims_server_args(config),
    }


def figures_params(config: Config) -> dict[str, Any]:
    """Rule figures (drawing.FigureSettings)."""
    return {
        "baseline": config["baseline"],
        "names": names(config),
        "task_order": list(config["tasks"]),
        "condition_order": list(config["conditions"]),
        "sweeps": sweeps(config),
    }


def report_params(
    config: Config, *, expected_cells: Sequence[str], config_sha256: str, workflow_commit: str
) -> dict[str, Any]:
    """Rule report (assemble.ReportSettings), with what the workflow knows besides the config: the cells it asks
    for, the config's hash and the workflow's commit."""
    return {
        "name": config["name"],
        "baseline": config["baseline"],
        "study_setup": config["study_setup"],
        "condition_order": list(config["conditions"]),
        "expected_cells": list(expected_cells),
        "config_sha256": config_sha256,
        "workflow_commit": workflow_commit,
        "machine_descriptions": machine_descriptions(config),
        "stand_in_tasks": stand_in_tasks(config),
        "model_note": model_note(dict(config)),
        "sweeps": sweeps(config),
        "build_descriptions": build_descriptions(config),
        "left_out": left_out(config),
    }


def claims_server_args(config: Config) -> list[str]:
    """The flags every condition shares: the config's and the chat template's (a built-in one by name)."""
    return [*config["server"]["args"], *chat_template.server_flags(chat_template.setting(config))]


def machine_descriptions(config: Config) -> dict[str, str]:
    """Each machine's description, the imported ones' too."""
    return {m["label"]: m["description"] for m in [*config["machines"], *config["imports"]]}


def stand_in_tasks(config: Config) -> list[str]:
    """The tasks whose dataset is a stand-in for the published one."""
    return [n for n, task in config["tasks"].items() if (task.get("dataset") or {}).get("stand_in")]


def build_descriptions(config: Config) -> dict[str, str]:
    """Each declared build as the report describes it (none in a run without builds)."""
    return {b.label: _build_description(b) for b in config_builds.builds(config) if config_builds.declared(config)}


def left_out(config: Config) -> list[list[str]]:
    """[build, condition, why] for each selected condition a build does not serve."""
    return [list(entry) for entry in config_builds.left_out(config, selected_conditions(config))]


def _build_description(build: config_builds.Build) -> str:
    """A build as the report describes it: the config's description and its source's label (e.g. 'b8000'), a vLLM
    build's environment, or an endpoint's servers (condition at URL)."""
    served = registry.engine(build.engine).describe(build)
    return "; ".join(text for text in (build.description, served) if text)
