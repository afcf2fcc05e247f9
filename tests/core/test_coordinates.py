"""A cell's coordinates are declared once (core.plan.coordinates): the Cell, the cell file's pattern, the wildcard
constraints, the record's cell section and the table's coordinate columns follow from the declaration, and a
coordinate added to it (a dummy concurrency, as load would add) is planned through all of them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from snakemake.exceptions import WorkflowError

from specbench.analysis.cell_table import COORDINATES, SCHEMA
from specbench.core.config.load import validate_config
from specbench.core.plan.cells import CELL_PATTERN, CELLS_DIR, Cell, selected_cells, wildcard_constraints
from specbench.core.plan.coordinates import LAYOUT, REQUIRED, Coordinate, Layout
from specbench.workflow.plan import Plan
from support.config import load_config
from support.paths import REPO

# What load would add: the clients at once, 1 by default, in the path only where it is not 1
CONCURRENCY = Coordinate("concurrency", int, 1, "c{concurrency}", crossed=True, optional=True)
WITH_LOAD = Layout([*LAYOUT.coordinates[: LAYOUT.names.index("condition") + 1], CONCURRENCY, *LAYOUT.coordinates[-2:]])
NAME = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)


def test_the_cell_the_record_and_the_table_are_the_declared_coordinates() -> None:
    """The Cell's fields are the declared coordinates, the record's cell section and the table's first columns are
    the recorded ones in the declaration's order, the table's coordinate columns the crossed ones."""
    assert sorted(f.name for f in dataclasses.fields(Cell)) == sorted(LAYOUT.names)
    recorded = [c.name for c in LAYOUT.coordinates if c.recorded]
    assert SCHEMA.names[: len(recorded)] == recorded and "models" not in recorded
    assert COORDINATES == ["task", "prompt", "condition", "temperature", "repeat"]
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
)
def test_every_cell_path_parses_back_to_its_coordinates(
    machine: str, build: str, models: str, task: str, prompt: str, condition: str, temperature: float, repeat: int
) -> None:
    cell = Cell(task, condition, temperature, repeat, machine, prompt, build, models)
    assert Cell.from_path(cell.path) == cell
    assert LAYOUT.from_record(LAYOUT.record(cell.values)) == {k: v for k, v in cell.values.items() if k != "models"}
    assert ("build" in LAYOUT.record(cell.values)) == bool(build)


def test_a_required_coordinate_missing_from_a_record_is_named() -> None:
    with pytest.raises(KeyError) as missing:
        LAYOUT.from_record({"machine": "local", "task": "essay", "condition": "off", "temperature": 0.0})
    assert missing.value.args == ("repeat",)


def test_a_new_coordinate_is_planned_from_its_declaration_alone() -> None:
    """A coordinate added to the list gets its path segment, its parse, its wildcard constraint, its record key and
    its table column; at its default the paths are today's (load absent: the same cell files)."""
    assert [c.name for c in WITH_LOAD.coordinates if c.default is REQUIRED] == [
        "task",
        "condition",
        "temperature",
        "repeat",
    ]
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    validate_config(config, base=REPO)
    cells = selected_cells(config)
    for cell in cells:
        assert WITH_LOAD.fill(CELLS_DIR, {**cell.values, "concurrency": 1}) == cell.path
    loaded = {**cells[0].values, "concurrency": 4}
    path = WITH_LOAD.fill(CELLS_DIR, loaded)
    assert path == cells[0].path.replace(f"/{cells[0].condition}/", f"/{cells[0].condition}/c4/")
    assert WITH_LOAD.parse(CELLS_DIR, path) == loaded
    assert WITH_LOAD.parse(CELLS_DIR, cells[0].path) == {**cells[0].values, "concurrency": 1}
    assert WITH_LOAD.record(loaded)["concurrency"] == 4 and "concurrency" not in WITH_LOAD.record(cells[0].values)
    assert path.endswith("/" + WITH_LOAD.crossed_path(loaded)) and "/c4/" in WITH_LOAD.crossed_path(loaded)
    assert cells[0].path.endswith("/" + LAYOUT.crossed_path(cells[0].values))
    assert WITH_LOAD.from_record({**WITH_LOAD.record(loaded), "concurrency": "4", "temperature": 0})["concurrency"] == 4
    assert WITH_LOAD.crossed == ["task", "prompt", "condition", "concurrency", "temperature", "repeat"]
    assert WITH_LOAD.pattern(CELLS_DIR, ["models", "concurrency"]) == (
        "results/cells/{machine}/{models}/{prompt}/{condition}/c{concurrency}/t{temperature}/r{repeat}.json"
    )
    constraints = WITH_LOAD.constraints({"concurrency": [1, 2, 16], "temperature": [0.0, 1.0]})
    assert constraints == {"concurrency": r"16|1|2", "temperature": r"0\.0|1\.0"}


def test_the_wildcard_constraints_are_the_declarations_over_the_configs_values() -> None:
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    validate_config(config, base=REPO)
    constraints = wildcard_constraints(config)
    assert list(constraints) == [c.wildcard for c in LAYOUT.coordinates if c.wildcard and c.name != "build"]
    assert constraints["temperature"] == r"0\.0|1\.0" and constraints["repeat"].split("|") == ["1", "2", "3"]
    assert all(Path(cell.path).parts[2] == cell.machine for cell in selected_cells(config))


def test_a_written_out_pattern_that_is_not_the_planned_one_stops_the_parse_naming_it() -> None:
    """The rule files spell their path patterns out; the plan checks each against the declaration's, so a coordinate
    added to the list (here: the dummy concurrency in the cell pattern) names every literal left to rewrite."""
    config = load_config([REPO / "config/config.yaml", REPO / "config/tiny.yaml"])
    validate_config(config, base=REPO)
    plan = Plan(config, REPO, lambda: True)
    assert plan.greedy_cell_pattern == CELL_PATTERN.replace("t{temperature}", "t0.0")
    assert plan.first_reference_pattern.endswith(f"/{config['baseline']}/t0.0/r1.json")
    plan.check_literals("rules/cells.smk", {"CELL_PATTERN": (CELL_PATTERN, plan.cell_pattern)})
    loaded = WITH_LOAD.pattern(CELLS_DIR, ["models", "concurrency"])
    with pytest.raises(WorkflowError) as stopped:
        plan.check_literals("rules/cells.smk", {"CELL_PATTERN": (CELL_PATTERN, loaded)})
    assert str(stopped.value).startswith("rules/cells.smk: written-out path patterns that are not the planned ones:")
    assert f"CELL_PATTERN = {CELL_PATTERN} (planned: {loaded})" in str(stopped.value)
