"""The whole-condition warm scope on the real workflow (tiny model, CPU): ngram-mod-warm-all (its own
`warm_scope: condition`) has one llama-server answer every cell of the condition, in the study's order, beside
ngram-mod-warm with the config's `warm_scope: task` (a server per task), and the records and the report say which
ran. 2 tasks x ("off", ngram-mod-warm, ngram-mod-warm-all) x temperature 0 x 2 repeats of 32 tokens."""

from __future__ import annotations

import pytest

from specbench.core.plan.cells import DEFAULT_MACHINE, Cell
from specbench.core.steps.files import read_json
from support.workflow import greedy_record, llama_servers_in, placed, tiny_run

pytestmark = pytest.mark.workflow

WARM = "ngram-mod-warm-all"  # warm_scope: condition, its own
PER_TASK = "ngram-mod-warm"  # the config's warm_scope: task
# Named out of config order on purpose: the sequence follows the config's task order (file-rewrite before essay).
SELECT_TASKS = ["essay", "file-rewrite"]
ORDER = [("file-rewrite", 1), ("file-rewrite", 2), ("essay", 1), ("essay", 2)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("warm-scope")
    result = tiny_run(
        work,
        "warm-scope",
        {
            "name": "warm scope test",
            # BF16 as in the fault tests: on some CPUs llama-server b11223 crashes on the tiny model's quantized tied
            # embeddings; the scope does not depend on the quantization.
            "models": {"target": {"quant": "BF16"}},
            "select": {"tasks": SELECT_TASKS, "conditions": ["off", PER_TASK, WARM]},
            "temperatures": [0.0],
            "repeats": 2,
            "max_tokens": 32,
            # This machine may be shared with other work: record CPU contention, do not judge it here.
            "measurement": {"max_foreign_cpu": None},
        },
    )
    return {"work": work, "result": result}


def test_one_server_answered_the_whole_condition_in_the_study_order(run: dict) -> None:
    warm = [greedy_record(run, task, WARM, repeat) for task, repeat in ORDER]
    assert len({r["server"]["pid"] for r in warm}) == 1
    assert [r["server"]["position"] for r in warm] == [1, 2, 3, 4]
    assert [r["started_at"] for r in warm] == sorted(r["started_at"] for r in warm)
    assert all(r["server"]["scope"] == "condition" and r["server"]["shared"] for r in warm)
    assert all(r["server"]["sequence_length"] == 4 for r in warm)
    # each cell asked its own task's prompt, on the one server
    prompts = {task: read_json(run["work"] / f"results/prompts/{task}.json")["sha256"] for task in SELECT_TASKS}
    assert [r["provenance"]["prompt_sha256"] for r in warm] == [prompts[task] for task, _ in ORDER]
    logs = {r["server"]["log"] for r in warm}
    models = placed(run["work"], Cell(ORDER[0][0], WARM, 0.0, ORDER[0][1])).models
    assert logs == {f"results/cells/{DEFAULT_MACHINE}/{models}/_all-tasks/{WARM}/warm.server.log"}
    assert run["result"].stderr.count("rule condition_sequence:") == 1
    assert run["result"].stderr.count("rule cell_sequence:") == len(SELECT_TASKS)  # the per-task one, beside it
    per_task = {task: [greedy_record(run, task, PER_TASK, r) for r in (1, 2)] for task in SELECT_TASKS}
    assert all(r["server"]["scope"] == "task" for records in per_task.values() for r in records)
    assert all(len({r["server"]["pid"] for r in records}) == 1 for records in per_task.values())
    assert len({records[0]["server"]["pid"] for records in per_task.values()}) == len(SELECT_TASKS)
    fresh = [greedy_record(run, task, "off", repeat) for task, repeat in ORDER]
    assert all(r["server"]["scope"] == "fresh" and not r["server"]["shared"] for r in fresh)
    assert len({r["server"]["pid"] for r in fresh}) == 4
    assert not llama_servers_in(run["work"])


def test_report_says_which_warm_scope_ran(run: dict) -> None:
    text = (run["work"] / "results/report.md").read_text()
    assert f"Warm scope that ran for {WARM}: the whole condition (`warm_scope: condition`)" in text
    assert f"Warm scope that ran for {PER_TASK}: per task (`warm_scope: task`)" in text
    page = (run["work"] / "results/report.html").read_text()
    assert f"Warm scope that ran for {WARM}: the whole condition" in page
