"""The published claims (config/claims.yaml) and their check against hand-made and sampled typed tables."""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import tables as summary_tables
from specbench.claims.claim import (
    AGREES,
    ANY_DEVICE,
    BACKGROUND,
    CANNOT_TELL,
    CONTRADICTED,
    DIFFERS,
    FAILED,
    KINDS,
    LOAD_KINDS,
    NEITHER_READING,
    NOT_COMPARABLE,
    NOT_COMPARABLE_DETAIL,
    NOT_DIRECTION,
    NOT_JUDGED,
    NOT_MEASURED,
    NOT_REPRODUCED,
    NOT_SEPARATED,
    NOT_SIZE,
    OTHER_HERE,
    REPRODUCED,
    RESULT_COLUMNS,
    SAME_HERE,
    TOO_FEW_RUNS,
    TOO_WIDE,
    VERDICTS,
    Claim,
    ClaimError,
    variant,
)
from specbench.claims.claims_file import about_the_study, load_claims, parse_claims
from specbench.claims.evaluate import Setup, evaluate
from specbench.claims.judge_inputs import METRICS
from specbench.claims.judging import predictions_setup
from specbench.claims.sizes_judge import tolerance_band
from specbench.report.document import Note
from specbench.report.sections.claims import claim_notes, sentence_text
from support.config import load_config
from support.counterfactuals import (
    BASELINE,
    CONFIG,
    COUNTERFACTUALS,
    NEVER_JUDGED,
    cell_file,
    make_rows,
    make_tables,
    scored,
    sequence,
)
from support.paths import REPO, TEST_DATA
from support.study_run import study_run

CLAIMS_FILE = REPO / "config" / "claims.yaml"
SAMPLES = TEST_DATA / "claims"
TASKS = ["file-rewrite", "todo-app", "gsm8k", "essay"]
DEVICE = "CPU (x86_64)"
STUDY = Setup(comparable=True, same_model=True, device="NVIDIA A100 80GB")
OTHER_GPU = Setup(comparable=False, same_model=True, device=DEVICE)  # the study's model elsewhere
OTHER_MODEL = Setup(comparable=False, same_model=False, device=DEVICE)


def setup_of(study: bool) -> Setup:
    return STUDY if study else OTHER_GPU


def claim(**fields: Any) -> Claim:
    entry = {"id": "test-claim", "text": "a claim", "source": "a sentence", **fields}
    return parse_claims([entry], CONFIG)[0]


def check(one: Claim, tables: dict[str, pd.DataFrame], *, study: bool = True) -> pd.Series:
    result = evaluate([one], tables, baseline=BASELINE, setup=setup_of(study))
    assert list(result.columns) == RESULT_COLUMNS
    assert len(result) == 1 + len(one.variants)
    row = result.iloc[0]
    assert row["kind"] == one.kind and row["published"] == one.published and row["variant_of"] is None
    assert isinstance(row["cells"], list) and all(isinstance(c, str) for c in row["cells"])
    return row


OFF = [126.0, 125.0, 127.0]


def speedup_claim(
    published: Any, task: str | list[str] = "file-rewrite", condition: str = "ngram-mod", tolerance: float = 0.15
) -> Claim:
    where = {"tasks": task} if isinstance(task, list) else {"task": task}
    return claim(
        kind="speedup", condition=condition, temperature=0.0, published=published, tolerance=tolerance, **where
    )


# --------------------------------------------------------------------------------------------------------------
# The claims file
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def claims() -> list[Claim]:
    return load_claims(CLAIMS_FILE, CONFIG)


@pytest.fixture(scope="module")
def sample_tables() -> dict[str, pd.DataFrame]:
    """A real CPU run's cells (file-rewrite and essay at temperature 0, two repeats each), as typed rows."""
    rows = json.loads((SAMPLES / "cells.json").read_text())
    return summary_tables(frame_of(rows, BASELINE), BASELINE)


def test_claims_file_loads_with_unique_kebab_ids(claims: list[Claim]) -> None:
    raw = yaml.safe_load(CLAIMS_FILE.read_text())["claims"]
    ids = [c.id for c in claims]
    assert len(ids) == len(raw) == len(set(ids))
    assert all(c.kind in KINDS for c in claims)
    assert all(c.source and c.text for c in claims)


def study_places() -> set[str]:
    """The places docs/study.md numbers the study's sentences by ("The study's sentences, by place")."""
    text = (REPO / "docs" / "study.md").read_text(encoding="utf-8")
    table = text.split("## The study's sentences, by place")[1].split("\n## ")[0]
    return set(re.findall(r"^\| `([a-z-]+\.[0-9]+)` \|", table, re.M))


def test_every_claim_names_its_sentence_by_a_place_the_study_has(claims: list[Claim]) -> None:
    """Each claim names where its sentence stands (paragraph.sentence, docs/study.md's numbering); the claims of one
    sentence share one place, and the claims of one place whose temperature the text does not give share one
    sentence (so that a sentence is never split into readings of its own)."""
    places = study_places()
    assert len(places) > 20
    assert all(c.place in places for c in claims), [(c.id, c.place) for c in claims if c.place not in places]
    by_sentence: dict[str, set[str]] = {}
    by_place: dict[str, set[str]] = {}
    for one in claims:
        if one.sentence:
            by_sentence.setdefault(one.sentence, set()).add(one.place)
        if one.unstated and one.kind != "thesis":
            by_place.setdefault(one.place, set()).add(one.sentence)
    assert all(len(p) == 1 for p in by_sentence.values()), by_sentence
    split = {place: keys for place, keys in by_place.items() if len(keys) > 1}
    assert not split, split
    by_id = {c.id: c for c in claims}
    essay = {"mtp-essay-tokens-per-s", "mtp-essay-verdict", "ngram-essay-verdict", "dflash-essay-verdict"}
    assert {by_id[i].place for i in essay} == {"conclusion.3"}  # "131 vs 126 ..., n-gram slightly slower, ..."
    assert by_id["dflash-todo-app-best"].place != by_id["dflash-todo-app-speedup"].place
    assert "131" not in by_id["mtp-first-three-speedup-range"].source


def test_claims_file_has_the_published_figures(claims: list[Claim]) -> None:
    by_id = {c.id: c for c in claims}
    figures = {
        "ngram-file-rewrite-speedup": 6.25,
        "mtp-file-rewrite-speedup": 1.78,
        "dflash-file-rewrite-speedup": 3.35,
        "ngram-essay-speedup": 1.00,
        "mtp-essay-speedup": 1.04,
        "dflash-essay-speedup": 0.66,
        "dflash-essay-speedup-why": 0.69,
        "dflash-todo-app-speedup": 2.27,
        "off-all-tasks-tokens-per-s": 126,
        "mtp-essay-tokens-per-s": 131,
        "mtp-essay-speedup-why": 1.04,
        "mtp-file-rewrite-acceptance": 0.98,
        "mtp-todo-app-acceptance": 0.84,
        "mtp-gsm8k-acceptance": 0.78,
        "mtp-essay-acceptance": 0.41,
        "dflash-essay-acceptance": 0.08,
        "ngram-file-rewrite-acceptance": [0.99, 1.0],
        "ngram-file-rewrite-drafted": 984,
        "gsm8k-dflash-t0-correct": 3,
        "gsm8k-off-t0-correct": 2,
        "gsm8k-mtp-t0-correct": 2,
        "dflash-differs-on-new-code-math-essay": ["todo-app", "gsm8k", "essay"],
    }
    for claim_id, value in figures.items():
        assert by_id[claim_id].published == pytest.approx(value), claim_id
    assert by_id["mtp-first-three-speedup-range"].published == [1.5, 1.8]
    assert by_id["mtp-first-three-speedup-range"].tasks == ("file-rewrite", "todo-app", "gsm8k")
    assert by_id["off-all-tasks-tokens-per-s"].tasks == tuple(TASKS)
    assert by_id["ngram-warm-todo-app-repeats"].published == [123, 195, 307]
    assert by_id["ngram-warm-todo-app-repeats"].fresh == "ngram-mod"
    assert dict(by_id["dflash-token-counts"].token_counts) == {
        "todo-app": [829, 898],
        "gsm8k": [627, 894],
        "essay": [681, 611],
    }
    assert by_id["gsm8k-off-t0-correct"].wrong == {"problem": 3, "answer": "25000", "reference": "70000"}
    assert by_id["ngram-todo-app-gsm8k-verdict"].published == "slower"
    assert by_id["mtp-no-task-slower"].published == "not slower"
    # the control is the identity claim about the baseline itself (its repeats vs its first)
    assert by_id["off-control-identical"].condition == BASELINE == "off"
    assert by_id["dflash-todo-app-best"].published == [["dflash"], ["mtp", "ngram-mod"]]
    assert by_id["dflash-todo-app-best"].conditions == ("dflash", "mtp", "ngram-mod")
    assert by_id["t1-same-shape-as-t0"].kind == "ordering"
    # the essay's DFlash multiplier appears twice (0.66x, 0.69x), neither with a temperature: each under both readings
    assert "0.69" in by_id["dflash-essay-speedup"].note and "0.66" in by_id["dflash-essay-speedup-why"].note
    results = [
        "ngram-file-rewrite-speedup",
        "mtp-file-rewrite-speedup",
        "dflash-file-rewrite-speedup",
        "ngram-essay-speedup",
        "mtp-essay-speedup",
        "dflash-essay-speedup",
    ]
    explanation = [
        "dflash-essay-speedup-why",
        "dflash-todo-app-speedup",
        "mtp-essay-acceptance",
        "ngram-file-rewrite-drafted",
        "ngram-todo-app-gsm8k-accepted-per-request",
    ]
    assert all(by_id[i].unstated for i in results + explanation + ["off-all-tasks-tokens-per-s"])
    stated = {c.id for c in claims if not c.unstated and c.kind != "background"}
    assert {c.kind for c in claims if c.id in stated} == {
        "identity",
        "gsm8k",
        "ordering",
        "tokens_per_s",
    }  # warm: undated
    assert {c.id for c in claims if c.id in stated and c.kind == "tokens_per_s"} == {"t1-same-shape-flat-speeds"}
    assert {c.id for c in claims if c.id in stated and c.kind == "ordering"} == {"t1-same-shape-as-t0"}
    assert all("-t0" not in c.id for c in claims if c.unstated)
    # a multiplier's side of 1.0x, by the verdict rule: every one the study gives with a word for it
    assert {by_id[i].side for i in results} == {"faster", "slower"}
    assert (by_id["mtp-essay-speedup"].side, by_id["ngram-essay-speedup"].side) == ("faster", "slower")
    # 0-4 accepted "in one go": per request, whole tokens, no tolerance
    per_request = by_id["ngram-todo-app-gsm8k-accepted-per-request"]
    assert (per_request.metric, per_request.published, per_request.tolerance) == ("draft_n_accepted", [0, 4], 0)
    per_round = by_id["ngram-todo-app-gsm8k-accepted-per-round"]  # ... and per draft round: both readings judged
    assert (per_round.metric, per_round.published, per_round.tolerance) == ("longest_accepted", [0, 4], 0)
    assert per_round.readings == per_request.readings and per_round.sentence == per_request.sentence
    # the warm server: only what the text says (new code's repeats; the mechanism "second answer equals the first")
    warm = [c for c in claims if {"ngram-mod-warm", "ngram-mod-warm-all"} & {c.condition, *c.conditions}]
    per_task = {
        "ngram-warm-todo-app-repeats",
        "ngram-warm-todo-app-faster-each-repeat",
        "ngram-warm-t0-second-equals-first",
    }
    assert {c.id for c in warm} == per_task | {f"{i}-one-server" for i in per_task}  # both readings of the scope
    assert by_id["ngram-warm-t0-second-equals-first"].versus == "first-repeat"
    # multipliers and speeds: 10 %, and 3 % where a figure beside it is 4 % away (1.00x / 1.04x, 126 / 131 tok/s)
    assert {c.tolerance for c in claims if c.kind in ("speedup", "tokens_per_s")} == {0.10, 0.03}
    tight = {"ngram-essay-speedup", "mtp-essay-speedup", "off-all-tasks-tokens-per-s", "mtp-essay-tokens-per-s"}
    tight |= {"mtp-essay-speedup-why"}  # the explanation's own 1.04x
    tight |= {"t1-same-shape-flat-speeds"}  # off flat across tasks: the band of its 126 tok/s
    assert {c.id for c in claims if c.tolerance == 0.03 and c.kind != "acceptance"} == tight
    # the six results multipliers are one sentence, read at one temperature
    assert {c.id for c in claims if c.sentence == "results-multipliers"} == set(results)
    # "all accepted" is at least 99% with no tolerance; 984 drafted per run, a relative tolerance
    assert by_id["ngram-file-rewrite-acceptance"].tolerance == 0
    assert by_id["ngram-file-rewrite-drafted"].metric == "draft_n"
    assert 0 < by_id["ngram-file-rewrite-drafted"].tolerance < 0.2
    # verdicts and orderings per task under the study's rule
    assert by_id["file-rewrite-every-method-faster"].conditions == ("ngram-mod", "mtp", "dflash")
    assert by_id["file-rewrite-ngram-fastest"].published == [["ngram-mod"], ["dflash", "mtp"]]
    assert by_id["essay-method-ordering"].published == [["mtp"], ["ngram-mod"], ["dflash"]]
    assert (by_id["mtp-essay-verdict"].published, by_id["dflash-essay-verdict"].published) == ("faster", "slower")
    # every DFlash claim is judged for the 15-token variant too, and only those
    for c in claims:
        names_dflash = "dflash" in (c.condition, *c.conditions)
        assert c.variants == (("dflash-n15",) if names_dflash else ()), c.id
    # scope: absolute figures, acceptance on any device, relative verdicts and orderings, background quotes
    scopes = {c.id: c.scope for c in claims}
    sizes = [c for c in claims if c.kind in ("speedup", "tokens_per_s", "gsm8k")]
    assert {c.scope for c in sizes if c.published != "flat"} == {"absolute"}
    assert {c.scope for c in claims if c.kind == "acceptance"} == {"any-device"}
    assert scopes["t1-same-shape-flat-speeds"] == "relative"  # flat is a relation between tasks, not the 126
    assert {c.scope for c in claims if c.kind == "verdict" or c.over == "conditions"} == {"relative"}
    assert {c.scope for c in claims if c.kind == "ordering" and c.over == "tasks"} == {"transfers"}
    assert scopes["off-control-identical"] == "relative" and scopes["dflash-token-counts"] == "absolute"
    assert scopes["ngram-warm-todo-app-repeats"] == "absolute"
    assert scopes["ngram-warm-todo-app-faster-each-repeat"] == "relative"
    background = {c.id: c.published for c in claims if c.kind == "background"}
    assert background == {
        "rapid-mlx-median": "1.50x",
        "rapid-mlx-lowest": "1.28x",
        "rapid-mlx-best": "4.27x",
        "rapid-mlx-agent-turns": "1.05x",
        "off-file-rewrite-contention": "48-56 tok/s",
        "contention-remeasured-runs": "8 runs",
    }
    assert all(scopes[i] == "background" for i in background)
    # what depends on our own prompts: token counts, the 984, acceptance percentages, the GSM8K answers
    dependent = {c.id for c in claims if c.prompt_dependent}
    assert {c.id for c in claims if c.kind in ("acceptance", "gsm8k")} | {"dflash-token-counts"} <= dependent
    assert not dependent & {c.id for c in claims if c.kind in ("speedup", "verdict", "ordering", "background")}
    # every kind the claims schema allows is used by some claim, but those about load (the study measured none)
    assert {c.kind for c in claims} == set(KINDS) - set(LOAD_KINDS)


@pytest.mark.parametrize("study", [True, False])
def test_every_claim_evaluates_against_the_sample_tables(
    claims: list[Claim], sample_tables: dict[str, pd.DataFrame], study: bool
) -> None:
    result = evaluate(claims, sample_tables, baseline=BASELINE, setup=setup_of(study))
    assert list(result.columns) == RESULT_COLUMNS
    assert list(result["id"]) == [i for c in claims for i in (c.id, *(f"{c.id}@{v}" for v in c.variants))]
    assert list(result["kind"]) == [k for c in claims for k in [c.kind] * (1 + len(c.variants))]
    assert set(result["verdict"]) <= set(VERDICTS)
    assert result["published_text"].map(bool).all() and result["measured_text"].map(bool).all()
    assert all(isinstance(cells, list) for cells in result["cells"])
    by_id = result.set_index("id")
    # the sample run has file-rewrite and essay at temperature 0 only, two repeats each
    assert by_id.loc["ngram-file-rewrite-speedup", "measured_text"] == "1.80x"
    assert by_id.loc["ngram-file-rewrite-speedup", "measured"] == {"file-rewrite": pytest.approx(1.8, abs=0.005)}
    assert by_id.loc["ngram-file-rewrite-speedup", "published"] == 6.25
    assert by_id.loc["ngram-file-rewrite-speedup", "cells"] == [
        "results/cells/file-rewrite/ngram-mod/t0.0/r1.json",
        "results/cells/file-rewrite/ngram-mod/t0.0/r2.json",
        "results/cells/file-rewrite/off/t0.0/r1.json",
        "results/cells/file-rewrite/off/t0.0/r2.json",
    ]
    for claim_id in (
        "dflash-todo-app-speedup",
        "gsm8k-dflash-t0-correct",
        "t1-same-shape-as-t0",
        "off-all-tasks-tokens-per-s",
        "ngram-warm-todo-app-repeats",
    ):
        absolute = by_id.loc[claim_id, "scope"] == "absolute"
        assert by_id.loc[claim_id, "verdict"] == (NOT_COMPARABLE if absolute and not study else NOT_MEASURED)
    # no temperature-1.0 cells in the sample: every claim whose temperature the text does not give has a reading at
    # 1.0, not measured, and so supports the temperature-0 reading at most
    unstated = {c.id for c in claims if c.unstated} | {f"{c.id}@{v}" for c in claims if c.unstated for v in c.variants}
    at_t1 = result[result["verdict_t1"].notna()]
    words = {r for c in claims if c.readings for r in (c.id, *(f"{c.id}@{v}" for v in c.variants))}
    assert set(at_t1["id"]) == unstated and set(result[result["reading"].notna()]["id"]) == unstated | words
    assert set(at_t1["kind"]) == {
        "speedup",
        "tokens_per_s",
        "acceptance",
        "verdict",
        "ordering",
        "thesis",
        "warm_vs_fresh",
    }
    assert set(at_t1["verdict_t1"]) <= {NOT_MEASURED, NOT_COMPARABLE}
    assert all("n/a" in text for text in at_t1["measured_t1_text"])
    by_temperature = at_t1[~at_t1["id"].isin(words)]
    assert set(by_temperature["reading"]) <= {"temperature 0 only", CANNOT_TELL, NOT_MEASURED, NOT_COMPARABLE}
    assert result[result["id"].isin(unstated)]["temperature"].isna().all()
    assert set(result[~result["id"].isin(unstated) & (result["kind"] != "background")]["temperature"]) <= {0.0, 1.0}
    background = result[result["kind"] == "background"]
    assert set(background["verdict"]) == {BACKGROUND} and set(background["scope"]) == {"background"}
    relative = result[result["scope"] == "relative"].set_index("id")
    if study:
        # two repeats a side: the all-runs rule says nothing (1 in 6 by chance); a multiplier far outside its band is
        # still a size miss, with the too few runs said beside it
        assert by_id.loc["ngram-file-rewrite-speedup", "verdict"] == NOT_SIZE
        assert "too few runs for the all-runs rule on file-rewrite" in by_id.loc["ngram-file-rewrite-speedup", "detail"]
        assert by_id.loc["mtp-file-rewrite-speedup", "verdict"] == NOT_DIRECTION  # 0.18x, CPU MTP: slower
        assert by_id.loc["dflash-essay-verdict", "verdict"] == TOO_FEW_RUNS
        assert by_id.loc["ngram-file-rewrite-acceptance", "verdict"] == REPRODUCED
        assert by_id.loc["ngram-file-rewrite-drafted", "verdict"] == NOT_SIZE  # 66 per run, not 984
        assert DEVICE not in "".join(result["detail"])
    else:  # absolute figures are not comparable, measured still filled; relative ones are judged, naming the device
        absolute = result[result["scope"] == "absolute"]
        assert set(absolute["verdict"]) == {NOT_COMPARABLE} and set(absolute["detail"]) == {NOT_COMPARABLE_DETAIL}
        assert by_id.loc["ngram-file-rewrite-speedup", "measured_text"] == "1.80x"
        judged = relative[relative["verdict"] != NOT_MEASURED]
        assert not judged.empty and all(f" on {DEVICE}: " in d for d in judged["detail"])
        # not claimed to transfer: beside the study's only (or undecided, as on the study's setup)
        assert set(judged["verdict"]) <= {AGREES, DIFFERS, TOO_FEW_RUNS, NOT_SEPARATED}
        # the sample: n-gram and MTP on both tasks, every method on the file rewrite and the essay
        assert relative.loc["file-rewrite-ngram-fastest", "verdict"] == AGREES
        assert relative.loc["file-rewrite-ngram-fastest", "detail"].startswith(
            f"ordering agrees with the study on {DEVICE}: "
        )
        assert relative.loc["dflash-essay-verdict", "verdict"] == TOO_FEW_RUNS  # 39 vs 187-200 tok/s, 2 runs a side
        assert relative.loc["dflash-essay-verdict", "detail"].startswith(f"verdict too few runs on {DEVICE}")


def test_a_study_shaped_run_reproduces_every_claim(claims: list[Claim]) -> None:
    """The study's figures at both temperatures, DFlash's documented setting as its default one: every claim and
    variant reproduced under both readings, each variant judged on its own cells; without the variant's cells its
    rows are not measured, never judged on dflash's."""
    result = evaluate(claims, study_run(), baseline=BASELINE, setup=STUDY)
    judged = result[result["kind"] != "background"]
    failed = judged[(judged["verdict"] != REPRODUCED) | ~judged["verdict_t1"].isin([None, REPRODUCED])]
    assert failed.empty, failed[["id", "measured_text", "verdict", "verdict_t1", "detail"]].to_string()
    assert judged["cells"].map(bool).all()
    variants = result[result["variant_of"].notna()]
    assert len(variants) == sum(len(c.variants) for c in claims)
    assert all("/dflash-n15/" in c for cells in variants["cells"] for c in cells if "/dflash" in c)
    unrun = evaluate(claims, study_run(leave_out=("dflash-n15",)), baseline=BASELINE, setup=STUDY)
    unrun_variants = unrun[unrun["variant_of"].notna()]
    assert set(unrun_variants["verdict"]) == {NOT_MEASURED}
    assert not any("/dflash/" in c for cells in unrun_variants["cells"] for c in cells)


H200 = Setup(comparable=False, same_model=True, device="NVIDIA H200", same_settings=True)  # only the GPU differs


def opening_items(result: pd.DataFrame) -> list[Note]:
    return claim_notes(result)[1]


def assert_each_claim_once(items: list[Note], result: pd.DataFrame) -> None:
    """No claim id is named by two items of the opening."""
    for claim_id in result["id"]:
        naming = [n.text for n in items if re.search(rf"\*?\b{re.escape(claim_id)}\b(?![@-])", n.text)]
        assert len(naming) <= 1, (claim_id, naming)


def test_the_studys_model_on_another_gpu_fails_no_sentence_that_no_claim_fails(claims: list[Claim]) -> None:
    """The study's model on an H200, every figure as published: absolute figures are not comparable and relative ones
    agree, so no sentence reads "not reproduced" (none of its claims is), the opening says that everything that can
    be compared agrees, and the sentences that mix agreeing and not comparable claims held (their absolute figures
    listed as not compared)."""
    result = evaluate(claims, study_run(), baseline=BASELINE, setup=H200)
    base = result[result["variant_of"].isna()]
    for sentence, members in base[base["sentence"].notna()].groupby("sentence"):
        verdicts = set(members["verdict"]) | set(members["verdict_t1"])
        assert not verdicts & set(FAILED), sentence
        assert set(members["sentence_reading"]) != {NEITHER_READING}, sentence
    items = opening_items(result)
    assert not [n.text for n in items if n.tone in ("bad", "warn") or n.text.startswith(("Not reproduced", "Cannot"))]
    assert items[0].text.startswith("**Everything that can be compared here agrees with the study**")
    held = next(n.text for n in items if n.text.startswith("Held: "))
    for sentence in ("ngram-new-code-math-why", "mtp-gains", "essay-conclusion", "warm-repeats"):
        assert re.search(rf"\b{sentence}\b", held), sentence
    unsaid = next(n.text for n in items if n.text.startswith("Not compared ("))
    assert "mtp-essay-tokens-per-s (in essay-conclusion)" in unsaid
    assert_each_claim_once(items, result)


def test_a_member_not_separated_leaves_its_sentence_undecided_not_failed(claims: list[Claim]) -> None:
    """On the study's setup, n-gram's essay runs spread so widely (all still below off) that the order of methods on
    the essay is not separated: the conclusion's essay sentence cannot be told (its other figures hold, n-gram's
    "slightly slower" is slower by the all-runs rule but its size cannot be told either), it is not a failure, and
    it is named once."""
    wide = {("essay", "ngram-mod", t): [60.0, 100.0, 124.5] for t in (0.0, 1.0)}
    result = evaluate(claims, study_run(runs=wide), baseline=BASELINE, setup=STUDY).set_index("id")
    assert result.loc["essay-method-ordering", "verdict"] == NOT_SEPARATED
    assert result.loc["ngram-essay-verdict", "verdict"] == TOO_WIDE
    assert result.loc["ngram-essay-verdict", "detail"].startswith("'slower' by the all-runs rule on every task, but ")
    assert result.loc["essay-method-ordering", "sentence_reading"] == CANNOT_TELL
    items = opening_items(result.reset_index())
    named = [n for n in items if "essay-method-ordering" in n.text]
    assert len(named) == 1 and named[0].text.startswith("Cannot tell as one sentence: **essay-conclusion**")
    assert named[0].tone != "bad"
    assert_each_claim_once(items, result.reset_index())


def test_this_order_is_the_file_rewrite_above_the_essay_per_method(claims: list[Claim]) -> None:
    """ "This order ... held for all three methods" follows the file rewrite vs essay contrast: DFlash's new code
    above its file rewrite (an order of four tasks the study never states) does not contradict it."""
    by_id = {c.id: c for c in claims}
    assert {tuple(map(tuple, by_id[f"{m}-task-ordering"].published)) for m in ("ngram", "mtp", "dflash")} == {
        (("file-rewrite",), ("essay",))
    }
    flipped = {("todo-app", "dflash", t): [126.0 * 4.0 + d for d in (-0.3, 0.0, 0.3)] for t in (0.0, 1.0)}
    result = evaluate(claims, study_run(runs=flipped), baseline=BASELINE, setup=STUDY).set_index("id")
    assert result.loc["dflash-task-ordering", "verdict"] == REPRODUCED
    assert result.loc["dflash-task-ordering", "sentence_reading"] == "both readings"


def test_the_control_compares_two_runs_as_the_study_did(claims: list[Claim]) -> None:
    """ "off vs off (two runs)": repeat 2 against repeat 1; a third repeat that differs is not part of the claim,
    a second that differs fails it."""
    control = {c.id: c for c in claims}["off-control-identical"]
    assert control.runs == 2
    same, other = sequence(900), sequence(900, 7)

    def judged(repeats: list[list[int]]) -> str:
        tokens = {(task, "off", r): ids for task in TASKS for r, ids in enumerate(repeats, start=1)}
        speeds = {(task, "off", 0.0): [126.0] * len(repeats) for task in TASKS}
        return check(control, make_tables(speeds, tokens=tokens))["verdict"]

    assert judged([same, same, other]) == REPRODUCED
    assert judged([same, other, same]) == NOT_REPRODUCED
    assert judged([same]) == NOT_MEASURED


def test_a_prompt_dependent_miss_says_so_in_the_opening(claims: list[Claim]) -> None:
    """A miss on a figure that follows from the exact prompt (acceptance, GSM8K answers) reads as prompt-dependent
    where the opening names it, alone or within its sentence; a miss on a multiplier does not."""
    drafts = {("todo-app", "mtp", t): (1000, 800) for t in (0.0, 1.0)}  # 80 % against 84 % +-2.5
    checks = {("gsm8k", "off", 0.0): [ALL_THREE] * 3}  # off solves all three: "the third wrong" not reproduced
    runs = {("file-rewrite", "mtp", t): [126.0 * 1.3 + d for d in (-0.3, 0.0, 0.3)] for t in (0.0, 1.0)}
    result = evaluate(claims, study_run(runs=runs, drafts=drafts, checks=checks), baseline=BASELINE, setup=STUDY)
    items = {n.text.split("**")[1]: n for n in opening_items(result) if "**" in n.text}
    prompt = "prompt-dependent: the study published no prompts, ours are our own"
    assert items["mtp-acceptance"].text.startswith("Not reproduced as one sentence: **mtp-acceptance**")
    assert f"mtp-todo-app-acceptance (not reproduced (size) at 0 and 1.0; {prompt})" in items["mtp-acceptance"].text
    assert items["gsm8k-off-t0-correct"].text.startswith(f"Not reproduced ({prompt}): **gsm8k-off-t0-correct**")
    assert items["results-multipliers"].tone == "bad" and prompt not in items["results-multipliers"].text
    assert_each_claim_once(list(items.values()), result)


# --------------------------------------------------------------------------------------------------------------
# Speedup and range claims
# --------------------------------------------------------------------------------------------------------------


def test_speedup_within_tolerance_is_reproduced() -> None:
    tables = make_tables({("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "ngram-mod", 0.0): [740, 760, 780]})
    row = check(speedup_claim(6.25), tables)
    assert row["verdict"] == REPRODUCED
    assert row["detail"] == "within 5.31x to 7.19x (published 6.25x, ±15%) by its 95 % interval"
    assert row["published_text"] == "6.25x" and row["measured_text"] == "6.03x"
    assert row["published"] == 6.25 and row["measured"] == {"file-rewrite": pytest.approx(2280 / 3 / 126)}
    assert row["cells"] == [cell_file("file-rewrite", c, 0.0, r) for c in ("ngram-mod", "off") for r in (1, 2, 3)]


def test_speedup_outside_tolerance_on_the_same_side_is_a_size_miss() -> None:
    tables = make_tables({("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "ngram-mod", 0.0): [240, 250, 260]})
    row = check(speedup_claim(6.25), tables)
    assert row["verdict"] == NOT_SIZE
    assert row["detail"] == "outside 5.31x to 7.19x (published 6.25x, ±15%): file-rewrite 1.98x [1.81x-2.18x]"
    below = make_tables({("essay", "off", 0.0): OFF, ("essay", "dflash", 0.0): [30, 31, 32]})
    assert check(speedup_claim(0.66, task="essay", condition="dflash"), below)["verdict"] == NOT_SIZE


def test_a_size_is_judged_by_its_interval_against_the_band() -> None:
    """The 95 % interval decides, by equivalence: inside the band, reproduced; wholly outside it, a size miss; across
    one of its edges, undecided (interval too wide), whether the mean lies inside or out. So 7.4x against 6.25x +-10 %
    with runs +-4 % cannot be told, and a precise 7.0x is a miss (the overlap rule read the first as reproduced).
    One run a side has no interval: inside the band, too few runs; far outside, still a size miss, with the too
    few runs beside it."""
    claim_ = speedup_claim(6.25, tolerance=0.10)  # band 5.62x to 6.88x

    def judged(multiplier: float, spread: float) -> pd.Series:
        runs = {("file-rewrite", "off", 0.0): 126.0, ("file-rewrite", "ngram-mod", 0.0): 126.0 * multiplier}
        return check(claim_, make_tables({k: [v * (1 + d * spread) for d in (-1, 0, 1)] for k, v in runs.items()}))

    assert judged(6.25, 0.04)["verdict"] == REPRODUCED  # 5.71x-6.84x: inside
    noisy_far = judged(7.4, 0.04)  # 6.76x-8.10x: across 6.88x
    assert noisy_far["verdict"] == TOO_WIDE
    assert noisy_far["detail"] == (
        "95 % interval across an edge of 5.62x to 6.88x (published 6.25x, ±10%): file-rewrite 7.40x [6.76x-8.10x]; "
        "more runs would tell which side"
    )
    assert judged(7.0, 0.001)["verdict"] == NOT_SIZE  # 6.98x-7.02x: outside
    assert judged(6.5, 0.04)["verdict"] == TOO_WIDE  # 5.94x-7.12x: the mean inside, the interval across 6.88x
    assert judged(6.5, 0.01)["verdict"] == REPRODUCED  # the same mean, tighter runs: inside
    assert judged(5.0, 0.01)["verdict"] == NOT_SIZE
    assert judged(6.35, 0.3)["verdict"] == TOO_WIDE  # an interval wider than the band lies across its edges
    one = {("file-rewrite", "off", 0.0): [126.0]}
    inside = check(claim_, make_tables({**one, ("file-rewrite", "ngram-mod", 0.0): [790.0]}))
    assert inside["verdict"] == TOO_FEW_RUNS and "no 95 % interval" in inside["detail"]
    far = check(claim_, make_tables({**one, ("file-rewrite", "ngram-mod", 0.0): [160.0]}))  # 1.27x, 5x short
    assert far["verdict"] == NOT_SIZE and "too few runs for a 95 % interval on file-rewrite" in far["detail"]
    sided = replace(claim_, side="faster")
    far_sided = check(sided, make_tables({**one, ("file-rewrite", "ngram-mod", 0.0): [160.0]}))
    assert far_sided["verdict"] == NOT_SIZE and "too few runs for the all-runs rule" in far_sided["detail"]


def test_speeds_and_rates_have_intervals_too() -> None:
    """tokens/s: the mean's interval over its runs; acceptance: the pooled rate's, from each run's own rate."""
    speed = claim(kind="tokens_per_s", task="essay", condition="off", temperature=0.0, published=126, tolerance=0.03)
    steady = make_tables({("essay", "off", 0.0): [125.0, 126.0, 127.0]})
    assert check(speed, steady)["verdict"] == REPRODUCED
    noisy = make_tables({("essay", "off", 0.0): [100.0, 126.0, 152.0]})
    assert check(speed, noisy)["verdict"] == TOO_WIDE
    rate = acceptance_claim(0.41)
    rows = make_rows({("essay", "off", 0.0): OFF, ("essay", "mtp", 0.0): [130.0, 131.0, 132.0]})
    for row, accepted in zip([r for r in rows if r["condition"] == "mtp"], (100, 400, 700), strict=True):
        row.update(draft_n=1000, draft_n_accepted=accepted, acceptance_rate=accepted / 1000)
    spread = summary_tables(frame_of(rows, BASELINE), BASELINE)
    judged = check(rate, spread)  # pooled 40 %, runs at 10 / 40 / 70 %: interval far wider than 31-51 %
    assert judged["measured_text"].startswith("40%") and judged["verdict"] == TOO_WIDE


def test_speedup_on_the_other_side_of_one_is_not_reproduced() -> None:
    tables = make_tables({("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "mtp", 0.0): [60, 62, 64]})
    row = check(speedup_claim(1.78, condition="mtp"), tables)
    assert row["verdict"] == NOT_DIRECTION
    assert "not on the published side of 1.0x" in row["detail"]


def test_published_one_has_no_side() -> None:
    tables = make_tables({("essay", "off", 0.0): OFF, ("essay", "ngram-mod", 0.0): [80, 82, 84]})
    row = check(speedup_claim(1.0, task="essay"), tables)
    assert row["verdict"] == NOT_SIZE  # no side to miss
    assert row["published_text"] == "1.00x"
    close = make_tables({("essay", "off", 0.0): OFF, ("essay", "ngram-mod", 0.0): [123, 124, 125]})
    assert check(speedup_claim(1.0, task="essay"), close)["verdict"] == REPRODUCED


def test_missing_rows_are_not_measured() -> None:
    tables = make_tables({("file-rewrite", "off", 0.0): OFF})
    row = check(speedup_claim(6.25), tables)
    assert row["verdict"] == NOT_MEASURED
    assert row["measured_text"] == "n/a" and row["cells"] == []
    assert row["measured"] == {"file-rewrite": None}
    assert check(speedup_claim(6.25), {})["verdict"] == NOT_MEASURED
    assert check(speedup_claim(6.25), {"summary": pd.DataFrame()})["verdict"] == NOT_MEASURED


@pytest.mark.parametrize("value", [math.nan, math.inf, None])
def test_nan_or_infinite_values_are_not_measured(value: float | None) -> None:
    summary = pd.DataFrame(
        [
            {
                "task": "file-rewrite",
                "condition": "ngram-mod",
                "temperature": 0.0,
                "median_tokens_per_s": 700.0,
                "speedup_median": value,
                "verdict": "faster",
                "cells": ["a.json", "b.json"],
            }
        ]
    )
    row = check(speedup_claim(6.25), {"summary": summary})
    assert row["verdict"] == NOT_MEASURED
    assert row["cells"] == ["a.json", "b.json"]


def test_range_claim_needs_every_task_in_the_range() -> None:
    base = {(task, "off", 0.0): OFF for task in ("file-rewrite", "todo-app", "gsm8k")}
    range_claim = speedup_claim([1.5, 1.8], task=["file-rewrite", "todo-app", "gsm8k"], condition="mtp")
    inside = make_tables(
        {**base, **{(t, "mtp", 0.0): [s] * 3 for t, s in (("file-rewrite", 224), ("todo-app", 200), ("gsm8k", 185))}}
    )
    row = check(range_claim, inside)
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "1.5-1.8x"
    assert row["measured_text"] == "file-rewrite 1.78x; todo-app 1.59x; gsm8k 1.47x"
    assert row["published"] == [1.5, 1.8] and list(row["measured"]) == ["file-rewrite", "todo-app", "gsm8k"]
    one_low = make_tables(
        {**base, **{(t, "mtp", 0.0): [s] * 3 for t, s in (("file-rewrite", 224), ("todo-app", 200), ("gsm8k", 140))}}
    )
    assert check(range_claim, one_low)["verdict"] == NOT_SIZE
    one_slower = make_tables(
        {**base, **{(t, "mtp", 0.0): [s] * 3 for t, s in (("file-rewrite", 224), ("todo-app", 200), ("gsm8k", 110))}}
    )
    assert check(range_claim, one_slower)["verdict"] == NOT_DIRECTION
    two_tasks = make_tables({**base, ("file-rewrite", "mtp", 0.0): [224] * 3, ("todo-app", "mtp", 0.0): [200] * 3})
    row = check(range_claim, two_tasks)
    assert row["verdict"] == NOT_MEASURED
    assert "gsm8k n/a" in row["measured_text"] and "gsm8k" in row["detail"]


def test_temperature_is_matched() -> None:
    tables = make_tables({("file-rewrite", "off", 1.0): OFF, ("file-rewrite", "ngram-mod", 1.0): [760] * 3})
    assert check(speedup_claim(6.25), tables)["verdict"] == NOT_MEASURED


# --------------------------------------------------------------------------------------------------------------
# Non-study setup
# --------------------------------------------------------------------------------------------------------------


def test_non_study_setup_is_never_compared_but_measured_is_filled() -> None:
    tables = make_tables({("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "ngram-mod", 0.0): [700, 760, 800]})
    claims = [
        speedup_claim(6.25),
        claim(
            id="other",
            kind="tokens_per_s",
            task="file-rewrite",
            condition="off",
            temperature=0.0,
            published=126,
            tolerance=0.15,
        ),
    ]
    result = evaluate(claims, tables, baseline=BASELINE, setup=OTHER_GPU)
    assert list(result["verdict"]) == [NOT_COMPARABLE, NOT_COMPARABLE]
    assert list(result["detail"]) == [NOT_COMPARABLE_DETAIL, NOT_COMPARABLE_DETAIL]
    assert NOT_COMPARABLE_DETAIL.startswith("absolute figure: ")
    assert "Comparable with the study?" in NOT_COMPARABLE_DETAIL  # the study's setup is shown there, fact by fact
    assert list(result["measured_text"]) == ["5.98x", "126.0 tok/s"]
    assert result["measured"][1] == {"file-rewrite": 126.0}
    assert result["cells"].map(bool).all()


def test_scope_off_the_study_setup_only_the_order_of_tasks_is_judged() -> None:
    """The study claims transfer for the order of tasks per method only. Off its setup an absolute figure is not
    compared; a verdict or an order of methods within a task is shown beside the study's as agrees / differs; the
    order of tasks per method is judged, naming the device."""
    essay = {
        ("essay", "off", 0.0): OFF,
        ("essay", "mtp", 0.0): [131] * 3,
        ("essay", "ngram-mod", 0.0): [124] * 3,
        ("essay", "dflash", 0.0): [83] * 3,
    }
    rewrite = {("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "dflash", 0.0): [420] * 3}
    speeds = {**essay, **rewrite}
    methods = claim(
        kind="ordering", over="conditions", task="essay", temperature=0.0, published=["mtp", "ngram-mod", "dflash"]
    )
    slower = claim(id="slower", kind="verdict", task="essay", condition="dflash", temperature=0.0, published="slower")
    tasks = claim(
        id="tasks",
        kind="ordering",
        over="tasks",
        condition="dflash",
        temperature=0.0,
        published=["file-rewrite", "essay"],
    )
    multiplier = claim(
        id="size", kind="speedup", task="essay", condition="dflash", temperature=0.0, published=0.66, tolerance=0.10
    )
    result = evaluate(
        [methods, slower, tasks, multiplier], make_tables(speeds), baseline=BASELINE, setup=OTHER_GPU
    ).set_index("id")
    assert list(result["scope"]) == ["relative", "relative", "transfers", "absolute"]
    assert list(result["verdict"]) == [AGREES, AGREES, REPRODUCED, NOT_COMPARABLE]
    assert result.loc["size", "measured_text"] == "0.66x"  # shown, not compared
    assert (
        result.loc["slower", "detail"] == f"verdict agrees with the study on {DEVICE}: 'slower' by the all-runs "
        "rule on every task ('reproduced' on the study's terms; not claimed to transfer)"
    )
    assert result.loc["tasks", "detail"] == (
        f"ordering reproduced on {DEVICE}: 1 of 1 pairs ordered as published with 95 % intervals apart"
    )
    # the same relations the other way round: differs, never "not reproduced"; the order of tasks is not reproduced
    upside_down = make_tables(
        {
            **speeds,
            ("essay", "dflash", 0.0): [140] * 3,
            ("essay", "mtp", 0.0): [100] * 3,
            ("file-rewrite", "dflash", 0.0): [120] * 3,
        }
    )
    rows = evaluate([methods, slower, tasks], upside_down, baseline=BASELINE, setup=OTHER_GPU).set_index("id")
    assert list(rows["verdict"]) == [DIFFERS, DIFFERS, CONTRADICTED]
    assert rows.loc["test-claim", "detail"].startswith(f"ordering differs from the study on {DEVICE}: ")
    assert rows.loc["tasks", "detail"].startswith(f"ordering contradicted on {DEVICE}: ")
    # on another model: nothing of the study's judged, the order of tasks asked of this model
    for tables, answer in ((make_tables(speeds), SAME_HERE), (upside_down, OTHER_HERE)):
        asked = evaluate([methods, slower, tasks, multiplier], tables, baseline=BASELINE, setup=OTHER_MODEL)
        assert list(asked["verdict"]) == [NOT_JUDGED, NOT_JUDGED, answer, NOT_JUDGED]
    # on the study's setup all three are judged as usual
    assert list(
        evaluate([methods, slower, tasks], upside_down, baseline=BASELINE, setup=replace(STUDY, device=DEVICE))[
            "verdict"
        ]
    ) == [CONTRADICTED, NOT_DIRECTION, CONTRADICTED]
    assert check(methods, make_tables({}), study=False)["verdict"] == NOT_MEASURED  # nothing to show, anywhere
    as_transfers = claim(
        kind="speedup",
        task="essay",
        condition="dflash",
        temperature=0.0,
        published=0.66,
        tolerance=0.10,
        scope="transfers",
    )
    row = check(as_transfers, make_tables(speeds), study=False)
    assert row["verdict"] == REPRODUCED and row["detail"].startswith(f"speedup reproduced on {DEVICE}: within")


def test_background_claims_are_listed_never_judged() -> None:
    quoted = claim(kind="background", published="1.50x", note="another project's figure")
    contention = claim(
        id="contention", kind="background", task="file-rewrite", condition="off", published="48-56 tok/s"
    )
    tables = make_tables({("file-rewrite", "off", 0.0): [50.0, 52.0, 56.0]})
    for comparable in (True, False):
        result = evaluate([quoted, contention], tables, baseline=BASELINE, setup=setup_of(comparable))
        assert list(result["verdict"]) == [BACKGROUND] * 2 and BACKGROUND == "background, not checked by a run"
        assert list(result["scope"]) == ["background"] * 2
        assert list(result["published_text"]) == ["1.50x", "48-56 tok/s"]
        assert list(result["measured"]) == [None, None] and list(result["cells"]) == [[], []]
        assert list(result["verdict_t1"]) == [None, None] and list(result["measured_t1_text"]) == ["", ""]


def test_variants_stand_in_for_their_condition() -> None:
    """dflash-n15 stands in for dflash in condition, conditions and tiers: one more row each, judged on its cells."""
    speeds = {
        ("todo-app", "off", 0.0): [100.0] * 3,
        ("todo-app", "dflash", 0.0): [227.0] * 3,
        ("todo-app", "dflash-n15", 0.0): [150.0] * 3,
        ("todo-app", "mtp", 0.0): [160.0] * 3,
        ("todo-app", "ngram-mod", 0.0): [97.0] * 3,
    }
    multiplier = claim(
        kind="speedup",
        task="todo-app",
        condition="dflash",
        temperature=0.0,
        published=2.27,
        tolerance=0.15,
        variants=["dflash-n15"],
    )
    best = claim(
        id="best",
        kind="ordering",
        over="conditions",
        task="todo-app",
        temperature=0.0,
        published=["dflash", ["mtp", "ngram-mod"]],
        variants=["dflash-n15"],
    )
    over_tasks = claim(
        id="tasks",
        kind="verdict",
        task="todo-app",
        conditions=["mtp", "dflash"],
        temperature=0.0,
        published="faster",
        variants=["dflash-n15"],
    )
    result = evaluate(
        [multiplier, best, over_tasks], make_tables(speeds), baseline=BASELINE, setup=replace(STUDY, device=DEVICE)
    )
    assert list(result["id"]) == [
        "test-claim",
        "test-claim@dflash-n15",
        "best",
        "best@dflash-n15",
        "tasks",
        "tasks@dflash-n15",
    ]
    assert list(result["variant_of"]) == [None, "test-claim", None, "best", None, "tasks"]
    assert list(result["verdict"]) == [REPRODUCED, NOT_SIZE, REPRODUCED, CONTRADICTED, REPRODUCED, REPRODUCED]
    rows = result.set_index("id")
    assert rows.loc["test-claim@dflash-n15", "measured_text"] == "1.50x"
    assert rows.loc["test-claim@dflash-n15", "published_text"] == "2.27x"
    assert all("/dflash-n15/" in c or "/off/" in c for c in rows.loc["test-claim@dflash-n15", "cells"])
    assert rows.loc["best@dflash-n15", "published"] == [["dflash-n15"], ["mtp", "ngram-mod"]]
    assert rows.loc["best@dflash-n15", "published_text"] == "dflash-n15 > {mtp, ngram-mod}"
    assert rows.loc["best@dflash-n15", "detail"] == (
        "1 of 2 pairs ordered as published with 95 % intervals apart; in the other order, intervals apart: "
        "dflash-n15 vs mtp"
    )
    assert rows.loc["tasks@dflash-n15", "measured_text"] == "mtp faster (1.60x); dflash-n15 faster (1.50x)"
    identity = claim(
        id="same", kind="identity", task="essay", condition="dflash", published="not identical", variants=["dflash-n15"]
    )
    tables = identity_tables({"essay": DFLASH_TOKENS["essay"]}, {"essay": OFF_TOKENS["essay"]})
    result = evaluate([identity], tables, baseline=BASELINE, setup=replace(STUDY, device=DEVICE))
    assert list(result["verdict"]) == [REPRODUCED, NOT_MEASURED]  # dflash-n15 not run


def unstated_speedup(published: float, side: str | None = None, **where: Any) -> Claim:
    fields = {"task": "file-rewrite", "condition": "ngram-mod", **where}
    return claim(
        kind="speedup",
        temperature="unstated",
        published=published,
        tolerance=0.10,
        **({"side": side} if side else {}),
        **fields,
    )


def test_a_claim_without_a_stated_temperature_is_judged_under_both_readings() -> None:
    """The text gives no temperature for the six multipliers (or the explanation's figures): each is judged on the
    temperature-0 cells and on the temperature-1.0 cells, and the row says which reading the run supports. A run
    that matches only the 1.0 reading says so."""
    t0 = {("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "ngram-mod", 0.0): [300, 310, 320]}
    t1 = {("file-rewrite", "off", 1.0): OFF, ("file-rewrite", "ngram-mod", 1.0): [780, 790, 800]}
    row = check(unstated_speedup(6.25), make_tables({**t0, **t1}))
    assert (row["verdict"], row["verdict_t1"], row["reading"]) == (NOT_SIZE, REPRODUCED, "temperature 1.0 only")
    assert (row["measured_text"], row["measured_t1_text"]) == ("2.46x", "6.27x")
    assert row["temperature"] is None  # not stated
    assert cell_file("file-rewrite", "ngram-mod", 1.0, 3) in row["cells"]
    assert cell_file("file-rewrite", "ngram-mod", 0.0, 3) in row["cells"]
    swapped = {**{(t, c, 0.0): v for (t, c, _), v in t1.items()}, **{(t, c, 1.0): v for (t, c, _), v in t0.items()}}
    assert check(unstated_speedup(6.25), make_tables(swapped))["reading"] == "temperature 0 only"
    both = {**t1, **{(t, c, 0.0): v for (t, c, _), v in t1.items()}}
    assert check(unstated_speedup(6.25), make_tables(both))["reading"] == "both readings"
    # a miss at 0 with 1.0 not measured: the 1.0 reading is open, so the run cannot tell (never "neither reading")
    assert check(unstated_speedup(6.25), make_tables(t0))["reading"] == CANNOT_TELL
    t1_miss = {(t, c, 1.0): [v * 0.8 for v in values] if c != "off" else values for (t, c, _), values in t0.items()}
    assert check(unstated_speedup(6.25), make_tables({**t0, **t1_miss}))["reading"] == "neither reading"
    assert check(unstated_speedup(6.25), make_tables({}))["reading"] == NOT_MEASURED
    row = check(unstated_speedup(6.25), make_tables({**t0, **t1}), study=False)
    assert (row["verdict"], row["verdict_t1"], row["reading"]) == (NOT_COMPARABLE, NOT_COMPARABLE, NOT_COMPARABLE)
    assert row["measured_t1_text"] == "6.27x"  # shown, not compared
    # a stated temperature is judged there only
    stated = check(speedup_claim(6.25), make_tables({**t0, **t1}))
    assert (stated["verdict"], stated["verdict_t1"], stated["reading"], stated["temperature"]) == (
        NOT_SIZE,
        None,
        None,
        0.0,
    )
    identity = claim(kind="identity", task="file-rewrite", condition="ngram-mod", published="identical")
    assert check(identity, make_tables({**t0, **t1}))["verdict_t1"] is None
    shape = claim(
        kind="ordering",
        tasks=TASKS,
        condition="mtp",
        temperature=1.0,
        versus_temperature=0.0,
        published="same ordering",
    )
    row = check(shape, make_tables(t1))
    assert (row["verdict_t1"], row["measured_t1_text"], row["reading"]) == (None, "", None)
    with pytest.raises(ClaimError, match="key 'temperature'"):
        parse_claims(
            [
                {
                    "id": "x",
                    "text": "t",
                    "kind": "ordering",
                    "tasks": TASKS,
                    "condition": "mtp",
                    "temperature": "unstated",
                    "versus_temperature": 0.0,
                    "published": "same ordering",
                }
            ],
            CONFIG,
        )


def test_the_study_figures_read_at_two_temperatures() -> None:
    """The study's own claims, on a run whose temperature-1.0 cells match the results section: MTP's 1.04x on the
    essay, slower than off at temperature 0 here, is supported at 1.0 only. The essay's DFlash 0.66x (results) and
    0.69x (explanation) are 4.5 % apart, inside each other's band: a run measuring them at the two temperatures
    supports both readings of both, and neither is read as the study disagreeing with itself."""
    by_id = {c.id: c for c in load_claims(CLAIMS_FILE, CONFIG)}
    speeds = {("essay", "off", t): [125.0, 126.0, 127.0] for t in (0.0, 1.0)}
    for condition, at_zero, at_one in (("dflash", 0.69, 0.66), ("mtp", 0.97, 1.04)):
        for temperature, value in ((0.0, at_zero), (1.0, at_one)):
            speeds[("essay", condition, temperature)] = [126 * value + d for d in (-0.3, 0.0, 0.3)]
    ids = ["dflash-essay-speedup", "dflash-essay-speedup-why", "mtp-essay-speedup"]
    result = evaluate(
        [by_id[i] for i in ids], make_tables(speeds), baseline=BASELINE, setup=replace(STUDY, device=DEVICE)
    ).set_index("id")
    assert list(result.loc[ids, "reading"]) == ["both readings", "both readings", "temperature 1.0 only"]
    assert result.loc["mtp-essay-speedup", "detail"].startswith("not 'faster' by the all-runs rule (essay slower)")
    text = (REPO / "config" / "claims.yaml").read_text()
    assert "in its explanation (dflash-essay-speedup-why); both" not in text and "differ by 4.5%" not in text


def test_predictions_file_of_orderings_without_source() -> None:
    """The study's prediction, written down before measuring: orders of tasks in the same format, no source, about
    the study's model (``about: study``); no order of methods (the study predicted none)."""
    path = REPO / "config" / "predictions.yaml"
    predictions = load_claims(path, CONFIG)
    assert about_the_study(path)
    assert {c.kind for c in predictions} == {"ordering"} and {c.scope for c in predictions} == {"transfers"}
    assert all(c.source == "" for c in predictions)
    by_id = {c.id: c for c in predictions}
    assert by_id["predicted-file-rewrite-above-essay"].published == [["file-rewrite"], ["essay"]]
    result = evaluate(predictions, study_run(), baseline=BASELINE, setup=OTHER_GPU)
    base = result[result["variant_of"].isna()]
    assert all(DEVICE in d for d in base["detail"])
    # the orders of tasks are judged off the study's setup
    assert dict(zip(base["id"], base["verdict"], strict=True)) == {"predicted-file-rewrite-above-essay": REPRODUCED}
    assert len(result) == 2


def test_predictions_are_judged_on_the_model_they_name(tmp_path: Path) -> None:
    """The study's predictions are about its model: on another model they are asked as questions, like its own
    orders of tasks, never judged as this model's; a user's file (no ``about``) is about whatever this run measured,
    on its own setup: judged in full, nothing "not comparable" with the study's. The demo configs carry none of the
    study's."""
    study_file = REPO / "config" / "predictions.yaml"
    own_file = tmp_path / "mine.yaml"
    own_file.write_text(yaml.safe_dump({"claims": [dict(VALID, id="mine", temperature=0.0)]}))
    assert about_the_study(study_file) and not about_the_study(own_file)
    another_model = Setup(comparable=False, same_model=False, device=DEVICE)
    assert predictions_setup(study_file, another_model) == another_model
    assert predictions_setup(own_file, another_model) == replace(another_model, same_model=True, comparable=True)
    own = evaluate(
        load_claims(own_file, CONFIG), study_run(), baseline=BASELINE, setup=predictions_setup(own_file, another_model)
    )
    assert own.verdict.iloc[0] not in (NOT_COMPARABLE, NOT_JUDGED, AGREES, DIFFERS)
    studys = evaluate(load_claims(study_file, CONFIG), study_run(), baseline=BASELINE, setup=another_model)
    assert set(studys["verdict"]) <= {SAME_HERE, OTHER_HERE, NOT_SEPARATED, TOO_FEW_RUNS, NOT_MEASURED}
    for demo in ("tiny.yaml", "smollm2.yaml"):
        merged = load_config([REPO / "config" / "config.yaml", REPO / "config" / demo])
        assert merged["predictions"] is None, demo
    load_demo = load_config([REPO / "config" / name for name in ("config.yaml", "tiny.yaml", "tiny-load.yaml")])
    assert not about_the_study(REPO / load_demo["predictions"])  # its own predictions about load


# --------------------------------------------------------------------------------------------------------------
# tokens_per_s and acceptance
# --------------------------------------------------------------------------------------------------------------


def test_tokens_per_s_has_no_direction() -> None:
    every = claim(kind="tokens_per_s", tasks=TASKS, condition="off", temperature=0.0, published=126, tolerance=0.15)
    tables = make_tables({(task, "off", 0.0): OFF for task in TASKS})
    assert check(every, tables)["verdict"] == REPRODUCED
    fast = make_tables({**{(task, "off", 0.0): OFF for task in TASKS[:3]}, ("essay", "off", 0.0): [300] * 3})
    row = check(every, fast)
    assert row["verdict"] == NOT_SIZE  # no pivot: only a size to miss
    assert "essay 300.0 tok/s" in row["detail"]


def acceptance_claim(published: Any, tolerance: float = 0.10, **extra: Any) -> Claim:
    return claim(
        kind="acceptance",
        task="essay",
        condition="mtp",
        temperature=0.0,
        published=published,
        tolerance=tolerance,
        **extra,
    )


@pytest.mark.parametrize(("accepted", "verdict"), [(130, REPRODUCED), (60, NOT_SIZE), (260, NOT_DIRECTION)])
def test_acceptance_uses_an_absolute_tolerance_and_the_50_percent_side(accepted: int, verdict: str) -> None:
    tables = make_tables(
        {("essay", "off", 0.0): OFF, ("essay", "mtp", 0.0): [130] * 3}, drafts={("essay", "mtp", 0.0): (300, accepted)}
    )
    row = check(acceptance_claim(0.41), tables)
    assert row["verdict"] == verdict
    assert row["published_text"] == "41%"
    assert row["measured_text"].startswith(f"{accepted / 300:.0%} ({3 * accepted} of 900 drafted tokens accepted")
    assert row["cells"] == [cell_file("essay", "mtp", 0.0, r) for r in (1, 2, 3)]


def test_acceptance_nothing_drafted_is_not_measured() -> None:
    tables = make_tables({("essay", "off", 0.0): OFF, ("essay", "mtp", 0.0): [130] * 3})
    assert check(acceptance_claim(0.41), tables)["verdict"] == NOT_MEASURED


def test_accepted_per_step_range() -> None:
    per_step = claim(
        kind="acceptance",
        metric="accepted_per_step",
        tasks=["todo-app", "gsm8k"],
        condition="ngram-mod",
        temperature=0.0,
        published=[0, 4],
        tolerance=0.5,
    )
    low = make_tables(
        {(t, "ngram-mod", 0.0): [120] * 3 for t in ("todo-app", "gsm8k")},
        drafts={(t, "ngram-mod", 0.0): (100, 50) for t in ("todo-app", "gsm8k")},
    )
    assert check(per_step, low)["verdict"] == REPRODUCED
    high = make_tables(
        {(t, "ngram-mod", 0.0): [120] * 3 for t in ("todo-app", "gsm8k")},
        drafts={(t, "ngram-mod", 0.0): (400, 380) for t in ("todo-app", "gsm8k")},
    )
    assert check(per_step, high)["verdict"] == NOT_SIZE


def drafted_tables(per_run: list[int], accepted: list[int] | None = None) -> dict[str, pd.DataFrame]:
    """n-gram on the file rewrite with these drafted (and accepted, default all) tokens per run."""
    rows = make_rows({("file-rewrite", "off", 0.0): OFF, ("file-rewrite", "ngram-mod", 0.0): [700.0] * len(per_run)})
    for row, drafted, took in zip(rows[3:], per_run, accepted or per_run, strict=True):
        row.update(draft_n=drafted, draft_n_accepted=took, acceptance_rate=took / drafted)
    return summary_tables(frame_of(rows, BASELINE), BASELINE)


def test_drafted_tokens_per_run() -> None:
    """'984 tokens drafted in one go': every run's drafted count within the relative tolerance."""
    drafted = claim(
        kind="acceptance",
        metric="draft_n",
        task="file-rewrite",
        condition="ngram-mod",
        temperature=0.0,
        published=984,
        tolerance=0.10,
    )
    row = check(drafted, drafted_tables([984, 990, 1000]))
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "984 tokens drafted per run"
    assert row["measured_text"] == "r1 984 tokens; r2 990 tokens; r3 1000 tokens"
    assert row["measured"] == {"r1": 984.0, "r2": 990.0, "r3": 1000.0}
    assert row["cells"] == [cell_file("file-rewrite", "ngram-mod", 0.0, r) for r in (1, 2, 3)]
    assert "886 tokens to 1082 tokens" in row["detail"]
    assert check(drafted, drafted_tables([890, 1080, 984]))["verdict"] == REPRODUCED
    row = check(drafted, drafted_tables([984, 600, 984]))
    assert row["verdict"] == NOT_SIZE  # a count has no direction
    assert "outside" in row["detail"] and "r2 600 tokens" in row["detail"]
    assert check(drafted, drafted_tables([984, 984, 1100]))["verdict"] == NOT_SIZE
    several = claim(
        kind="acceptance",
        metric="draft_n",
        tasks=["file-rewrite", "essay"],
        condition="ngram-mod",
        temperature=0.0,
        published=984,
        tolerance=0.10,
    )
    row = check(several, drafted_tables([984, 984]))
    assert row["verdict"] == NOT_MEASURED
    assert row["measured"] == {"file-rewrite r1": 984.0, "file-rewrite r2": 984.0, "essay": None}


def test_all_accepted_means_at_least_99_percent() -> None:
    all_accepted = claim(
        kind="acceptance",
        task="file-rewrite",
        condition="ngram-mod",
        temperature=0.0,
        published=[0.99, 1.0],
        tolerance=0.0,
    )
    row = check(all_accepted, drafted_tables([984] * 3))
    assert row["verdict"] == REPRODUCED and row["published_text"] == "99-100%"
    assert row["measured_text"].startswith("100% (2952 of 2952 drafted tokens accepted, 984 drafted per run")
    assert check(all_accepted, drafted_tables([1000] * 3, [990] * 3))["verdict"] == REPRODUCED
    row = check(all_accepted, drafted_tables([1000] * 3, [980] * 3))
    assert row["verdict"] == NOT_SIZE and row["detail"].startswith("outside 99% to 100%")
    row = check(all_accepted, drafted_tables([1000] * 3, [300] * 3))
    assert row["verdict"] == NOT_DIRECTION and "not on the published side of 50%" in row["detail"]


# --------------------------------------------------------------------------------------------------------------
# Verdict claims (the study's all-runs rule)
# --------------------------------------------------------------------------------------------------------------


def verdict_claim(published: str, tasks: list[str], condition: str = "ngram-mod") -> Claim:
    return claim(kind="verdict", tasks=tasks, condition=condition, temperature=0.0, published=published)


def test_verdict_slower_in_all_runs() -> None:
    both = ["todo-app", "gsm8k"]
    base = {(t, "off", 0.0): OFF for t in both}
    slower = make_tables({**base, **{(t, "ngram-mod", 0.0): [120, 121, 122] for t in both}})
    row = check(verdict_claim("slower", both), slower)
    assert row["verdict"] == REPRODUCED
    assert row["measured_text"] == "todo-app slower (0.96x); gsm8k slower (0.96x)"
    mixed = make_tables(
        {**base, ("todo-app", "ngram-mod", 0.0): [120, 121, 122], ("gsm8k", "ngram-mod", 0.0): [120, 124, 126.5]}
    )
    row = check(verdict_claim("slower", both), mixed)
    assert row["verdict"] == NOT_DIRECTION  # below 1.0x on average, but not slower in every run
    assert row["detail"] == "not 'slower' by the all-runs rule on gsm8k none"
    faster = make_tables(
        {**base, ("todo-app", "ngram-mod", 0.0): [120, 121, 122], ("gsm8k", "ngram-mod", 0.0): [130, 131, 132]}
    )
    assert check(verdict_claim("slower", both), faster)["verdict"] == NOT_DIRECTION


def test_verdict_slower_on_no_task() -> None:
    base = {(t, "off", 0.0): OFF for t in TASKS}
    good = make_tables(
        {**base, **{(t, "mtp", 0.0): [200] * 3 for t in TASKS[:3]}, ("essay", "mtp", 0.0): [124, 130, 131]}
    )
    assert check(verdict_claim("not slower", TASKS, "mtp"), good)["verdict"] == REPRODUCED
    bad = make_tables({**base, **{(t, "mtp", 0.0): [200] * 3 for t in TASKS[:3]}, ("essay", "mtp", 0.0): [100] * 3})
    row = check(verdict_claim("not slower", TASKS, "mtp"), bad)
    assert row["verdict"] == NOT_DIRECTION
    assert "essay" in row["detail"]


def word_tables(condition: str, tasks: list[str], off: list[float], runs: list[float]) -> dict[str, pd.DataFrame]:
    """The condition's runs (tok/s) against off's on each task, at both temperatures."""
    speeds = {}
    for task in tasks:
        for t in (0.0, 1.0):
            speeds[(task, "off", t)] = off
            speeds[(task, condition, t)] = runs
    return make_tables(speeds)


def test_slightly_and_much_slower_are_sizes(claims: list[Claim]) -> None:
    """ "Slightly slower" (n-gram on new code and math, and on the essay) is the all-runs rule's 'slower' at
    0.90-1.00x, "much slower" (DFlash on the essay) at most 0.76x, each task's 95 % interval inside its band: n-gram
    at 0.5x on new code and math is slower, but not slightly (a size miss), and DFlash at 0.85x is slower, but not
    much. The edge at 1.0x is the side's, which the all-runs rule decides; an interval across the other edge
    cannot tell."""
    by_id = {c.id: c for c in claims}
    slightly, much = by_id["ngram-todo-app-gsm8k-verdict"], by_id["dflash-essay-verdict"]
    assert slightly.size == by_id["ngram-essay-verdict"].size == (0.90, 1.0) and much.size == (0, 0.76)
    quiet = [125.9, 126.0, 126.1]
    both = ["todo-app", "gsm8k"]

    def judged(one: Claim, multiplier: float, spread: float = 0.001, off: list[float] = quiet) -> pd.Series:
        runs = [126.0 * multiplier * (1 + d * spread) for d in (-1, 0, 1)]
        return check(one, word_tables(one.condition or "", list(one.tasks), off, runs))

    row = judged(slightly, 0.95)
    assert (row["verdict"], row["verdict_t1"], row["published_text"]) == (REPRODUCED, REPRODUCED, "slower, 0.90-1.00x")
    assert row["detail"] == (
        "'slower' by the all-runs rule on every task, and within the word's size band (0.90-1.00x) by its 95 % interval"
    )
    half = judged(slightly, 0.5)
    assert (half["verdict"], half["verdict_t1"]) == (NOT_SIZE, NOT_SIZE)
    assert half["measured_text"] == "todo-app slower (0.50x); gsm8k slower (0.50x)"
    assert half["detail"].startswith(
        "'slower' by the all-runs rule on every task, but outside the word's size band (0.90-1.00x): todo-app 0.50x ["
    )
    assert judged(slightly, 1.05)["verdict"] == NOT_DIRECTION
    near_one = word_tables("ngram-mod", both, [125.5, 126.0, 126.5], [124.9, 125.0, 125.1])  # slower in every run
    summary = near_one["summary"][near_one["summary"]["condition"] == "ngram-mod"]
    assert (summary["speedup_ci_low"] < 1.0).all() and (summary["speedup_ci_high"] > 1.0).all()
    assert check(slightly, near_one)["verdict"] == REPRODUCED  # past 1.0x: the side is the rule's, not the interval's
    edge = judged(slightly, 0.91, spread=0.02)  # about 0.87x-0.96x: across 0.90x
    assert edge["verdict"] == TOO_WIDE and "across an edge of the word's size band (0.90-1.00x)" in edge["detail"]
    one_run = check(slightly, word_tables("ngram-mod", both, [126.0], [63.0]))
    assert one_run["verdict"] == NOT_SIZE and "too few runs for the all-runs rule" in one_run["detail"]
    assert check(slightly, word_tables("ngram-mod", both, [126.0], [120.0]))["verdict"] == TOO_FEW_RUNS
    row = judged(much, 0.66)
    assert (row["verdict"], row["published_text"]) == (REPRODUCED, "slower, at most 0.76x")
    assert judged(much, 0.85)["verdict"] == NOT_SIZE  # slower, not much
    assert judged(much, 0.75, spread=0.03)["verdict"] == TOO_WIDE
    # relative: on another setup beside the study's, 0.5x differs from "slightly slower"
    for multiplier, shown in ((0.95, AGREES), (0.5, DIFFERS)):
        tables = word_tables("ngram-mod", both, quiet, [126.0 * multiplier + d for d in (-0.1, 0.0, 0.1)])
        assert check(slightly, tables, study=False)["verdict"] == shown


def test_slightly_slower_fails_on_a_study_shaped_run(claims: list[Claim]) -> None:
    """The study's run with n-gram at 0.5x on new code and math: slower in every run, as the study says, but not
    "slightly"; its sentence reads neither reading. On an H200 the same run differs from the study."""
    half = {(task, "ngram-mod", t): [62.9, 63.0, 63.1] for task in ("todo-app", "gsm8k") for t in (0.0, 1.0)}
    here = evaluate(claims, study_run(runs=half), baseline=BASELINE, setup=STUDY).set_index("id")
    row = here.loc["ngram-todo-app-gsm8k-verdict"]
    assert (row["verdict"], row["verdict_t1"], row["reading"]) == (NOT_SIZE, NOT_SIZE, NEITHER_READING)
    assert row["sentence_reading"] == NEITHER_READING
    as_published = evaluate(claims, study_run(), baseline=BASELINE, setup=STUDY).set_index("id")
    assert as_published.loc["ngram-todo-app-gsm8k-verdict", "reading"] == "both readings"
    elsewhere = evaluate(claims, study_run(runs=half), baseline=BASELINE, setup=H200).set_index("id")
    assert (elsewhere.loc["ngram-todo-app-gsm8k-verdict", ["verdict", "verdict_t1"]] == DIFFERS).all()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"size": [1.0, 0.9]}, "low 1.0 is above high 0.9"),
        ({"size": [0.9, 1.1]}, "the band [0.9, 1.1] must lie on the side of 1.0x that 'slower' names"),
        ({"size": [1.0, 1.5]}, "the band [1.0, 1.5] must lie on the side of 1.0x that 'slower' names"),
        ({"published": "faster"}, "the band [0.9, 1.0] must lie on the side of 1.0x that 'faster' names"),
        ({"published": "not faster"}, "a size is a 'faster' or 'slower' verdict's, on one condition"),
        ({"condition": None, "conditions": ["mtp", "dflash"]}, "a size is a 'faster' or 'slower' verdict's"),
    ],
)
def test_a_size_lies_on_its_words_side_of_one(change: dict[str, Any], problem: str) -> None:
    valid = {"id": "w", "text": "t", "kind": "verdict", "task": "essay", "condition": "ngram-mod", "temperature": 0.0}
    valid |= {"published": "slower", "size": [0.9, 1.0]}
    assert parse_claims([valid], CONFIG)[0].size == (0.9, 1.0)
    assert parse_claims([{**valid, "size": [1.0, 2.0], "published": "faster"}], CONFIG)[0].size == (1.0, 2.0)
    with pytest.raises(ClaimError, match=rf"claim 'w': key 'size': {re.escape(problem)}"):
        parse_claims([{k: v for k, v in {**valid, **change}.items() if v is not None}], CONFIG)


def test_identity_with_off_is_judged_beside_the_study_on_any_setup(claims: list[Claim]) -> None:
    """n-gram and MTP giving off's output exactly is what verification is meant to give, not a figure of the A100:
    on an H200, MTP's temperature-0 output that differs from off's on the essay reads "differs" beside the study's,
    never "not comparable"; n-gram's, the same as off's, "agrees". Which tasks DFlash's output differs on (and by
    how many tokens) follows from the exact prompt and stays an absolute figure."""
    by_id = {c.id: c for c in claims}
    assert by_id["ngram-identical-to-off"].scope == by_id["mtp-identical-to-off"].scope == "relative"
    assert by_id["dflash-differs-on-new-code-math-essay"].scope == by_id["dflash-token-counts"].scope == "absolute"
    other = {("essay", "mtp", r): sequence(611, 3) for r in (1, 2, 3)}
    result = evaluate(claims, study_run(tokens=other), baseline=BASELINE, setup=H200).set_index("id")
    mtp = result.loc["mtp-identical-to-off"]
    assert mtp["verdict"] == DIFFERS
    assert mtp["detail"].startswith("identity differs from the study on NVIDIA H200: differs on essay")
    assert result.loc["ngram-identical-to-off", "verdict"] == AGREES
    assert result.loc["dflash-differs-on-new-code-math-essay", "verdict"] == NOT_COMPARABLE
    as_published = evaluate(claims, study_run(), baseline=BASELINE, setup=H200).set_index("id")
    assert set(as_published.loc[["ngram-identical-to-off", "mtp-identical-to-off"], "verdict"]) == {AGREES}
    on_the_a100 = evaluate(claims, study_run(tokens=other), baseline=BASELINE, setup=STUDY).set_index("id")
    assert on_the_a100.loc["mtp-identical-to-off", "verdict"] == NOT_REPRODUCED


def test_verdict_over_conditions_on_one_task() -> None:
    """'On the file rewrite every method is faster': one verdict per condition."""
    every = claim(
        kind="verdict",
        task="file-rewrite",
        conditions=["ngram-mod", "mtp", "dflash"],
        temperature=0.0,
        published="faster",
    )
    speeds = {
        ("file-rewrite", "off", 0.0): OFF,
        ("file-rewrite", "ngram-mod", 0.0): [780, 790, 800],
        ("file-rewrite", "mtp", 0.0): [222, 224, 226],
        ("file-rewrite", "dflash", 0.0): [420, 422, 424],
    }
    row = check(every, make_tables(speeds))
    assert row["verdict"] == REPRODUCED
    assert row["detail"] == "'faster' by the all-runs rule on every condition"
    assert row["measured_text"] == "ngram-mod faster (6.27x); mtp faster (1.78x); dflash faster (3.35x)"
    assert row["measured"] == {"ngram-mod": "faster", "mtp": "faster", "dflash": "faster"}
    mixed = make_tables({**speeds, ("file-rewrite", "mtp", 0.0): [120, 130, 140]})
    row = check(every, mixed)
    assert row["verdict"] == NOT_DIRECTION and row["detail"] == "not 'faster' by the all-runs rule on mtp none"
    slower = make_tables({**speeds, ("file-rewrite", "mtp", 0.0): [110, 115, 120]})
    row = check(every, slower)
    assert row["verdict"] == NOT_DIRECTION and row["detail"] == "not 'faster' by the all-runs rule on mtp slower"
    no_dflash = make_tables({k: v for k, v in speeds.items() if k[1] != "dflash"})
    row = check(every, no_dflash)
    assert row["verdict"] == NOT_MEASURED and "dflash" in row["detail"]
    both = claim(
        kind="verdict",
        tasks=["file-rewrite", "essay"],
        conditions=["mtp", "dflash"],
        temperature=0.0,
        published="not slower",
    )
    essay = {("essay", "off", 0.0): OFF, ("essay", "mtp", 0.0): [131] * 3, ("essay", "dflash", 0.0): [83] * 3}
    row = check(both, make_tables({**speeds, **essay}))
    assert row["verdict"] == NOT_DIRECTION and row["detail"] == "'slower' by the all-runs rule on dflash essay"
    assert list(row["measured"]) == ["mtp file-rewrite", "mtp essay", "dflash file-rewrite", "dflash essay"]


def test_essay_order_of_methods() -> None:
    """'On the essay MTP is faster, n-gram slightly slower, DFlash much slower, in that order.'"""
    order = claim(
        kind="ordering", over="conditions", task="essay", temperature=0.0, published=["mtp", "ngram-mod", "dflash"]
    )
    speeds = {
        ("essay", "off", 0.0): OFF,
        ("essay", "mtp", 0.0): [131] * 3,
        ("essay", "ngram-mod", 0.0): [124] * 3,
        ("essay", "dflash", 0.0): [83] * 3,
    }
    row = check(order, make_tables(speeds))
    assert row["verdict"] == REPRODUCED and row["published_text"] == "mtp > ngram-mod > dflash"
    assert row["measured_text"] == "mtp 1.04x > ngram-mod 0.98x > dflash 0.66x"
    close = make_tables({**speeds, ("essay", "ngram-mod", 0.0): [132] * 3})  # 1.05x vs 1.04x: off's spread decides
    row = check(order, close)
    assert row["verdict"] == NOT_SEPARATED and "not separated (intervals overlap): mtp vs ngram-mod" in row["detail"]
    swapped = make_tables({**speeds, ("essay", "ngram-mod", 0.0): [150] * 3})
    row = check(order, swapped)
    assert row["verdict"] == CONTRADICTED and row["detail"] == (
        "2 of 3 pairs ordered as published with 95 % intervals apart; in the other order, intervals apart: "
        "mtp vs ngram-mod"
    )
    upside_down = make_tables({**speeds, ("essay", "dflash", 0.0): [140] * 3, ("essay", "mtp", 0.0): [100] * 3})
    assert check(order, upside_down)["verdict"] == CONTRADICTED


# --------------------------------------------------------------------------------------------------------------
# Identity claims
# --------------------------------------------------------------------------------------------------------------


def identity_tables(
    condition_tokens: dict[str, list[list[int]]], off_tokens: dict[str, list[list[int]]], condition: str = "dflash"
) -> dict[str, pd.DataFrame]:
    tokens: dict[tuple[str, str, int], list[int]] = {}
    speeds: dict[tuple[str, str, float], list[float]] = {}
    for task, repeats in off_tokens.items():
        tokens.update({(task, "off", r): seq for r, seq in enumerate(repeats, start=1)})
        speeds[(task, "off", 0.0)] = [126.0] * len(repeats)
    for task, repeats in condition_tokens.items():
        tokens.update({(task, condition, r): seq for r, seq in enumerate(repeats, start=1)})
        speeds[(task, condition, 0.0)] = [100.0] * len(repeats)
    return make_tables(speeds, tokens=tokens)


OFF_TOKENS = {
    "file-rewrite": [sequence(900)] * 3,
    "todo-app": [sequence(898)] * 3,
    "gsm8k": [sequence(894)] * 3,
    "essay": [sequence(611)] * 3,
}
DFLASH_TOKENS = {
    "file-rewrite": [sequence(900)] * 3,
    "todo-app": [sequence(829, 5)] * 3,
    "gsm8k": [sequence(627, 5)] * 3,
    "essay": [sequence(681, 5)] * 3,
}


def test_identity_identical_and_control() -> None:
    tables = identity_tables({t: OFF_TOKENS[t] for t in TASKS}, OFF_TOKENS, condition="mtp")
    identical = claim(kind="identity", tasks=TASKS, condition="mtp", published="identical")
    row = check(identical, tables)
    assert row["verdict"] == REPRODUCED
    assert row["measured_text"].startswith("file-rewrite identical 3/3")
    assert cell_file("essay", "off", 0.0, 3) in row["cells"]
    assert row["measured"]["essay"] == {"compared": 3, "identical": 3, "missing": 0, "token_counts": []}
    control = claim(kind="identity", tasks=TASKS, condition=BASELINE, published="identical")
    row = check(control, tables)
    assert row["verdict"] == REPRODUCED
    assert row["measured_text"].startswith("file-rewrite identical 2/2")
    assert all("/off/" in c for c in row["cells"])
    wobbly = identity_tables({}, {**OFF_TOKENS, "essay": [sequence(611), sequence(611), sequence(611, 1)]})
    assert check(control, wobbly)["verdict"] == NOT_REPRODUCED


def test_identity_not_identical_on_three_of_four() -> None:
    three = claim(kind="identity", tasks=TASKS, condition="dflash", published=3)
    row = check(three, identity_tables(DFLASH_TOKENS, OFF_TOKENS))
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "not identical on 3 of 4 tasks"
    assert "todo-app differs in 3/3 (829 vs 898; 829 vs 898; 829 vs 898)" in row["measured_text"]
    assert row["measured"]["todo-app"]["token_counts"] == [[829, 898]] * 3
    two = identity_tables({**DFLASH_TOKENS, "essay": OFF_TOKENS["essay"]}, OFF_TOKENS)
    assert check(three, two)["verdict"] == NOT_REPRODUCED
    none = identity_tables({t: OFF_TOKENS[t] for t in TASKS}, OFF_TOKENS)
    assert check(three, none)["verdict"] == NOT_REPRODUCED
    missing_task = identity_tables({t: DFLASH_TOKENS[t] for t in TASKS[:3]}, OFF_TOKENS)
    assert check(three, missing_task)["verdict"] == NOT_MEASURED


def test_identity_token_counts() -> None:
    counts = claim(
        kind="identity",
        tasks=["todo-app", "gsm8k", "essay"],
        condition="dflash",
        published="not identical",
        tolerance=0.1,
        token_counts={"todo-app": [829, 898], "gsm8k": [627, 894], "essay": [681, 611]},
    )
    row = check(counts, identity_tables(DFLASH_TOKENS, OFF_TOKENS))
    assert row["verdict"] == REPRODUCED
    other_lengths = identity_tables({**DFLASH_TOKENS, "gsm8k": [sequence(400, 5)] * 3}, OFF_TOKENS)
    row = check(counts, other_lengths)
    assert row["verdict"] == NOT_SIZE  # shorter, as published, but by 55 % where the study's was 30 %
    assert "gsm8k 400 vs 894 (-55.3%; published 627 vs 894, -29.9%)" in row["detail"]
    longer = identity_tables({**DFLASH_TOKENS, "todo-app": [sequence(967, 5)] * 3}, OFF_TOKENS)  # +7.7 %, not -7.7 %
    assert check(counts, longer)["verdict"] == NOT_DIRECTION
    identical_essay = identity_tables({**DFLASH_TOKENS, "essay": OFF_TOKENS["essay"]}, OFF_TOKENS)
    assert check(counts, identical_essay)["verdict"] == NOT_REPRODUCED


def test_identity_against_an_empty_baseline_output() -> None:
    """A baseline that answered nothing (EOS first): any output of the condition is longer, by no finite fraction."""
    counts = claim(
        kind="identity",
        task="essay",
        condition="dflash",
        published="not identical",
        tolerance=0.1,
        token_counts={"essay": [681, 611]},
    )
    row = check(counts, identity_tables({"essay": [sequence(5)] * 3}, {"essay": [[]] * 3}))
    assert row["verdict"] == NOT_SIZE and "essay 5 vs 0 (+inf%" in row["detail"]


def test_identity_repeats_without_baseline_are_named() -> None:
    tables = identity_tables({"essay": [sequence(611)] * 3}, {"essay": [sequence(611)] * 2}, condition="mtp")
    row = check(claim(kind="identity", task="essay", condition="mtp", published="identical"), tables)
    assert row["verdict"] == REPRODUCED
    assert "1 repeat(s) without a baseline" in row["detail"]


# --------------------------------------------------------------------------------------------------------------
# GSM8K claims from the cells' typed scores
# --------------------------------------------------------------------------------------------------------------


def gsm8k_tables(checks: dict[str, list[dict[str, Any]]]) -> dict[str, pd.DataFrame]:
    speeds = {("gsm8k", condition, 0.0): [120.0] * len(c) for condition, c in checks.items()}
    return make_tables(speeds, checks={("gsm8k", condition, 0.0): c for condition, c in checks.items()})


ALL_THREE = scored(3)
WRONG_THIRD = scored(2, wrong=((3, "25000", "70000"),))


def test_gsm8k_claims() -> None:
    all_three = claim(kind="gsm8k", task="gsm8k", condition="dflash", temperature=0.0, published=3, total=3)
    third_wrong = claim(
        kind="gsm8k",
        task="gsm8k",
        condition="off",
        temperature=0.0,
        published=2,
        total=3,
        wrong={"problem": 3, "answer": "25000", "reference": "70000"},
    )
    tables = gsm8k_tables({"dflash": [ALL_THREE] * 3, "off": [WRONG_THIRD] * 3})
    row = check(all_three, tables)
    assert row["verdict"] == REPRODUCED
    assert row["measured_text"] == "r1 3/3; r2 3/3; r3 3/3"
    assert row["cells"] == [cell_file("gsm8k", "dflash", 0.0, r) for r in (1, 2, 3)]
    row = check(third_wrong, tables)
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "2/3 correct, problem 3: 25000 vs 70000"
    assert row["measured_text"].startswith("r1 2/3 (problem 3: 25000 vs 70000); r2 2/3")
    assert row["measured"][0] == {"repeat": 1, "correct": 2, "total": 3, "wrong": {3: "25000"}}
    assert "problem 3 wrong (25000)" in row["detail"]
    other_problem = gsm8k_tables({"off": [scored(2, wrong=((1, "17", "18"),))] * 3})
    assert check(third_wrong, other_problem)["verdict"] == NOT_REPRODUCED
    some = gsm8k_tables({"dflash": [ALL_THREE, WRONG_THIRD, ALL_THREE]})
    row = check(all_three, some)
    assert row["verdict"] == NOT_REPRODUCED and row["detail"] == "2 of 3 run(s) scored 3/3"
    none = gsm8k_tables({"dflash": [WRONG_THIRD] * 3})
    assert check(all_three, none)["verdict"] == NOT_REPRODUCED
    unscored = gsm8k_tables({"dflash": [{}, {}, {}]})
    row = check(all_three, unscored)
    assert row["verdict"] == NOT_MEASURED and row["measured"] == [] and len(row["cells"]) == 3
    stand_in = gsm8k_tables({"dflash": [scored(5, 5)] * 3})
    row = check(all_three, stand_in)
    assert row["verdict"] == NOT_MEASURED
    assert "scored 5 problems" in row["detail"]


def test_gsm8k_claims_are_tied_to_the_problems_the_study_names(claims: list[Claim]) -> None:
    """The study names its third problem by its answer, 70,000 (GSM8K's house flip): where this run's third problem
    has another answer (the offline stand-in's is 140,000), off's 25,000-for-70,000 and DFlash's 3/3 are not
    comparable, on the study's setup too; on the study's problems the 3/3 says which problems it counted."""
    standin = ["22", "45", "140000"]
    checks = {
        ("gsm8k", "dflash", 0.0): [scored(3, references=standin)] * 3,
        ("gsm8k", "off", 0.0): [scored(2, wrong=((3, "25000", "140000"),), references=standin)] * 3,
        ("gsm8k", "mtp", 0.0): [scored(3, references=standin)] * 3,
    }
    other = evaluate(claims, study_run(checks=checks), baseline=BASELINE, setup=STUDY).set_index("id")
    for claim_id in ("gsm8k-off-t0-correct", "gsm8k-mtp-t0-correct", "gsm8k-dflash-t0-correct"):
        assert other.loc[claim_id, "verdict"] == NOT_COMPARABLE, claim_id
        assert other.loc[claim_id, "detail"] == "other problems: problem 3's answer here is 140000, the study's 70000"
    same = evaluate(claims, study_run(), baseline=BASELINE, setup=STUDY).set_index("id")
    assert same.loc["gsm8k-dflash-t0-correct", "verdict"] == REPRODUCED
    assert same.loc["gsm8k-dflash-t0-correct", "detail"] == (
        "every run scored 3/3, problem 3 the one whose answer is 70000"
    )
    unrecorded = {("gsm8k", "dflash", 0.0): [scored(3, references=[])] * 3}
    lacking = evaluate(claims, study_run(checks=unrecorded), baseline=BASELINE, setup=STUDY)
    assert lacking.set_index("id").loc["gsm8k-dflash-t0-correct", "verdict"] == NOT_MEASURED


def test_gsm8k_the_wrong_answer_decides() -> None:
    """'got the third problem wrong (25,000 dollars instead of 70,000)': another wrong answer is only the direction."""
    third_wrong = claim(
        kind="gsm8k",
        task="gsm8k",
        condition="off",
        temperature=0.0,
        published=2,
        total=3,
        wrong={"problem": 3, "answer": "25000", "reference": "70000"},
    )
    written_otherwise = gsm8k_tables(
        {
            "off": [
                scored(2, wrong=((3, "25,000", "70000"),)),
                WRONG_THIRD,
                scored(2, wrong=((3, "$25000.00", "70000"),)),
            ]
        }
    )
    assert check(third_wrong, written_otherwise)["verdict"] == REPRODUCED
    one_other = gsm8k_tables({"off": [WRONG_THIRD, WRONG_THIRD, scored(2, wrong=((3, "30000", "70000"),))]})
    row = check(third_wrong, one_other)
    assert row["verdict"] == NOT_REPRODUCED
    assert row["detail"] == "every run scored 2/3 with problem 3 wrong, but answered 30000 in r3, not 25000"
    assert "r3 2/3 (problem 3: 30000 vs 70000)" in row["measured_text"]
    no_answer = gsm8k_tables({"off": [scored(2, wrong=((3, None, "70000"),))] * 3})
    row = check(third_wrong, no_answer)
    assert row["verdict"] == NOT_REPRODUCED and "none in r1, none in r2, none in r3" in row["detail"]
    any_answer = claim(
        kind="gsm8k", task="gsm8k", condition="off", temperature=0.0, published=2, total=3, wrong={"problem": 3}
    )
    assert check(any_answer, one_other)["verdict"] == REPRODUCED


# --------------------------------------------------------------------------------------------------------------
# Warm vs fresh n-gram server
# --------------------------------------------------------------------------------------------------------------


def test_warm_repeats_grow() -> None:
    repeats = claim(
        kind="warm_vs_fresh",
        task="todo-app",
        condition="ngram-mod-warm",
        fresh="ngram-mod",
        temperature=0.0,
        published=[123, 195, 307],
        tolerance=0.15,
    )
    close = make_tables({("todo-app", "ngram-mod-warm", 0.0): [120, 200, 300]})
    row = check(repeats, close)
    assert row["verdict"] == REPRODUCED
    assert row["measured_text"] == "r1 120.0, r2 200.0, r3 300.0 tok/s"
    assert row["measured"] == {1: 120.0, 2: 200.0, 3: 300.0}
    rising = make_tables({("todo-app", "ngram-mod-warm", 0.0): [60, 90, 130]})
    assert check(repeats, rising)["verdict"] == NOT_SIZE
    flat = make_tables({("todo-app", "ngram-mod-warm", 0.0): [120, 121, 119]})
    assert check(repeats, flat)["verdict"] == NOT_DIRECTION
    two = make_tables({("todo-app", "ngram-mod-warm", 0.0): [123, 195]})
    assert check(repeats, two)["verdict"] == NOT_MEASURED


def test_warm_faster_than_fresh() -> None:
    faster = claim(
        kind="warm_vs_fresh",
        tasks=["todo-app", "essay"],
        condition="ngram-mod-warm",
        fresh="ngram-mod",
        temperature=0.0,
        published="faster",
    )
    fresh = {(t, "ngram-mod", 0.0): [120, 122, 124] for t in ("todo-app", "essay")}
    tables = make_tables({**fresh, **{(t, "ngram-mod-warm", 0.0): [123, 195, 307] for t in ("todo-app", "essay")}})
    assert check(faster, tables)["verdict"] == REPRODUCED
    median_only = make_tables({**fresh, **{(t, "ngram-mod-warm", 0.0): [121, 123, 307] for t in ("todo-app", "essay")}})
    assert check(faster, median_only)["verdict"] == NOT_REPRODUCED
    slower = make_tables(
        {
            **fresh,
            ("todo-app", "ngram-mod-warm", 0.0): [123, 195, 307],
            ("essay", "ngram-mod-warm", 0.0): [110, 111, 112],
        }
    )
    assert check(faster, slower)["verdict"] == NOT_REPRODUCED
    no_fresh = make_tables({(t, "ngram-mod-warm", 0.0): [123, 195, 307] for t in ("todo-app", "essay")})
    assert check(faster, no_fresh)["verdict"] == NOT_MEASURED


# --------------------------------------------------------------------------------------------------------------
# Ordering claims
# --------------------------------------------------------------------------------------------------------------


def ordering_speeds(condition: str, values: dict[str, float], temperature: float = 0.0) -> dict:
    return {
        **{(t, "off", temperature): [100.0] * 3 for t in values},
        **{(t, condition, temperature): [100.0 * v] * 3 for t, v in values.items()},
    }


def test_ordering_tiers_over_tasks() -> None:
    mtp = claim(
        kind="ordering",
        metric="speedup",
        over="tasks",
        condition="mtp",
        temperature=0.0,
        published=[["file-rewrite", "todo-app", "gsm8k"], "essay"],
    )
    row = check(
        mtp, make_tables(ordering_speeds("mtp", {"file-rewrite": 1.78, "todo-app": 1.5, "gsm8k": 1.6, "essay": 1.04}))
    )
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "{file-rewrite, todo-app, gsm8k} > essay"
    assert row["measured_text"] == "file-rewrite 1.78x > gsm8k 1.60x > todo-app 1.50x > essay 1.04x"
    assert row["measured"] == {
        "mtp": pytest.approx({"file-rewrite": 1.78, "todo-app": 1.5, "gsm8k": 1.6, "essay": 1.04})
    }
    assert row["detail"] == "3 of 3 pairs ordered as published with 95 % intervals apart"
    one_pair = make_tables(ordering_speeds("mtp", {"file-rewrite": 1.78, "todo-app": 1.0, "gsm8k": 1.6, "essay": 1.04}))
    assert check(mtp, one_pair)["verdict"] == CONTRADICTED  # one separated pair the other way is enough
    reversed_order = make_tables(
        ordering_speeds("mtp", {"file-rewrite": 0.9, "todo-app": 0.9, "gsm8k": 0.9, "essay": 1.04})
    )
    assert check(mtp, reversed_order)["verdict"] == CONTRADICTED
    partial = make_tables(ordering_speeds("mtp", {"file-rewrite": 1.78, "essay": 1.04}))
    assert check(mtp, partial)["verdict"] == NOT_MEASURED


def test_ordering_over_conditions() -> None:
    best = claim(
        kind="ordering", over="conditions", task="todo-app", temperature=0.0, published=["dflash", ["mtp", "ngram-mod"]]
    )
    speeds = {
        ("todo-app", "off", 0.0): [100.0] * 3,
        ("todo-app", "dflash", 0.0): [227.0] * 3,
        ("todo-app", "mtp", 0.0): [160.0] * 3,
        ("todo-app", "ngram-mod", 0.0): [97.0] * 3,
    }
    assert check(best, make_tables(speeds))["verdict"] == REPRODUCED
    speeds[("todo-app", "mtp", 0.0)] = [250.0] * 3
    assert check(best, make_tables(speeds))["verdict"] == CONTRADICTED


def test_same_shape_at_temperature_one() -> None:
    shape = claim(
        kind="ordering",
        metric="speedup",
        over="tasks",
        tasks=TASKS,
        conditions=["ngram-mod", "dflash"],
        temperature=1.0,
        versus_temperature=0.0,
        published="same ordering",
    )
    t0 = {
        **ordering_speeds("ngram-mod", {"file-rewrite": 6.25, "todo-app": 0.97, "gsm8k": 0.98, "essay": 1.0}),
        **ordering_speeds("dflash", {"file-rewrite": 3.35, "todo-app": 2.27, "gsm8k": 1.5, "essay": 0.66}),
    }
    same = {
        **ordering_speeds("ngram-mod", {"file-rewrite": 5.0, "todo-app": 0.9, "gsm8k": 0.95, "essay": 0.99}, 1.0),
        **ordering_speeds("dflash", {"file-rewrite": 2.9, "todo-app": 2.0, "gsm8k": 1.4, "essay": 0.7}, 1.0),
    }
    row = check(shape, make_tables({**t0, **same}))
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "same ordering as temperature 0"
    swapped = {
        **same,
        **ordering_speeds("ngram-mod", {"file-rewrite": 5.0, "todo-app": 0.99, "gsm8k": 0.95, "essay": 0.9}, 1.0),
    }
    row = check(shape, make_tables({**t0, **swapped}))
    assert row["verdict"] == CONTRADICTED
    assert "in the other order, intervals apart: " in row["detail"] and "ngram-mod todo-app vs essay" in row["detail"]
    assert check(shape, make_tables(t0))["verdict"] == NOT_MEASURED


# --------------------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------------------

VALID = {
    "id": "ok-claim",
    "text": "t",
    "source": "s",
    "kind": "speedup",
    "task": "essay",
    "condition": "mtp",
    "temperature": 0.0,
    "published": 1.04,
    "tolerance": 0.15,
}


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"published": None}, "published"),
        ({"kind": "magic"}, "kind"),
        ({"tolerance": -0.1}, "tolerance"),
        ({"tolerance": None}, "tolerance"),
        ({"temperature": "hot"}, "temperature"),
        ({"published": [2.0, 1.0]}, "published"),
        ({"published": 0}, "published"),
        ({"colour": "red"}, "colour"),
        ({"tasks": ["essay"]}, "tasks"),
        ({"text": ""}, "text"),
        ({"size": [0.9, 1.0]}, "size"),  # a verdict's
    ],
)
def test_validation_names_claim_and_key(change: dict[str, Any], key: str) -> None:
    with pytest.raises(ClaimError, match=rf"claim 'ok-claim': key '{key}'"):
        parse_claims([{**VALID, **change}], CONFIG)


def test_source_is_optional_and_scope_defaults_by_kind() -> None:
    """A predictions file has no source; scope follows the kind unless the claim sets it."""
    entry = {k: v for k, v in VALID.items() if k != "source"}
    assert parse_claims([entry], CONFIG)[0].source == ""
    assert parse_claims([entry], CONFIG)[0].scope == "absolute"
    assert parse_claims([{**entry, "scope": "relative"}], CONFIG)[0].scope == "relative"
    warm = {**entry, "kind": "warm_vs_fresh", "condition": "ngram-mod-warm", "fresh": "ngram-mod"}
    assert parse_claims([{**warm, "published": "faster"}], CONFIG)[0].scope == "relative"
    assert parse_claims([{**warm, "published": [1, 2]}], CONFIG)[0].scope == "absolute"
    assert (
        parse_claims([{"id": "quote", "text": "t", "kind": "background", "published": "1.50x"}], CONFIG)[0].scope
        == "background"
    )
    with pytest.raises(ClaimError, match="key 'variants': 'ngram-mod-warm' stands in for none of the claim's "):
        parse_claims([{**entry, "condition": "dflash", "variants": ["dflash-n15", "ngram-mod-warm"]}], CONFIG)
    with pytest.raises(ClaimError, match="key 'variants': 'dflash-n16' is not one of the config's conditions"):
        parse_claims([{**entry, "condition": "dflash", "variants": ["dflash-n16"]}], CONFIG)


def test_validation_of_ids(tmp_path: Path) -> None:
    with pytest.raises(ClaimError, match="key 'id'"):
        parse_claims([{**VALID, "id": "Not Kebab"}], CONFIG)
    with pytest.raises(ClaimError, match="claim 'ok-claim': key 'id': duplicate id"):
        parse_claims([VALID, VALID], CONFIG)
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [VALID, {**VALID, "id": "bad", "kind": "gsm8k", "published": 5}]}))
    with pytest.raises(ClaimError, match=r"claims\.yaml: claim 'bad': key 'published'"):
        load_claims(path, CONFIG)
    path.write_text("- just a list\n")
    with pytest.raises(ClaimError, match="'claims' list"):
        load_claims(path, CONFIG)


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"kind": "identity", "tasks": TASKS, "condition": "dflash", "published": 5}, "published"),
        (
            {
                "kind": "identity",
                "task": "essay",
                "condition": "dflash",
                "published": "identical",
                "token_counts": {"essay": "1 vs 2"},
            },
            "token_counts",
        ),
        (
            {
                "kind": "identity",
                "task": "essay",
                "condition": "dflash",
                "published": "identical",
                "tolerance": 0.1,
                "token_counts": {"essay": [1, 2]},
            },
            "published",
        ),
        (
            {
                "kind": "identity",
                "task": "essay",
                "condition": "dflash",
                "published": "not identical",
                "tolerance": 0.1,
                "token_counts": {"gsm8k": [1, 2]},
            },
            "token_counts",
        ),
        (
            {
                "kind": "identity",
                "task": "essay",
                "condition": "dflash",
                "published": "not identical",
                "token_counts": {"essay": [1, 2]},
            },
            "tolerance",
        ),
        (
            {"kind": "verdict", "task": "essay", "condition": "mtp", "temperature": 0.0, "published": "quick"},
            "published",
        ),
        (
            {
                "kind": "acceptance",
                "task": "essay",
                "condition": "mtp",
                "temperature": 0.0,
                "published": 41,
                "tolerance": 0.1,
            },
            "published",
        ),
        (
            {
                "kind": "gsm8k",
                "task": "gsm8k",
                "condition": "off",
                "temperature": 0.0,
                "published": 2,
                "wrong": {"problem": 7},
            },
            "wrong",
        ),
        ({"kind": "gsm8k", "condition": "off", "temperature": 0.0, "published": 2}, "task"),
        ({"kind": "gsm8k", "tasks": ["gsm8k"], "condition": "off", "temperature": 0.0, "published": 2}, "tasks"),
        (
            {
                "kind": "warm_vs_fresh",
                "tasks": ["todo-app", "essay"],
                "condition": "ngram-mod-warm",
                "fresh": "ngram-mod",
                "temperature": 0.0,
                "published": [1, 2],
                "tolerance": 0.1,
            },
            "tasks",
        ),
        (
            {
                "kind": "warm_vs_fresh",
                "task": "essay",
                "condition": "ngram-mod-warm",
                "temperature": 0.0,
                "published": "faster",
            },
            "fresh",
        ),
        ({"kind": "ordering", "condition": "mtp", "temperature": 0.0, "published": ["essay", "poem"]}, "published"),
        (
            {
                "kind": "ordering",
                "over": "conditions",
                "task": "essay",
                "temperature": 0.0,
                "published": ["mtp", "dflash-15"],
            },
            "published",
        ),
        ({"kind": "ordering", "condition": "mtp", "temperature": 0.0, "published": ["essay", "essay"]}, "published"),
        (
            {
                "kind": "ordering",
                "tasks": TASKS,
                "condition": "mtp",
                "temperature": 1.0,
                "versus_temperature": 1.0,
                "published": "same ordering",
            },
            "versus_temperature",
        ),
        (
            {
                "kind": "ordering",
                "tasks": TASKS,
                "condition": "mtp",
                "temperature": 1.0,
                "versus_temperature": 0.0,
                "published": ["essay", "gsm8k"],
            },
            "published",
        ),
        (
            {
                "kind": "ordering",
                "tasks": ["essay"],
                "condition": "mtp",
                "temperature": 1.0,
                "versus_temperature": 0.0,
                "published": "same ordering",
            },
            "tasks",
        ),
        ({"kind": "ordering", "condition": "mtp", "temperature": 1.0, "published": "same ordering"}, "published"),
        (
            {
                "kind": "acceptance",
                "metric": "draft_n",
                "task": "file-rewrite",
                "condition": "ngram-mod",
                "temperature": 0.0,
                "published": 984,
                "tolerance": 1.5,
            },
            "tolerance",
        ),
        (
            {
                "kind": "acceptance",
                "metric": "draft_n",
                "task": "file-rewrite",
                "condition": "ngram-mod",
                "temperature": 0.0,
                "published": 0,
                "tolerance": 0.1,
            },
            "published",
        ),
        ({"kind": "background", "published": 1.5}, "published"),
        ({"kind": "background", "published": "1.50x", "tolerance": 0.1}, "tolerance"),
        ({"kind": "background", "published": "1.50x", "scope": "absolute"}, "scope"),
        ({"kind": "background", "published": "1.50x", "variants": ["dflash-n15"]}, "variants"),
        (
            {
                "kind": "verdict",
                "task": "essay",
                "condition": "mtp",
                "temperature": 0.0,
                "published": "faster",
                "scope": "background",
            },
            "scope",
        ),
        (
            {
                "kind": "verdict",
                "task": "essay",
                "condition": "dflash",
                "temperature": 0.0,
                "published": "faster",
                "variants": ["dflash-n16"],
            },
            "variants",
        ),
        (
            {
                "kind": "verdict",
                "task": "essay",
                "condition": "mtp",
                "temperature": 0.0,
                "published": "faster",
                "variants": ["dflash-n15"],
            },
            "variants",
        ),
        (
            {
                "kind": "verdict",
                "task": "essay",
                "condition": "mtp",
                "temperature": 0.0,
                "published": "faster",
                "prompt_dependent": "yes",
            },
            "prompt_dependent",
        ),
        ({"kind": "verdict", "task": "essay", "temperature": 0.0, "published": "faster"}, "condition"),
    ],
)
def test_validation_per_kind(entry: dict[str, Any], key: str) -> None:
    with pytest.raises(ClaimError, match=rf"claim 'x': key '{key}'"):
        parse_claims([{"id": "x", "text": "t", "source": "s", **entry}], CONFIG)


@pytest.mark.parametrize(
    ("change", "key", "problem"),
    [
        ({"kind": "speedupp"}, "kind", "'speedupp' is not one of"),
        ({"condition": None}, "condition", "None is not of type 'string'"),
        ({"tolerance": "absent"}, "tolerance", "is required but missing"),
        ({"colour": "red"}, "colour", "unknown key"),
        ({"metric": "pooled_rate"}, "metric", "unknown key"),
        ({"condition": "ngram"}, "condition", "'ngram' is not one of the config's conditions (did you mean 'ngram-mod"),
        ({"task": "esay"}, "task", "'esay' is not one of the config's tasks (did you mean 'essay'?)"),
        ({"task": None, "tasks": ["essay", "poem"]}, "tasks", "'poem' is not one of the config's tasks"),
    ],
)
def test_a_claims_file_with_a_mistake_is_refused_naming_claim_and_key(
    tmp_path: Path, change: dict[str, Any], key: str, problem: str
) -> None:
    """A typo'd kind, a missing field, an unknown key, condition or task: the file is refused, the message names the
    file, the claim, the key and the problem."""
    entry = {k: v for k, v in {**VALID, "id": "second", **change}.items() if v is not None or k == "condition"}
    entry = {k: v for k, v in entry.items() if v != "absent"}
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [VALID, entry]}))
    with pytest.raises(ClaimError) as refused:
        load_claims(path, CONFIG)
    assert str(refused.value).startswith(f"{path}: claim 'second': key '{key}': ")
    assert problem in str(refused.value)


def test_the_baseline_comes_from_the_config() -> None:
    """No condition name is special in code: with another baseline, its own repeats are the control, and the
    multipliers' cells are that baseline's."""
    config = {**CONFIG, "baseline": "mtp"}
    speeds = {("essay", "mtp", 0.0): [100.0] * 3, ("essay", "off", 0.0): [50.0] * 3}
    tokens = {("essay", c, r): sequence(10) for c in ("mtp", "off") for r in (1, 2, 3)}
    tables = summary_tables(frame_of(make_rows(speeds, tokens=tokens), "mtp"), "mtp")
    control = parse_claims([{**VALID, "kind": "identity", "condition": "mtp", "published": "identical"}], config)
    slower = parse_claims([{**VALID, "condition": "off", "published": 0.5}], config)
    result = evaluate(control + slower, tables, baseline="mtp", setup=replace(STUDY, device=DEVICE)).set_index("kind")
    assert result.loc["identity", "measured_text"] == "essay identical 2/2"
    assert result.loc["identity", "verdict"] == REPRODUCED
    assert result.loc["speedup", "verdict"] == REPRODUCED
    assert result.loc["speedup", "cells"] == [cell_file("essay", c, 0.0, r) for c in ("mtp", "off") for r in (1, 2, 3)]


# --------------------------------------------------------------------------------------------------------------
# The readings corrected against the study's text (the study's own claims, on recorded tables)
# --------------------------------------------------------------------------------------------------------------


def study_claim(claim_id: str) -> Claim:
    return {c.id: c for c in load_claims(CLAIMS_FILE, CONFIG)}[claim_id]


def per_request_tables(accepted: dict[str, list[int]]) -> dict[str, pd.DataFrame]:
    """n-gram on new code and math at temperature 0, these accepted tokens per request (drafted: 40 each)."""
    rows = make_rows({(t, "ngram-mod", 0.0): [120.0] * len(a) for t, a in accepted.items()})
    for row in rows:
        took = accepted[row["task"]][row["repeat"] - 1]
        row.update(draft_n=40, draft_n_accepted=took, acceptance_rate=took / 40)
    return summary_tables(frame_of(rows, BASELINE), BASELINE)


def test_zero_to_four_accepted_is_per_request_and_fails_at_five() -> None:
    """'0-4 tokens accepted in one go' uses the words of '984 drafted in one go': a count per request. 4 in every
    run reproduces it; one run with 5 does not (the old per-step mean, 5 / (400 - 5) tokens, could not fail)."""
    per_request = study_claim("ngram-todo-app-gsm8k-accepted-per-request")
    row = check(per_request, per_request_tables({"todo-app": [0, 4, 2], "gsm8k": [4, 4, 1]}))
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "0-4 tokens accepted per request"
    assert row["measured_text"].startswith("todo-app r1 0 accepted; todo-app r2 4 accepted")
    row = check(per_request, per_request_tables({"todo-app": [0, 4, 2], "gsm8k": [4, 5, 1]}))
    assert row["verdict"] == NOT_SIZE and "gsm8k r2 5 accepted" in row["detail"]
    old = claim(
        kind="acceptance",
        metric="accepted_per_step",
        tasks=["todo-app", "gsm8k"],
        condition="ngram-mod",
        temperature=0.0,
        published=[0, 4],
        tolerance=0.5,
    )
    assert check(old, per_request_tables({"todo-app": [0, 4, 2], "gsm8k": [4, 5, 1]}))["verdict"] == REPRODUCED


def essay_tables(condition: str, runs: list[float]) -> dict[str, pd.DataFrame]:
    return make_tables({("essay", "off", 0.0): OFF, ("essay", condition, 0.0): runs})


def test_near_one_the_side_decides_and_a_ten_percent_slowdown_fails() -> None:
    """'Essay: MTP 1.04x (faster)' and 'n-gram 1.00x' (slightly slower): a figure whose point is its side of 1.0x is
    judged by the verdict rule as well as its size. A run 10 % slower than off reproduced the MTP claim under +-15 %;
    n-gram 1.00x was reproduced by anything from 0.85x to 1.15x."""
    mtp, ngram = study_claim("mtp-essay-speedup"), study_claim("ngram-essay-speedup")
    row = check(mtp, essay_tables("mtp", [113, 113.5, 114]))  # 0.90x: slower than every off run
    assert (row["verdict"], row["measured_text"]) == (NOT_DIRECTION, "0.90x")
    assert row["detail"].startswith("not 'faster' by the all-runs rule (essay slower)")
    assert (
        check(replace(mtp, side=None, tolerance=0.15), essay_tables("mtp", [113, 113.5, 114]))["verdict"] == REPRODUCED
    )  # the reading this replaces
    assert check(mtp, essay_tables("mtp", [130, 131, 132]))["verdict"] == REPRODUCED  # 1.04x, faster in all runs
    assert check(mtp, essay_tables("mtp", [124, 131, 138]))["verdict"] == NOT_DIRECTION  # 1.04x, no verdict
    assert check(mtp, essay_tables("mtp", [150, 151, 152]))["verdict"] == NOT_SIZE  # 1.20x: faster, too fast
    row = check(ngram, essay_tables("ngram-mod", [138, 138.5, 139]))  # 1.10x faster
    assert row["verdict"] == NOT_DIRECTION and "(essay faster)" in row["detail"]
    assert check(ngram, essay_tables("ngram-mod", [121, 126, 131]))["verdict"] == NOT_DIRECTION  # 1.00x, no side
    row = check(ngram, essay_tables("ngram-mod", [123, 123.5, 124]))  # 0.98x, slower in every run
    assert row["verdict"] == TOO_WIDE and row["published_text"] == "1.00x (slower)"  # 0.96x-1.01x: across 0.97x
    quiet = {("essay", "off", 0.0): [125.9, 126.0, 126.1], ("essay", "ngram-mod", 0.0): [123.4, 123.5, 123.6]}
    assert check(ngram, make_tables(quiet))["verdict"] == REPRODUCED  # 0.98x, quiet runs: inside 0.97x-1.03x
    assert check(ngram, essay_tables("ngram-mod", [100, 101, 102]))["verdict"] == NOT_SIZE  # 0.80x


def test_the_file_rewrite_is_the_identical_one() -> None:
    """'DFlash did not, on 3 of 4 tasks (so on the file rewrite it did)': the three are new code, math and the
    essay. Three differing tasks of which one is the file rewrite do not reproduce it (a count alone would)."""
    named = study_claim("dflash-differs-on-new-code-math-essay")
    assert named.published == ["todo-app", "gsm8k", "essay"]
    row = check(named, identity_tables(DFLASH_TOKENS, OFF_TOKENS))
    assert row["verdict"] == REPRODUCED
    assert row["published_text"] == "not identical on todo-app, gsm8k, essay; identical on file-rewrite"
    assert row["detail"] == "differs on 3 of 4 tasks (todo-app, gsm8k, essay), as published"
    wrong_three = identity_tables(
        {**DFLASH_TOKENS, "file-rewrite": [sequence(900, 5)] * 3, "essay": OFF_TOKENS["essay"]}, OFF_TOKENS
    )
    row = check(named, wrong_three)
    assert row["verdict"] == NOT_REPRODUCED
    assert row["detail"] == (
        "differs on 3 of 4 tasks (file-rewrite, todo-app, gsm8k); published: differs on "
        "todo-app, gsm8k, essay, identical on file-rewrite"
    )
    count_only = claim(kind="identity", tasks=TASKS, condition="dflash", published=3)
    assert check(count_only, wrong_three)["verdict"] == REPRODUCED  # the reading this replaces
    none = identity_tables({t: OFF_TOKENS[t] for t in TASKS[:3]} | {"essay": OFF_TOKENS["essay"]}, OFF_TOKENS)
    assert check(named, none)["verdict"] == NOT_REPRODUCED
    with pytest.raises(ClaimError, match="key 'published': the differing tasks must be the claim's tasks"):
        parse_claims(
            [
                {
                    "id": "x",
                    "text": "t",
                    "kind": "identity",
                    "tasks": ["essay"],
                    "condition": "dflash",
                    "published": ["gsm8k"],
                }
            ],
            CONFIG,
        )


def shape_speeds(multipliers: dict[str, dict[float, tuple[float, float]]]) -> dict:
    """ngram-mod per task and temperature: (multiplier, spread of its three runs), against off at 100 tok/s."""
    speeds: dict = {}
    for task, per_temperature in multipliers.items():
        for temperature, (value, spread) in per_temperature.items():
            speeds[(task, "off", temperature)] = [99.5, 100.0, 100.5]
            speeds[(task, "ngram-mod", temperature)] = [100 * value - spread, 100 * value, 100 * value + spread]
    return speeds


def test_same_shape_counts_only_the_pairs_clear_at_temperature_zero() -> None:
    """n-gram at about 1x on three tasks: 3 runs cannot order those at temperature 0 (their intervals overlap), so
    a flip at 1.0 among them is left out and named; a clear pair that flips still counts."""
    shape = study_claim("t1-same-shape-as-t0")
    ngram_only = replace(shape, conditions=("ngram-mod",), variants=())
    near_one = {
        "todo-app": {0.0: (0.97, 2.0), 1.0: (0.99, 2.0)},
        "gsm8k": {0.0: (0.98, 2.0), 1.0: (0.96, 2.0)},
        "essay": {0.0: (0.99, 2.0), 1.0: (0.97, 2.0)},
    }
    clear = {"file-rewrite": {0.0: (6.25, 5.0), 1.0: (5.5, 5.0)}, **near_one}
    row = check(ngram_only, make_tables(shape_speeds(clear)))
    assert row["verdict"] == REPRODUCED
    assert row["detail"] == (
        "3 of 3 pairs ordered as at temperature 0 with 95 % intervals apart; left out, not separated at "
        "temperature 0: ngram-mod todo-app vs gsm8k, ngram-mod todo-app vs essay, ngram-mod gsm8k vs essay"
    )
    at = row["measured"]["ngram-mod"]  # pair by pair, two of the near-ties flip at 1.0 (todo-app above both)
    assert at[0.0]["todo-app"] < at[0.0]["gsm8k"] < at[0.0]["essay"] and at[1.0]["todo-app"] > at[1.0]["essay"]
    flipped = {**clear, "file-rewrite": {0.0: (6.25, 5.0), 1.0: (0.9, 1.0)}}
    row = check(ngram_only, make_tables(shape_speeds(flipped)))
    assert row["verdict"] == CONTRADICTED
    assert "in the other order, intervals apart: ngram-mod file-rewrite vs todo-app" in row["detail"]
    ties_only = make_tables(shape_speeds(near_one))
    row = check(replace(ngram_only, tasks=("todo-app", "gsm8k", "essay")), ties_only)
    assert row["verdict"] == NOT_SEPARATED and row["detail"].startswith("no pair separated at temperature 0")


def test_the_warm_server_claims_what_the_text_says() -> None:
    """New code's repeats got faster (123, 195, 307 tok/s), and at temperature 0 the second answer equals the first;
    nothing about every later warm run beating every fresh run on all four tasks."""
    rising, same = (
        study_claim("ngram-warm-todo-app-faster-each-repeat"),
        study_claim("ngram-warm-t0-second-equals-first"),
    )
    row = check(rising, make_tables({("todo-app", "ngram-mod-warm", 0.0): [123, 195, 307]}))
    assert row["verdict"] == REPRODUCED and row["published_text"] == "warm server faster with each repeat"
    assert (
        check(rising, make_tables({("todo-app", "ngram-mod-warm", 0.0): [123, 310, 307]}))["verdict"] == NOT_REPRODUCED
    )
    assert (
        check(rising, make_tables({("todo-app", "ngram-mod-warm", 0.0): [123, 110, 100]}))["verdict"] == NOT_REPRODUCED
    )
    assert check(rising, make_tables({("todo-app", "ngram-mod-warm", 0.0): [123]}))["verdict"] == NOT_MEASURED
    warm = {t: [OFF_TOKENS[t][0]] * 3 for t in TASKS}
    row = check(same, identity_tables(warm, OFF_TOKENS, condition="ngram-mod-warm"))
    assert row["verdict"] == REPRODUCED and row["published_text"] == "identical to its own first repeat"
    assert row["measured_text"].startswith("file-rewrite identical 2/2")
    copied_itself = {**warm, "essay": [OFF_TOKENS["essay"][0], sequence(611, 3), sequence(611, 3)]}
    row = check(same, identity_tables(copied_itself, OFF_TOKENS, condition="ngram-mod-warm"))
    assert row["verdict"] == NOT_REPRODUCED and row["detail"] == "differs on essay"
    assert "essay differs in 2/2 (611 vs 611; 611 vs 611)" in row["measured_text"]


# --------------------------------------------------------------------------------------------------------------
# Every judge can fail: a counterfactual table per claim, built from the claim (tests/support/counterfactuals.py)
# --------------------------------------------------------------------------------------------------------------


def every_row(claims: list[Claim]) -> list[Claim]:
    """Each claim and each of its variants, as judged."""
    return [one for base in claims for one in (base, *(variant(base, v) for v in base.variants))]


def verdicts_of(one: Claim, tables: dict[str, pd.DataFrame], setup: Setup = STUDY) -> list[str]:
    """The claim's verdict on ``setup`` (the study's), under both readings where the text gives no temperature."""
    row = evaluate([one], tables, baseline=BASELINE, setup=setup).iloc[0]
    return [row["verdict"], row["verdict_t1"]] if one.unstated else [row["verdict"]]


# Where a claim of scope any-device is judged as on the study's setup (only the GPU differs), and where it is not
SAME_SETTINGS = Setup(comparable=False, same_model=True, device="NVIDIA H200", same_settings=True)
OTHER_SETTINGS = replace(SAME_SETTINGS, same_settings=False)


def counterfactual_problems(claims: list[Claim]) -> tuple[list[str], dict[str, int]]:
    """What keeps a claim from being shown able to fail (empty when none), and the counts: rows, tables, kinds."""
    problems: list[str] = []
    counts = {"claims": len(claims), "rows": 0, "tables": 0, "never judged": 0, "on another GPU": 0}
    for one in every_row(claims):
        if one.kind in NEVER_JUDGED:
            counts["never judged"] += 1
            continue
        generate = COUNTERFACTUALS.get(one.kind)
        if generate is None:
            problems.append(f"{one.id}: no counterfactual generator for kind {one.kind!r} (COUNTERFACTUALS)")
            continue
        made = generate(one)
        counts["rows"] += 1
        expected = [(REPRODUCED, made.reproduced), *made.failing]
        if made.not_separated is not None:
            expected.append((NOT_SEPARATED, made.not_separated))
        if not made.failing:
            problems.append(f"{one.id}: no table it must read as not reproduced")
        if one.kind == "ordering" and made.not_separated is None:
            problems.append(f"{one.id}: an ordering needs a table it must read as not separated")
        for verdict, tables in expected:
            counts["tables"] += 1
            got = verdicts_of(one, tables)
            if set(got) != {verdict}:
                problems.append(f"{one.id}: expected {verdict!r}, got {got}")
            if one.scope != ANY_DEVICE:
                continue
            counts["on another GPU"] += 1
            for setup, shown, where in (
                (SAME_SETTINGS, verdict, "an H200 with the study's settings"),
                (OTHER_SETTINGS, NOT_COMPARABLE, "an H200 with other settings"),
            ):
                elsewhere = verdicts_of(one, tables, setup)
                if set(elsewhere) != {shown}:
                    problems.append(f"{one.id}: expected {shown!r} on {where}, got {elsewhere}")
    return problems, counts


def test_every_claim_reads_reproduced_and_not_reproduced_on_tables_built_from_it(claims: list[Claim]) -> None:
    problems, counts = counterfactual_problems(claims)
    assert not problems, "\n".join(problems)
    print(f"counterfactuals: {counts}")  # the closing note's numbers (pytest -s)
    assert counts["rows"] + counts["never judged"] == len(every_row(claims))
    assert counts["tables"] >= 3 * counts["rows"]
    acceptance = [one for one in every_row(claims) if one.scope == ANY_DEVICE]
    assert acceptance and counts["on another GPU"] >= 2 * len(acceptance)  # reproduced and missed on an H200


def test_every_claim_about_load_shipped_reads_reproduced_and_not_reproduced_on_tables_built_from_it() -> None:
    """The load demo's predictions (config/tiny-load-predictions.yaml, every kind about load) walked as the study's
    claims are, with a claim of each kind the demo lacks (N* with its levels; acceptance "different")."""
    shipped = load_claims(REPO / "config" / "tiny-load-predictions.yaml", CONFIG)
    assert {c.kind for c in shipped} == set(LOAD_KINDS)
    more = [
        claim(kind="pays_up_to", task="essay", condition="dflash", temperature=0.0, published=8, at=[1, 8]),
        claim(
            kind="acceptance_under_load",
            tasks=["essay", "gsm8k"],
            condition="mtp",
            temperature="unstated",
            published="different",
            tolerance=0.1,
        ),
    ]
    problems, counts = counterfactual_problems([*shipped, *more])
    assert not problems, "\n".join(problems)
    assert counts["rows"] == len(shipped) + len(more) and counts["tables"] >= 3 * counts["rows"]


def test_the_counterfactual_walk_fails_a_claim_that_cannot_fail(claims: list[Claim]) -> None:
    """A tolerance as wide as the claim could be (the old 'within ±10 % per count' of 829 vs 898) reads the other
    side of 1.0x as reproduced, on the study's setup and, for a claim judged on any device, on an H200; a size band
    that covers the whole of its word's side cannot be missed by size."""
    loose = claim(kind="speedup", task="essay", condition="mtp", temperature=0.0, published=1.04, tolerance=0.99)
    problems, _ = counterfactual_problems([loose])
    assert problems == ["test-claim: expected 'not reproduced (direction)', got ['reproduced']"]  # 0.96x: inside
    any_slower = claim(
        kind="verdict", task="essay", condition="ngram-mod", temperature=0.0, published="slower", size=[0, 1.0]
    )
    assert counterfactual_problems([any_slower])[0] == [
        "test-claim: expected 'not reproduced (size)', got ['not reproduced (direction)']",  # 1.05x: the other side
        "test-claim: expected 'not reproduced (size)', got ['too few runs']",
        "test-claim: expected 'interval too wide', got ['reproduced']",  # no edge to lie across
    ]
    anywhere = replace(loose, scope=ANY_DEVICE)  # walked on an H200 too, where it cannot fail either
    assert counterfactual_problems([anywhere])[0] == [
        "test-claim: expected 'not reproduced (direction)', got ['reproduced']",
        "test-claim: expected 'not reproduced (direction)' on an H200 with the study's settings, got ['reproduced']",
    ]
    unknown = replace(loose, kind="a-kind-without-a-generator")
    assert counterfactual_problems([unknown])[0] == [
        "test-claim: no counterfactual generator for kind 'a-kind-without-a-generator' (COUNTERFACTUALS)"
    ]


def test_bands_exclude_the_figures_beside_them(claims: list[Claim]) -> None:
    """Within a sentence, a figure's band admits none of its neighbours (same metric); and off's 126 against MTP's
    131 tokens/s on the essay."""
    numeric = [c for c in claims if c.kind in ("speedup", "tokens_per_s", "acceptance")]
    by_sentence: dict[str, list[Claim]] = {}
    for one in numeric:
        if one.sentence:
            by_sentence.setdefault(one.sentence, []).append(one)
    pairs = [
        (a, b)
        for members in by_sentence.values()
        for a in members
        for b in members
        if a is not b and (a.kind, a.metric) == (b.kind, b.metric)
    ]
    by_id = {c.id: c for c in claims}
    pairs += [(by_id["off-all-tasks-tokens-per-s"], by_id["mtp-essay-tokens-per-s"])]
    pairs += [(by_id["mtp-essay-tokens-per-s"], by_id["off-all-tasks-tokens-per-s"])]
    pairs += [(by_id["dflash-essay-acceptance"], replace(by_id["dflash-essay-acceptance"], published=0.0))]
    assert len(pairs) > 20
    for a, b in pairs:
        low, high = tolerance_band(a, METRICS[a.metric or a.kind])
        values = b.published if isinstance(b.published, list) else [b.published]
        assert not any(low <= v <= high for v in values), (a.id, (low, high), b.id, b.published)


# --------------------------------------------------------------------------------------------------------------
# Verdicts at the edges: overlapping intervals, a single repeat, a missed size, equal token counts
# --------------------------------------------------------------------------------------------------------------


def test_an_ordering_with_overlapping_intervals_is_not_separated() -> None:
    ordering = claim(
        kind="ordering", metric="speedup", over="tasks", condition="ngram-mod", temperature=0.0,
        published=["file-rewrite", ["todo-app", "essay"]],
    )  # fmt: skip
    wide = {(t, "off", 0.0): [100.0, 126.0, 152.0] for t in ("file-rewrite", "todo-app", "essay")}
    wide[("file-rewrite", "ngram-mod", 0.0)] = [150.0, 200.0, 250.0]  # 1.59x, interval about 0.9-2.8
    wide[("todo-app", "ngram-mod", 0.0)] = [120.0, 150.0, 180.0]  # 1.19x
    wide[("essay", "ngram-mod", 0.0)] = [100.0, 126.0, 152.0]  # 1.00x
    row = check(ordering, make_tables(wide))
    assert row["verdict"] == NOT_SEPARATED
    assert "not separated (intervals overlap): file-rewrite vs todo-app, file-rewrite vs essay" in row["detail"]
    tight = {key: [v * 0.999, v, v * 1.001] for key, (_, v, _) in wide.items()}
    assert check(ordering, make_tables(tight))["verdict"] == REPRODUCED
    upside_down = {**tight, ("file-rewrite", "ngram-mod", 0.0): [99.9, 100.0, 100.1]}  # 0.79x: below both
    row = check(ordering, make_tables(upside_down))
    assert row["verdict"] == CONTRADICTED
    assert "in the other order, intervals apart: file-rewrite vs todo-app, file-rewrite vs essay" in row["detail"]


def test_a_one_repeat_run_reads_too_few_runs() -> None:
    one_each = make_tables({("essay", "off", 0.0): [77.1], ("essay", "ngram-mod", 0.0): [77.9]})
    summary = one_each["summary"].set_index("condition")
    assert summary.loc["ngram-mod", "verdict"] == TOO_FEW_RUNS  # 1.01x, but 1 vs 1 beats by chance 1 in 2
    faster = claim(kind="verdict", task="essay", condition="ngram-mod", temperature=0.0, published="faster")
    assert check(faster, one_each)["verdict"] == TOO_FEW_RUNS
    sided = claim(kind="speedup", task="essay", condition="ngram-mod", temperature=0.0, published=1.01, side="faster",
                  tolerance=0.1)  # fmt: skip
    row = check(sided, one_each)
    assert row["verdict"] == TOO_FEW_RUNS and "at least 3 runs a side" in row["detail"]
    ordering = claim(kind="ordering", metric="speedup", over="conditions", task="essay", temperature=0.0,
                     published=["ngram-mod", "mtp"])  # fmt: skip
    two = make_tables({**{("essay", c, 0.0): [v] for c, v in (("off", 77.1), ("ngram-mod", 77.9), ("mtp", 70.0))}})
    assert check(ordering, two)["verdict"] == TOO_FEW_RUNS
    # 3 vs 3 is the fewest equal runs at 1 in 20; 2 vs 3 (1 in 10) is still too few
    three = make_tables({("essay", "off", 0.0): [77.0, 77.1, 77.2], ("essay", "ngram-mod", 0.0): [78.0, 78.1, 78.2]})
    assert three["summary"].set_index("condition").loc["ngram-mod", "verdict"] == "faster"
    two_three = make_tables({("essay", "off", 0.0): [77.0, 77.1, 77.2], ("essay", "ngram-mod", 0.0): [78.0, 78.1]})
    assert two_three["summary"].set_index("condition").loc["ngram-mod", "verdict"] == TOO_FEW_RUNS


def test_a_size_miss_on_the_study_setup_is_not_reproduced_size(claims: list[Claim]) -> None:
    ngram = next(c for c in claims if c.id == "ngram-file-rewrite-speedup")
    at = {("file-rewrite", "off", t): [125.8, 126.0, 126.2] for t in (0.0, 1.0)}
    at.update({("file-rewrite", "ngram-mod", t): [163.7, 163.8, 163.9] for t in (0.0, 1.0)})  # 1.30x
    row = check(ngram, make_tables(at))
    assert (row["verdict"], row["verdict_t1"]) == (NOT_SIZE, NOT_SIZE)
    assert row["detail"].startswith("outside 5.62x to 6.88x (published 6.25x (faster), ±10%): file-rewrite 1.30x")
    slower = {**at, **{("file-rewrite", "ngram-mod", t): [100.0, 100.1, 100.2] for t in (0.0, 1.0)}}  # 0.79x
    assert check(ngram, make_tables(slower))["verdict"] == NOT_DIRECTION


def test_equal_token_counts_fail_the_token_count_claim(claims: list[Claim]) -> None:
    counts = next(c for c in claims if c.id == "dflash-token-counts")
    tokens, speeds = {}, {}
    for task, (own, base) in counts.token_counts.items():
        for r in (1, 2, 3):
            tokens[(task, "off", r)] = sequence(base)
            tokens[(task, "dflash", r)] = sequence(own, 5)
        speeds[(task, "off", 0.0)] = [126.0] * 3
        speeds[(task, "dflash", 0.0)] = [100.0] * 3
    assert check(counts, make_tables(speeds, tokens=tokens))["verdict"] == REPRODUCED
    tokens.update({("todo-app", "dflash", r): sequence(898, 5) for r in (1, 2, 3)})  # 898 vs 898, other content
    row = check(counts, make_tables(speeds, tokens=tokens))
    assert row["verdict"] == NOT_DIRECTION
    assert "todo-app 898 vs 898 (+0.0%; published 829 vs 898, -7.7%)" in row["detail"]


# --------------------------------------------------------------------------------------------------------------
# Scope by what differs: another model is judged on nothing of the study's
# --------------------------------------------------------------------------------------------------------------


def test_on_another_model_nothing_of_the_study_is_judged_and_the_order_of_tasks_is_a_question(
    claims: list[Claim], sample_tables: dict[str, pd.DataFrame]
) -> None:
    for tables in (sample_tables, study_run()):
        result = evaluate(claims, tables, baseline=BASELINE, setup=OTHER_MODEL)
        asked = result[result["scope"] == "transfers"]
        others = result[~result["scope"].isin(["transfers", "background"])]
        assert set(others["verdict"]) == {NOT_JUDGED} and set(others["verdict_t1"].dropna()) <= {NOT_JUDGED}
        answers = set(asked["verdict"]) | set(asked["verdict_t1"].dropna())
        assert answers <= {SAME_HERE, OTHER_HERE, NOT_SEPARATED, TOO_FEW_RUNS, NOT_MEASURED}
        assert not set(result["verdict"]) & set(FAILED) and not set(result["verdict_t1"].dropna()) & set(FAILED)
        assert all(d.startswith(f"asked of this model on {DEVICE}: ") for d in asked["detail"])
    shaped = evaluate(claims, study_run(), baseline=BASELINE, setup=OTHER_MODEL).set_index("id")
    assert shaped.loc["ngram-task-ordering", "verdict"] == SAME_HERE


# --------------------------------------------------------------------------------------------------------------
# Words the text allows several readings of: each reading judged, the `reading` column says which the run supports
# --------------------------------------------------------------------------------------------------------------


def round_tables(accepted: dict[str, list[int]], rounds: dict[str, list[int] | None]) -> dict[str, pd.DataFrame]:
    """n-gram on new code and math at both temperatures: accepted tokens per request, and per run the most one draft
    round accepted (None: the run kept no server counters)."""
    rows = make_rows({(t, "ngram-mod", at): [120.0] * len(a) for t, a in accepted.items() for at in (0.0, 1.0)})
    for row in rows:
        took = accepted[row["task"]][row["repeat"] - 1]
        longest = (rounds[row["task"]] or [None] * 3)[row["repeat"] - 1]
        row.update(draft_n=40, draft_n_accepted=took, acceptance_rate=took / 40)
        if longest is not None:  # 10 steps, 3 of them accepting ``longest`` tokens each
            row.update(verification_steps=10, accepted_per_position=[3] * longest, counted_accepted=3 * longest)
    return summary_tables(frame_of(rows, BASELINE), BASELINE)


def test_zero_to_four_in_one_go_is_judged_per_request_and_per_draft_round(claims: list[Claim]) -> None:
    """'0-4 tokens accepted in one go': per request (the words of '984 drafted in one go') and per draft round (no
    verification step accepted a fifth token, from the acceptance by draft position). Both judged; the figure holds
    where one reading does, and `reading` names it. Where the server's counters were not kept, the per-round reading
    is not measured, never reproduced."""
    by_id = {c.id: c for c in claims}
    pair = [by_id["ngram-todo-app-gsm8k-accepted-per-request"], by_id["ngram-todo-app-gsm8k-accepted-per-round"]]

    def judged(accepted: dict[str, list[int]], rounds: dict[str, list[int] | None]) -> pd.DataFrame:
        return evaluate(pair, round_tables(accepted, rounds), baseline=BASELINE, setup=STUDY).set_index("id")

    few, many = {"todo-app": [3, 4, 2], "gsm8k": [4, 0, 1]}, {"todo-app": [9, 12, 4], "gsm8k": [4, 8, 1]}
    short, long = {"todo-app": [2, 4, 1], "gsm8k": [4, 0, 1]}, {"todo-app": [2, 5, 1], "gsm8k": [4, 0, 1]}
    result = judged(few, short)
    assert list(result["verdict"]) == [REPRODUCED, REPRODUCED] and set(result["reading"]) == {"both readings"}
    assert result.loc[pair[1].id, "published_text"] == "0-4 tokens accepted per draft round"
    assert result.loc[pair[1].id, "measured_text"].startswith("todo-app 4 accepted in a round")
    assert list(result["reads"]) == ["per request", "per draft round"]
    result = judged(many, short)  # 9 and 12 tokens in a request, but never more than 4 in one round
    assert list(result["verdict"]) == [NOT_SIZE, REPRODUCED]
    assert set(result["reading"]) == {"per draft round only"}
    assert set(result["sentence_reading"]) == {"both readings"}  # the figure holds under one reading of its words
    result = judged(few, long)  # a round accepted 5
    assert (
        list(result["verdict"]) == [REPRODUCED, NOT_SIZE]
        and "todo-app 5 accepted in a round" in result["detail"].iloc[1]
    )
    assert set(result["reading"]) == {"per request only"}
    result = judged(many, long)
    assert list(result["verdict"]) == [NOT_SIZE, NOT_SIZE] and set(result["reading"]) == {NEITHER_READING}
    assert set(result["sentence_reading"]) == {NEITHER_READING}
    unrecorded = judged(many, {"todo-app": None, "gsm8k": short["gsm8k"]})
    assert unrecorded.loc[pair[1].id, "verdict"] == NOT_MEASURED  # counters not kept: not measured
    assert set(unrecorded["reading"]) == {CANNOT_TELL}
    one_run_unrecorded = round_tables(few, {"todo-app": short["todo-app"], "gsm8k": short["gsm8k"]})
    cells = one_run_unrecorded["cells"]
    cells.loc[cells.index[0], ["verification_steps", "counted_accepted"]] = None
    partial = summary_tables(cells, BASELINE)
    assert check(pair[1], partial)["verdict"] == NOT_MEASURED  # every run's rounds, or no claim about every round


def flat_tables(off: dict[float, dict[str, list[float]]], ngram: dict[float, dict[str, float]]) -> dict:
    """off's runs per temperature and task; n-gram's multiplier per temperature and task (three tight runs)."""
    speeds: dict = {}
    for t, per_task in off.items():
        for task, runs in per_task.items():
            speeds[(task, "off", t)] = runs
            centre = statistics.fmean(runs) * ngram[t][task]
            speeds[(task, "ngram-mod", t)] = [centre - 0.3, centre, centre + 0.3]
    return make_tables(speeds)


def test_the_same_shape_at_one_is_judged_as_flat_speeds_and_as_the_order_of_tasks(claims: list[Claim]) -> None:
    """'Temperature 1.0 had the same shape too' follows 'off ~126 tokens/s on every task': read as off flat across
    the tasks (each within ±3 % of their mean) at 1.0 as at 0, and as each method's order of tasks. Both judged,
    `reading` says which the run supports; on another GPU the flatness is shown as agrees / differs."""
    by_id = {c.id: c for c in claims}
    order, flat = by_id["t1-same-shape-as-t0"], by_id["t1-same-shape-flat-speeds"]
    pair = [replace(order, conditions=("ngram-mod",), variants=()), flat]
    steady = {task: [125.8, 126.0, 126.2] for task in TASKS}
    shape = {"file-rewrite": 6.0, "todo-app": 3.0, "gsm8k": 1.5, "essay": 0.7}
    flipped = {**shape, "file-rewrite": 0.5}

    def judged(off: dict, ngram: dict, setup: Setup = STUDY) -> pd.DataFrame:
        return evaluate(pair, flat_tables(off, ngram), baseline=BASELINE, setup=setup).set_index("id")

    result = judged({0.0: steady, 1.0: steady}, {0.0: shape, 1.0: shape})
    assert list(result["verdict"]) == [REPRODUCED, REPRODUCED] and set(result["reading"]) == {"both readings"}
    assert result.loc[flat.id, "published_text"] == "flat across tasks (each within ±3% of their mean) at 1 as at 0"
    uneven = {**steady, "essay": [139.8, 140.0, 140.2]}  # 11 % above the others at 1.0
    result = judged({0.0: steady, 1.0: uneven}, {0.0: shape, 1.0: shape})
    assert list(result["verdict"]) == [REPRODUCED, NOT_SIZE]
    assert "essay 140.0 tok/s" in result.loc[flat.id, "detail"] and "at 1 (" in result.loc[flat.id, "detail"]
    assert set(result["reading"]) == {"each method's order of tasks only"}
    result = judged({0.0: steady, 1.0: steady}, {0.0: shape, 1.0: flipped})
    assert list(result["verdict"]) == [CONTRADICTED, REPRODUCED]
    # a reversed order is not outweighed by flat speeds: the words' other reading does not hide it
    assert set(result["reading"]) == {"contradicted under each method's order of tasks"}
    result = judged({0.0: steady, 1.0: uneven}, {0.0: shape, 1.0: flipped})
    assert set(result["reading"]) == {"contradicted under each method's order of tasks"}
    elsewhere = judged({0.0: steady, 1.0: uneven}, {0.0: shape, 1.0: shape}, H200)
    assert elsewhere.loc[flat.id, "verdict"] == DIFFERS  # relative: not claimed to transfer
    assert check(flat, flat_tables({0.0: steady}, {0.0: shape}))["verdict"] == NOT_MEASURED  # no 1.0 cells


def test_the_warm_figures_are_judged_per_task_and_with_one_server_for_every_request(claims: list[Claim]) -> None:
    """'One server for every request' (123, 195, 307 tok/s, faster each repeat, the second answer equal to the
    first): judged on ngram-mod-warm (one server per task) and on ngram-mod-warm-all (one server for the whole
    condition, warm_scope: condition); the figure holds where either does, `reading` names which."""
    warm = [c for c in claims if c.readings.startswith("ngram-warm")]
    assert {c.reads for c in warm} == {"one server per task", "one server for every request"}
    assert {c.condition for c in warm if c.reads == "one server for every request"} == {"ngram-mod-warm-all"}
    assert len({c.readings for c in warm}) == 3 and len(warm) == 6
    repeats = [c for c in warm if c.readings == "ngram-warm-repeats"]
    rising = {(t, "ngram-mod-warm", at): [123.0, 195.0, 307.0] for t in ("todo-app",) for at in (0.0, 1.0)}
    flat = {(t, "ngram-mod-warm-all", at): [126.0, 126.0, 126.0] for t in ("todo-app",) for at in (0.0, 1.0)}
    result = evaluate(repeats, make_tables(rising), baseline=BASELINE, setup=STUDY).set_index("id")
    assert list(result["verdict"]) == [REPRODUCED, NOT_MEASURED]
    assert set(result["reading"]) == {"one server per task only"}
    swapped = {
        (t, c.replace("-warm", "-warm-all") if "all" not in c else "ngram-mod-warm", at): v
        for (t, c, at), v in {**rising, **flat}.items()
    }
    result = evaluate(repeats, make_tables(swapped), baseline=BASELINE, setup=STUDY).set_index("id")
    assert list(result["verdict"]) == [NOT_DIRECTION, REPRODUCED]
    assert set(result["reading"]) == {"one server for every request only"}
    assert set(result["sentence_reading"]) == {"both readings"}  # the figure holds under one reading of the scope


def test_the_explanation_is_read_at_the_reading_the_results_figures_decide(claims: list[Claim]) -> None:
    """'These numbers explain the results above': the explanation's sentences are read at the results sentence's
    reading, which the six multipliers alone decide. MTP's 84 % on new code missed at 1.0 only: the results keep
    "both readings", the MTP acceptance sentence reads "temperature 0 only" within it, and the report says which
    sentence each is read with and at which reading."""
    explaining = {c.sentence for c in claims if c.explains == "results-multipliers"}
    assert explaining == {
        "ngram-file-rewrite-why",
        "ngram-new-code-math-why",
        "mtp-acceptance",
        "mtp-gains",
        "dflash-new-code-why",
        "dflash-essay-why",
    }
    assert {c.place.split(".")[0] for c in claims if c.explains} == {"why-ngram", "why-mtp", "why-dflash"}
    assert {c.sentence for c in claims if c.place.startswith("why-") and c.sentence} == explaining
    miss = {("todo-app", "mtp", 1.0): (1000, 700)}  # 70 % against 84 % +-2.5 at 1.0; 84 % at 0
    held = evaluate(claims, study_run(), baseline=BASELINE, setup=STUDY)
    assert set(held.loc[held["sentence"].notna(), "sentence_reading"]) == {"both readings"}
    result = evaluate(claims, study_run(drafts=miss), baseline=BASELINE, setup=STUDY)
    base = result[result["variant_of"].isna()].set_index("id")
    results = base[base["sentence"] == "results-multipliers"]
    assert set(results["sentence_reading"]) == {"both readings"} and set(results["read_at"]) == {None}
    linked = base[base["sentence"].isin(explaining)]
    assert set(linked["read_at"]) == {"both readings"} and set(linked["relation"]) == {"explains"}
    acceptance = linked["sentence"] == "mtp-acceptance"
    assert set(linked.loc[acceptance, "sentence_reading"]) == {"temperature 0 only"}
    assert set(linked.loc[~acceptance, "sentence_reading"]) == {"both readings"}
    row = linked.loc["mtp-todo-app-acceptance"].to_dict()
    assert row["read_with"] == "results-multipliers" and row["verdict_t1"] == NOT_SIZE
    assert sentence_text(row) == (
        'mtp-acceptance: temperature 0 only; it explains the figures of results-multipliers ("these numbers explain '
        'the results above"): read at their reading of the temperature, both readings'
    )


def test_an_ordering_lacking_a_member_says_so_in_one_form() -> None:
    """The not-measured and too-few-runs tail of the two ordering judges (the published tiers, the same shape at
    another temperature) is one piece of code: the same words for the same gap."""
    tiers = claim(kind="ordering", conditions=["ngram-mod"], temperature=1.0, published=[["file-rewrite"], ["essay"]])
    shape = claim(
        kind="ordering",
        conditions=["ngram-mod"],
        tasks=["file-rewrite", "essay"],
        temperature=1.0,
        versus_temperature=0.0,
        published="same ordering",
    )
    speeds = {(t, c, at): OFF for t in ("file-rewrite", "essay") for c in ("off", "ngram-mod") for at in (0.0, 1.0)}
    del speeds[("essay", "ngram-mod", 1.0)]
    tables = make_tables(speeds)
    assert check(tiers, tables)["detail"] == "no speedup for essay at temperature 1"
    assert check(shape, tables)["detail"] == "no speedup for ngram-mod/essay at temperature 1 or 0"
    one = make_tables({key: runs[:1] for key, runs in {**speeds, ("essay", "ngram-mod", 1.0): OFF}.items()})
    assert check(tiers, one)["verdict"] == check(shape, one)["verdict"] == TOO_FEW_RUNS
    assert check(tiers, one)["detail"] == "no 95 % interval for file-rewrite, essay (it needs 2 runs a side)"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"readings": "one-figure"}, "'reads' is a dependency of 'readings'"),
        ({"reads": "per request"}, "'readings' is a dependency of 'reads'"),
        ({"explains": "results-multipliers"}, "'sentence' is a dependency of 'explains'"),
        ({"restates": "results-multipliers"}, "'sentence' is a dependency of 'restates'"),
        (
            {"explains": "a", "restates": "b", "sentence": "s", "temperature": "unstated"},
            "key 'restates': a sentence explains another or restates it, not both",
        ),
        ({"published": "flat"}, "key 'published': 'flat' is a tokens_per_s claim's"),
        ({"kind": "tokens_per_s", "published": "flat", "tolerance": 0.03}, "key 'published': 'flat'"),
        ({"kind": "tokens_per_s", "versus_temperature": 1.0}, "key 'published': 'flat'"),
    ],
)
def test_readings_links_and_flat_speeds_are_refused_half_given(change: dict[str, Any], problem: str) -> None:
    with pytest.raises(ClaimError, match=re.escape(f"claim 'ok-claim': {problem}")):
        parse_claims([{**VALID, **change}], CONFIG)
    flat = {**VALID, "kind": "tokens_per_s", "published": "flat", "versus_temperature": 1.0, "tolerance": 0.03}
    assert parse_claims([flat], CONFIG)[0].published == "flat"
