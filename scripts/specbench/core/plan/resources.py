"""What the workflow profiles cannot say of a job's resources: the CPUs a local build may use, a server job's time
limit, and keys set per machine or per condition. specbench.workflow.plan turns them into Snakemake's resources."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from specbench.core.config.error import ConfigError
from specbench.core.plan.cells import Cell

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
