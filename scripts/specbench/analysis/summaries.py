"""Every summary of the per-cell table, by name (``tables``): speeds and multipliers (analysis.speed, with the
verdict rule of analysis.verdict_rule), acceptance and acceptance by draft position (analysis.acceptance), latency
(analysis.latency_summary), output identity (analysis.identity), the prompt spread, each category's multiplier over
its prompts and repeats (analysis.category_interval) and the thesis; and the same per
machine and per build, since a multiplier never divides one machine's (or build's) speed by another's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import pandas as pd

from specbench.analysis.acceptance import acceptance, positions
from specbench.analysis.category_interval import category_multipliers
from specbench.analysis.cell_table import BUILD, MACHINE, builds_of, machines_of, one_request
from specbench.analysis.identity import identity
from specbench.analysis.latency_summary import latency
from specbench.analysis.load import load_table
from specbench.analysis.prompt_spread import prompt_spread, task_or_prompt
from specbench.analysis.speed import prompt_summary, summary
from specbench.analysis.thesis import settings_beside, thesis
from specbench.core.config.builds import ONE_BUILD
from specbench.core.plan.cells import DEFAULT_MACHINE


def tables(cells: pd.DataFrame, baseline: str) -> dict[str, pd.DataFrame]:
    """The per-cell table of one machine and build and every summary of it, by name: what claims, report, figures
    and provenance read. Multipliers never divide one machine's (or build's) speed by another's: mixed machines or
    builds are refused."""
    made = Summaries(cells, baseline)
    return {name: made.make(name) for name in SUMMARIES}


class Summaries(Mapping[str, pd.DataFrame]):
    """``tables`` of one machine's and build's cells, each summary made when first read (a claim's judge reads a
    few of them); mixed machines or builds are refused at once."""

    def __init__(self, cells: pd.DataFrame, baseline: str) -> None:
        machines = sorted(set(cells[MACHINE])) if MACHINE in cells else []
        if len(machines) > 1:
            raise ValueError(f"tables() summarises one machine's cells, got {machines}: use tables_by_machine()")
        builds = sorted(set(cells[BUILD])) if BUILD in cells else []
        if len(builds) > 1:
            raise ValueError(f"tables() summarises one build's cells, got {builds}: use tables_by_build()")
        # the study's summaries are of its one-request cells; the load table's of every cell
        self.all_cells, self.baseline = cells, baseline
        self.cells = one_request(cells) if "one_request" in cells else cells
        self._made: dict[str, pd.DataFrame] = {}

    def make(self, name: str) -> pd.DataFrame:
        """The summary ``name``, made once (an error making it propagates as raised)."""
        if name not in self._made:
            self._made[name] = SUMMARIES[name](self)
        return self._made[name]

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in SUMMARIES:
            raise KeyError(name)
        try:
            return self.make(name)
        except KeyError as error:  # not "no such summary" (Mapping.get would read it so): a fault making it
            raise RuntimeError(f"making summary {name!r}: KeyError {error}") from error

    def __iter__(self) -> Iterator[str]:
        return iter(SUMMARIES)

    def __len__(self) -> int:
        return len(SUMMARIES)


# Each summary by name, from the cells (and the summaries it builds on), in the order ``tables`` lists them
SUMMARIES: dict[str, Callable[[Summaries], pd.DataFrame]] = {
    "cells": lambda s: s.cells,
    "summary": lambda s: summary(s.cells, s.baseline),
    "acceptance": lambda s: acceptance(s.cells),
    "positions": lambda s: positions(s.cells),
    "latency": lambda s: latency(s.cells),
    "identity": lambda s: identity(s.cells, s.baseline),
    "prompts": lambda s: prompt_summary(s.cells, s.baseline),
    "spread": lambda s: prompt_spread(s.cells, s.baseline),
    "deciding": lambda s: task_or_prompt(s.make("spread"), s.make("summary"), s.baseline),
    "categories": lambda s: category_multipliers(s.cells, s.baseline),
    "thesis": lambda s: thesis(s.cells, s.baseline, methods(s.cells, s.baseline)),
    "thesis_settings": lambda s: settings_beside(s.cells, s.baseline, methods(s.cells, s.baseline)),
    "load": lambda s: load_table(s.all_cells, s.baseline),
}


def methods(cells: pd.DataFrame, baseline: str) -> list[str]:
    """The methods the thesis compares: every condition but the baseline that is not a variant of another one this
    run has (named <condition>-<suffix>, as ngram-mod-warm of ngram-mod, dflash-n15 of dflash: a setting of that
    method, not a method of its own), in table order."""
    present = list(dict.fromkeys(c for c in cells.condition.dropna() if c != baseline))
    return [c for c in present if not any(c.startswith(f"{other}-") for other in present if other != c)]


def tables_by_machine(
    cells: pd.DataFrame, baseline: str, order: Sequence[str] = ()
) -> dict[str, dict[str, pd.DataFrame]]:
    """``tables`` of each machine's cells (of one build), machines in ``order`` first (see ``table.machines_of``);
    every summary row says its machine (and its build, in a run with builds)."""
    out = {}
    builds = sorted(set(cells[BUILD])) if BUILD in cells else []
    named = {BUILD: builds[0]} if len(builds) == 1 and builds[0] != ONE_BUILD else {}
    for machine in machines_of(cells, order) or [next(iter(order), DEFAULT_MACHINE)]:
        own = tables(cells[cells[MACHINE] == machine].reset_index(drop=True), baseline)
        out[machine] = {
            name: frame if name == "cells" else frame.assign(**{MACHINE: machine, **named})
            for name, frame in own.items()
        }
    return out


def tables_by_build(
    cells: pd.DataFrame, baseline: str, machines: Sequence[str] = (), builds: Sequence[str] = ()
) -> dict[str, dict[str, dict[str, pd.DataFrame]]]:
    """``tables_by_machine`` of each build's cells, builds in ``builds`` order first: build -> machine -> tables
    (one build, '', for a run without builds). A multiplier divides one build's cells by the same build's
    baseline."""
    labels = builds_of(cells, builds) if BUILD in cells and len(cells) else [next(iter(builds), ONE_BUILD)]
    if BUILD not in cells:
        return {labels[0]: tables_by_machine(cells, baseline, machines)}
    return {
        build: tables_by_machine(cells[cells[BUILD] == build].reset_index(drop=True), baseline, machines)
        for build in labels
    }


def combined(by_machine: Mapping[str, Mapping[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Each summary of every machine in one frame, with the machine as its first column (the CSV copies)."""
    names = next(iter(by_machine.values()), {}).keys()
    out = {}
    for name in names:
        frames = [tabs[name].assign(**{MACHINE: machine}) for machine, tabs in by_machine.items()]
        frame = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
        out[name] = frame[[MACHINE, *(c for c in frame.columns if c != MACHINE)]]
    return out


def combined_builds(by_build: Mapping[str, Mapping[str, Mapping[str, pd.DataFrame]]]) -> dict[str, pd.DataFrame]:
    """``combined`` over every build, the build as the second column (after the machine); a run without builds
    gets ``combined``'s frames as they are."""
    if list(by_build) == [ONE_BUILD]:
        return combined(by_build[ONE_BUILD])
    parts = {build: combined(by_machine) for build, by_machine in by_build.items()}
    out = {}
    for name in next(iter(parts.values()), {}):
        frames = [tabs[name].assign(**{BUILD: build}) for build, tabs in parts.items()]
        frame = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
        rest = [c for c in frame.columns if c not in (MACHINE, BUILD)]
        out[name] = frame[[MACHINE, BUILD, *rest]]
    return out
