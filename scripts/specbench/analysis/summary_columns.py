"""What every summary table shares: the few per-cell columns a summary reads, and a group's values
sorted as one list."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def sorted_list(values: pd.Series) -> list:
    return sorted(values.tolist())


def narrow(cells: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The per-cell table's ``columns`` alone (each once, in that order): filtering and grouping the few columns a
    summary reads is much cheaper than copying every column of the wide table."""
    return cells[list(dict.fromkeys(columns))]
