"""Sentences that explain or restate another (``explains``, ``restates``: the "why" sections, the title and the
conclusion against the results' six multipliers) are read at that sentence's reading of the temperature, which its
own claims alone decide: one temperature per figure, and a miss in an explanation is the explanation's own."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specbench.claims.claim import (
    BACKGROUND,
    BOTH_READINGS,
    CANNOT_TELL,
    NEITHER_READING,
    NOT_REPRODUCED,
    NOT_SIZE,
    READING_WORDS,
    REPRODUCED,
    RESULT_COLUMNS,
    SUPPORTED_READINGS,
    T0_ONLY,
    T1_ONLY,
    TOO_WIDE,
    VERDICTS,
    Claim,
    supported_reading,
)
from specbench.claims.claims_file import load_claims
from specbench.claims.evaluate import Setup, evaluate, read_together
from specbench.report.sections.claims import failed, settings_section, supported
from specbench.report.sections.opening import CANNOT_TELL_KIND, HELD_KIND, NOT_REPRODUCED_KIND, opening_entries
from support.counterfactuals import BASELINE, CONFIG
from support.paths import REPO
from support.study_run import study_run

STUDY = Setup(comparable=True, same_model=True, device="NVIDIA A100 80GB")
RESULTS = "results-multipliers"
# DFlash on the essay 0.625x at 0 and 0.75x at 1.0: the results' 0.66x holds at 0 only, the title's 0.7x at 1.0 only
DFLASH_ESSAY = {("essay", d, t): m for d in ("dflash", "dflash-n15") for t, m in ((0.0, 0.625), (1.0, 0.75))}
ACCEPTANCE_MISS = {("todo-app", "mtp", t): (1000, 800) for t in (0.0, 1.0)}  # 80 % against 84 +-2.5 %
Row = dict[str, Any]


@pytest.fixture(scope="module")
def claims() -> list[Claim]:
    return load_claims(REPO / "config" / "claims.yaml", CONFIG)


@pytest.fixture(scope="module")
def published_rows(claims: list[Claim]) -> list[Row]:
    """Every claim judged on the study's setup, every figure as published."""
    return evaluate(claims, study_run(), baseline=BASELINE, setup=STUDY).to_dict("records")


def base(result: pd.DataFrame) -> pd.DataFrame:
    return result[result["variant_of"].isna()].set_index("id")


def test_the_title_and_the_conclusion_restate_the_results(claims: list[Claim]) -> None:
    """Every sentence that restates the results' figures says so (the title's 6.2x and 0.7x; the conclusion's file
    rewrite, essay and "this order ... held"), every "why" sentence explains them, and a sentence read with another
    names one that is read on its own."""
    restating = {c.sentence for c in claims if c.restates == RESULTS}
    assert restating == {"headline", "file-rewrite-helped", "essay-conclusion", "order-held"}
    assert {c.place for c in claims if c.restates} == {"title.1", "conclusion.2", "conclusion.3", "conclusion.4"}
    by_sentence: dict[str, set[str]] = {}
    for c in claims:
        if c.sentence:
            by_sentence.setdefault(c.sentence, set()).add(c.explains or c.restates)
    assert all(len(links) == 1 for links in by_sentence.values())  # every claim of a sentence names the same one
    stated = {c.explains or c.restates for c in claims} - {""}
    assert stated == {RESULTS} and by_sentence[RESULTS] == {""}


def test_the_title_is_read_at_the_temperature_the_results_are(claims: list[Claim]) -> None:
    """DFlash on the essay 0.625x at 0 and 0.75x at 1.0: the results' 0.66x holds at 0 only, the title's 0.7x at
    1.0 only on its own. One figure has one temperature: the title is read at the results' "temperature 0 only",
    where its 0.7x cannot be told (0.625x lies across the edge of 0.63x), never at 1.0; the opening names the
    reading it is read at."""
    result = evaluate(claims, study_run(multipliers=DFLASH_ESSAY), baseline=BASELINE, setup=STUDY)
    rows = base(result)
    assert (rows.loc["dflash-essay-speedup", "verdict"], rows.loc["dflash-essay-speedup", "verdict_t1"]) == (
        REPRODUCED,
        NOT_SIZE,
    )
    headline = rows[rows["sentence"] == "headline"]
    assert (headline.loc["dflash-essay-headline", "verdict"], headline.loc["dflash-essay-headline", "verdict_t1"]) == (
        TOO_WIDE,
        REPRODUCED,
    )
    assert set(rows.loc[rows["sentence"] == RESULTS, "sentence_reading"]) == {T0_ONLY}
    assert set(headline["read_at"]) == {T0_ONLY} and set(headline["relation"]) == {"restates"}
    assert set(headline["sentence_reading"]) == {CANNOT_TELL}  # on its own: temperature 1.0 only
    restating = rows[rows["relation"] == "restates"]
    assert not set(restating["sentence_reading"]) & {T1_ONLY, BOTH_READINGS}
    entries = {e.name: e for e in opening_entries(result)}
    assert entries[RESULTS].kind == HELD_KIND and entries[RESULTS].text == f"{RESULTS} ({T0_ONLY})"
    assert entries["headline"].kind == CANNOT_TELL_KIND
    assert f"read at the reading of {RESULTS}, whose figures it restates: {T0_ONLY}" in entries["headline"].text
    assert entries["essay-conclusion"].text == f"essay-conclusion ({T0_ONLY})"


def test_an_acceptance_miss_is_the_explanations_own(claims: list[Claim]) -> None:
    """MTP's acceptance 80 % on new code against 84 +-2.5 %, at both temperatures, on the study's setup: the six
    multipliers, 2.27x and 0.69x keep "both readings"; the acceptance sentence reads neither, a miss of its own,
    named as not reproduced with the prompt dependence beside it; the DFlash settings table says which setting each
    reproduced claim matches, never "neither"."""
    result = evaluate(claims, study_run(drafts=ACCEPTANCE_MISS), baseline=BASELINE, setup=STUDY)
    rows = base(result)
    explaining = rows.index.isin(["dflash-todo-app-speedup", "dflash-essay-speedup-why"])  # 2.27x and 0.69x
    figures = rows[(rows["sentence"] == RESULTS) | explaining]
    assert len(figures) == 8 and set(figures["sentence_reading"]) == {BOTH_READINGS}
    assert set(figures["verdict"]) == set(figures["verdict_t1"]) == {REPRODUCED}
    acceptance = rows[rows["sentence"] == "mtp-acceptance"]
    assert set(acceptance["sentence_reading"]) == {NEITHER_READING} and set(acceptance["read_at"]) == {BOTH_READINGS}
    miss = rows.loc["mtp-todo-app-acceptance"]
    assert (miss["verdict"], miss["verdict_t1"]) == (NOT_SIZE, NOT_SIZE) and failed(miss)
    assert not any(failed(r) for _, r in rows.drop(index="mtp-todo-app-acceptance").iterrows())
    entries = {e.name: e for e in opening_entries(result)}
    assert {e.name for e in entries.values() if e.kind != HELD_KIND} == {"mtp-acceptance"}
    assert entries["mtp-acceptance"].kind == NOT_REPRODUCED_KIND
    assert "prompt-dependent" in entries["mtp-acceptance"].text
    (section,) = settings_section(result)
    matches = {r["id"]: r["matches"] for r in section.table.rows}
    assert set(matches.values()) == {"as claimed and dflash-n15"}, matches


def test_a_claim_that_held_at_both_temperatures_matches_its_setting_whatever_its_sentence(
    published_rows: list[Row],
) -> None:
    """A DFlash claim reproduced at both temperatures, in a sentence another figure fails: borne out (its setting
    matches), not failed."""
    rows = [dict(r) for r in published_rows]
    for r in rows:
        if r["id"] in ("ngram-file-rewrite-speedup",):
            r["verdict"] = r["verdict_t1"] = NOT_SIZE
    read_together(rows)
    result = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    dflash = result.set_index("id").loc["dflash-file-rewrite-speedup"]
    assert dflash["sentence_reading"] == NEITHER_READING
    assert supported(dflash) and not failed(dflash)
    (section,) = settings_section(result)
    assert {r["id"]: r["matches"] for r in section.table.rows}["dflash-file-rewrite-speedup"] == (
        "as claimed and dflash-n15"
    )


# ---------------------------------------------------------------------------------------------------------------
# The walk: every sentence read with another can hold and can fail at the reading it is read at, and never moves it


STATED_READINGS = {  # a reading of the results, and the verdicts (at 0, at 1.0) of one results figure that give it
    BOTH_READINGS: (REPRODUCED, REPRODUCED),
    T0_ONLY: (REPRODUCED, NOT_SIZE),
    T1_ONLY: (NOT_SIZE, REPRODUCED),
}
AT = {BOTH_READINGS: (0, 1), T0_ONLY: (0,), T1_ONLY: (1,)}


def reread(rows: list[Row], changes: dict[str, tuple[str, str]]) -> dict[str, Row]:
    """The rows (claims as claimed) with ``changes`` to their verdicts at (0, 1.0), read together again."""
    copied = [dict(r) for r in rows]
    for r in copied:
        if r["id"] in changes:
            r["verdict"], r["verdict_t1"] = changes[r["id"]]
    read_together(copied)
    return {r["id"]: r for r in copied if r["variant_of"] is None}


def linked_sentences(rows: list[Row]) -> dict[str, list[Row]]:
    linked: dict[str, list[Row]] = {}
    for r in rows:
        if r["read_with"] and r["variant_of"] is None:
            linked.setdefault(r["sentence"], []).append(r)
    return linked


@pytest.mark.parametrize("stated", list(STATED_READINGS))
def test_every_sentence_read_with_the_results_holds_and_fails_at_their_reading(
    published_rows: list[Row], stated: str
) -> None:
    """For each reading of the results (one results figure missing at the other temperature) and each sentence that
    explains or restates them: held as published, at that reading; a miss of one of its claims at each temperature
    of that reading reads neither (failed, and not reproduced in the opening); a miss at a temperature the reading
    leaves out changes nothing; the results' reading never moves."""
    first = next(r["id"] for r in published_rows if r["sentence"] == RESULTS and r["variant_of"] is None)
    results = {first: STATED_READINGS[stated]}
    linked = linked_sentences(published_rows)
    assert len(linked) >= 10
    read = reread(published_rows, results)
    for sentence, members in linked.items():
        assert {read[m["id"]]["sentence_reading"] for m in members} == {stated}, sentence
        assert {read[m["id"]]["read_at"] for m in members} == {stated}, sentence
        one = next(m for m in members if not m["readings"])  # a figure read one way: its miss is the figure's
        miss = [NOT_REPRODUCED] * 2
        kept = [one["verdict"], one["verdict_t1"]]
        at_each = tuple(miss[i] if i in AT[stated] else kept[i] for i in (0, 1))
        missed = reread(published_rows, {**results, one["id"]: at_each})
        assert {missed[m["id"]]["sentence_reading"] for m in members} == {NEITHER_READING}, sentence
        assert missed[first]["sentence_reading"] == stated
        assert failed(missed[one["id"]])
        frame = pd.DataFrame(list(missed.values()), columns=RESULT_COLUMNS)
        kinds = {e.name: e.kind for e in opening_entries(frame)}
        assert kinds.get(sentence, kinds.get(one["id"])) == NOT_REPRODUCED_KIND, sentence
        if stated != BOTH_READINGS:  # a miss only where the reading does not look
            elsewhere = tuple(miss[i] if i not in AT[stated] else kept[i] for i in (0, 1))
            aside = reread(published_rows, {**results, one["id"]: elsewhere})
            assert {aside[m["id"]]["sentence_reading"] for m in members} == {stated}, sentence


WORDS = [v for v in VERDICTS if v != BACKGROUND]


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_on_any_verdicts_the_results_decide_their_own_reading(published_rows: list[Row], data: Any) -> None:
    """Verdicts drawn at random for every claim row: the results' reading is the one their own figures give,
    whatever the sentences read with them say; a sentence read with them names no temperature their reading leaves
    out, and is read on its own exactly where their reading is not one of the temperature."""
    rows = [dict(r) for r in published_rows if r["verdict"] != BACKGROUND]
    for r in rows:
        r["verdict"] = data.draw(st.sampled_from(WORDS))
        if r["verdict_t1"] is not None:
            r["verdict_t1"] = data.draw(st.sampled_from(WORDS))
    read_together(rows)
    own = [r for r in rows if r["sentence"] == RESULTS and r["variant_of"] is None]
    stated = supported_reading([r["verdict"] for r in own], [r["verdict_t1"] for r in own])
    assert {r["sentence_reading"] for r in own} == {stated}
    for r in (r for r in rows if r["read_with"] == RESULTS and r["variant_of"] is None):
        assert r["sentence_reading"] in READING_WORDS
        if stated not in SUPPORTED_READINGS:
            assert r["read_at"] is None
            continue
        assert r["read_at"] == stated
        left_out = {T0_ONLY: {T1_ONLY, BOTH_READINGS}, T1_ONLY: {T0_ONLY, BOTH_READINGS}}.get(stated, set())
        assert r["sentence_reading"] not in left_out
