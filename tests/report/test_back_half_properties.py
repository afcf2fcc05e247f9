"""The whole back half (summaries, claims and predictions, figures, Markdown and HTML report, provenance) on
generated per-cell tables of every shape a run can produce (support.cell_tables): no exception, every interval holds
its estimate, every verdict is a documented word, every linked number resolves in provenance (support.back_half).
Seeded and bounded (profile ``CI_PROFILE``); bench/back_half_properties.py runs the same property on many more."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from support.back_half import (
    CI_PROFILE,
    SETUPS,
    check_back_half,
)
from support.cell_tables import GeneratedRun, cell_tables


@settings(settings.get_profile(CI_PROFILE))
@given(run=cell_tables(), setup=st.sampled_from(SETUPS))
def test_the_back_half_holds_on_every_shape_of_table(run: GeneratedRun, setup: str) -> None:
    with tempfile.TemporaryDirectory(prefix="back-half-") as root:
        check_back_half(run, Path(root), setup)
