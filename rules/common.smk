# Validated config, the cell list, wildcard constraints and the helpers that compute file lists.
import re
import subprocess
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from specbench import cells as sb_cells  # noqa: E402
from specbench import config as sb_config  # noqa: E402
from specbench.llama_cpp import host_cpu  # noqa: E402

BASE = Path(workflow.basedir)

try:
    sb_config.validate_config(config, base=BASE)
except sb_config.ConfigError as error:
    raise WorkflowError(str(error)) from None

CELLS = sb_cells.selected_cells(config)
LLAMA_SOURCE = sb_config.llama_source(config)
HOST_CPU = host_cpu()
LLAMA_SRC_DIR = "resources/llama.cpp/src"
LLAMA_BUILD_DIR = "resources/llama.cpp/build"
LLAMA_BIN_DIR = "resources/llama.cpp/bin"
CELL_PATTERN = sb_cells.CELL_PATTERN
CELL_STEM = CELL_PATTERN.removesuffix(".json")
SEQUENCE_STEM = CELL_STEM.replace("r{repeat}", "warm")
REPEATS = list(range(1, config["repeats"] + 1))


wildcard_constraints:
    **sb_cells.wildcard_constraints(config),
    role="target|draft",


def config_path(value):
    """A path from the config, resolved against the workflow directory."""
    return str(sb_config.resolve_path(value, BASE))


def model_source(role):
    """The chosen source of 'target' or 'draft' as one dict (kind 'none' when not configured)."""
    return sb_config.model_source(config, role)


TARGET_BF16 = "resources/models/target.bf16.gguf"
TARGET_QUANT = f"resources/models/target.{config['models']['target']['quant']}.gguf"
DRAFT_GGUF = f"resources/models/draft.{config['models'].get('draft', {}).get('outtype', 'bf16')}.gguf"


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
    return f"resources/models/{role}/{'tiny' if source['kind'] == 'tiny' else 'hf'}"


def expected_file_type(role):
    """The quantization the verify step insists on (none for a ready GGUF or the draft)."""
    if role == "target" and model_source(role)["kind"] != "gguf":
        return config["models"]["target"]["quant"]
    return None


def model_manifest(role):
    return f"results/models/{role}.json"


def cell_inputs(wildcards):
    """What one cell reads: the build, the prompt, the target (and the draft if its condition needs one)."""
    inputs = {
        "build": LLAMA_BIN_DIR,
        "prompt": f"results/prompts/{wildcards.task}.json",
        "model": model_gguf("target"),
        "model_manifest": model_manifest("target"),
    }
    if "draft" in config["conditions"][wildcards.condition]["requires"]:
        inputs["draft"] = model_gguf("draft")
        inputs["draft_manifest"] = model_manifest("draft")
    return inputs


def conditions_regex(server):
    """Wildcard regex of the conditions with this server mode ('fresh' or 'warm'); never matches if none."""
    names = [n for n, c in config["conditions"].items() if c["server"] == server]
    return (
        "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "(?!)"
    )


def cell_params(wildcards):
    """The settings a cell runner takes from the config."""
    condition = config["conditions"][wildcards.condition]
    task = config["tasks"][wildcards.task]
    measurement = config["measurement"]
    return {
        "shared_args": config["server"]["args"],
        "condition_args": condition["args"],
        "requires": condition["requires"],
        "max_tokens": task.get("max_tokens", config["max_tokens"]),
        "reasoning": config["reasoning"],
        "base_seed": config["seed"],
        "startup_timeout_s": config["server"]["startup_timeout_s"],
        "request_timeout_s": config["server"]["request_timeout_s"],
        "sample_interval_s": measurement["sample_interval_s"],
        "max_attempts": measurement["max_attempts"],
        "max_load_per_cpu": measurement["max_load_per_cpu"],
    }


def cell_runtime_minutes(wildcards):
    server = config["server"]
    return int((server["startup_timeout_s"] + server["request_timeout_s"]) / 60) + 1


def report_inputs(wildcards):
    """The aggregate tables, manifests, download records and claims the report reads."""
    inputs = {
        "runs": "results/runs.csv",
        "summary": "results/summary.csv",
        "acceptance": "results/acceptance.csv",
        "identity_summary": "results/identity_summary.csv",
        "cells_index": "results/cells_index.json",
        "build": LLAMA_BIN_DIR,
        "model": model_manifest("target"),
        "claims": config_path("config/claims.yaml"),
        "downloads": [
            f"results/models/{role}.download.json"
            for role in ("target", "draft")
            if model_source(role)["kind"] == "hf"
        ],
    }
    if "draft" in config["models"]:
        inputs["draft"] = model_manifest("draft")
    return inputs


def workflow_commit():
    """The workflow's git commit (with '-dirty' for uncommitted changes, as git describe), or 'unknown' outside git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(BASE), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(BASE), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    suffix = "-dirty" if dirty.stdout.strip() else ""
    return f"{head.stdout.strip()}{suffix}"


WORKFLOW_COMMIT = workflow_commit()


def cell_files():
    return [cell.path for cell in CELLS]


def task_inputs(wildcards):
    task = config["tasks"][wildcards.task]
    inputs = {"template": config_path(task["prompt"])}
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
