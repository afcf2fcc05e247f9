# Validated config, the cell list, wildcard constraints and the helpers that compute file lists.
import functools
import json
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from specbench.core import matrix as sb_cells  # noqa: E402
from specbench.claims import load as sb_claims  # noqa: E402
from specbench.core import config as sb_config  # noqa: E402
from specbench.core import files as sb_files  # noqa: E402
from specbench.core.code import (
    fingerprint,
    import_closure,
    workflow_commit,
)  # noqa: E402
from specbench.build.cmake import host_cpu  # noqa: E402

BASE = Path(workflow.basedir)

try:
    sb_config.validate_config(config, base=BASE)
except sb_config.ConfigError as error:
    raise WorkflowError(str(error)) from None

CELLS = sb_cells.selected_cells(config)
RUN_ORDER = {
    (c.machine, c.task, c.condition, c.temperature, c.repeat): position
    for position, c in enumerate(
        sb_cells.run_order(CELLS, list(config["tasks"]), list(config["conditions"]))
    )
}
LLAMA_SOURCE = sb_config.llama_source(config, base=BASE)
HOST_CPU = host_cpu()
LLAMA_SRC_DIR = "resources/llama.cpp/src"
LLAMA_BUILD_DIR = "resources/llama.cpp/build"
LLAMA_BIN_DIR = "resources/llama.cpp/bin"
CELL_PATTERN = sb_cells.CELL_PATTERN
CELL_STEM = CELL_PATTERN.removesuffix(".json")
SEQUENCE_STEM = CELL_STEM.replace("r{repeat}", "warm")
REPEATS = sb_cells.repeats(config)
# What one server of a warm condition answers (config 'warm_scope'): a task's repeats at one temperature (rule
# cell_sequence), or every selected cell of the condition (rule condition_sequence); only that rule is defined.
WARM_SCOPE = config["warm_scope"]
SELECTED_TASKS = [t for t in config["tasks"] if t in {c.task for c in CELLS}]
TEMPERATURES = [sb_cells.format_temperature(t) for t in config["temperatures"]]
# One server for the whole condition: its logs under a folder no task can be named ('_', see schema $defs.name).
CONDITION_STEM = CELL_STEM.replace("{task}", "_all-tasks").replace(
    "t{temperature}/r{repeat}", "warm"
)


def config_path(value):
    """A path from the config, resolved against the workflow directory."""
    return str(sb_config.resolve_path(value, BASE))


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
    return sb_config.model_source(config, role)


def model_id(role):
    """A model's identity as a path component: its source, not its role, so several models coexist."""
    source, options = model_source(role), config["models"].get(role, {})
    kind = source["kind"]
    if kind == "hf":
        ident = (
            f"{re.sub(r'[^A-Za-z0-9._-]+', '--', source['repo'])}@{source['revision']}"
        )
    elif kind == "tiny":
        tiny = options.get("tiny", {})
        ident = f"tiny-{role}-seed{tiny.get('seed', 0)}"
        if role == "target":
            ident = (
                f"tiny-target-{tiny.get('weights', 'random')}-seed{tiny.get('seed', 0)}"
            )
        else:  # the tiny draft is made for its target
            ident += f"-for-{model_id('target')}"
    else:
        path = config_path(source["path"])
        ident = f"{kind}-{Path(path).name}-{sb_files.sha256_text(path)[:8]}"
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", ident)


ROLES = [role for role in ("target", "draft") if role in config["models"]]
# The roles the selected cells load: the draft only when a selected condition needs it.
USED_ROLES = [
    role
    for role in ROLES
    if role == "target"
    or any("draft" in config["conditions"][c.condition]["requires"] for c in CELLS)
]
MODEL_IDS = {role: model_id(role) for role in ROLES}
ROLE_OF = {ident: role for role, ident in MODEL_IDS.items()}
TARGET_ID = MODEL_IDS["target"]
DRAFT_ID = MODEL_IDS.get("draft", "no-draft")
TARGET_BF16 = f"resources/models/{TARGET_ID}/bf16.gguf"
TARGET_QUANT = (
    f"resources/models/{TARGET_ID}/{config['models']['target']['quant']}.gguf"
)
DRAFT_GGUF = f"resources/models/{DRAFT_ID}/{config['models'].get('draft', {}).get('outtype', 'bf16')}.gguf"


wildcard_constraints:
    **sb_cells.wildcard_constraints(config),
    model="|".join(re.escape(i) for i in MODEL_IDS.values()),


def model_gguf(role):
    """The GGUF a condition loads for this role: a ready file, or the one this workflow makes."""
    source = model_source(role)
    if source["kind"] == "gguf":
        return config_path(source["path"])
    return TARGET_QUANT if role == "target" else DRAFT_GGUF


def checkpoint_dir(role):
    """The Hugging Face-layout checkpoint a role is converted from."""
    source = model_source(role)
    if source["kind"] == "checkpoint":
        return config_path(source["path"])
    return f"resources/models/{MODEL_IDS[role]}/{'tiny' if source['kind'] == 'tiny' else 'hf'}"


def expected_file_type(role):
    """The quantization the verify step insists on (none for a ready GGUF or the draft)."""
    if role == "target" and model_source(role)["kind"] != "gguf":
        return config["models"]["target"]["quant"]
    return None


def model_manifest(role):
    return f"results/models/{MODEL_IDS[role]}.json"


def code(script):
    """The entry script and the package modules it imports: a rule's code, declared as input (and cache key)."""
    return list(_code(script))


# The cells' code as one input: a manifest of the measurement code's files (rule code_manifest), so a large matrix
# checks one file per cell instead of a dozen, and an edit still reruns every cell
CELL_CODE_MANIFEST = "results/code/run_cells.json"


@functools.cache
def _code(script):
    return tuple(str(path) for path in import_closure(BASE / "scripts" / script))


# What a cell job reads: its condition's setup (made by condition_setup: the build, the verified models, the
# measurement code, the settings) and its tasks' prompt manifests. Two plain patterns - no input function and no
# per-job params - so planning a large matrix stays fast.
CONDITION_SETUP = "results/setup/{condition}.json"
PROMPT_MANIFEST = "results/prompts/{task}.json"


def setup_inputs(wildcards):
    """What a condition's setup reads: the build, the target's (and the draft's, if the condition loads one)
    verified manifest, the measurement code's manifest, and the predictions stamp when there is one.
    """
    inputs = {
        "build": LLAMA_BIN_DIR,
        # The verified manifests stand for the GGUFs (verify_model reads each GGUF; a changed or missing one makes
        # its manifest again)
        "model_manifest": model_manifest("target"),
        "code": CELL_CODE_MANIFEST,
    }
    if "draft" in config["conditions"][wildcards.condition]["requires"]:
        inputs["draft_manifest"] = model_manifest("draft")
    if PREDICTIONS:
        inputs["predictions"] = (
            PREDICTIONS_STAMP  # stamped before the first cell starts
        )
    return inputs


def conditions_regex(server):
    """Wildcard regex of the conditions with this server mode ('fresh' or 'warm'); never matches if none."""
    names = [n for n, c in config["conditions"].items() if c["server"] == server]
    return (
        "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "(?!)"
    )


def server_args(condition):
    """The server's argv after the binary, resolved once here: model, the study's flags, the condition's flags
    (with the draft's path); the cell adds only --host 127.0.0.1 and the port it picks.
    """
    draft = model_gguf("draft") if "draft" in ROLES else None
    args = config["conditions"][condition]["args"]
    return [
        "-m",
        model_gguf("target"),
        *config["server"]["args"],
        *(a.replace("{draft}", draft) if draft else a for a in args),
    ]


# The measurement settings every cell passes on (each a field of specbench.cell.Setup)
MEASUREMENT_SETTINGS = {
    "reasoning": config["reasoning"],
    "base_seed": config["seed"],
    "startup_timeout_s": config["server"]["startup_timeout_s"],
    "request_timeout_s": config["server"]["request_timeout_s"],
    "sample_interval_s": config["measurement"]["sample_interval_s"],
    "max_attempts": config["measurement"]["max_attempts"],
    "max_load_per_cpu": config["measurement"]["max_load_per_cpu"],
    "max_foreign_cpu": config["measurement"]["max_foreign_cpu"],
}


def setup_settings(wildcards):
    """A condition's serving settings (params of condition_setup): the server's argv, what the condition
    requires, the measurement settings."""
    return {
        "server_args": server_args(wildcards.condition),
        "requires": list(config["conditions"][wildcards.condition]["requires"]),
        **MEASUREMENT_SETTINGS,
    }


def cell_priority(wildcards):
    """Earlier in the interleaved run order (cells.run_order) = higher priority; a warm sequence by its first cell."""
    first = sb_cells.job_cells(config, dict(wildcards.items()))[0]
    key = (first.machine, first.task, first.condition, first.temperature, first.repeat)
    return len(RUN_ORDER) - RUN_ORDER[key]


# A constant, not a function of the wildcards: Snakemake evaluates callable resources once per job.
_SERVER = config["server"]
CELL_RUNTIME_MINUTES = (
    int((_SERVER["startup_timeout_s"] + _SERVER["request_timeout_s"]) / 60) + 1
)


def model_note():
    """A warning for the report when the models are generated tiny ones, not a real checkpoint."""
    if model_source("target")["kind"] != "tiny":
        return None
    weights = config["models"]["target"].get("tiny", {}).get("weights", "random")
    if weights == "random":
        return (
            "The models are tiny ones with random weights, generated for this demo: their drafts are rejected, "
            "so the multipliers say nothing about the methods."
        )
    return (
        f"The models are tiny ones constructed for this demo ('{weights}'): how often their drafts are accepted "
        "was chosen by construction, not measured behaviour of Qwen3.5."
    )


def report_inputs(wildcards):
    """The per-cell table, the cell index, manifests, download records, claims and the report's code."""
    inputs = {
        "table": "results/cells.parquet",
        "cells_index": "results/cells_index.json",
        "build": LLAMA_BIN_DIR,
        "model": model_manifest("target"),
        "claims": config_path(config["claims"]),
        "claims_schema": config_path("config/claims.schema.yaml"),
        "downloads": [
            f"results/models/{MODEL_IDS[role]}.download.json"
            for role in USED_ROLES
            if model_source(role)["kind"] == "hf"
        ],
        "code": code("report.py"),
    }
    if "draft" in USED_ROLES:
        inputs["draft"] = model_manifest("draft")
    if PREDICTIONS:
        inputs["predictions"] = PREDICTIONS
        inputs["predictions_stamp"] = PREDICTIONS_STAMP
    return inputs


WORKFLOW_COMMIT = workflow_commit(BASE)
CONFIG_SHA256 = sb_files.sha256_text(json.dumps(config, sort_keys=True))


def cell_files():
    return [cell.path for cell in CELLS]


# --- runs made elsewhere, imported as further machines (rules/imports.smk)
IMPORTS_DIR = "results/imports"
IMPORTS = {entry["label"]: config_path(entry["path"]) for entry in config["imports"]}
IMPORTS_REGEX = (
    "|".join(re.escape(label) for label in sorted(IMPORTS, key=len, reverse=True))
    or "(?!)"
)
# Every machine of the report, in order: those measured here, then the imported ones
MACHINE_LABELS = [*sb_cells.machine_labels(config), *IMPORTS]


def import_source(wildcards):
    return IMPORTS[wildcards.imported]


def import_indexes():
    return [f"{IMPORTS_DIR}/{label}.json" for label in IMPORTS]


def task_inputs(wildcards):
    task = config["tasks"][wildcards.task]
    inputs = {"template": config_path(task["prompt"]), "code": code("render_prompt.py")}
    inputs.update(
        {f"in_{name}": config_path(path) for name, path in task["inputs"].items()}
    )
    dataset = task.get("dataset")
    if dataset:
        inputs["dataset"] = dataset_file(wildcards.task)
    return inputs


def dataset_file(task):
    dataset = config["tasks"][task]["dataset"]
    if dataset["kind"] == "local-jsonl":
        return config_path(dataset["path"])
    return f"resources/datasets/{task}.jsonl"


# --- what each job asks for, from config 'resources', so the same workflow runs locally or with --executor slurm
CELL_RULES = ("cell", "cell_sequence", "condition_sequence")
# How many cells one job of each cell rule measures (its runtime scales with it).
CELLS_PER_JOB = {
    "cell": 1,
    "cell_sequence": len(REPEATS),
    "condition_sequence": len(SELECTED_TASKS) * len(TEMPERATURES) * len(REPEATS),
}

_BUILTIN_RESOURCES = {"threads": 1, "mem_mb": 2048, "runtime": 30, "gpu": 0}
_unknown = set(config["resources"]["conditions"]) - set(config["conditions"])
if _unknown:
    raise WorkflowError(
        f"config error at 'resources.conditions': no such condition {sorted(_unknown)}"
    )
workflow.localrules(*config["resources"]["local_rules"])


def _rule_settings(name):
    """A rule's resources: built-in fallback < resources.default < resources.rules.<rule>."""
    res = config["resources"]
    return {**_BUILTIN_RESOURCES, **res["default"], **res["rules"].get(name, {})}


def rule_threads(name):
    """The threads a rule's job asks for. A cell run locally claims every core Snakemake has, so cells never
    overlap; under a cluster executor each cell is a job of its own and asks for the configured number (decided
    per job: the executor is known only then)."""
    threads = _rule_settings(name)["threads"]
    if name not in CELL_RULES:
        return threads
    return lambda wildcards: workflow.cores if workflow.local_exec else threads


def rule_resources(name):
    """The resources declared besides threads - mem_mb, runtime, gpu when any is asked for, and any site key
    the config adds. A cell's runtime defaults to its timeouts x attempts; its condition's settings come last.
    """
    base = {k: v for k, v in _rule_settings(name).items() if k != "threads"}
    if name in CELL_RULES and "runtime" not in config["resources"]["rules"].get(
        name, {}
    ):
        attempts = config["measurement"]["max_attempts"]
        base["runtime"] = CELL_RUNTIME_MINUTES * CELLS_PER_JOB[name] * attempts
    # The conditions served by this rule, fresh servers (cell) or warm ones (cell_sequence, condition_sequence)
    mode = {"cell": "fresh", "cell_sequence": "warm", "condition_sequence": "warm"}.get(
        name
    )
    by_condition = {
        condition: settings
        for condition, settings in config["resources"]["conditions"].items()
        if config["conditions"][condition]["server"] == mode
    }
    # The machine a cell is measured on picks the node: its resources come last
    by_machine = (
        {m["label"]: m["resources"] for m in config["machines"]} if mode else {}
    )
    varying = {
        key
        for layer in (by_condition, by_machine)
        for settings in layer.values()
        for key in settings
    }
    # Each key must resolve for every machine x condition served (machine, else condition, else the rule's own)
    served = [c for c, cond in config["conditions"].items() if cond["server"] == mode]
    missing = sorted(
        key
        for key in varying - set(base)
        if any(
            key not in by_machine[m] and key not in by_condition.get(c, {})
            for m in by_machine
            for c in served
        )
    )
    if missing:
        where = (
            "machines"
            if any(k in r for r in by_machine.values() for k in missing)
            else "resources.conditions"
        )
        raise WorkflowError(
            f"config error at '{where}': {missing} set for some machines or conditions need a value for the "
            f"others: set them under resources.rules.{name} or resources.default"
        )
    resources = {}
    for key in [*base, *sorted(varying - set(base))]:
        value = base.get(key)
        if key == "gpu" and not value and "gpu" not in varying:
            continue  # asks for no GPU: declare none (no --gpus under SLURM)
        if key in varying:
            value = lambda wc, key=key, value=value: by_machine.get(wc.machine, {}).get(
                key, by_condition.get(wc.condition, {}).get(key, value)
            )
        resources[key] = value
    return resources
