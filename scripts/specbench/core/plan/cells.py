"""Cells: one machine (x build) x task (x prompt) x condition x temperature x repeat, and the file path that names it.

A cell's path names the models that serve it too (its models folder, ``core.plan.model_identity``: the target, with the
draft for a condition that loads one), after the machine (and build), so another model's cells never share a file.
A task holds one prompt (its ``prompt`` template: the study's case) or a prompt set (``prompts``: each prompt its own
cell coordinate). In paths and wildcards the two are one component, the prompt key: the task's name for its one
prompt, ``<task>.<prompt>`` for a member of a set ('.' is in no name). A run that names ``builds`` has a build
component after the machine's; one that does not has none (build '', no such component). A run with a load
dimension (``load.concurrency`` other than [1]) has a ``c<N>`` component after the condition's, every cell of it
(concurrency None, no such component, in a run without)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from specbench.core.config.builds import ONE_BUILD, build_conditions, build_labels, builds, declared
from specbench.core.plan.coordinates import (
    DEFAULT_MACHINE,
    LAYOUT,
    NO_LOAD,
    NO_MODELS,
    ONE_PROMPT,
    prompt_key,
    split_key,
)
from specbench.core.plan.model_identity import models_folder

CELLS_DIR = "results/cells"


def folders(builds: bool, load: bool = False) -> list[str]:
    """The optional coordinates a planned cell's path names: its models folder, after its build's in a run with
    builds; its concurrency in a run with a load dimension."""
    return [*(["build"] if builds else []), "models", *(["concurrency"] if load else [])]


CELL_PATTERN = LAYOUT.pattern(CELLS_DIR, present=folders(builds=False))
BUILD_CELL_PATTERN = LAYOUT.pattern(CELLS_DIR, present=folders(builds=True))  # a run with builds


@dataclass(frozen=True, order=True)
class Cell:
    """The coordinates of one measurement; ``machine`` is the label of the machine (kind of device) it runs on,
    ``prompt`` the member of the task's prompt set ('' for a task of one prompt), ``build`` the label of the
    llama.cpp build that serves it ('' for the one build of a run without ``builds``), ``models`` the folder naming
    the models that serve it (``core.plan.model_identity.models_folder``; '' for a path without one)."""

    task: str
    condition: str
    temperature: float
    repeat: int
    machine: str = DEFAULT_MACHINE
    prompt: str = ONE_PROMPT
    build: str = ONE_BUILD
    models: str = NO_MODELS
    concurrency: int | None = NO_LOAD

    @property
    def key(self) -> str:
        """The task and prompt as one path component (``prompt_key``)."""
        return prompt_key(self.task, self.prompt)

    @property
    def path(self) -> str:
        """The cell's result file, relative to the working directory."""
        return LAYOUT.fill(CELLS_DIR, self.values)

    @property
    def values(self) -> dict[str, Any]:
        """The coordinates by name (``core.plan.coordinates``)."""
        return asdict(self)

    @property
    def label(self) -> str:
        """Short human name, its path below its folder: e.g. ``file-rewrite/ngram-mod/t0.0/r2`` (``.../c2/...`` at a
        load point, ``a100:file-rewrite/...`` on a named machine, ``b11434:file-rewrite/...`` of a named build)."""
        name = LAYOUT.crossed_path(self.values, suffix="")
        where = [p for p in (self.machine if self.machine != DEFAULT_MACHINE else "", self.build) if p]
        return ":".join([*where, name])

    def seed(self, base_seed: int) -> int:
        """Sampling seed, derived from the repeat index so a rerun reproduces the cell."""
        return base_seed + self.repeat

    @classmethod
    def from_wildcards(cls, wildcards: Mapping[str, str | int]) -> Cell:
        """Build a cell from Snakemake wildcard strings by name (``prompt``: the prompt key); an optional coordinate
        a pattern has no wildcard for is at its default."""
        return cls(**LAYOUT.from_wildcards({k: str(v) for k, v in wildcards.items()}))

    @classmethod
    def from_path(cls, path: str) -> Cell:
        """The cell whose result file is ``path`` (``Cell.path``'s inverse; with a build component or without)."""
        values = LAYOUT.parse(CELLS_DIR, path)
        if values is None or not values["models"]:
            raise ValueError(f"'{path}' is not a cell file ({CELL_PATTERN} or {BUILD_CELL_PATTERN})")
        return cls(**values)


def cell_pattern(config: dict, root: str = CELLS_DIR, suffix: str = ".json") -> str:
    """The cell file pattern of a run (below ``root``): with a build component when the config names builds, a
    concurrency component when it has a load dimension."""
    return LAYOUT.pattern(root, folders(declared(config), load_declared(config)), suffix)


def concurrencies(config: dict) -> list[int | None]:
    """The concurrency coordinates of a validated config: ``load.concurrency`` in order, or [None] for a run without
    a load dimension (the default [1]: one request at a time, today's paths)."""
    return list(config["load"]["concurrency"]) if load_declared(config) else [NO_LOAD]


def load_declared(config: dict) -> bool:
    """Whether the config has a load dimension: ``load.concurrency`` anything but [1]."""
    return list((config.get("load") or {}).get("concurrency") or [1]) != [1]


def machine_labels(config: dict) -> list[str]:
    """The labels of the machines this run measures on (``machines``; the one it runs on when none are named)."""
    return [m["label"] for m in config.get("machines") or [{"label": DEFAULT_MACHINE}]]


def repeats(config: dict) -> list[int]:
    """The repeat indices of a validated config: 1 .. ``repeats``."""
    return list(range(1, config["repeats"] + 1))


def task_prompts(config: dict, task: str) -> list[str]:
    """The prompt coordinates of a task: its prompt set's names in config order, or [''] for its one prompt."""
    return list(config["tasks"][task].get("prompts") or {}) or [ONE_PROMPT]


def prompt_keys(config: dict, tasks: list[str] | None = None) -> list[str]:
    """The prompt keys of ``tasks`` (default: every task of the config), in config order."""
    return [
        prompt_key(t, p)
        for t in (tasks if tasks is not None else list(config["tasks"]))
        for p in task_prompts(config, t)
    ]


def prompt_spec(config: dict, key: str) -> dict[str, Any]:
    """What one prompt of a task is made of: the task's settings with its prompt-set member's over them (``prompt``
    replaces the template, ``inputs`` and ``dataset`` are merged key by key, ``description`` replaces)."""
    task, prompt = split_key(key)
    spec = {k: v for k, v in config["tasks"][task].items() if k != "prompts"}
    members = config["tasks"][task].get("prompts") or {}
    if prompt and prompt not in members:
        raise KeyError(f"task '{task}' has no prompt '{prompt}'")
    for field, value in (members.get(prompt) or {}).items():
        if field in ("inputs", "dataset") and isinstance(value, Mapping):
            spec[field] = {**(spec.get(field) or {}), **value}
        else:
            spec[field] = value
    return spec


def first_answer_cell(cells: list[Cell], key: str, category: str, baseline: str) -> Cell | None:
    """The cell whose answer the second turn ``key`` (``<category>-t2.<member>``) follows: the baseline's at
    temperature 0 and repeat 1 on the same question's first turn (task ``category``), on the first machine and build
    that measure that second turn; None when none of ``cells`` is the baseline's there."""
    task, prompt = split_key(key)
    for cell in cells:
        if (cell.task, cell.prompt, cell.condition, cell.temperature, cell.repeat) == (task, prompt, baseline, 0.0, 1):
            return replace(cell, task=category)
    return None


def selected_tasks(config: dict) -> list[str]:
    """The tasks ``select`` keeps, in its order (every task of the config when it names none)."""
    return list(config.get("select", {}).get("tasks") or config["tasks"])


def models_folders(config: dict) -> dict[str, str]:
    """Each condition's models folder (``core.plan.model_identity.models_folder``)."""
    return {condition: models_folder(config, condition) for condition in config["conditions"]}


def selected_conditions(config: dict) -> list[str]:
    """The conditions ``select`` keeps, in its order (every condition of the config when it names none)."""
    return list(config.get("select", {}).get("conditions") or config["conditions"])


def selected_cells(config: dict) -> list[Cell]:
    """The cells of a validated config (restricted by ``select`` where it names tasks or conditions, and to the
    conditions each build serves: ``build_conditions``), stably ordered."""
    conditions = selected_conditions(config)
    folders = models_folders(config)
    return [
        Cell(task, condition, float(temperature), repeat, machine, prompt, build.label, folders[condition], n)
        for machine in machine_labels(config)
        for build in builds(config)
        for task in selected_tasks(config)
        for prompt in task_prompts(config, task)
        for condition in build_conditions(build, conditions)
        for n in concurrencies(config)
        for temperature in config["temperatures"]
        for repeat in repeats(config)
    ]


def run_order(cells: list[Cell], tasks: list[str], conditions: list[str]) -> list[Cell]:
    """The order cells should run in: per task and temperature, repeat by repeat, prompt by prompt, load by load,
    every condition in turn, so that drift of a noisy machine is spread over the conditions instead of turning a
    block of runs into a multiplier (machines and builds side by side: each one's cells keep this order among
    themselves)."""
    prompts = _prompt_order(cells)
    return sorted(
        cells,
        key=lambda c: (
            tasks.index(c.task),
            c.temperature,
            c.repeat,
            prompts[c.task, c.prompt],
            c.concurrency or 1,
            conditions.index(c.condition),
            c.machine,
            c.build,
        ),
    )


def _prompt_order(cells: list[Cell]) -> dict[tuple[str, str], int]:
    """Each (task, prompt)'s position among its task's prompts, in the order the cells first name them."""
    seen = dict.fromkeys((c.task, c.prompt) for c in cells)
    return {key: [k for k in seen if k[0] == key[0]].index(key) for key in seen}


def condition_sequence(
    cells: list[Cell], condition: str, tasks: list[str], machine: str, build: str = ONE_BUILD
) -> list[Cell]:
    """The cells of ``condition`` on ``machine`` and ``build`` in the order one server (of them) answers them all
    (``warm_scope: condition``), the study's order as we read it: tasks in config order (``tasks``), per task its
    prompts in order, per prompt its temperatures ascending, per temperature its repeats one after another (the
    study's "faster with each repeat" is one task's repeats back to back)."""
    own = [c for c in cells if c.condition == condition and c.machine == machine and c.build == build]
    prompts = _prompt_order(own)
    return sorted(own, key=lambda c: (tasks.index(c.task), prompts[c.task, c.prompt], c.temperature, c.repeat))


def condition_sequence_files(config: dict) -> list[str]:
    """The cell files one server of a warm condition answers (``warm_scope: condition``), in the order it answers
    them (``condition_sequence``), with ``{machine}``, ``{models}``, ``{condition}`` (and ``{build}``) left as
    wildcards: every condition, machine and build has the same selected prompts, temperatures and repeats, so one
    order serves them all."""
    cells = selected_cells(config)
    first = cells[0]
    left = {w: f"{{{w}}}" for w in ("machine", "build", "models", "condition")}
    return [
        cell_pattern(config).format(**{**LAYOUT.wildcard_values(c.values), **left})
        for c in condition_sequence(cells, first.condition, list(config["tasks"]), first.machine, first.build)
    ]


def job_cells(config: dict, wildcards: Mapping[str, str]) -> list[Cell]:
    """The cells of one cell job, in the order its server answers them, from the job's wildcards: one cell (a
    fresh server), a prompt's repeats at one temperature (warm_scope task), or every selected cell of the condition
    (warm_scope condition: ``condition_sequence``); all on the job's machine and build."""
    if "repeat" in wildcards:
        return [Cell.from_wildcards(wildcards)]
    if "prompt" in wildcards:
        return [Cell.from_wildcards({**wildcards, "repeat": repeat}) for repeat in repeats(config)]
    condition, machine, build = wildcards["condition"], wildcards["machine"], wildcards.get("build", ONE_BUILD)
    return condition_sequence(selected_cells(config), condition, list(config["tasks"]), machine, build)


def wildcard_constraints(config: dict) -> dict[str, str]:
    """Regexes that accept only the config's own names, so a typo in a target fails at once."""
    return LAYOUT.constraints(
        {
            "machine": machine_labels(config),
            **({"build": build_labels(config)} if declared(config) else {}),
            "models": sorted(set(models_folders(config).values())),
            "prompt": prompt_keys(config),
            "condition": list(config["conditions"]),
            **({"concurrency": concurrencies(config)} if load_declared(config) else {}),
            "temperature": config["temperatures"],
            "repeat": repeats(config),
        }
    )
