"""Divergences explained: a recorded real pair (the tiny random target's essay, ngram-mod vs off, differing at token
236) through the table, the summaries and the report; hand-made explanation records for the other outcomes."""

from __future__ import annotations

import copy
import json
from typing import Any

import pandas as pd
import pytest

from specbench.analysis.divergence import NEAR_TIE_NATS, ExplanationError, divergence
from specbench.analysis.record_reader import as_current
from specbench.analysis.record_rows import cell_table
from specbench.analysis.summaries import tables
from specbench.core.plan.cells import Cell
from specbench.core.records.explanations import (
    BATCHED,
    SEQUENTIAL,
    compared_cells,
    explanation_path,
    first_difference,
    reference_repeat,
    text_segments,
)
from specbench.core.steps.files import sha256_file
from specbench.measure.explain import request_sha256
from specbench.report.document import fmt_divergence, fmt_outputs, multiplier_cell
from support.paths import TEST_DATA

DATA = TEST_DATA / "divergence"
OFF, NGRAM = "results/cells/local/essay/off/t0.0/r1.json", "results/cells/local/essay/ngram-mod/t0.0/r1.json"
EXPLANATION = "results/explanations/local/essay/ngram-mod/t0.0/r1.json"


def recorded() -> tuple[list[tuple[str, dict]], dict[str, Any], dict[str, str]]:
    # recorded as version 7: read as the table reads any cell file (analysis.record_reader)
    records = [
        (OFF, as_current(json.loads((DATA / "essay-off-r1.json").read_text()))),
        (NGRAM, as_current(json.loads((DATA / "essay-ngram-mod-r1.json").read_text()))),
    ]
    explanation = json.loads((DATA / "essay-ngram-mod-r1.explanation.json").read_text())
    sha = {OFF: sha256_file(DATA / "essay-off-r1.json"), NGRAM: sha256_file(DATA / "essay-ngram-mod-r1.json")}
    return records, explanation, sha


def test_where_and_what_is_compared() -> None:
    assert first_difference([1, 2, 3], [1, 2, 4]) == 2 and first_difference([1, 2], [1, 2, 3]) == 2
    assert first_difference([1, 2], [1, 2]) is None
    assert [reference_repeat(c, r, "off") for c, r in (("mtp", 2), ("off", 2), ("off", 1))] == [2, 1, None]
    cells = [Cell("essay", c, t, r) for c in ("off", "mtp") for t in (0.0, 1.0) for r in (1, 2)]
    assert [c.label for c in compared_cells(cells, "off")] == [
        "essay/off/t0.0/r2",
        "essay/mtp/t0.0/r1",
        "essay/mtp/t0.0/r2",
    ]
    assert compared_cells([Cell("essay", "mtp", 0.0, 1)], "off") == []  # no reference in the run: nothing
    assert explanation_path(Cell("essay", "mtp", 0.0, 2)) == "results/explanations/local/essay/mtp/t0.0/r2.json"
    segments = text_segments([1, 2, 3, 9, 8], [1, 2, 3, 4], 3)
    assert segments == {"before": [1, 2, 3], "reference_token": [4], "token": [9], "reference_after": [], "after": [8]}


def test_the_recorded_pair_is_a_near_tie_that_flips_when_batched() -> None:
    records, explanation, sha = recorded()
    off_tokens, own_tokens = (r["response"]["tokens"] for _, r in records)
    assert explanation["first_difference"] == first_difference(own_tokens, off_tokens) == 236
    assert [q["name"] for q in explanation["requests"]][:3] == ["tokenize", SEQUENTIAL, BATCHED]
    for request in explanation["requests"]:  # each request's sha256 is of its body as sent
        assert request["sha256"] == request_sha256(request["body"])
    bodies = {q["name"]: q["body"] for q in explanation["requests"]}
    assert bodies[SEQUENTIAL]["n_predict"] == 237 and bodies[SEQUENTIAL]["n_probs"] == explanation["top_k"]
    assert bodies[SEQUENTIAL]["prompt"] == records[0][1]["request"]["completion"]["prompt"]  # the baseline's own
    tokenized = explanation["requests"][0]["response"]["tokens"]
    assert len(tokenized) == records[0][1]["response"]["timings"]["prompt_n"]  # as /completion tokenized it
    assert bodies[BATCHED]["prompt"] == [*tokenized, *off_tokens[:236]] and bodies[BATCHED]["n_predict"] == 1
    row = cell_table(records, "off", [(EXPLANATION, explanation)], sha).set_index("cell_file").loc[NGRAM]
    assert (row.first_difference, row.divergence_token, row.divergence_reference_token) == (236, 45887, 54567)
    assert (row.divergence_text, row.divergence_reference_text) == (" Regression", "/person")
    assert row.divergence_before == "/person" * 4 and row.explanation_file == EXPLANATION
    assert bool(row.replay_matches)  # the baseline's replay reproduced its own 237 tokens
    assert row.margin_sequential == pytest.approx(-11.078232765197754 + 11.087162017822266)  # 0.0089 nats
    assert 0 < row.margin_sequential < NEAR_TIE_NATS and row.rank_sequential == 2
    assert bool(row.divergence_flipped) and row.rank_batched == 1 and row.margin_batched < 0
    assert row.divergence_kind == "near-tie"
    off = cell_table(records, "off", [(EXPLANATION, explanation)], sha).set_index("cell_file").loc[OFF]
    assert pd.isna(off.divergence_kind) and pd.isna(off.explanation_file)  # the reference itself: nothing


def test_the_summaries_and_the_report_mark_and_explain_it() -> None:
    records, explanation, sha = recorded()
    summary = tables(cell_table(records, "off", [(EXPLANATION, explanation)], sha), "off")
    row = summary["summary"].set_index("condition").loc["ngram-mod"]
    assert (row.outputs_compared, row.outputs_differ, row.differing_token_counts, row.divergence_kinds) == (
        1,
        1,
        [[256, 256]],
        ["near-tie"],
    )
    assert fmt_outputs(row, "off") == "differs from off in 1/1 (256 vs 256 tokens; near-tie)"
    assert multiplier_cell(row.to_dict(), "off").endswith(
        "; ≠ off: outputs differ in 1/1 (256 vs 256 tokens; near-tie)"
    )
    [identity] = summary["identity"][summary["identity"].condition == "ngram-mod"].to_dict("records")
    [explained] = identity["divergences"]
    assert fmt_divergence(explained, 10) == (
        "r1 differs at token 236 (' Regression' vs '/person', after '/person/person/person/person'): token by token "
        "0.009 nats apart (rank 2), order flipped when batched: near-tie"
    )
    identical = dict(row.to_dict(), outputs_differ=0, differing_token_counts=[], divergence_kinds=[])
    assert fmt_outputs(identical, "off") == "identical to off (1/1)"
    assert "≠" not in multiplier_cell(identical, "off")


def edited(explanation: dict[str, Any], name: str, step: int | None, candidates: list[tuple[int, float]]) -> dict:
    """The recorded explanation with one view's top-k at the difference replaced by (id, logprob) pairs."""
    out = copy.deepcopy(explanation)
    response = next(q["response"] for q in out["requests"] if q["name"] == name)
    response["completion_probabilities"][step or 0]["top_logprobs"] = [
        {"id": i, "token": str(i), "logprob": p} for i, p in candidates
    ]
    return out


def test_a_large_margin_is_a_disagreement_and_beyond_the_top_k_is_a_bound() -> None:
    records, explanation, _ = recorded()
    reference = records[0][1]["response"]["tokens"]
    far = edited(
        edited(explanation, SEQUENTIAL, 236, [(54567, -1.0), (9, -3.0), (45887, -4.5)]),
        BATCHED,
        None,
        [(54567, -1.1), (45887, -4.4)],
    )
    got = divergence(far, reference)
    assert got["divergence_kind"] == "disagreement" and got["margin_sequential"] == pytest.approx(3.5)
    assert (got["rank_sequential"], got["divergence_flipped"]) == (3, False)
    beyond = edited(far, SEQUENTIAL, 236, [(54567, -1.0), (9, -2.0)])
    got = divergence(beyond, reference)
    assert got["rank_sequential"] is None and got["margin_sequential"] == pytest.approx(1.0)  # at least 1 nat
    assert got["divergence_kind"] == "disagreement"
    assert "leads by more than 1.00 nats (the other beyond its top 10)" in fmt_divergence(
        {
            "repeat": 1,
            "position": 236,
            "text": "a",
            "reference_text": "b",
            "before": "",
            "kind": "disagreement",
            "margin_sequential": 1.0,
            "rank_sequential": None,
            "margin_batched": 3.3,
            "flipped": False,
            "replay_matches": True,
        },
        10,
    )


def test_a_replay_that_is_not_the_baseline_and_an_ended_output() -> None:
    records, explanation, _ = recorded()
    reference = records[0][1]["response"]["tokens"]
    other = copy.deepcopy(explanation)
    sequential = next(q["response"] for q in other["requests"] if q["name"] == SEQUENTIAL)
    sequential["tokens"] = [*sequential["tokens"][:-1], 1]
    got = divergence(other, reference)
    assert got["replay_matches"] is False and got["divergence_kind"] == "replay differs"
    ended = copy.deepcopy(explanation)
    next(q for q in ended["requests"] if q["name"] == "detokenize:token")["body"]["tokens"] = []
    got = divergence(ended, reference)
    assert got["divergence_kind"] == "length" and got["divergence_text"] is None and got["margin_batched"] is None
    assert divergence({**explanation, "first_difference": None, "requests": []}, reference)["divergence_kind"] is None


def test_a_stale_explanation_is_refused_naming_it() -> None:
    records, explanation, sha = recorded()
    with pytest.raises(ExplanationError, match=f"{EXPLANATION} explains another version of {NGRAM}"):
        cell_table(records, "off", [(EXPLANATION, explanation)], {**sha, NGRAM: "0" * 64})
    with pytest.raises(ExplanationError, match="explanation version 99 cannot be read"):
        cell_table(records, "off", [(EXPLANATION, {**explanation, "explanation_version": 99})], sha)
