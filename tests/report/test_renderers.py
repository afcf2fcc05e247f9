"""The report's renderers: the memory-bandwidth ceiling, number links, and both documents from one list of sections."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import tables
from specbench.core.results.judged import Comparability, Fact
from specbench.report.contents import build_report
from specbench.report.document import Facts, Figure, fmt
from specbench.report.html import linked, render_html, table
from specbench.report.markdown import render_markdown
from specbench.report.provenance import report_numbers
from specbench.report.sections.environment import ceiling_rows
from support.paths import TEST_DATA

DATA = TEST_DATA / "report"
A100 = {
    "nvml": "ok",
    "devices": [{"name": "NVIDIA A100-SXM4-80GB", "memory_bus_width_bits": 5120, "max_mem_clock_mhz": 1593}],
}


def test_ceiling_from_bus_width_and_memory_clock() -> None:
    off = pd.DataFrame([{"task": "essay", "temperature": 0.0, "median_tokens_per_s": 126.0}])
    note, rows = ceiling_rows(A100, 5_680_000_000, off)
    bandwidth = 5120 / 8 * 1593e6 * 2  # 2039 GB/s, the A100 80GB's published figure
    assert bandwidth / 1e9 == pytest.approx(2039, abs=1)
    assert "2039 GB/s" in note and f"{bandwidth / 5.68e9:.0f} tokens/s" in note
    assert rows == [
        {
            "task": "essay",
            "temperature": 0.0,
            "median_tokens_per_s": 126.0,
            "of_ceiling": pytest.approx(126 / (bandwidth / 5.68e9)),
        }
    ]


def test_no_ceiling_without_nvml() -> None:
    note, rows = ceiling_rows({"nvml": "unavailable", "devices": []}, 1, pd.DataFrame())
    assert rows == [] and "unknown" in note


def test_numbers_link_to_their_provenance_entry() -> None:
    numbers = {"speedup-essay-mtp-t0.0": {}}
    html = linked(1.0412, "speedup-essay-mtp-t0.0", numbers)
    assert 'id="n-speedup-essay-mtp-t0.0"' in html and 'href="#p-speedup-essay-mtp-t0.0"' in html and ">1.04<" in html
    assert linked(float("nan"), "other", numbers) == "n/a"


def _rows() -> list[dict]:
    rows = json.loads((DATA / "cells.json").read_text())
    rows[0].update(
        rejected_attempts=1, rejected_reasons=["pid 4242 (python) on the GPU"], quiet_waits=1, quiet_wait_s=42.5
    )
    rows += [
        {
            "task": "gsm8k",
            "condition": condition,
            "temperature": 0.0,
            "repeat": 1,
            "tokens_per_s": speed,
            "predicted_n": 100,
            "draft_n": drafted,
            "draft_n_accepted": drafted // 2,
            "tokens": tokens,
            "cell_file": f"results/cells/gsm8k/{condition}/t0.0/r1.json",
            "gsm8k_correct": correct,
            "gsm8k_answered": 3,
            "gsm8k_total": 3,
            "gsm8k_wrong": wrong,
            "started_at": "2026-11-29T16:50:00+00:00",
        }
        for condition, speed, drafted, tokens, correct, wrong in (
            ("off", 120.0, 0, [1, 2, 3], 2, [{"problem": 3, "extracted": "25000", "reference": "70000"}]),
            ("dflash", 60.0, 40, [1, 2, 4, 5], 3, []),
        )
    ]
    return rows


def _claims() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "id": "ngram-file-rewrite",
                "text": "n-gram 6.2x on file rewrite",
                "kind": "speedup",
                "published": 6.25,
                "measured": 1.8,
                "verdict": "not reproduced (size)",
                "detail": "outside 10%",
                "cells": [],
                "published_text": "6.25x",
                "measured_text": "1.80x <b>",
                "scope": "absolute",
                "prompt_dependent": False,
                "temperature": None,
                "variant_of": None,
                "verdict_t1": "not reproduced (size)",
                "measured_t1_text": "2.10x",
                "reading": "neither reading",
                "sentence": "results-multipliers",
                "sentence_reading": "neither reading",
            },
            {
                "id": "ngram-task-ordering",
                "text": "n-gram: the order across tasks",
                "kind": "ordering",
                "published": [["file-rewrite"], ["essay"]],
                "measured": {},
                "verdict": "not separated",
                "detail": "0 of 1 pairs ordered as published with 95 % intervals apart; not separated: a vs b",
                "cells": [],
                "published_text": "file-rewrite > essay",
                "measured_text": "file-rewrite 1.80x > essay 1.00x",
                "scope": "transfers",
                "prompt_dependent": False,
                "temperature": None,
                "variant_of": None,
                "verdict_t1": "not separated",
                "measured_t1_text": "n/a",
                "reading": "cannot tell",
                "sentence": None,
                "sentence_reading": None,
            },
        ]
    )


def _render(comparability: Comparability) -> dict[str, str]:
    summaries = tables(frame_of(_rows(), "off"), "off")
    numbers = report_numbers(summaries, "off")
    claims = _claims()
    facts = Facts(
        name="sample",
        baseline="off",
        comparability=comparability,
        environment={"device": "A100 <80GB>"},
        device=A100,
        model_bytes=5_680_000_000,
        stand_in_tasks=["gsm8k"],
        run_context={"config_sha256": "c0ffee", "workflow_commit": "abc123"},
    )
    report = build_report(
        summaries,
        facts=facts,
        claims=claims,
        numbers=numbers,
        figures=[Figure("a figure", "data:image/png;base64,AAAA")],
    )
    return {"html": render_html(report), "markdown": render_markdown(report), "numbers": numbers}


H200 = "NVIDIA H200 (143771 MiB)"
GPU_FACT = Fact("GPU", "A100, at least 80000 MiB", H200, False)
FLAGS_FACT = Fact("server flags", "-c 16384", "-c 16384", True)


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    """The study's model on another GPU."""
    model = Fact("model", "Qwen/Qwen3.5-9B as Q4_K_M", "Qwen/Qwen3.5-9B as Q4_K_M", True)
    return _render(Comparability([GPU_FACT, model, FLAGS_FACT], H200))


@pytest.mark.parametrize(
    "model", ["tiny as MOSTLY_Q4_K_M (qwen35, MTP kept)", "bartowski/SmolLM2-135M-Instruct-GGUF as Q4_1 (llama)"]
)
def test_another_model_opens_saying_so_and_names_no_study_claim_as_failed(model: str) -> None:
    """The tiny demo's constructed models and SmolLM2: the first line says the model differs, nothing of the study's
    is judged, and the order of tasks is a question about this model, in no failure's colour or words."""
    facts = [GPU_FACT, Fact("model", "Qwen/Qwen3.5-9B as Q4_K_M", model, False), FLAGS_FACT]
    text = _render(Comparability(facts, H200))
    markdown, page = text["markdown"], text["html"]
    first = markdown.split("\n")[2]
    assert first.startswith("> This run measured **another model** than the study's (GPU, model differ): none of")
    answer = markdown.split("## What this run found")[1].split("## Setup")[0]
    assert "Not reproduced" not in answer and "not reproduced" not in answer
    question = "- Does the task decide here too? **ngram-task-ordering** (n-gram: the order across tasks): **not "
    assert question + "separated at 0 and 1.0**" in answer
    html_answer = page.split("<h2 id='answer'>")[1].split("<h2 id='environment'>")[0]
    assert "class='bad'" not in html_answer and "Not reproduced" not in html_answer


def test_both_documents_come_from_the_same_sections(rendered) -> None:
    page, text = rendered["html"], rendered["markdown"]
    html_titles = re.findall(r"<h2 id='([^']+)'>([^<]+)</h2>", page)
    assert [i for i, _ in html_titles] == [
        "answer",
        "thesis",
        "environment",
        "comparability",
        "claims",
        "baseline",
        "multipliers",
        "figures",
        "acceptance",
        "positions",
        "latency",
        "identity",
        "task-checks",
        "warm",
        "contention",
        "ceiling",
        "runs",
        "missing",
        "provenance",
    ]
    md_titles = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert md_titles == [
        "What this run found",
        "Does the task or the method decide the multiplier?",
        "Setup",
        "Comparable with the study?",
        "Published claims vs this run",
        "'off' tokens/s per task",
        "Multiplier vs 'off' and verdict",
        "Acceptance",
        "Acceptance by draft position",
        "Time to first token and inter-token latency",
        "Output identity at temperature 0 (token ids vs 'off', same repeat; control: 'off' repeats vs its repeat 1)",
        "Task checks (GSM8K answers)",
        "Fresh vs warm n-gram server",
        "Contention",
        "Runs",
    ]
    assert md_titles == [t.replace("&#x27;", "'") for i, t in html_titles if t.replace("&#x27;", "'") in md_titles]
    assert "not** on the published study's setup (GPU differ)" in text and "id='not-study'" in page


def test_html_is_self_contained_escaped_and_every_number_links_to_its_entry(rendered) -> None:
    page, numbers = rendered["html"], rendered["numbers"]
    assert "<img src='data:image/png;base64,AAAA'" in page and "src='http" not in page
    assert "A100 &lt;80GB&gt;" in page and "1.80x &lt;b&gt;" in page  # text from the tables is escaped
    links = set(re.findall(r'href="#p-([^"]+)"', page))
    entries = set(re.findall(r"<tr id='p-([^']+)'>", page))
    assert entries == set(numbers) and links <= entries
    kinds = {key.split("-")[0] for key in links}
    assert kinds == {"speed", "speedup", "acceptance", "identity", "run"}
    assert 'id="n-speedup-essay-mtp-t0.0"' in page and 'id="n-identity-essay-off-control"' in page


def test_values_are_formatted_by_the_renderers_only(rendered) -> None:
    page, text = rendered["html"], rendered["markdown"]
    # identity token counts from the list pairs; the control row named as such
    assert "| essay | dflash | 0/2 | 0 | no | 14 vs 12; 14 vs 12 | 5, 5 |" in text
    assert "| gsm8k | dflash | 0/1 | 0 | no | 4 vs 3 | 2 |" in text
    assert "| essay | off (control: r1) | 1/1 | 0 | yes |  |  |" in text
    # GSM8K from gsm8k_correct / total / wrong, with the stand-in warning
    assert "| gsm8k | off | 0.0 | 1 | 3/3 | 2/3 | problem 3: 25000 vs 70000 |" in text
    assert "| gsm8k | dflash | 0.0 | 1 | 3/3 | 3/3 | none |" in text
    assert "<p class='warn'>Stand-in problems, not the dataset, for: gsm8k.</p>" in page
    # "drafted nothing" derived from drafted == 0 (ngram-mod drafted nothing on gsm8k: not in this sample; the
    # baseline's own row is not shown), a real zero rate shown as a number
    assert "| essay | mtp | 0.0 | 1134 | 0 | 0.000 | 1.00 |  |  |" in text
    # the verdict's inputs from the typed value lists
    assert "[30.07, 31.03] vs off [186.88, 199.97]" in text
    # contention: the count and the rejected cell with its reason
    assert (
        "1 attempt(s) rejected as contended and measured again, in 1 cell(s); 1 wait(s) for a quiet machine "
        "before measuring again, 42 s in all."
    ) in text
    assert "| waited s |" in text and "| 42.5 |" in text
    assert "pid 4242 (python) on the GPU" in text
    assert f"{120 / (5120 / 8 * 1593e6 * 2 / 5.68e9) * 100:.1f}%" in page  # ceiling


def test_drafted_nothing_is_derived_from_the_drafted_count() -> None:
    from specbench.report.sections.measurements import acceptance_section

    acceptance = pd.DataFrame(
        [
            {
                "task": "a",
                "condition": "mtp",
                "temperature": 0.0,
                "drafted": 0,
                "accepted": 0,
                "pooled_rate": float("nan"),
                "tokens_per_step": float("nan"),
                "spec_n_max": None,
                "from_prompt_share": 0.021,
                "from_output_share": None,
            }
        ]
    )
    html = table(acceptance_section(acceptance, "off").table, {})
    assert "drafted nothing" in html and ">n/a<" in html
    assert ">2%<" in html  # the text's share found in the prompt; none shown for a response too short to judge


def test_fmt() -> None:
    assert [fmt(v) for v in (1.234, 3, True, None, float("nan"), pd.NA, "x")] == [
        "1.23",
        "3",
        "yes",
        "n/a",
        "n/a",
        "n/a",
        "x",
    ]


def test_the_report_opens_with_the_answer(rendered) -> None:
    """The opening names each claim once by kind, a failure marked as one in Markdown and coloured in HTML, with the
    study's value and this run's; the verdict counts head the claims table instead."""
    page, text = rendered["html"], rendered["markdown"]
    answer = text.split("## What this run found")[1].split("## Setup")[0]
    assert "Measured on **NVIDIA H200 (143771 MiB)**; not the study's setup" in answer
    assert "The study published none of its prompts: this run's prompts are our own" in answer
    failed = (
        "- ✗ Not reproduced: **ngram-file-rewrite** (not reproduced (size) at 0 and 1.0): n-gram 6.2x on file rewrite "
        '(the study "6.25x", this run at 0 "1.80x <b>", at 1.0 "2.10x")'
    )
    assert failed in answer
    undecided = "- Cannot tell: **ngram-task-ordering** (not separated at 0 and 1.0): n-gram: the order across tasks"
    assert undecided in answer
    assert "as one sentence" not in answer  # a sentence of one figure is that figure
    assert "agrees with the study" not in answer  # a failure: not everything compared agrees
    html_answer = page.split("<h2 id='answer'>")[1].split("<h2 ")[0]
    assert "<li class='bad'>Not reproduced: <b>ngram-file-rewrite</b>" in html_answer
    counts = "Claims (at temperature 0 where the text states none): **1** not reproduced (size), **1** not separated."
    claims = text.split("## Published claims vs this run")[1]
    assert counts not in answer and counts in claims
    assert "**1** neither reading" in claims and "**1** cannot tell" in claims
    # the multiplier matrix: task x condition, multiplier [interval] verdict
    row = next(line for line in answer.splitlines() if line.startswith("| essay | 0.0 |"))
    assert re.search(r"\| \d+\.\d\dx \[(n/a|\d+\.\d\d-\d+\.\d\d)\] too few runs", row), row  # 2 runs a side
    assert '<td class="t bad">' in page or '<td class="t good">' in page  # colour-coded verdicts
    facts = text.split("## Comparable with the study?")[1].split("##")[0]
    assert "| GPU | A100, at least 80000 MiB | NVIDIA H200 (143771 MiB) | no |" in facts


def test_warm_section_says_which_scope_ran(rendered) -> None:
    # records made before server.scope existed: a shared server was the per-task scope
    for document in (rendered["markdown"], rendered["html"]):
        assert "Warm scope that ran for ngram-mod-warm: per task (" in document
    warm = rendered["markdown"].split("## Fresh vs warm n-gram server")[1].split("## ")[0]
    assert "| scope | position |" in warm and "| task | 2 |" in warm and "| fresh |" not in warm


def test_claims_read_at_a_glance_with_the_detail_folded_beside_them(rendered) -> None:
    """One short row per claim (the study says, this run, the verdict); published value, scope and why folded."""
    page, text = rendered["html"], rendered["markdown"]
    claims = page.split("<h2 id='claims'>")[1].split("<h2 ")[0]
    headers = re.findall(r"<th class=\"t\">([^<]+)</th>", claims)
    assert headers == ["claim", "the study says", "this run", "verdict", "detail"]
    row = re.search(r"<tr><td class=\"t\">ngram-file-rewrite</td>.*?</tr>", claims).group(0)
    assert "<details><summary>detail</summary><dl><dt>published</dt><dd>6.25x</dd>" in row
    assert "<dt>why</dt><dd>outside 10%</dd>" in row and '<td class="t bad">not reproduced (size) at 0 and 1.0' in row
    part = text.split("## Published claims vs this run")[1].split("## ")[0]
    assert "| claim | the study says | this run | verdict |" in part
    assert (
        "| ngram-file-rewrite | n-gram 6.2x on file rewrite | at 0: 1.80x <b>; at 1.0: 2.10x | not reproduced " in part
    )
    assert "- **ngram-file-rewrite**: published: 6.25x; temperature: not stated" in part
    assert max(len(line) for line in part.splitlines() if line.startswith("| ")) < 200
