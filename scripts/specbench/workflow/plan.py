"""The plan of one run, built once from the validated config before any rule file is read: the cells, builds and
models, the paths the rules share, and the rules' input, params and resource functions (bound methods)."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from snakemake.exceptions import WorkflowError

from specbench.claims import claims_file
from specbench.core.config import builds as config_builds
from specbench.core.config import chat_template, sources
from specbench.core.config import error as config_error
from specbench.core.config import load as config_load
from specbench.core.config.prompt_sets import prepared_file
from specbench.core.plan import cells as plan_cells
from specbench.core.plan import models as plan_models
from specbench.core.plan import old_layout
from specbench.core.plan import resources as plan_resources
from specbench.core.plan import server as plan_server
from specbench.core.plan.code import import_closure, workflow_commit
from specbench.core.plan.coordinates import LAYOUT
from specbench.core.records import explanations
from specbench.core.steps import files
from specbench.engines import registry
from specbench.workflow import rule_params

Wildcards = Any  # Snakemake's wildcards of a job (attribute and mapping access)

# What each back-half rule computed, read by the next rather than recomputed, as files any tool reads (their JSON
# checked against specbench/core/results/schemas): the typed tables, a folder of Parquet files with its index.json
# (specbench.core.results.tables), the judged claims and the figures' index
TABLES = "results/tables"
JUDGED = "results/judged.json"
FIGURES_INDEX = "results/figures/index.json"
PREDICTIONS_STAMP = "results/predictions.stamp.json"
# The cells' code as one input: a manifest of the measurement code's files (rule code_manifest), so a large matrix
# checks one file per cell instead of a dozen, and an edit still reruns every cell; the explanations' likewise
CODE_MANIFEST = "results/code/{entry}.json"
IMPORTS_DIR = "results/imports"


def validated(config: dict, base: Path) -> dict:
    """The config, validated in place (a config error as Snakemake's WorkflowError)."""
    try:
        config_load.validate_config(config, base=base)
    except config_error.ConfigError as error:
        raise WorkflowError(str(error)) from None
    return config


@functools.cache
def code_files(base: Path, script: str) -> tuple[str, ...]:
    """The entry script and the package modules it imports."""
    return tuple(str(path) for path in import_closure(base / "scripts" / script))


class Plan:
    """One run's plan: the config's derived values as attributes, the rules' functions as methods."""

    def __init__(self, config: dict, base: Path, local_exec: Callable[[], bool]) -> None:
        self.config = config
        self.base = base
        self._local_exec = local_exec
        self.cells = plan_cells.selected_cells(config)
        self.run_order = {
            cell: position
            for position, cell in enumerate(
                plan_cells.run_order(self.cells, list(config["tasks"]), list(config["conditions"]))
            )
        }
        # What the cells wait for (the builds, models, prompts, code manifests and condition setups) runs first,
        # above every cell's priority: at an equal priority a condition's setup would wait behind every ready cell
        # of the conditions set up before it, and the cells would run condition by condition however the run order
        # interleaves them, so a machine's drift would become part of the multiplier. What reads the cells keeps 0.
        self.prepare_priority = len(self.run_order) + 1
        # The llama.cpp builds (config 'builds'; the one build of llama_cpp without it), each in the folder
        # resources/llama.cpp{build_dir}/ (build_dir empty for the one build, builds/<label> for another). An
        # endpoint build (a server the user runs) has no folders: it is in build_of_label only.
        self.builds = config_builds.llama_builds(config)
        self.builds_declared = config_builds.declared(config)
        self.build_of_dir = {b.suffix: b for b in self.builds}
        self.build_of_label = {b.label: b for b in config_builds.builds(config)}
        self.build_labels = rule_params.build_labels(config)
        self.vllm_builds = {b.label: b for b in config_builds.vllm_builds(config)}
        # The first build's tree converts the models and its llama-quantize quantizes them (every build serves them)
        self.llama_src_dir = f"{self.builds[0].root}/src"
        self.llama_bin_dir = f"{self.builds[0].root}/bin"
        # A cell file's pattern and its stem (its logs' and benchmark's): every coordinate's path segment
        self.cell_pattern = plan_cells.cell_pattern(config)
        self.cell_stem = plan_cells.cell_pattern(config, suffix="")
        # Each condition's models folder (the target's name and hash, with the draft's for a condition that loads one)
        self.models_folders = plan_cells.models_folders(config)
        # The explanations' patterns: a compared (temperature-0) cell, its explanation, and its reference (the
        # baseline's cell of the same repeat, or of the first repeat for the baseline's own)
        greedy = {"temperature": explanations.EXPLAINED_TEMPERATURE}
        baseline = {**greedy, "condition": config["baseline"], "models": self.models_folders[config["baseline"]]}
        self.greedy_cell_pattern = LAYOUT.partial(self.cell_pattern, greedy)
        self.load_declared = plan_cells.load_declared(config)
        self.explanation_pattern = explanations.explanation_pattern(self.builds_declared, self.load_declared)
        self.reference_pattern = LAYOUT.partial(self.cell_pattern, baseline)
        self.first_reference_pattern = LAYOUT.partial(self.cell_pattern, {**baseline, "repeat": 1})
        self.repeats = plan_cells.repeats(config)
        # The conditions of the selected cells, in config order: those the cell rules' jobs serve
        self.cell_conditions = [c for c in config["conditions"] if c in {cell.condition for cell in self.cells}]
        # What one server of a warm condition answers (rule cell_sequence or condition_sequence); only the rules of
        # the scopes some selected warm condition runs with are defined
        self.warm_scopes = plan_server.warm_scopes(config, plan_cells.selected_conditions(config))
        # The selected prompt keys (a task's name, or <task>.<prompt> for each member of its prompt set)
        self.selected_prompt_keys = plan_cells.prompt_keys(config, plan_cells.selected_tasks(config))
        # The cell files of one warm condition's server (rule condition_sequence), in the order it answers them
        self.condition_sequence_files = plan_cells.condition_sequence_files(config)
        self.baseline = config["baseline"]
        self.predictions = self.config_path(config["predictions"]) if config["predictions"] else None
        self.roles = plan_models.roles(config)
        self.used_roles = plan_models.used_roles(config, self.cells)
        self.model_ids = {role: plan_models.model_id(config, role, base) for role in self.roles}
        self.imports = {entry["label"]: self.config_path(entry["path"]) for entry in config["imports"]}
        # The public prompt set the tasks were taken from (tasks: {from: ...}), prepared into one file, or None
        self.prompt_set = config.get("prompt_set")
        self.prompt_set_file = prepared_file(self.prompt_set) if self.prompt_set else None
        # Its block as rule prompt_set takes it: a local copy's path resolved against the workflow directory
        local = (self.prompt_set or {}).get("file")
        self.prompt_set_spec = {**(self.prompt_set or {}), **({"file": self.config_path(local)} if local else {})}
        # Each task's prompt coordinates (its prompt set's names, or [''] for its one prompt)
        self.task_prompts = {t: plan_cells.task_prompts(config, t) for t in config["tasks"]}
        # Every machine of the report, in order: those measured here, then the imported ones
        self.machine_labels = rule_params.report_machines(config)
        # The JSON Schemas of the back half's files, inputs of the rules that write or read them
        self.result_schemas = {
            name: str(base / "scripts/specbench/core/results/schemas" / f"{name}.schema.json")
            for name in ("tables", "judged", "figures")
        }
        self.workflow_commit = workflow_commit(base)
        self.config_sha256 = files.sha256_text(json.dumps(config, sort_keys=True))
        self._check_load()

    def _check_load(self) -> None:
        """Stop before any work where a build's argv for a condition cannot serve the largest load point (a
        llama-server's set batch too small for N drafts at once)."""
        if not self.load_declared:
            return
        most = max(self.config["load"]["concurrency"])
        for build in self.build_of_label.values():
            served_by = registry.engine(build.engine)
            for condition in config_builds.build_conditions(build, self.cell_conditions):
                try:
                    served_by.load_args(served_by.server_args(self.config, build, condition, self.base), most)
                except ValueError as error:
                    where = f"condition '{condition}'" + (f" of build '{build.label}'" if self.builds_declared else "")
                    raise WorkflowError(f"config error at 'load.concurrency': {where}: {error}") from None

    def check_files(self) -> None:
        """Load the claims and predictions files once (a bad one stops the run); note cell files of an old layout."""
        for key, path in (("claims", self.config_path(self.config["claims"])), ("predictions", self.predictions)):
            try:
                if path:
                    claims_file.load_claims(path, self.config)
            except (claims_file.ClaimError, OSError) as error:
                raise WorkflowError(f"{key}: {error}") from None
        note = old_layout.old_layout_note(old_layout.old_layout_files(self.cells), self.cells)
        if note:
            print(note, file=sys.stderr)

    # --- every rule file

    def wildcard_constraints(self) -> dict[str, str]:
        """The workflow's global wildcard constraints."""
        # (a group: an empty alternative alone matches the empty suffix, not "no constraint")
        build_dirs = "|".join(re.escape(d) for d in sorted(self.build_of_dir, key=len, reverse=True))
        return {
            **plan_cells.wildcard_constraints(self.config),
            "model": "|".join(re.escape(i) for i in self.model_ids.values()),
            "build_dir": f"(?:{build_dirs})",
        }

    def config_path(self, value: str) -> str:
        """A path from the config, resolved against the workflow directory."""
        return str(sources.resolve_path(value, self.base))

    def code(self, script: str) -> list[str]:
        """The entry script and the package modules it imports: a rule's code, declared as input (and cache key)."""
        return list(code_files(self.base, script))

    def model_source(self, role: str) -> dict:
        """The chosen source of 'target' or 'draft' as one dict (kind 'none' when not configured)."""
        return sources.model_source(self.config, role)

    def model_manifest(self, role: str) -> str:
        return f"results/models/{self.model_ids[role]}.json"

    def cell_files(self) -> list[str]:
        return [cell.path for cell in self.cells]

    # --- rules/llama_cpp.smk

    def llama_source(self, wildcards: Wildcards) -> dict:
        """The source route of a build folder's build as one dict (sources.llama_source)."""
        block = self.build_of_dir[wildcards.build_dir].llama_cpp
        return sources.llama_source({"llama_cpp": block}, base=self.base)

    def llama_setting(self, key: str) -> Callable[[Wildcards], Any]:
        """One llama_cpp key (cmake_args, backend, targets) of a build folder's build, as a params function."""
        return lambda wildcards: self.build_of_dir[wildcards.build_dir].llama_cpp[key]

    def every_cpu(self, wildcards: Wildcards, threads: int) -> int:
        """The resource 'cpus' of the build and the quantization, their -j: run locally, every CPU this process may
        run on, whatever --cores says; under a cluster executor the job's threads (plan_resources.every_cpu). A
        resource, not a param: a param enters the between-workflow cache's key and Snakemake's rerun triggers."""
        return plan_resources.every_cpu(self._local_exec(), threads)

    # --- rules/tasks.smk

    def prompt_spec(self, wildcards: Wildcards) -> dict:
        """One prompt's settings (the task's, with its prompt-set member's over them), from the prompt key wildcard."""
        return plan_cells.prompt_spec(self.config, wildcards.prompt)

    def prompt_max_tokens(self, wildcards: Wildcards) -> int:
        return self.prompt_spec(wildcards).get("max_tokens", self.config["max_tokens"])

    def prompt_inputs(self, wildcards: Wildcards) -> dict:
        spec = self.prompt_spec(wildcards)
        if "prompt_set" in spec:  # a question of a public prompt set: the set's prepared file
            inputs = {"prompt_set": self.prompt_set_file, "code": self.code("render_prompt.py")}
            if spec["prompt_set"].get("turn") == 2:  # and the baseline's answer to its first turn
                category = spec["prompt_set"]["category"]
                answer = plan_cells.first_answer_cell(self.cells, wildcards.prompt, category, self.baseline)
                if answer is None:
                    raise WorkflowError(
                        f"prompt {wildcards.prompt}: no '{self.baseline}' cell at temperature 0, repeat 1"
                    )
                inputs["first_answer"] = answer.path
            return inputs
        inputs: dict[str, Any] = {"template": self.config_path(spec["prompt"]), "code": self.code("render_prompt.py")}
        inputs.update({f"in_{name}": self.config_path(path) for name, path in spec["inputs"].items()})
        dataset = spec.get("dataset")
        if dataset:
            inputs["dataset"] = self._dataset_file(wildcards.prompt, dataset)
        return inputs

    def prompt_set_inputs(self, wildcards: Wildcards) -> dict:
        """What rule prompt_set reads: its code, and the set's local copy when the config names one."""
        local = {"file": self.prompt_set_spec["file"]} if "file" in self.prompt_set_spec else {}
        return {"code": self.code("prompt_set.py"), **local}

    def _dataset_file(self, key: str, dataset: dict) -> str:
        """A prompt's dataset rows come from: a local JSONL file, or its task's split fetched from the hub."""
        if dataset["kind"] == "local-jsonl":
            return self.config_path(dataset["path"])
        return f"resources/datasets/{plan_cells.split_key(key)[0]}.jsonl"

    # --- rules/vllm.smk

    def vllm_requirements(self, wildcards: Wildcards) -> list[str]:
        """The requirements file a vLLM build's venv is made from (an input: an edit makes the venv again); none
        when the build names its interpreter."""
        block = self.vllm_builds[wildcards.label].vllm
        return [] if block.get("python") else [self.config_path(block["requirements"])]

    # --- rules/cells.smk

    def setup_inputs(self, wildcards: Wildcards) -> dict:
        """What a condition's setup reads: the build, the target's (and the draft's, if the condition loads one)
        verified manifest, the measurement code's manifest, and the predictions stamp when there is one. A models
        folder that is not the condition's own is refused."""
        own = self.models_folders[wildcards.condition]
        if wildcards.models != own:
            raise WorkflowError(
                f"results/setup: condition '{wildcards.condition}' is served by the models of folder '{own}', "
                f"not '{wildcards.models}'"
            )
        # The verified manifests stand for the GGUFs (verify_model reads each GGUF)
        inputs: dict[str, Any] = {
            "model_manifest": self.model_manifest("target"),
            "code": CODE_MANIFEST.format(entry="run_cells"),
        }
        build = self.build_of(wildcards)
        draft = "draft" in self.config["conditions"][wildcards.condition]["requires"]
        inputs |= registry.engine(build.engine).setup_inputs(self.config, build, self.base, draft)
        if draft:
            inputs["draft_manifest"] = self.model_manifest("draft")
        if self.predictions:
            inputs["predictions"] = PREDICTIONS_STAMP  # stamped before the first cell starts
        return inputs

    def setup_cells(self, wildcards: Wildcards) -> str:
        """A condition setup's cell files on every machine (a glob): the cells a new setup makes out of date, which
        it checks for another model's measurement first (specbench.core.records.ownership)."""
        fixed = {"build": wildcards.get("build", ""), "models": wildcards.models, "condition": wildcards.condition}
        return LAYOUT.partial(self.cell_pattern, fixed, others="*")

    def conditions_regex(self, server: str, scope: str | None = None) -> str:
        return plan_server.conditions_regex(self.config, server, scope)

    def build_of(self, wildcards: Wildcards) -> config_builds.Build:
        """The cell's build (the one build of a run without builds)."""
        return self.build_of_label.get(wildcards.get("build", ""), self.builds[0])

    def setup_settings(self, wildcards: Wildcards) -> dict:
        """A condition's serving settings (params of condition_setup): the engine, the server's argv (an endpoint's
        URL beside it), what the condition requires, the measurement settings."""
        build = self.build_of(wildcards)
        served_by = registry.engine(build.engine)
        condition = wildcards.condition
        endpoint = served_by.endpoint(build, condition)
        return {
            "engine": build.engine,
            "server_args": served_by.server_args(self.config, build, condition, self.base),
            **({"endpoint": endpoint} if endpoint is not None else {}),
            "requires": list(self.config["conditions"][condition]["requires"]),
            "chat_template": chat_template.setting(self.config),
            "server_env": dict(build.env),
            **plan_server.measurement_settings(self.config),
        }

    def cell_priority(self, wildcards: Wildcards) -> int:
        """Earlier in the interleaved run order = higher priority; a warm sequence by its first cell."""
        first = plan_cells.job_cells(self.config, dict(wildcards.items()))[0]
        return len(self.run_order) - self.run_order[first]

    def server_resources(self, scope: str, serving: str | None = None) -> dict[str, Any]:
        """What a profile cannot say of a job that starts a server (plan_resources.server_resources): its time
        limit, from the timeouts and the cells its server answers (scope 'fresh', 'task' or 'condition'), and each
        key set per machine or per condition, as a function of the job's machine and condition (``serving``: the
        condition every job of the rule serves, the baseline's for an explanation)."""
        mode = "fresh" if scope == "fresh" else "warm"
        served = (
            [serving]
            if serving
            else [c for c in self.cell_conditions if self.config["conditions"][c]["server"] == mode]
        )
        try:
            planned = plan_resources.server_resources(
                self.config, served, plan_resources.cells_per_job(self.config, scope, self.cells)
            )
        except config_error.ConfigError as error:
            raise WorkflowError(str(error)) from None
        return {
            key: ((lambda wc, f=value: f(wc.machine, serving or wc.condition)) if callable(value) else value)
            for key, value in planned.items()
        }

    # --- rules/explain.smk

    def explanation_files(self) -> list[str]:
        """One explanation per temperature-0 cell that has a reference among this run's cells (a llama.cpp build's:
        an explanation asks a llama-server of the build for its log-probabilities, which an endpoint is not)."""
        return [
            explanations.explanation_path(cell)
            for cell in explanations.compared_cells(self.cells, self.baseline)
            if registry.engine(self.build_of_label[cell.build].engine).serves_gguf
        ]

    # --- rules/imports.smk

    def import_source(self, wildcards: Wildcards) -> str:
        return self.imports[wildcards.imported]

    def import_indexes(self) -> list[str]:
        return [f"{IMPORTS_DIR}/{label}.json" for label in self.imports]

    # --- rules/report.smk

    def manifest_inputs(self) -> dict[str, str]:
        """The build's and the models' manifests the claims and the report read (the draft's when a cell loads it)."""
        inputs = {"build": self.llama_bin_dir, "model": self.model_manifest("target")}
        if "draft" in self.used_roles:
            inputs["draft"] = self.model_manifest("draft")
        return inputs

    def claims_inputs(self, wildcards: Wildcards) -> dict:
        """The per-cell and typed tables, the cell index, the manifests, the claims (with their schema) and the
        predictions."""
        inputs: dict[str, Any] = {
            "table": "results/cells.parquet",
            "tables": TABLES,
            "cells_index": "results/cells_index.json",
            **self.manifest_inputs(),
            "claims": self.config_path(self.config["claims"]),
            "claims_schema": self.config_path("config/claims.schema.yaml"),
            "code": self.code("claims.py"),
            "schemas": [self.result_schemas["tables"], self.result_schemas["judged"]],
        }
        if self.predictions:
            inputs["predictions"] = self.predictions
            inputs["predictions_stamp"] = PREDICTIONS_STAMP
        return inputs

    def report_inputs(self, figure_files: list[str]) -> dict:
        """The per-cell table and the cell index, what the tables, claims and figures rules wrote, the manifests,
        the models' download records and the report's code (what renders: it reads the files above without the code
        that wrote them)."""
        return {
            "table": "results/cells.parquet",
            "cells_index": "results/cells_index.json",
            "tables": TABLES,
            "claims": JUDGED,
            "figures": FIGURES_INDEX,
            "figure_files": figure_files,
            **self.manifest_inputs(),
            "downloads": [
                f"results/models/{self.model_ids[role]}.download.json"
                for role in self.used_roles
                if self.model_source(role)["kind"] == "hf"
            ],
            **({"prompt_set": self.prompt_set_file} if self.prompt_set_file else {}),
            "code": self.code("report.py"),
            "schemas": list(self.result_schemas.values()),
        }
