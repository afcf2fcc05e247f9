"""Equality of tables, values and judged claims read back from a file with those written: the same columns in the
same order, the same dtypes and index, and each value the same at any depth, NaN the same as NaN and the kind of each
value counting (a tuple is not a list, 1 is not 1.0 or True; a numpy scalar is the Python number it holds)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from specbench.core.results.judged import Judged


def _kind(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, str):
        return "str"
    return type(value).__name__


def difference(left: Any, right: Any, where: str = "value") -> str | None:
    """Where and how ``left`` and ``right`` differ (None when they are the same)."""
    if _kind(left) != _kind(right):
        return f"{where}: {_kind(left)} {left!r:.60} vs {_kind(right)} {right!r:.60}"
    if isinstance(left, float) and math.isnan(left):
        return None if math.isnan(right) else f"{where}: nan vs {right!r}"
    if isinstance(left, (list, tuple)):
        if len(left) != len(right):
            return f"{where}: {len(left)} vs {len(right)} items"
        pairs = enumerate(zip(left, right, strict=True))
        return next((d for i, (a, b) in pairs if (d := difference(a, b, f"{where}[{i}]"))), None)
    if isinstance(left, Mapping):
        if list(left) != list(right):
            return f"{where}: keys {list(left)!r:.80} vs {list(right)!r:.80}"
        return next((d for k in left if (d := difference(left[k], right[k], f"{where}[{k!r}]"))), None)
    if left is pd.NA or left is pd.NaT:
        return None if right is left else f"{where}: {left!r} vs {right!r}"
    return None if left == right else f"{where}: {left!r:.60} vs {right!r:.60}"


def assert_same_table(left: pd.DataFrame, right: pd.DataFrame, what: str = "table") -> None:
    """``right`` holds what ``left`` holds (see the module docstring)."""
    assert list(left.columns) == list(right.columns), (what, list(left.columns), list(right.columns))
    assert left.dtypes.astype(str).tolist() == right.dtypes.astype(str).tolist(), (what, left.dtypes, right.dtypes)
    pd.testing.assert_index_equal(left.index, right.index)
    for name in left.columns:
        if left[name].dtype != object:
            pd.testing.assert_series_equal(left[name], right[name], check_exact=True, obj=f"{what}.{name}")
            continue
        for i, (a, b) in enumerate(zip(left[name], right[name], strict=True)):
            found = difference(a, b, f"{what}.{name}[{i}]")
            assert found is None, found


def assert_same_judged(written: Judged, read: Judged) -> None:
    """``read`` holds the judgements ``written`` holds: the setup, every table of verdicts, the integrity."""
    assert read.comparability == written.comparability
    assert_same_table(written.claims, read.claims, "claims")
    assert (read.predictions is None) == (written.predictions is None)
    if written.predictions is not None:
        assert_same_table(written.predictions, read.predictions, "predictions")
    assert difference(written.integrity, read.integrity, "integrity") is None
    assert (read.machines is None) == (written.machines is None)
    assert list(read.machines or {}) == list(written.machines or {})
    for label, table in (written.machines or {}).items():
        assert_same_table(table, read.machines[label], label)
