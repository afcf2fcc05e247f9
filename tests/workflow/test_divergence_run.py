"""A diverging run, for real (tiny random target, CPU): ngram-mod's essay at temperature 0 differs from off's, the
workflow explains it after the cells from untimed requests to a server of off's setup, and the table and the report
show where, which tokens and both views' margins, and mark the multiplier. The file rewrite (32 tokens) is identical:
its explanation starts no server. 2 tasks x (off, ngram-mod) x temperature 0 x 1 repeat."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from specbench.analysis.cell_table import read_table
from specbench.core.plan.cells import Cell
from specbench.core.records.explanations import BATCHED, SEQUENTIAL, explanation_path
from specbench.core.steps.files import read_json, sha256_file
from specbench.measure.explain import request_sha256
from support.workflow import TWO_THREADS, llama_servers_in, placed, tiny_run

# Where the essay diverges depends on the servers' threads: two, on a machine this suite has to itself.
pytestmark = [pytest.mark.workflow, pytest.mark.alone]

ESSAY, REWRITE = Cell("essay", "ngram-mod", 0.0, 1), Cell("file-rewrite", "ngram-mod", 0.0, 1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("divergence")
    result = tiny_run(
        work,
        "divergence",
        {
            "name": "divergence test",
            # random weights: every draft is rejected and the essay's greedy output diverges from off's (at token 236 on
            # the b11223 CPU build, under the random target's ChatML template: tiny.layout); 240 tokens reach it
            "models": {"target": {"tiny": {"seed": 0, "weights": "random"}}},
            "select": {"tasks": ["file-rewrite", "essay"], "conditions": ["off", "ngram-mod"]},
            "tasks": {"essay": {"max_tokens": 240}},
            "temperatures": [0.0],
            "repeats": 1,
            "max_tokens": 32,
            # This machine may be shared with other work: record CPU contention, do not judge it here.
            "measurement": {"max_foreign_cpu": None},
        },
        env=TWO_THREADS,
        start_from=None,  # a target of its own (random weights): the prepared models are not its
    )
    return {"work": work, "result": result}


def _time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def test_the_diverging_cell_is_explained_after_the_cells_untimed(run: dict) -> None:
    work = run["work"]
    essay_cell, rewrite_cell = (placed(work, c) for c in (ESSAY, REWRITE))  # in their models folders
    record = read_json(work / explanation_path(essay_cell))
    cell, off = (read_json(work / c.path) for c in (essay_cell, placed(work, Cell("essay", "off", 0.0, 1))))
    at = record["first_difference"]
    assert at is not None and cell["response"]["tokens"][:at] == off["response"]["tokens"][:at]
    assert cell["response"]["tokens"][at] != off["response"]["tokens"][at]
    # the cell files were only read: the explanation names them by their current sha256
    assert record["cell"] == {"path": essay_cell.path, "sha256": sha256_file(work / essay_cell.path)}
    assert record["reference"]["sha256"] == sha256_file(work / placed(work, Cell("essay", "off", 0.0, 1)).path)
    # a server of the baseline's setup, on the loopback, stopped
    server = record["server"]
    assert server["condition"] == "off" and server["argv"][server["argv"].index("--host") + 1] == "127.0.0.1"
    assert server["model_sha256"] == cell["provenance"]["model"]["sha256"]
    assert "--spec-type" not in server["argv"] and not llama_servers_in(work)
    # the requests exactly as sent, their sha256, the answers
    requests = {q["name"]: q for q in record["requests"]}
    assert all(q["sha256"] == request_sha256(q["body"]) for q in record["requests"])
    assert requests[SEQUENTIAL]["body"]["prompt"] == off["request"]["completion"]["prompt"]
    assert requests[SEQUENTIAL]["response"]["tokens"] == off["response"]["tokens"][: at + 1]  # it is the baseline
    top = requests[SEQUENTIAL]["response"]["completion_probabilities"][at]["top_logprobs"]
    assert top[0]["id"] == off["response"]["tokens"][at] and len(top) == record["top_k"]
    assert requests[BATCHED]["body"]["n_predict"] == 1 and len(requests[BATCHED]["body"]["prompt"]) == (
        off["response"]["timings"]["prompt_n"] + at
    )
    # never inside a cell's timed window
    windows = [
        (_time(r["started_at"]), _time(r["ended_at"]))
        for r in (
            read_json(work / placed(work, Cell(t, c, 0.0, 1)).path)
            for t in ("essay", "file-rewrite")
            for c in ("off", "ngram-mod")
        )
    ]
    start, end = _time(record["started_at"]), _time(record["ended_at"])
    assert all(end <= a or start >= b for a, b in windows), (start, end, windows)
    assert start >= max(_time(cell["ended_at"]), _time(off["ended_at"]))
    # the identical file rewrite: recorded, no server
    identical = read_json(work / explanation_path(rewrite_cell))
    assert identical["first_difference"] is None and identical["server"] is None and identical["requests"] == []
    log = work / explanation_path(rewrite_cell).replace(".json", ".server.log")
    assert not log.exists() or log.stat().st_size == 0  # Snakemake may touch the rule's log; no server wrote it


def test_the_table_and_the_report_show_the_divergence_and_mark_the_multiplier(run: dict) -> None:
    work = run["work"]
    essay_cell, rewrite_cell = (placed(work, c) for c in (ESSAY, REWRITE))  # in their models folders
    rows = read_table(work / "results/cells.parquet").set_index("cell_file")
    row = rows.loc[essay_cell.path]
    assert not bool(row.identical) and row.explanation_file == explanation_path(essay_cell)
    assert row.divergence_kind in ("near-tie", "disagreement") and bool(row.replay_matches)
    assert (
        row.divergence_text and row.divergence_reference_text and row.divergence_text != row.divergence_reference_text
    )
    assert pd.notna(row.margin_sequential) and pd.notna(row.margin_batched)
    assert bool(rows.loc[rewrite_cell.path].identical) and pd.isna(rows.loc[rewrite_cell.path].divergence_kind)
    summary = pd.read_csv(work / "results/summary.csv").set_index(["task", "condition"])
    assert summary.loc[("essay", "ngram-mod"), "outputs_differ"] == 1
    assert summary.loc[("file-rewrite", "ngram-mod"), "outputs_differ"] == 0
    report = (work / "results/report.md").read_text()
    opening = report.split("## What this run found")[1].split("## ")[0]
    essay = next(line for line in opening.splitlines() if line.startswith("| essay | 0.0 |"))
    assert f"≠ off: outputs differ in 1/1 ({len(read_json(work / essay_cell.path)['response']['tokens'])} vs" in essay
    assert "≠" not in next(line for line in opening.splitlines() if line.startswith("| file-rewrite | 0.0 |"))
    identity = report.split("## Output identity at temperature 0")[1].split("## ")[0]
    explained = next(line for line in identity.splitlines() if line.startswith("| essay | ngram-mod |"))
    assert (
        f"r1 differs at token {row.first_difference} ({row.divergence_text!r} vs "
        f"{row.divergence_reference_text!r}" in explained
    )
    assert "token by token" in explained and explained.rstrip(" |").endswith(row.divergence_kind)
    html = (work / "results/report.html").read_text()
    assert "≠ off: outputs differ in 1/1" in html and f"differs at token {row.first_difference} (" in html
