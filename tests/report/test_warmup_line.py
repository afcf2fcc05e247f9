"""The report's setup says which request of its server each cell timed (report.sections.context.warmup_line): after
a discarded warm-up of N tokens, or a fresh server's first request as the study timed it, on any mix of cells."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from specbench.report.sections.context import warmup_line


@given(st.lists(st.one_of(st.none(), st.integers(1, 64)), min_size=1, max_size=12))
def test_the_line_names_every_warm_up_size_and_the_cells_without_one(warmups: list[int | None]) -> None:
    line = warmup_line(pd.DataFrame({"warmup_tokens": pd.array(warmups, dtype="Int64")}))
    sizes = sorted({n for n in warmups if n is not None})
    unwarmed = sum(n is None for n in warmups)
    if not sizes:
        assert line.startswith("No warm-up request") and "first request" in line
        return
    assert f"({' or '.join(map(str, sizes))} tokens" in line
    assert (f"{unwarmed} cells had none" in line) == bool(unwarmed)


def test_a_table_from_before_the_column_had_no_warm_up() -> None:
    assert warmup_line(pd.DataFrame({"task": ["essay"]})).startswith("No warm-up request")
