"""The files the back half's rules hand each other (core.results): every value, table and folder of tables read back
from its file is what was written (columns, dtypes, NaN and missing values, Python objects at any depth), and a
file that is not what its JSON Schema says is refused, naming the file and the place in it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specbench.core.results.documents import (
    SCHEMAS,
    DocumentError,
    document_text,
    read_document,
    schema,
    write_document,
)
from specbench.core.results.frames import (
    JSON,
    LIST,
    METADATA_KEY,
    TEXT,
    frame_document,
    frame_of_document,
    parquet_bytes,
    read_frame,
    write_frame,
)
from specbench.core.results.tables import CELLS, INDEX, Part, read_table_folder, select, write_table_folder
from specbench.core.results.values import from_json, to_json
from support.same_tables import assert_same_table, difference

TEXTS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
INT64 = st.integers(-(2**63), 2**63 - 1)
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), FLOATS, TEXTS)
KEYS = st.one_of(TEXTS, st.integers(), st.floats(allow_nan=False), st.tuples(st.integers(), TEXTS))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(KEYS, inner, max_size=3),
    ),
    max_leaves=12,
)
MS = st.integers(-(10**12), 4 * 10**12)  # milliseconds around 1970-2096


def _times(values: list[int | None], unit: str, utc: bool) -> pd.Series:
    times = pd.to_datetime(pd.Series(values, dtype="Int64").astype("float64"), unit=unit, utc=utc)
    return times.astype(f"datetime64[{unit}, UTC]" if utc else f"datetime64[{unit}]")


# kind -> (one value's strategy, how a list of them becomes a column)
COLUMNS = {
    "float64": (FLOATS, lambda v: pd.Series(v, dtype="float64")),
    "int64": (INT64, lambda v: pd.Series(v, dtype="int64")),
    "Int64": (st.none() | INT64, lambda v: pd.Series(v, dtype="Int64")),
    "bool": (st.booleans(), lambda v: pd.Series(v, dtype="bool")),
    "boolean": (st.none() | st.booleans(), lambda v: pd.Series(v, dtype="boolean")),
    "str": (st.none() | TEXTS, lambda v: pd.Series(v, dtype="str")),
    "text objects": (st.none() | TEXTS, lambda v: pd.Series(v, dtype=object)),
    "UTC times (ms)": (st.none() | MS, lambda v: _times(v, "ms", utc=True)),
    "times (ns)": (st.none() | MS.map(lambda ms: ms * 10**6), lambda v: _times(v, "ns", utc=False)),
    "integer lists": (st.none() | st.lists(st.none() | INT64, max_size=3), lambda v: pd.Series(v, dtype=object)),
    "float lists": (st.none() | st.lists(FLOATS, max_size=3), lambda v: pd.Series(v, dtype=object)),
    "text lists": (st.lists(TEXTS, max_size=3), lambda v: pd.Series(v, dtype=object)),
    "objects": (VALUES, lambda v: pd.Series(v, dtype=object)),
}


@st.composite
def tables(draw: st.DrawFn, max_rows: int = 5) -> pd.DataFrame:
    """A table of 0 to ``max_rows`` rows and up to six columns of any kind above, in any order."""
    rows = draw(st.integers(0, max_rows))
    names = draw(st.lists(st.text("abcdefgh_", min_size=1, max_size=6), max_size=6, unique=True))
    columns = {}
    for name in names:
        values, column = COLUMNS[draw(st.sampled_from(sorted(COLUMNS)))]
        columns[name] = column(draw(st.lists(values, min_size=rows, max_size=rows)))
    return pd.DataFrame(columns, index=pd.RangeIndex(rows))


BOUNDED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@BOUNDED
@given(value=VALUES)
def test_a_value_read_back_from_its_json_is_the_value(value: object) -> None:
    text = json.dumps(to_json(value), allow_nan=False)  # standard JSON: no NaN or Infinity
    assert difference(value, from_json(json.loads(text))) is None


@BOUNDED
@given(table=tables())
def test_a_table_read_back_from_parquet_is_the_table(table: pd.DataFrame, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("frame") / "table.parquet"
    write_frame(table, path)
    assert_same_table(table, read_frame(path))


@BOUNDED
@given(table=tables())
def test_a_table_read_back_from_a_json_document_is_the_table(table: pd.DataFrame) -> None:
    text = json.dumps(frame_document(table), allow_nan=False)
    assert_same_table(table, frame_of_document(json.loads(text)))


def test_columns_of_python_objects_are_stored_as_plain_parquet_columns(tmp_path: Path) -> None:
    """Text as strings, lists of one kind of scalar as Parquet lists, anything else as JSON text any tool parses."""
    table = pd.DataFrame(
        {
            "verdict": pd.Series(["faster", None], dtype=object),
            "cells": pd.Series([["a.json", "b.json"], []], dtype=object),
            "speeds": pd.Series([[1.5, float("nan")], None], dtype=object),
            "matrix": pd.Series([{"essay": {"mtp": 1.5}}, {0.0: (1, 2)}], dtype=object),
        }
    )
    write_frame(table, tmp_path / "t.parquet")
    stored = pq.read_table(tmp_path / "t.parquet")
    kinds = json.loads(stored.schema.metadata[METADATA_KEY])["objects"]
    assert kinds == {"verdict": TEXT, "cells": LIST, "speeds": LIST, "matrix": JSON}
    assert stored.schema.field("cells").type == pa.list_(pa.string())
    assert stored.schema.field("speeds").type == pa.list_(pa.float64())
    assert json.loads(stored.column("matrix")[0].as_py()) == {"essay": {"mtp": 1.5}}
    plain = pd.read_parquet(tmp_path / "t.parquet")  # any reader: pandas alone, without this package
    assert list(plain.columns) == list(table.columns) and list(plain.cells[0]) == ["a.json", "b.json"]


def test_a_table_of_odd_column_names_or_an_index_is_refused_for_a_document() -> None:
    with pytest.raises(ValueError, match="distinct string column names"):
        parquet_bytes(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(ValueError, match="without an index"):
        frame_document(pd.DataFrame({"a": [1, 2]}, index=[5, 6]))


def test_a_value_of_no_json_form_is_named() -> None:
    with pytest.raises(TypeError, match="no JSON form for a value of type object"):
        to_json({"x": object()})


# --- the folder of tables


BUILDS, MACHINES = ["", "b8000", "b8100"], ["local", "a100", "h200.x"]


@st.composite
def table_folders(draw: st.DrawFn) -> tuple[pd.DataFrame, list[Part]]:
    """A per-cell table of some builds and machines, and each build's and machine's summaries."""
    builds = draw(st.lists(st.sampled_from(BUILDS), min_size=1, max_size=2, unique=True))
    machines = draw(st.lists(st.sampled_from(MACHINES), min_size=1, max_size=2, unique=True))
    rows = draw(st.lists(st.tuples(st.sampled_from(builds), st.sampled_from(machines), FLOATS), max_size=8))
    cells = pd.DataFrame(rows, columns=["build", "machine", "tokens_per_s"]).astype({"build": "str", "machine": "str"})
    names = draw(st.lists(st.sampled_from(["summary", "acceptance", "thesis", "identity"]), max_size=3, unique=True))
    parts = [
        Part(build, machine, {name: draw(tables(max_rows=3)) for name in names}, {"build": build, "machine": machine})
        for build in builds
        for machine in machines
    ]
    return cells, parts


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(folder=table_folders())
def test_a_folder_of_tables_read_back_is_every_build_and_machine_with_its_cells(folder, tmp_path_factory) -> None:
    cells, parts = folder
    path = tmp_path_factory.mktemp("tables") / "tables"
    write_table_folder(path, parts)
    back = read_table_folder(path, cells)
    assert [(b, m) for b, machines in back.items() for m in machines] == [(p.build, p.machine) for p in parts]
    for part in parts:
        read = back[part.build][part.machine]
        assert list(read) == [CELLS, *part.tables]
        assert_same_table(select(cells, part.cells), read[CELLS], "cells")
        assert set(read[CELLS].machine) <= {part.machine} and set(read[CELLS].build) <= {part.build}
        for name, table in part.tables.items():
            assert_same_table(table, read[name], name)


def test_a_folder_of_tables_is_replaced_whole_and_holds_no_cells(tmp_path: Path) -> None:
    table = pd.DataFrame({"speedup": [1.5]})
    write_table_folder(tmp_path / "t", [Part("", "local", {"summary": table, "old": table}, {"machine": "local"})])
    write_table_folder(tmp_path / "t", [Part("", "local", {"summary": table}, {"machine": "local"})])
    assert sorted(p.relative_to(tmp_path / "t").as_posix() for p in (tmp_path / "t").rglob("*.*")) == [
        "_/local/summary.parquet",
        INDEX,
    ]
    with pytest.raises(ValueError, match="read from the per-cell table"):
        write_table_folder(tmp_path / "u", [Part("", "local", {CELLS: table}, {"machine": "local"})])
    assert not (tmp_path / "u").exists() and [p.name for p in tmp_path.iterdir()] == ["t"]


# --- documents and their schemas


def test_every_schema_is_a_valid_json_schema() -> None:
    names = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))
    assert names == ["figures", "judged", "tables"]
    for name in names:
        jsonschema.Draft202012Validator.check_schema(schema(name))


def test_a_tables_index_that_is_not_what_its_schema_says_is_refused_naming_the_file(tmp_path: Path) -> None:
    write_table_folder(tmp_path / "t", [Part("", "local", {"summary": pd.DataFrame({"a": [1]})}, {"machine": "m"})])
    index = tmp_path / "t" / INDEX
    document = json.loads(index.read_text())
    assert read_document(index, "tables") == document
    document["builds"][0]["machines"][0]["tables"][0]["file"] = "/etc/summary.csv"
    index.write_text(json.dumps(document))
    with pytest.raises(DocumentError) as refused:
        read_table_folder(tmp_path / "t", pd.DataFrame({"machine": ["m"]}))
    message = str(refused.value)
    assert message.startswith(f"{index}: not a tables document (schemas/tables.schema.json): at ")
    assert "builds/0/machines/0/tables/0/file" in message and "does not match" in message
    index.write_text('{"builds": [')
    with pytest.raises(DocumentError, match=rf"^{index}: not JSON: "):
        read_document(index, "tables")


def test_a_document_is_checked_before_it_is_written(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"figures\.json: not a figures document .* at figures/0: 'caption'"):
        write_document(tmp_path / "figures.json", {"figures": [{"name": "thesis", "file": "thesis.png"}]}, "figures")
    assert not (tmp_path / "figures.json").exists()
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        document_text({"figures": [], "x": float("nan")})  # standard JSON only
