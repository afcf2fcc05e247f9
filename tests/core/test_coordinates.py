"""A cell's coordinates are declared once (core.plan.coordinates): the Cell, the cell file's pattern, the wildcard
constraints, the record's cell section and the table's coordinate columns follow from the declaration; the load
dimension (concurrency) is one of them, and a coordinate added to the list (a dummy one here) is planned through
all of them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from snakemake.utils import update_config

from specbench.analysis.cell_table import COORDINATES, SCHEMA
from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.plan.cells import CELL_PATTERN, CELLS_DIR, Cell, selected_cells, wildcard_constraints
from specbench.core.plan.coordinates import LAYOUT, REQUIRED, Coordinate, Layout
from specbench.workflow.plan import Plan
from support.config import load_config
from support.paths import REPO

# A coordinate the list does not have: the context size per slot, 0 (the config's) by default, in the path only
# where it is set
CONTEXT = Coordinate("context", int, 0, "x{context}", crossed=True, optional=True, regex="[0-9]+")
WITH_DUMMY = Layout([*LAYOUT.coordinates[:-2], CONTEXT, *LAYOUT.coordinates[-2:]])
NAME = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
LOAD = {"load": {"concurrency": [1, 2, 4]}, "select": {"conditions": ["off", "ngram-mod", "mtp", "dflash"]}}


def tiny_config(*extra: dict) -> dict:
    """The tiny demo's config with ``extra`` settings merged over it, validated."""
    config: dict = {}
    for entry in [REPO / "config/config.yaml", REPO / "config/tiny.yaml", *extra]:
        update_config(config, entry if isinstance(entry, dict) else yaml.safe_load(entry.read_text()))
    return validate_config(config, base=REPO)


def test_the_cell_the_record_and_the_table_are_the_declared_coordinates() -> None:
    """The Cell's fields are the declared coordinates, the record's cell section and the table's first columns are
    the recorded ones in the declaration's order, the table's coordinate columns the crossed ones."""
    assert sorted(f.name for f in dataclasses.fields(Cell)) == sorted(LAYOUT.names)
    recorded = [c.name for c in LAYOUT.coordinates if c.recorded]
    assert SCHEMA.names[: len(recorded)] == recorded and "models" not in recorded
    assert COORDINATES == ["task", "prompt", "condition", "concurrency", "temperature", "repeat"]
    assert CELL_PATTERN == "results/cells/{machine}/{models}/{prompt}/{condition}/t{temperature}/r{repeat}.json"


@given(
    machine=NAME,
    build=st.one_of(st.just(""), NAME),
    models=NAME,
    task=NAME,
    prompt=st.one_of(st.just(""), NAME),
    condition=NAME,
    temperature=st.sampled_from([0.0, 0.7, 1.0, 1.25]),
    repeat=st.integers(1, 99),
    concurrency=st.one_of(st.none(), st.integers(1, 64)),
)
def test_every_cell_path_parses_back_to_its_coordinates(
    machine: str,
    build: str,
    models: str,
    task: str,
    prompt: str,
    condition: str,
    temperature: float,
    repeat: int,
    concurrency: int | None,
) -> None:
    """Any cell's path (with or without a build, a prompt, a load) parses back to it; a condition named like a load
    component is refused by the config check (cross_checks.LOAD_SEGMENT), so it is not drawn here."""
    if condition[0] == "c" and condition[1:].isdigit():
        condition = f"x{condition}"
    cell = Cell(task, condition, temperature, repeat, machine, prompt, build, models, concurrency)
    assert Cell.from_path(cell.path) == cell
    assert LAYOUT.from_record(LAYOUT.record(cell.values)) == {k: v for k, v in cell.values.items() if k != "models"}
    assert ("build" in LAYOUT.record(cell.values)) == bool(build)
    assert ("concurrency" in LAYOUT.record(cell.values)) == (concurrency is not None)
    assert (f"/c{concurrency}/" in cell.path) == (concurrency is not None)


def test_a_required_coordinate_missing_from_a_record_is_named() -> None:
    with pytest.raises(KeyError) as missing:
        LAYOUT.from_record({"machine": "local", "task": "essay", "condition": "off", "temperature": 0.0})
    assert missing.value.args == ("repeat",)


def test_a_new_coordinate_is_planned_from_its_declaration_alone() -> None:
    """A coordinate added to the list gets its path segment, its parse, its record key and its table column; at its
    default the paths are today's (the same cell files)."""
    assert [c.name for c in WITH_DUMMY.coordinates if c.default is REQUIRED] == [
        "task",
        "condition",
        "temperature",
        "repeat",
    ]
    cells = selected_cells(tiny_config())
    for cell in cells:
        assert WITH_DUMMY.fill(CELLS_DIR, {**cell.values, "context": 0}) == cell.path
    set_ = {**cells[0].values, "context": 8192}
    path = WITH_DUMMY.fill(CELLS_DIR, set_)
    assert path == cells[0].path.replace("/t0.0/", "/x8192/t0.0/")
    assert WITH_DUMMY.parse(CELLS_DIR, path) == set_
    assert WITH_DUMMY.parse(CELLS_DIR, cells[0].path) == {**cells[0].values, "context": 0}
    assert WITH_DUMMY.record(set_)["context"] == 8192 and "context" not in WITH_DUMMY.record(cells[0].values)
    assert path.endswith("/" + WITH_DUMMY.crossed_path(set_)) and "/x8192/" in WITH_DUMMY.crossed_path(set_)
    assert cells[0].path.endswith("/" + LAYOUT.crossed_path(cells[0].values))
    assert WITH_DUMMY.from_record({**WITH_DUMMY.record(set_), "context": "8192", "temperature": 0})["context"] == 8192
    assert WITH_DUMMY.crossed == ["task", "prompt", "condition", "concurrency", "context", "temperature", "repeat"]
    assert WITH_DUMMY.pattern(CELLS_DIR, ["models", "concurrency", "context"]) == (
        "results/cells/{machine}/{models}/{prompt}/{condition}/c{concurrency}/x{context}/t{temperature}/r{repeat}.json"
    )
    assert WITH_DUMMY.constraints({"context": [0, 8192]}) == {"context": "8192|0"}


def test_a_load_run_names_every_cell_at_its_concurrency_and_a_plain_run_none() -> None:
    """``load.concurrency`` [1] (the default) plans today's cells; [1, 2, 4] crosses every cell with each N, each in
    its own c<N> folder, including N = 1 (so a load run never overwrites a plain run's cells)."""
    plain, loaded = selected_cells(tiny_config()), selected_cells(tiny_config(LOAD))
    assert {c.concurrency for c in plain} == {None} and not any("/c1/" in c.path for c in plain)
    fresh = [c for c in plain if c.condition in LOAD["select"]["conditions"]]
    assert len(loaded) == 3 * len(fresh)
    assert {dataclasses.replace(c, concurrency=None) for c in loaded} == set(fresh)
    assert all(f"/{c.condition}/c{c.concurrency}/t" in c.path for c in loaded)
    assert all(Cell.from_path(c.path) == c for c in loaded)
    assert wildcard_constraints(tiny_config(LOAD))["concurrency"] == "1|2|4"
    assert "concurrency" not in wildcard_constraints(tiny_config())


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"load": {"concurrency": [2, 4]}}, "must include 1"),
        ({"load": {"concurrency": [1, 2]}}, "warm condition(s) ['ngram-mod-warm']"),
        ({"conditions": {"c2": {"args": []}}}, "cannot be c<number>"),
    ],
)
def test_a_load_the_matrix_cannot_measure_is_refused_naming_its_key(settings: dict, words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        tiny_config(settings)
    assert words in str(refused.value)


def test_the_wildcard_constraints_are_the_declarations_over_the_configs_values() -> None:
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    validate_config(config, base=REPO)
    constraints = wildcard_constraints(config)
    assert list(constraints) == [
        c.wildcard for c in LAYOUT.coordinates if c.wildcard and c.name not in ("build", "concurrency")
    ]
    assert constraints["temperature"] == r"0\.0|1\.0" and constraints["repeat"].split("|") == ["1", "2", "3"]
    assert all(Path(cell.path).parts[2] == cell.machine for cell in selected_cells(config))


def test_the_rules_patterns_are_the_plans_in_a_plain_and_a_load_run() -> None:
    """The rule files take their cell and explanation patterns from the plan: a plain run's are today's literals, a
    load run's carry the concurrency after the condition (and the explanations' too, at temperature 0)."""
    plain = Plan(tiny_config(), REPO, lambda: True)
    assert plain.cell_pattern == CELL_PATTERN and plain.cell_stem == CELL_PATTERN.removesuffix(".json")
    assert plain.greedy_cell_pattern == CELL_PATTERN.replace("t{temperature}", "t0.0")
    assert plain.first_reference_pattern.endswith("/off/t0.0/r1.json")
    loaded = Plan(tiny_config(LOAD), REPO, lambda: True)
    assert (
        loaded.cell_stem
        == "results/cells/{machine}/{models}/{prompt}/{condition}/c{concurrency}/t{temperature}/r{repeat}"
    )
    assert loaded.explanation_pattern == (
        "results/explanations/{machine}/{models}/{prompt}/{condition}/c{concurrency}/t0.0/r{repeat}.json"
    )
    assert loaded.reference_pattern.endswith("/off/c{concurrency}/t0.0/r{repeat}.json")
