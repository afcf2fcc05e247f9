"""``tasks: {from: <public prompt set>}``: the set's categories become the tasks, each with members p1..pK, over the
tasks config/config.yaml names; a wrong block fails before any work, naming its key."""

from __future__ import annotations

import pytest
from snakemake.utils import update_config

from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.config.set_sources import SOURCES
from specbench.core.plan.cells import first_answer_cell, prompt_keys, prompt_spec, selected_cells
from specbench.preflight.planned import missing
from specbench.preflight.writes import hub_downloads
from support.paths import REPO

SHA = "0" * 64


def _with_set(study_config: dict, **block: object) -> dict:
    update_config(study_config, {"tasks": {"from": "spec-bench", "revision": "a" * 40, "sha256": SHA, **block}})
    return study_config


def test_each_category_is_a_task_of_k_questions_and_the_named_tasks_are_replaced(study_config: dict) -> None:
    assert "essay" in study_config["tasks"]
    config = validate_config(_with_set(study_config, categories=["summarization", "rag"], per_category=3))
    assert list(config["tasks"]) == ["summarization", "rag"]
    assert prompt_keys(config) == [f"{c}.p{i}" for c in ("summarization", "rag") for i in (1, 2, 3)]
    assert prompt_spec(config, "rag.p2")["prompt_set"] == {"from": "spec-bench", "category": "rag", "turn": 1}
    assert config["prompt_set"]["categories"] == ["summarization", "rag"]
    cells = selected_cells(config)
    assert {c.key for c in cells} == set(prompt_keys(config))
    assert len(cells) == 6 * len(config["conditions"]) * len(config["temperatures"]) * config["repeats"]


def test_without_categories_every_category_of_the_set_is_measured(study_config: dict) -> None:
    config = validate_config(_with_set(study_config, per_category=1))
    source = SOURCES["spec-bench"]
    assert [t for t in config["tasks"] if not t.endswith("-t2")] == list(source.categories)
    assert [t for t in config["tasks"] if t.endswith("-t2")] == [f"{c}-t2" for c in source.second_turns]


def test_validating_twice_changes_nothing(study_config: dict) -> None:
    config = validate_config(_with_set(study_config, categories=["qa"], per_category=2))
    again = validate_config(config)
    assert list(again["tasks"]) == ["qa"] and again["prompt_set"]["per_category"] == 2


@pytest.mark.parametrize(
    ("block", "key", "words"),
    [
        ({"categories": ["writting"], "per_category": 2}, "tasks.categories", "did you mean 'writing'"),
        ({"per_category": 0}, "tasks.per_category", "minimum"),
        ({"per_category": 2, "sha256": "abc"}, "tasks.sha256", "does not match"),
        ({"per_category": 2, "from": "mmlu"}, "tasks.from", "is not one of"),
        ({"categories": ["qa"]}, "tasks.per_category", "required"),
        ({"per_category": 2, "file": "config/tasks/prompt_sets/missing.jsonl"}, "tasks.file", "does not exist"),
    ],
)
def test_a_wrong_set_block_fails_naming_its_key(study_config: dict, block: dict, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as raised:
        validate_config(_with_set(study_config, **block))
    assert raised.value.key == key
    assert words in str(raised.value)


def test_the_preflight_counts_a_hub_sets_download_and_not_a_local_copy(study_config: dict) -> None:
    update_config(study_config, {"tasks": {"from": "mt-bench", "revision": "b" * 40, "sha256": SHA, "per_category": 1}})
    config = validate_config(study_config)
    jobs = missing(config, REPO, selected_cells(config), lambda path: False)
    assert ("prompt_set", {"source": "mt-bench"}) in jobs
    (download,) = [d for d in hub_downloads(config, REPO, jobs) if d.label.startswith("prompt set")]
    assert (download.repo, download.revision, download.repo_type) == (SOURCES["mt-bench"].repo, "b" * 40, "dataset")
    config["prompt_set"]["file"] = "config/tasks/gsm8k_standin.jsonl"
    assert not [d for d in hub_downloads(config, REPO, jobs) if d.label.startswith("prompt set")]


def test_a_two_turn_category_gives_a_task_of_its_second_turns(study_config: dict) -> None:
    config = validate_config(_with_set(study_config, categories=["writing", "qa"], per_category=2))
    assert list(config["tasks"]) == ["writing", "writing-t2", "qa"]
    assert prompt_spec(config, "writing-t2.p1")["prompt_set"] == {
        "from": "spec-bench",
        "category": "writing",
        "turn": 2,
    }
    assert prompt_spec(config, "writing.p1")["prompt_set"]["turn"] == 1


def test_second_turns_can_be_left_out(study_config: dict) -> None:
    config = validate_config(_with_set(study_config, categories=["writing"], per_category=1, second_turn=False))
    assert list(config["tasks"]) == ["writing"]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"temperatures": [1.0]}, "add 0.0 to temperatures"),
        ({"conditions": {"off": {"server": "warm", "warm_scope": "condition"}}}, "warm_scope: condition"),
    ],
)
def test_a_second_turn_needs_the_baselines_greedy_first_answer_first(
    study_config: dict, change: dict, words: str
) -> None:
    update_config(study_config, change)
    with pytest.raises(ConfigError) as raised:
        validate_config(_with_set(study_config, categories=["writing"], per_category=1))
    assert raised.value.key == "tasks.second_turn" and words in str(raised.value)


def test_a_second_turn_follows_the_baselines_first_repeat_at_temperature_0_on_the_first_machine(
    study_config: dict,
) -> None:
    update_config(study_config, {"machines": [{"label": "box-a"}, {"label": "box-b"}]})
    config = validate_config(_with_set(study_config, categories=["writing"], per_category=2))
    cells = selected_cells(config)
    found = first_answer_cell(cells, "writing-t2.p2", "writing", "off")
    assert found is not None and found in cells
    assert (found.task, found.prompt, found.condition, found.temperature, found.repeat) == (
        "writing",
        "p2",
        "off",
        0.0,
        1,
    )
    assert found.machine == "box-a"
    assert first_answer_cell([c for c in cells if c.temperature != 0.0], "writing-t2.p2", "writing", "off") is None
