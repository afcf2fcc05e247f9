"""Cell naming and parsing, and the wildcard constraints built from the config."""

from __future__ import annotations

import re

import pytest

from specbench.core.config.load import validate_config
from specbench.core.plan.cells import (
    DEFAULT_MACHINE,
    Cell,
    condition_sequence,
    condition_sequence_files,
    job_cells,
    run_order,
    selected_cells,
    wildcard_constraints,
)
from specbench.core.plan.coordinates import format_temperature
from specbench.core.plan.model_identity import models_folder
from support.config import STUDY_CONDITIONS
from support.paths import REPO


@pytest.mark.parametrize(("value", "text"), [(0, "0.0"), (0.0, "0.0"), (1, "1.0"), (0.7, "0.7"), (1.25, "1.25")])
def test_format_temperature(value: float, text: str) -> None:
    assert format_temperature(value) == text


def _wildcards(prompt: str, condition: str, temperature: str, repeat: str, **others: str) -> dict[str, str]:
    return {"prompt": prompt, "condition": condition, "temperature": temperature, "repeat": repeat, **others}


def test_cell_path_round_trip() -> None:
    cell = Cell("file-rewrite", "ngram-mod", 1.0, 3, models="m-0123abcd")
    assert cell.path == "results/cells/local/m-0123abcd/file-rewrite/ngram-mod/t1.0/r3.json"
    assert cell.label == "file-rewrite/ngram-mod/t1.0/r3"  # the one machine goes unnamed
    assert Cell.from_wildcards(_wildcards("file-rewrite", "ngram-mod", "1.0", "3", models="m-0123abcd")) == cell
    assert cell.seed(1000) == 1003
    h200 = Cell.from_wildcards(_wildcards("file-rewrite", "ngram-mod", "1.0", "3", machine="h200", models="m-0123abcd"))
    assert h200.path == "results/cells/h200/m-0123abcd/file-rewrite/ngram-mod/t1.0/r3.json"
    assert h200.label == "h200:file-rewrite/ngram-mod/t1.0/r3" and h200.seed(1000) == 1003
    member = Cell("essay", "off", 0.7, 2, "h200", "trees", models="t+d-4567ef01")
    built = Cell("essay", "off", 0.7, 2, "h200", "trees", "b11434", "t-4567ef01")
    assert built.path == "results/cells/h200/b11434/t-4567ef01/essay.trees/off/t0.7/r2.json"
    assert [Cell.from_path(c.path) for c in (cell, h200, member, built)] == [cell, h200, member, built]
    with pytest.raises(ValueError, match="not a cell file"):
        Cell.from_path("results/cells/h200/m-0123abcd/essay/off/r2.json")
    # without a models folder: the layout of working directories from before it, which a cell job never writes
    old = Cell("file-rewrite", "ngram-mod", 1.0, 3)
    assert old.path == "results/cells/local/file-rewrite/ngram-mod/t1.0/r3.json"
    with pytest.raises(ValueError, match="not a cell file"):
        Cell.from_path(old.path)


def test_selected_cells_cover_the_study_matrix(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    cells = selected_cells(config)
    assert len(cells) == 4 * 7 * 2 * 3
    assert len({c.path for c in cells}) == len(cells)
    # the published matrix, its warm column per task and with one server for every request, and DFlash at its
    # documented 15 tokens (both settings run by default)
    assert {c.condition for c in cells} == {
        "off",
        "ngram-mod",
        "ngram-mod-warm",
        "ngram-mod-warm-all",
        "mtp",
        "dflash",
        "dflash-n15",
    }
    config["select"] = {"tasks": ["essay"], "conditions": ["off", "dflash-n15"]}
    assert len(selected_cells(config)) == 1 * 2 * 2 * 3


def test_every_cell_exists_once_per_machine(study_config: dict) -> None:
    config = validate_config(
        {**study_config, "machines": [{"label": "a100"}, {"label": "h200", "resources": {"slurm_partition": "h200"}}]},
        REPO,
    )
    cells = selected_cells(config)
    assert len(cells) == 2 * 4 * 7 * 2 * 3 and len({c.path for c in cells}) == len(cells)
    per_machine = {
        m: sorted((c.task, c.condition, c.temperature, c.repeat) for c in cells if c.machine == m)
        for m in ("a100", "h200")
    }
    assert per_machine["a100"] == per_machine["h200"]
    assert all(c.path.startswith(f"results/cells/{c.machine}/") for c in cells)
    constraints = wildcard_constraints(config)
    assert re.fullmatch(constraints["machine"], "h200") and not re.fullmatch(constraints["machine"], "local")


def test_machines_default_to_the_one_you_are_on(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    assert config["machines"] == [{"label": "local", "description": "", "resources": {}}]
    assert {c.machine for c in selected_cells(config)} == {"local"}


def test_wildcard_constraints_accept_only_configured_names(study_config: dict) -> None:
    constraints = wildcard_constraints(validate_config(study_config, REPO))

    def full(key: str, text: str) -> bool:
        return re.fullmatch(constraints[key], text) is not None

    assert full("condition", "ngram-mod") and full("condition", "off") and not full("condition", "ngram")
    assert full("prompt", "gsm8k") and not full("prompt", "gsm8")
    assert full("temperature", "0.0") and full("temperature", "1.0") and not full("temperature", "1")
    assert full("repeat", "3") and not full("repeat", "4")


def test_run_order_interleaves_the_conditions_of_a_task(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    order = run_order(selected_cells(config), list(config["tasks"]), list(config["conditions"]))
    first = order[:8]
    assert [c.condition for c in first[:7]] == STUDY_CONDITIONS
    assert {(c.task, c.temperature, c.repeat) for c in first[:7]} == {("file-rewrite", 0.0, 1)}
    assert (first[7].repeat, first[7].condition) == (2, "off")  # then the next repeat, every condition again


def test_condition_sequence_runs_tasks_in_config_order_each_task_s_repeats_back_to_back(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    config["temperatures"] = [1.0, 0.0]  # written out of order: each task still runs temperature 0 first
    tasks = ["file-rewrite", "todo-app", "gsm8k", "essay"]
    shuffled = list(reversed(selected_cells(config)))
    order = condition_sequence(shuffled, "ngram-mod-warm", tasks, DEFAULT_MACHINE)
    assert len(order) == 4 * 2 * 3 and {c.condition for c in order} == {"ngram-mod-warm"}
    assert [(c.task, c.temperature, c.repeat) for c in order[:7]] == [
        ("file-rewrite", 0.0, 1),
        ("file-rewrite", 0.0, 2),
        ("file-rewrite", 0.0, 3),
        ("file-rewrite", 1.0, 1),
        ("file-rewrite", 1.0, 2),
        ("file-rewrite", 1.0, 3),
        ("todo-app", 0.0, 1),
    ]
    assert [c.task for c in order[::6]] == tasks
    # a narrower selection keeps the config's task order, not the order tasks are named in select
    config["select"] = {"tasks": ["essay", "todo-app"], "conditions": ["off", "ngram-mod-warm"]}
    subset = condition_sequence(selected_cells(config), "ngram-mod-warm", list(config["tasks"]), DEFAULT_MACHINE)
    assert [(c.task, c.repeat) for c in subset if c.temperature == 0.0] == [
        ("todo-app", 1),
        ("todo-app", 2),
        ("todo-app", 3),
        ("essay", 1),
        ("essay", 2),
        ("essay", 3),
    ]


def test_condition_sequence_is_one_machine_s(study_config: dict) -> None:
    config = validate_config({**study_config, "machines": [{"label": "a100"}, {"label": "h200"}]}, REPO)
    order = condition_sequence(selected_cells(config), "ngram-mod-warm", list(config["tasks"]), "h200")
    assert len(order) == 4 * 2 * 3 and {c.machine for c in order} == {"h200"}


def test_a_cell_job_s_cells_follow_from_its_wildcards(study_config: dict) -> None:
    config = validate_config({**study_config, "machines": [{"label": "a100"}, {"label": "h200"}]}, REPO)
    models = models_folder(config, "mtp")
    assert models == models_folder(config, "ngram-mod-warm")  # neither loads the draft
    fresh = {"machine": "h200", "prompt": "essay", "condition": "mtp", "temperature": "1.0", "repeat": "2"}
    assert job_cells(config, {**fresh, "models": models}) == [Cell("essay", "mtp", 1.0, 2, "h200", models=models)]
    task = {"machine": "a100", "prompt": "gsm8k", "condition": "ngram-mod-warm", "temperature": "0.0"}
    assert job_cells(config, {**task, "models": models}) == [
        Cell("gsm8k", "ngram-mod-warm", 0.0, r, "a100", models=models) for r in (1, 2, 3)
    ]
    whole = job_cells(config, {"machine": "a100", "condition": "ngram-mod-warm", "models": models})
    assert whole == condition_sequence(selected_cells(config), "ngram-mod-warm", list(config["tasks"]), "a100")
    assert len(whole) == 4 * 2 * 3


def test_a_warm_condition_s_outputs_are_its_cells_in_serving_order(study_config: dict) -> None:
    """Rule condition_sequence's outputs, in order, are the cells its job measures in that order (run_cells.py)."""
    config = validate_config(
        {
            **study_config,
            "machines": [{"label": "a100"}, {"label": "h200"}],
            "temperatures": [1.0, 0.0],  # not ascending: the server answers ascending temperatures all the same
            "select": {"tasks": ["essay", "gsm8k"]},  # nor in select's order: in the config's task order
        },
        REPO,
    )
    files = condition_sequence_files(config)
    models = models_folder(config, "ngram-mod-warm")
    for machine in ("a100", "h200"):
        paths = [f.format(machine=machine, condition="ngram-mod-warm", models=models) for f in files]
        served = job_cells(config, {"machine": machine, "condition": "ngram-mod-warm", "models": models})
        assert [Cell.from_path(p) for p in paths] == served and len(served) == 2 * 2 * 3
    assert [Cell.from_path(f.format(machine="a100", condition="x", models="m")).task for f in files][:1] == ["gsm8k"]
