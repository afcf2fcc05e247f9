"""A Python value as standard JSON and back, losing nothing the tables and verdicts hold: JSON's own values (a
finite float, an int, a string, a bool, null, a list, an object with string keys) are written as they are; what JSON
has no form for is written as a one-key object whose key starts with '$': ``{"$float": "nan"}`` (also "inf",
"-inf"), ``{"$tuple": [...]}``, ``{"$items": [[key, value], ...]}`` (a mapping with a key that is not a string, or a
string starting with '$'), ``{"$time": "<ISO 8601>"}`` (a timestamp), ``{"$missing": "NA"}`` (pandas' NA; "NaT" for
a missing time). numpy scalars are written as the Python number they hold, a numpy array as its list."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_TAGS = ("$float", "$tuple", "$items", "$time", "$missing")


def to_json(value: Any) -> Any:
    """``value`` as JSON-ready data (see the module docstring); TypeError names a value of no supported type."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else {"$float": _float_name(number)}
    if value is pd.NA:
        return {"$missing": "NA"}
    if value is pd.NaT:
        return {"$missing": "NaT"}
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        return {"$time": pd.Timestamp(value).isoformat()}
    if isinstance(value, tuple):
        return {"$tuple": [to_json(v) for v in value]}
    if isinstance(value, (list, np.ndarray)):
        return [to_json(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: to_json(v) for k, v in value.items()}
        return {"$items": [[to_json(k), to_json(v)] for k, v in value.items()]}
    raise TypeError(f"no JSON form for a value of type {type(value).__name__}: {value!r:.80}")


def from_json(data: Any) -> Any:
    """The value ``to_json`` wrote as ``data``."""
    if isinstance(data, list):
        return [from_json(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) == 1 and next(iter(data)) in _TAGS:
        ((tag, body),) = data.items()
        if tag == "$float":
            return _FLOATS[body]
        if tag == "$tuple":
            return tuple(from_json(v) for v in body)
        if tag == "$items":
            return {from_json(k): from_json(v) for k, v in body}
        if tag == "$time":
            return pd.Timestamp(body)
        return pd.NA if body == "NA" else pd.NaT
    return {k: from_json(v) for k, v in data.items()}


def _float_name(number: float) -> str:
    return "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")
