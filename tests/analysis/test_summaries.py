"""Every summary of a per-cell table read back from Parquet (analysis.summaries.tables), and the table's CSV copy."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from specbench.analysis.cell_table import csv_copy, frame_of, read_table, write_table
from specbench.analysis.summaries import tables
from support.token_rows import drifting_tokens, token_rows


def test_parquet_round_trip_keeps_types_and_csv_copy_keeps_lists_readable(tmp_path: Path) -> None:
    rows = token_rows(drifting_tokens())
    rows[0] |= {
        "gsm8k_correct": 2,
        "gsm8k_total": 3,
        "started_at": "2026-11-30T06:00:00.123+00:00",
        "gsm8k_wrong": [{"problem": 3, "extracted": "25000", "reference": "70000"}],
        "rejected_reasons": ["foreign GPU process 4242"],
    }
    cells = frame_of(rows, "off")
    write_table(cells, tmp_path / "cells.parquet")
    again = read_table(tmp_path / "cells.parquet")
    pd.testing.assert_frame_equal(again, cells)
    assert str(again.repeat.dtype) == "Int64" and str(again.identical.dtype) == "boolean"
    assert again.temperature.dtype == float and str(again.started_at.dtype) == "datetime64[ms, UTC]"
    first = again[again.gsm8k_correct.notna()].iloc[0]
    assert first.gsm8k_wrong == [{"problem": 3, "extracted": "25000", "reference": "70000"}]
    assert isinstance(first.tokens, list) and all(type(t) is int for t in first.tokens)
    csv = csv_copy(again)
    assert not {"tokens", "chunk_ms", "chunk_tokens", "load_tokens"} & set(csv.columns)
    assert (
        csv[csv.gsm8k_correct.notna()].iloc[0].gsm8k_wrong == '[{"problem": 3, "extracted": "25000", '
        '"reference": "70000"}]'
    )
    assert set(tables(again, "off")) == {
        "cells",
        "summary",
        "acceptance",
        "positions",
        "latency",
        "identity",
        "prompts",
        "spread",
        "deciding",
        "categories",
        "thesis",
        "thesis_settings",
        "load",
    }
