"""A public prompt set as the tasks, on the real workflow (tiny model, CPU): config/tiny-specbench.yaml's Spec-Bench
fixture, two of its categories as tasks and two questions each, measured; each cell asked its question's first turn, a
two-turn category's second turns asked after 'off''s first answer, the same for every condition, and the report's
per-category multiplier is the geometric mean of the prompts' multipliers the servers' numbers give.
2 categories (+ writing's second turns) x 2 questions x ("off", ngram-mod, mtp) x temperature 0 x 2 repeats of 32
tokens."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import yaml

from specbench.core.steps.files import read_json
from support.paths import REPO
from support.workflow import greedy_record, tiny_run

pytestmark = pytest.mark.workflow

SET_CONFIG = yaml.safe_load((REPO / "config" / "tiny-specbench.yaml").read_text())
CATEGORIES = ["writing", "qa"]  # of the demo's three: a two-turn category and a one-turn one
TWO_TURNS = "writing"  # the one Spec-Bench category among them whose questions have a second turn
TASKS = [t for c in CATEGORIES for t in ([c, f"{c}-t2"] if c == TWO_TURNS else [c])]
K = SET_CONFIG["tasks"]["per_category"]
METHODS = ["ngram-mod", "mtp"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("prompt-set")
    settings = {
        **SET_CONFIG,
        "tasks": {**SET_CONFIG["tasks"], "categories": CATEGORIES},
        "name": "prompt set test",
        # BF16 as in the fault tests: on some CPUs llama-server b11223 crashes on the tiny model's quantized tied
        # embeddings; the prompt set does not depend on the quantization.
        "models": {"target": {"quant": "BF16"}},
        "max_tokens": 32,
        # This machine may be shared with other work: record CPU contention, do not judge it here.
        "measurement": {"max_foreign_cpu": None},
    }
    tiny_run(work, "prompt-set", settings)
    return {"work": work}


def _fixture_choice() -> dict[str, list[dict]]:
    """The fixture's questions the config's choice rule gives, worked out here: of a category's n questions in file
    order, the (i * n // k)-th."""
    rows = [json.loads(line) for line in (REPO / SET_CONFIG["tasks"]["file"]).read_text().splitlines() if line]
    chosen = {}
    for category in CATEGORIES:
        pool = [r for r in rows if r["category"] == category]
        chosen[category] = [pool[i * len(pool) // K] for i in range(K)]
    return chosen


def test_each_cell_asked_its_chosen_questions_first_turn(run: dict) -> None:
    for category, questions in _fixture_choice().items():
        for member, question in enumerate(questions, start=1):
            key = f"{category}.p{member}"
            manifest = read_json(run["work"] / f"results/prompts/{key}.json")
            assert manifest["messages"] == [{"role": "user", "content": question["turns"][0]}]
            origin = manifest["question"]
            assert origin["id"] == str(question["question_id"])
            assert (origin["source"], origin["licence"]) == ("spec-bench", "Apache-2.0")
            assert origin["revision"] == SET_CONFIG["tasks"]["revision"]
            assert (origin["turns"], origin["turn"]) == (len(question["turns"]), 1)
            for condition in ["off", *METHODS]:
                for repeat in (1, 2):
                    record = greedy_record(run, category, condition, repeat, prompt=f"p{member}")
                    assert record["provenance"]["prompt_sha256"] == manifest["sha256"]
                    assert record["response"]["timings"]["predicted_n"] > 0


def test_the_second_turn_follows_offs_first_answer_the_same_for_every_condition(run: dict) -> None:
    for member, question in enumerate(_fixture_choice()[TWO_TURNS], start=1):
        answer = greedy_record(run, TWO_TURNS, "off", 1, prompt=f"p{member}")["response"]["content"]
        manifest = read_json(run["work"] / f"results/prompts/{TWO_TURNS}-t2.p{member}.json")
        assert answer and manifest["messages"] == [
            {"role": "user", "content": question["turns"][0]},
            {"role": "assistant", "content": answer},
            {"role": "user", "content": question["turns"][1]},
        ]
        assert manifest["question"]["turn"] == 2 and manifest["first_answer"]["cell"].endswith("/off/t0.0/r1.json")
        asked = {
            greedy_record(run, f"{TWO_TURNS}-t2", condition, repeat, prompt=f"p{member}")["provenance"]["prompt_sha256"]
            for condition in ["off", *METHODS]
            for repeat in (1, 2)
        }
        assert asked == {manifest["sha256"]}


def _tokens_per_s(run: dict, category: str, member: int, condition: str) -> list[float]:
    records = [greedy_record(run, category, condition, r, prompt=f"p{member}") for r in (1, 2)]
    return [r["response"]["timings"]["predicted_per_second"] for r in records]


def test_each_categorys_multiplier_is_the_geometric_mean_of_its_prompts(run: dict) -> None:
    table = pd.read_csv(run["work"] / "results/categories.csv")
    assert sorted(set(table.task)) == sorted(TASKS)
    for category in TASKS:
        for method in METHODS:
            ratios = [
                (sum(own := _tokens_per_s(run, category, m, method)) / len(own))
                / (sum(base := _tokens_per_s(run, category, m, "off")) / len(base))
                for m in range(1, K + 1)
            ]
            expected = math.exp(sum(math.log(r) for r in ratios) / K)
            (row,) = table[(table.task == category) & (table.condition == method)].itertuples()
            assert row.prompts == K and row.basis == "prompts"
            assert row.multiplier == pytest.approx(expected, rel=1e-6)
            assert row.low <= row.multiplier <= row.high


def test_the_report_names_the_set_and_judges_the_thesis_over_its_categories(run: dict) -> None:
    text = (run["work"] / "results/report.md").read_text()
    assert "## Prompt set" in text and SET_CONFIG["tasks"]["revision"] in text and "Apache-2.0" in text
    assert "A local copy stood in for the download" in text
    assert "## Per category: prompts and repeats together" in text
    assert "## Spread across prompts vs across repeats, per task" in text
    thesis = pd.read_csv(run["work"] / "results/thesis.csv")
    assert not thesis.empty
    assert all(sorted(json.loads(tasks)) == sorted(TASKS) for tasks in thesis.tasks)
    assert all(sorted(json.loads(methods)) == sorted(METHODS) for methods in thesis.methods)
    assert "Second turns were asked as the tasks writing-t2" in text
