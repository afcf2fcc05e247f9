"""Cells: one machine x task x condition x temperature x repeat, and the file path that names it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

CELLS_DIR = "results/cells"
CELL_PATTERN = CELLS_DIR + "/{machine}/{task}/{condition}/t{temperature}/r{repeat}.json"
DEFAULT_MACHINE = "local"  # the machine the workflow runs on, when the config names no machines


def format_temperature(value: float) -> str:
    """Temperature as it appears in paths: always with a decimal point (0 -> '0.0', 1 -> '1.0', 0.7 -> '0.7')."""
    text = repr(float(value))
    if "e" in text or "inf" in text or "nan" in text:
        raise ValueError(f"temperature {value!r} cannot be written as a path component")
    return text


@dataclass(frozen=True, order=True)
class Cell:
    """The coordinates of one measurement; ``machine`` is the label of the machine (kind of device) it runs on."""

    task: str
    condition: str
    temperature: float
    repeat: int
    machine: str = DEFAULT_MACHINE

    @property
    def path(self) -> str:
        """The cell's result file, relative to the working directory."""
        return CELL_PATTERN.format(
            machine=self.machine,
            task=self.task,
            condition=self.condition,
            temperature=format_temperature(self.temperature),
            repeat=self.repeat,
        )

    @property
    def label(self) -> str:
        """Short human name, e.g. ``file-rewrite/ngram-mod/t0.0/r2`` (``a100:file-rewrite/...`` on a named machine)."""
        name = f"{self.task}/{self.condition}/t{format_temperature(self.temperature)}/r{self.repeat}"
        return name if self.machine == DEFAULT_MACHINE else f"{self.machine}:{name}"

    def seed(self, base_seed: int) -> int:
        """Sampling seed, derived from the repeat index so a rerun reproduces the cell."""
        return base_seed + self.repeat

    @classmethod
    def from_wildcards(cls, task: str, condition: str, temperature: str, repeat: str | int,
                       machine: str = DEFAULT_MACHINE) -> Cell:
        """Build a cell from Snakemake wildcard strings."""
        return cls(task, condition, float(temperature), int(repeat), machine)


def machine_labels(config: dict) -> list[str]:
    """The labels of the machines this run measures on (``machines``; the one it runs on when none are named)."""
    return [m["label"] for m in config.get("machines") or [{"label": DEFAULT_MACHINE}]]


def repeats(config: dict) -> list[int]:
    """The repeat indices of a validated config: 1 .. ``repeats``."""
    return list(range(1, config["repeats"] + 1))


def selected_cells(config: dict) -> list[Cell]:
    """The cells of a validated config (restricted by ``select`` where it names tasks or conditions), stably ordered."""
    select = config.get("select", {})
    tasks = select.get("tasks") or list(config["tasks"])
    conditions = select.get("conditions") or list(config["conditions"])
    return [
        Cell(task, condition, float(temperature), repeat, machine)
        for machine in machine_labels(config)
        for task in tasks
        for condition in conditions
        for temperature in config["temperatures"]
        for repeat in repeats(config)
    ]


def run_order(cells: list[Cell], tasks: list[str], conditions: list[str]) -> list[Cell]:
    """The order cells should run in: per task and temperature, repeat by repeat, every condition in turn, so that
    drift of a noisy machine is spread over the conditions instead of turning a block of runs into a multiplier
    (machines side by side: each machine's cells keep this order among themselves)."""
    return sorted(cells, key=lambda c: (tasks.index(c.task), c.temperature, c.repeat, conditions.index(c.condition),
                                        c.machine))


def condition_sequence(cells: list[Cell], condition: str, tasks: list[str], machine: str) -> list[Cell]:
    """The cells of ``condition`` on ``machine`` in the order one server (of that machine) answers them all
    (``warm_scope: condition``), the study's order as we read it: tasks in config order (``tasks``), per task its
    temperatures ascending, per temperature its repeats one after another (the study's "faster with each repeat"
    is one task's repeats back to back)."""
    own = [c for c in cells if c.condition == condition and c.machine == machine]
    return sorted(own, key=lambda c: (tasks.index(c.task), c.temperature, c.repeat))


def job_cells(config: dict, wildcards: Mapping[str, str]) -> list[Cell]:
    """The cells of one cell job, in the order its server answers them, from the job's wildcards: one cell (a
    fresh server), a task's repeats at one temperature (warm_scope task), or every selected cell of the condition
    (warm_scope condition: ``condition_sequence``); all on the job's machine."""
    condition, machine = wildcards["condition"], wildcards["machine"]
    if "repeat" in wildcards:
        return [Cell.from_wildcards(wildcards["task"], condition, wildcards["temperature"], wildcards["repeat"],
                                    machine)]
    if "task" in wildcards:
        return [Cell(wildcards["task"], condition, float(wildcards["temperature"]), repeat, machine)
                for repeat in repeats(config)]
    return condition_sequence(selected_cells(config), condition, list(config["tasks"]), machine)


def wildcard_constraints(config: dict) -> dict[str, str]:
    """Regexes that accept only the config's own names, so a typo in a target fails at once."""

    def alternatives(values: list[str]) -> str:
        return "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))

    return {
        "machine": alternatives(machine_labels(config)),
        "task": alternatives(list(config["tasks"])),
        "condition": alternatives(list(config["conditions"])),
        "temperature": alternatives([format_temperature(t) for t in config["temperatures"]]),
        "repeat": alternatives([str(r) for r in repeats(config)]),
    }
