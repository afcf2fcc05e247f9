# Validated config, the cell list, wildcard constraints, and every function the rules call, grouped by the rule file
# they serve (Snakemake's lint keeps functions out of rule files; each rule file holds its rules and its constants).
import functools
import json
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from specbench.claims import claims_file as sb_claims  # noqa: E402
from specbench.core.config import builds as sb_builds  # noqa: E402
from specbench.core.config import chat_template as sb_chat  # noqa: E402
from specbench.core.config import load as sb_config  # noqa: E402
from specbench.core.config import error as sb_config_error  # noqa: E402
from specbench.core.steps import files as sb_files  # noqa: E402
from specbench.core.plan import cells as sb_cells  # noqa: E402
from specbench.core.plan import old_layout as sb_old_layout  # noqa: E402
from specbench.core.plan import models as sb_models  # noqa: E402
from specbench.core.plan import resources as sb_plan  # noqa: E402
from specbench.core.plan import server as sb_server  # noqa: E402
from specbench.core.config import sources as sb_sources  # noqa: E402
from specbench.core.plan.code import (
    fingerprint,
    import_closure,
    workflow_commit,
)  # noqa: E402
from specbench.preflight import planned as sb_planned  # noqa: E402
from specbench.preflight import machine_check as sb_preflight  # noqa: E402
from specbench.report import rule_params as sb_back_half  # noqa: E402

BASE = Path(workflow.basedir)

try:
    sb_config.validate_config(config, base=BASE)
except sb_config_error.ConfigError as error:
    raise WorkflowError(str(error)) from None

CELLS = sb_cells.selected_cells(config)
# Cell files from before models folders stay where they are, unread; one line says so (specbench.core.plan.old_layout)
_OLD_LAYOUT = sb_old_layout.old_layout_note(
    sb_old_layout.old_layout_files(CELLS), CELLS
)
if _OLD_LAYOUT:
    print(_OLD_LAYOUT, file=sys.stderr)
RUN_ORDER = {
    cell: position
    for position, cell in enumerate(
        sb_cells.run_order(CELLS, list(config["tasks"]), list(config["conditions"]))
    )
}
# What the cells wait for (the builds, models, prompts, code manifests and condition setups) runs first, above
# every cell's priority: at an equal priority a condition's setup would wait behind every ready cell of the
# conditions set up before it, and the cells would run condition by condition however RUN_ORDER interleaves them,
# so a machine's drift would become part of the multiplier. What reads the cells keeps priority 0.
PREPARE_PRIORITY = len(RUN_ORDER) + 1
# The llama.cpp builds (config 'builds'; the one build of llama_cpp without it). Each build's folders are
# resources/llama.cpp{build_dir}/ with build_dir empty for the top-level llama_cpp build (its folders as they
# always were) and builds/<label> below it for another: the llama_cpp rules are one pattern over that wildcard.
# An endpoint build (a server the user runs) has no folders: it is in BUILD_OF_LABEL only.
BUILDS = sb_builds.llama_builds(config)
BUILDS_DECLARED = sb_builds.declared(config)
BUILD_OF_DIR = {b.suffix: b for b in BUILDS}
BUILD_OF_LABEL = {b.label: b for b in sb_builds.builds(config)}
# The builds' labels as the tables and the report name them (none for the one build of a run without builds)
BUILD_LABELS = sb_back_half.build_labels(config)
LLAMA_ROOT = f"{sb_builds.LLAMA_DIR}{{build_dir}}"
# (a group: an empty alternative alone is a constraint that matches the empty suffix, not "no constraint")
_BUILD_DIRS = "|".join(
    re.escape(d) for d in sorted(BUILD_OF_DIR, key=len, reverse=True)
)
BUILD_DIRS_REGEX = f"(?:{_BUILD_DIRS})"


# The first build's tree converts the models and its llama-quantize quantizes them (every build serves them)
LLAMA_SRC_DIR = f"{BUILDS[0].root}/src"
LLAMA_BIN_DIR = f"{BUILDS[0].root}/bin"


def build_bin_dir(label):
    """The folder of a build's installed binaries and manifest."""
    return f"{BUILD_OF_LABEL[label].root}/bin"


CELL_PATTERN = sb_cells.cell_pattern(config)
# Each condition's models folder (the target's name and hash, with the draft's for a condition that loads one)
MODELS_FOLDERS = sb_cells.models_folders(config)
CELL_STEM = CELL_PATTERN.removesuffix(".json")
SEQUENCE_STEM = CELL_STEM.replace("r{repeat}", "warm")
REPEATS = sb_cells.repeats(config)
# What one server of a warm condition answers (config 'warm_scope', or the condition's own): a task's repeats at one
# temperature (rule cell_sequence), or every selected cell of the condition (rule condition_sequence); only the
# rules of the scopes some selected warm condition runs with are defined.
WARM_SCOPES = sb_server.warm_scopes(config, sb_cells.selected_conditions(config))
# The selected prompt keys (a task's name, or <task>.<prompt> for each member of its prompt set), in config order
SELECTED_PROMPT_KEYS = sb_cells.prompt_keys(config, sb_cells.selected_tasks(config))
# The cell files of one warm condition's server (rule condition_sequence), in the order it answers them
CONDITION_SEQUENCE_FILES = sb_cells.condition_sequence_files(config)
# One server for the whole condition: its logs under a folder no task can be named ('_', see schema $defs.name).
CONDITION_STEM = CELL_STEM.replace("{prompt}", "_all-tasks").replace(
    "t{temperature}/r{repeat}", "warm"
)


def config_path(value):
    """A path from the config, resolved against the workflow directory."""
    return str(sb_sources.resolve_path(value, BASE))


PREDICTIONS = config_path(config["predictions"]) if config["predictions"] else None
PREDICTIONS_STAMP = "results/predictions.stamp.json"

for key, path in (
    ("claims", config_path(config["claims"])),
    ("predictions", PREDICTIONS),
):
    try:
        if path:
            sb_claims.load_claims(path, config)
    except (sb_claims.ClaimError, OSError) as error:
        raise WorkflowError(f"{key}: {error}") from None


def model_source(role):
    """The chosen source of 'target' or 'draft' as one dict (kind 'none' when not configured)."""
    return sb_sources.model_source(config, role)


ROLES = sb_models.roles(config)
USED_ROLES = sb_models.used_roles(config, CELLS)
MODEL_IDS = {role: sb_models.model_id(config, role, BASE) for role in ROLES}


wildcard_constraints:
    **sb_cells.wildcard_constraints(config),
    model="|".join(re.escape(i) for i in MODEL_IDS.values()),
    build_dir=BUILD_DIRS_REGEX,


def model_manifest(role):
    return f"results/models/{MODEL_IDS[role]}.json"


def code(script):
    """The entry script and the package modules it imports: a rule's code, declared as input (and cache key)."""
    return list(_code(script))


# The cells' code as one input: a manifest of the measurement code's files (rule code_manifest), so a large matrix
# checks one file per cell instead of a dozen, and an edit still reruns every cell; the explanations' likewise
CODE_MANIFEST = "results/code/{entry}.json"
CELL_CODE_MANIFEST = CODE_MANIFEST.format(entry="run_cells")


@functools.cache
def _code(script):
    return tuple(str(path) for path in import_closure(BASE / "scripts" / script))


# --- helpers of the rules in rules/llama_cpp.smk


def llama_source(wildcards):
    """The source route of a build folder's build as one dict (sb_sources.llama_source)."""
    block = BUILD_OF_DIR[wildcards.build_dir].llama_cpp
    return sb_sources.llama_source({"llama_cpp": block}, base=BASE)


def llama_setting(key):
    """One llama_cpp key (cmake_args, backend, targets) of a build folder's build, as a params function."""
    return lambda wildcards: BUILD_OF_DIR[wildcards.build_dir].llama_cpp[key]


def llama_work_dir(wildcards):
    """A build folder's CMake build tree (scratch, not an output)."""
    return f"{sb_builds.LLAMA_DIR}{wildcards.build_dir}/cmake-build"


def every_cpu(wildcards, threads):
    """The resource 'cpus' of the build and the quantization, their -j: run locally, every CPU this process may run
    on, whatever --cores says (Snakemake caps `threads` at --cores, so --cores 1 would give them one); under a
    cluster executor the job's threads. A resource, not a param: a param enters the between-workflow cache's key
    and Snakemake's rerun triggers, and the build's output does not depend on its -j."""
    return sb_plan.every_cpu(workflow.local_exec, threads)


# --- helpers of the rules in rules/tasks.smk


def prompt_spec(wildcards):
    """One prompt's settings (the task's, with its prompt-set member's over them), from the prompt key wildcard."""
    return sb_cells.prompt_spec(config, wildcards.prompt)


def prompt_inputs(wildcards):
    spec = prompt_spec(wildcards)
    inputs = {"template": config_path(spec["prompt"]), "code": code("render_prompt.py")}
    inputs.update(
        {f"in_{name}": config_path(path) for name, path in spec["inputs"].items()}
    )
    dataset = spec.get("dataset")
    if dataset:
        inputs["dataset"] = dataset_file(wildcards.prompt, dataset)
    return inputs


def dataset_file(key, dataset):
    """A prompt's dataset rows come from: a local JSONL file, or its task's split fetched from the hub."""
    if dataset["kind"] == "local-jsonl":
        return config_path(dataset["path"])
    return f"resources/datasets/{sb_cells.split_key(key)[0]}.jsonl"


# --- helpers of the rules in rules/vllm.smk

# The vLLM builds (config builds[].engine: vllm), each with its environment (rule vllm_env)
VLLM_BUILDS = {b.label: b for b in sb_builds.vllm_builds(config)}


def vllm_requirements(wildcards):
    """The requirements file a vLLM build's venv is made from (an input: an edit makes the venv again); none when
    the build names its interpreter."""
    block = VLLM_BUILDS[wildcards.label].vllm
    return [] if block.get("python") else [config_path(block["requirements"])]


# --- helpers of the rules in rules/cells.smk


def setup_inputs(wildcards):
    """What a condition's setup reads: the build, the target's (and the draft's, if the condition loads one)
    verified manifest, the measurement code's manifest, and the predictions stamp when there is one. A models
    folder that is not the condition's own is refused.
    """
    own = MODELS_FOLDERS[wildcards.condition]
    if wildcards.models != own:
        raise WorkflowError(
            f"results/setup: condition '{wildcards.condition}' is served by the models of folder '{own}', "
            f"not '{wildcards.models}'"
        )
    inputs = {
        # The verified manifests stand for the GGUFs (verify_model reads each GGUF; a changed or missing one makes
        # its manifest again)
        "model_manifest": model_manifest("target"),
        "code": CELL_CODE_MANIFEST,
    }
    engine = build_engine(wildcards)
    if engine == sb_builds.LLAMA_CPP:
        inputs["build"] = (
            build_bin_dir(wildcards.build) if BUILDS_DECLARED else LLAMA_BIN_DIR
        )
    elif engine == sb_builds.VLLM:  # its environment, and the checkpoints it serves
        inputs["build"] = sb_builds.vllm_manifest(wildcards.build)
        inputs["checkpoint"] = sb_models.checkpoint_dir(config, "target", BASE)
        if "draft" in config["conditions"][wildcards.condition]["requires"]:
            inputs["draft_checkpoint"] = sb_models.checkpoint_dir(config, "draft", BASE)
    if "draft" in config["conditions"][wildcards.condition]["requires"]:
        inputs["draft_manifest"] = model_manifest("draft")
    if PREDICTIONS:
        inputs["predictions"] = (
            PREDICTIONS_STAMP  # stamped before the first cell starts
        )
    return inputs


def setup_cells(wildcards):
    """A condition setup's cell files on every machine (a glob): the cells a new setup makes out of date, which it
    checks for another model's measurement first (specbench.core.records.ownership)."""
    return CELL_PATTERN.format(
        machine="*",
        build=wildcards.get("build", ""),
        models=wildcards.models,
        prompt="*",
        condition=wildcards.condition,
        temperature="*",
        repeat="*",
    )


def conditions_regex(server, scope=None):
    return sb_server.conditions_regex(config, server, scope)


def build_engine(wildcards):
    """The engine of the cell's build (llama.cpp for the one build of a run without builds)."""
    build = BUILD_OF_LABEL.get(wildcards.get("build", ""))
    return build.engine if build is not None else sb_builds.LLAMA_CPP


def setup_settings(wildcards):
    """A condition's serving settings (params of condition_setup): the engine, the server's argv (an endpoint's
    URL instead), what the condition requires, the measurement settings."""
    engine = build_engine(wildcards)
    build = BUILD_OF_LABEL.get(wildcards.get("build", ""))
    condition = wildcards.condition
    if engine == sb_builds.ENDPOINT:
        served = {"server_args": [], "endpoint": build.urls[condition]}
    elif engine == sb_builds.VLLM:
        served = {
            "server_args": sb_server.vllm_server_args(config, build, condition, BASE)
        }
    else:
        served = {"server_args": sb_server.server_args(config, condition, BASE)}
    return {
        "engine": engine,
        **served,
        "requires": list(config["conditions"][wildcards.condition]["requires"]),
        "chat_template": sb_chat.setting(config),
        **sb_server.measurement_settings(config),
    }


def cell_priority(wildcards):
    """Earlier in the interleaved run order (cells.run_order) = higher priority; a warm sequence by its first cell."""
    first = sb_cells.job_cells(config, dict(wildcards.items()))[0]
    return len(RUN_ORDER) - RUN_ORDER[first]


# What each back-half rule computed, read by the next rather than recomputed, as files any tool reads (their JSON
# checked against specbench/core/results/schemas): the typed tables, a folder of Parquet files with its index.json
# (specbench.core.results.tables), the judged claims (specbench.report.judged) and the figures' index
# (specbench.report.figure_index)
TABLES = "results/tables"
JUDGED = "results/judged.json"
FIGURES_INDEX = "results/figures/index.json"
# Their JSON Schemas, inputs of the rules that write or read them (an edit checks every file against it again)
RESULT_SCHEMAS = {
    name: str(BASE / "scripts/specbench/core/results/schemas" / f"{name}.schema.json")
    for name in ("tables", "judged", "figures")
}


def manifest_inputs():
    """The build's and the models' manifests the claims and the report read (the draft's when a cell loads it)."""
    inputs = {"build": LLAMA_BIN_DIR, "model": model_manifest("target")}
    if "draft" in USED_ROLES:
        inputs["draft"] = model_manifest("draft")
    return inputs


def claims_inputs(wildcards):
    """The per-cell and typed tables, the cell index, the manifests, the claims (with their schema) and the
    predictions."""
    inputs = {
        "table": "results/cells.parquet",
        "tables": TABLES,
        "cells_index": "results/cells_index.json",
        **manifest_inputs(),
        "claims": config_path(config["claims"]),
        "claims_schema": config_path("config/claims.schema.yaml"),
        "code": code("claims.py"),
        "schemas": [RESULT_SCHEMAS["tables"], RESULT_SCHEMAS["judged"]],
    }
    if PREDICTIONS:
        inputs["predictions"] = PREDICTIONS
        inputs["predictions_stamp"] = PREDICTIONS_STAMP
    return inputs


def report_inputs(wildcards):
    """The per-cell table and the cell index, what the tables, claims and figures rules wrote, the manifests, the
    models' download records and the report's code (what renders: it reads the files above without the code that
    wrote them)."""
    return {
        "table": "results/cells.parquet",
        "cells_index": "results/cells_index.json",
        "tables": TABLES,
        "claims": JUDGED,
        "figures": FIGURES_INDEX,
        "figure_files": rules.figures.output.figures,
        **manifest_inputs(),
        "downloads": [
            f"results/models/{MODEL_IDS[role]}.download.json"
            for role in USED_ROLES
            if model_source(role)["kind"] == "hf"
        ],
        "code": code("report.py"),
        "schemas": list(RESULT_SCHEMAS.values()),
    }


def server_resources(scope, serving=None):
    """What a profile cannot say of a job that starts a llama-server (specbench.core.plan.resources.server_resources): its
    time limit, from the config's timeouts and the cells its server answers (scope 'fresh', 'task' or 'condition'),
    and each key set per machine or per condition, as a function of the job's machine and condition (``serving``:
    the condition every job of the rule serves, the baseline's for an explanation). A key set per machine or
    condition needs a value for every machine and selected condition its jobs serve: a profile's value for the rule
    (set-resources) would replace the rule's own, and none can stand in for the others.
    """
    mode = "fresh" if scope == "fresh" else "warm"
    served = (
        [serving]
        if serving
        else [
            c for c in SELECTED_CONDITIONS if config["conditions"][c]["server"] == mode
        ]
    )
    try:
        planned = sb_plan.server_resources(
            config, served, sb_plan.cells_per_job(config, scope, CELLS)
        )
    except sb_config_error.ConfigError as error:
        raise WorkflowError(str(error)) from None
    return {
        key: (
            (lambda wc, f=value: f(wc.machine, serving or wc.condition))
            if callable(value)
            else value
        )
        for key, value in planned.items()
    }


# --- helpers of the rules in rules/explain.smk


def explanation_files():
    """One explanation per temperature-0 cell that has a reference among this run's cells (a llama.cpp build's:
    an explanation asks a llama-server of the build for its log-probabilities, which an endpoint is not).
    """
    return [
        sb_explanations.explanation_path(cell)
        for cell in sb_explanations.compared_cells(CELLS, BASELINE)
        if BUILD_OF_LABEL[cell.build].engine == sb_builds.LLAMA_CPP
    ]


# --- helpers of the rules in rules/imports.smk


def import_source(wildcards):
    return IMPORTS[wildcards.imported]


def import_indexes():
    return [f"{IMPORTS_DIR}/{label}.json" for label in IMPORTS]


WORKFLOW_COMMIT = workflow_commit(BASE)
CONFIG_SHA256 = sb_files.sha256_text(json.dumps(config, sort_keys=True))


def cell_files():
    return [cell.path for cell in CELLS]


# --- before any job: the profile a cluster run needs
def check_profile():
    """Refuse a cluster run under the default workflow profile (`--profile profiles/slurm` reads it too, and its keys
    win): its global machine_share would queue one cell job at a time, its default-resources drop the site's.
    """
    if not workflow.local_exec and "machine_share" in workflow.global_resources:
        raise SystemExit(
            "specbench: a cluster run under the default workflow profile (profiles/default, whose keys win over "
            "--profile's); name the cluster's instead: snakemake --workflow-profile profiles/slurm ..."
        )


# --- before any job (specbench.preflight): what the planned jobs need against this machine, one table, a stop


def run_preflight():
    """Check what this run's jobs need (Snakemake's planned jobs; for the `preflight` target alone, what `all` would
    make of the missing outputs); print the table; exit naming each problem with what to do.
    """
    jobs = sb_planned.from_dag(workflow.dag.needrun_jobs())
    alone = {rule for rule, _ in jobs} <= {"preflight"}
    if alone:
        jobs = sb_planned.missing(config, BASE, CELLS, lambda path: Path(path).exists())
    rows, seconds = sb_preflight.timed_preflight(
        config, BASE, Path.cwd(), jobs, local=workflow.local_exec
    )
    text, problems = sb_preflight.report(rows, len(jobs), seconds)
    print(text, file=sys.stderr, flush=True)
    if problems:
        print(*(f"  - {line}" for line in problems), sep="\n", file=sys.stderr)
        raise SystemExit(
            f"{sb_preflight.PREFIX}: {len(problems)} problem(s) above; nothing was run "
            "(snakemake --no-hooks skips the preflight)"
        )
    if alone:
        print(f"{sb_preflight.PREFIX}: nothing missing", file=sys.stderr, flush=True)
