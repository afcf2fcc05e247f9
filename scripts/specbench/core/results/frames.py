"""A table (pandas DataFrame) as a Parquet file or as part of a JSON document, read back equal: same columns in the
same order, same dtypes, same values (NaN, missing values and Python objects included).

Typed columns (numbers, flags, nullable integers and flags, strings, times) are Parquet's own types, kept with
pandas' metadata. A column of Python objects is stored by what it holds (this file's metadata, key ``specbench``,
says which): text (strings and None) as strings; lists of one kind of scalar (strings, integers, floats or flags,
None among them) as Parquet lists; anything else (mappings, tuples, nested or mixed values) as a string column of
JSON (core.results.values), which any tool can read as text and parse."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from specbench.core.results.values import from_json, to_json
from specbench.core.steps.files import write_atomic

METADATA_KEY = b"specbench"
TEXT, LIST, JSON = "text", "list", "json"  # how a column of Python objects is stored
_SCALARS = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def json_text(value: Any) -> str:
    """One value as standard JSON text (core.results.values)."""
    return json.dumps(to_json(value), ensure_ascii=False, allow_nan=False)


def write_frame(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as a Parquet file, atomically."""
    write_atomic(Path(path), parquet_bytes(frame))


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as the bytes of a Parquet file (see the module docstring)."""
    names = _names(frame)
    kinds = {name: _stored(frame[name]) for name in names if frame[name].dtype == object}
    empty = {name: pd.Series([None] * len(frame), index=frame.index, dtype=object) for name in kinds}
    table = pa.Table.from_pandas(frame.assign(**empty), preserve_index=None)
    for name, (_, array) in kinds.items():
        table = table.set_column(table.schema.get_field_index(name), pa.field(name, array.type), array)
    own = {"columns": names, "rows": len(frame), "objects": {name: kind for name, (kind, _) in kinds.items()}}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), METADATA_KEY: json.dumps(own).encode()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def read_frame(path: Path) -> pd.DataFrame:
    """The table ``write_frame`` wrote at ``path``."""
    table = pq.read_table(path)
    own = json.loads((table.schema.metadata or {}).get(METADATA_KEY, b"{}"))
    objects: Mapping[str, str] = own.get("objects", {})
    frame = table.drop_columns(list(objects)).to_pandas()
    if frame.shape[1] == 0 and len(frame) != own.get("rows", len(frame)):  # Parquet keeps no rows without columns
        frame = pd.DataFrame(index=pd.RangeIndex(own["rows"]))
    for name, kind in objects.items():
        values = table.column(name).to_pylist()
        if kind == JSON:
            values = [from_json(json.loads(v)) for v in values]
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    return frame[own.get("columns", list(frame.columns))]


def _names(frame: pd.DataFrame) -> list[str]:
    names = list(frame.columns)
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"a stored table needs distinct string column names, not {names}")
    return names


def _stored(column: pd.Series) -> tuple[str, pa.Array]:
    """How a column of Python objects is stored (TEXT, LIST or JSON), and its Arrow array."""
    values = list(column)
    if all(v is None or isinstance(v, str) for v in values):
        return TEXT, pa.array(values, type=pa.string())
    element = _list_element(values)
    if element is not None:
        try:
            return LIST, pa.array(values, type=pa.list_(element), from_pandas=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass  # e.g. an integer beyond 64 bits: JSON keeps it
    return JSON, pa.array([json_text(v) for v in values], type=pa.string())


def _list_element(values: Iterable[Any]) -> pa.DataType | None:
    """The Arrow type of the elements when every value is a list (or None) of one kind of scalar (None among
    them); None otherwise."""
    kinds = set()
    for value in values:
        if value is None:
            continue
        if type(value) is not list:
            return None
        kinds.update(_scalar_kind(v) for v in value if v is not None)
    if len(kinds) > 1 or None in kinds:
        return None
    return _SCALARS[kinds.pop()] if kinds else pa.string()


def _scalar_kind(value: Any) -> type | None:
    if isinstance(value, (bool, np.bool_)):
        return bool
    if isinstance(value, str):
        return str
    if isinstance(value, (int, np.integer)):
        return int
    if isinstance(value, (float, np.floating)):
        return float
    return None


# --- a table inside a JSON document: its columns (name and dtype) and its rows (one object per row)


def frame_document(frame: pd.DataFrame) -> dict[str, Any]:
    """``frame`` as JSON-ready data: ``columns`` (each a name and its pandas dtype) and ``rows`` (one object per
    row, every column's value; a typed column's missing value as null). Its rows are in order, without an index."""
    names = _names(frame)
    if not frame.index.equals(pd.RangeIndex(len(frame))):
        raise ValueError("a table in a JSON document keeps its rows in order, without an index: reset it first")
    typed = {name for name in names if frame[name].dtype != object}
    return {
        "columns": [{"name": name, "dtype": str(frame[name].dtype)} for name in names],
        "rows": [
            {name: None if name in typed and _missing(value) else to_json(value) for name, value in row.items()}
            for row in _records(frame, names)
        ],
    }


def frame_of_document(data: Mapping[str, Any]) -> pd.DataFrame:
    """The table ``frame_document`` wrote as ``data``."""
    columns: Sequence[Mapping[str, str]] = data["columns"]
    rows = data["rows"]
    frame = pd.DataFrame(index=pd.RangeIndex(len(rows)))
    for column in columns:
        values = pd.Series([from_json(r.get(column["name"])) for r in rows], index=frame.index, dtype=object)
        frame[column["name"]] = values if column["dtype"] == "object" else values.astype(column["dtype"])
    return frame


def _records(frame: pd.DataFrame, names: Sequence[str]) -> Iterable[dict[str, Any]]:
    """Each row's values as the frame holds them (no conversion by pandas' row access)."""
    columns = [frame[name].tolist() if frame[name].dtype != object else list(frame[name]) for name in names]
    for row in range(len(frame)):
        yield {name: column[row] for name, column in zip(names, columns, strict=True)}


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)
