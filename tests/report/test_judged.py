"""The judged claims as rule claims writes them (results/judged.json) and the report reads them back: every table of
verdicts, whatever columns the judging gives it, the setup they were judged under and the predictions' integrity
read back as written; a file that is not what the ``judged`` schema says is refused, naming the file and the
place."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specbench.core.results.documents import DocumentError
from specbench.core.results.judged import Comparability, Fact, Judged, judged_document, read_judged, write_judged
from support.same_tables import assert_same_judged

TEXTS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12)
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
MEASURED = st.recursive(
    st.none() | st.booleans() | st.integers() | FLOATS | TEXTS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=2).map(tuple)
        | st.dictionaries(TEXTS | st.integers() | st.floats(allow_nan=False), inner, max_size=3)
    ),
    max_leaves=10,
)
# Columns the judging may add (any name, any kind of value), beside those every table of verdicts has
EXTRA = {
    "text": (st.none() | TEXTS, object),
    "number": (FLOATS, "float64"),
    "count": (st.none() | st.integers(-(2**63), 2**63 - 1), "Int64"),
    "flag": (st.booleans(), "bool"),
    "words": (st.lists(TEXTS, max_size=3), object),
    "anything": (MEASURED, object),
}


@st.composite
def verdicts(draw: st.DrawFn) -> pd.DataFrame:
    """A table of judged claims as claims.evaluate makes one: its columns, and some more of any kind."""
    rows = draw(st.integers(0, 4))

    def column(values: st.SearchStrategy, dtype: object) -> pd.Series:
        return pd.Series(draw(st.lists(values, min_size=rows, max_size=rows)), dtype=dtype)

    table = {
        "id": column(TEXTS, "str"),
        "kind": column(st.sampled_from(["speedup", "identity", "thesis"]), "str"),
        "published": column(MEASURED, object),
        "temperature": column(st.none() | st.sampled_from([0.0, 1.0]), object),
        "measured": column(MEASURED, object),
        "verdict": column(st.sampled_from(["reproduced", "not reproduced", "too few runs"]), "str"),
        "detail": column(TEXTS, "str"),
        "cells": column(st.lists(TEXTS, max_size=3), object),
        "prompt_dependent": column(st.booleans(), "bool"),
        "variant_of": column(st.none() | TEXTS, object),
    }
    for name in draw(st.lists(st.sampled_from(sorted(EXTRA)), max_size=3, unique=True)):
        table[f"added_{name}"] = column(*EXTRA[name])
    return pd.DataFrame(table, index=pd.RangeIndex(rows))


FACTS = st.builds(Fact, name=TEXTS, study=TEXTS, this_run=TEXTS, matches=st.booleans())
JUDGED = st.builds(
    Judged,
    comparability=st.builds(Comparability, facts=st.lists(FACTS, max_size=3), device=TEXTS),
    claims=verdicts(),
    predictions=st.none() | verdicts(),
    integrity=st.none() | st.dictionaries(TEXTS, st.none() | st.booleans() | TEXTS, max_size=3),
    machines=st.none() | st.dictionaries(st.sampled_from(["a100", "h200", "local"]), verdicts(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(judged=JUDGED)
def test_the_judged_claims_read_back_are_those_written(judged: Judged, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("judged") / "judged.json"
    write_judged(path, judged)
    assert_same_judged(judged, read_judged(path))
    json.loads(path.read_text(), parse_constant=pytest.fail)  # standard JSON: no NaN or Infinity anywhere


def test_a_judged_file_without_a_verdict_is_refused_naming_the_file_and_the_row(tmp_path: Path) -> None:
    claims = pd.DataFrame({"id": ["speedup-essay"], "kind": ["speedup"], "verdict": ["reproduced"], "detail": [""]})
    judged = Judged(Comparability([Fact("GPU", "A100", "CPU", False)], "CPU"), claims)
    document = judged_document(judged)
    del document["claims"]["rows"][0]["verdict"]
    path = tmp_path / "judged.json"
    path.write_text(json.dumps(document))
    with pytest.raises(DocumentError) as refused:
        read_judged(path)
    assert str(refused.value) == (
        f"{path}: not a judged document (schemas/judged.schema.json): at claims/rows/0: 'verdict' is a required "
        "property"
    )
    with pytest.raises(DocumentError, match=r"judged\.json: not a judged document .* at claims/columns: "):
        write_judged(path, Judged(judged.comparability, claims.drop(columns=["verdict"])))
