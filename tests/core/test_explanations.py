"""Where two token sequences first differ (core.records.explanations.first_difference)."""

from __future__ import annotations

import pytest

from specbench.core.records.explanations import first_difference

BASE = [151644, 872, 198, 2610, 525, 264, 10950, 17847, 13, 151645]


@pytest.mark.parametrize(
    ("a", "b", "first"),
    [
        (BASE, list(BASE), None),
        ([], [], None),
        ([], BASE, 0),  # empty vs non-empty: differs at 0
        ([198, *BASE[1:]], BASE, 0),  # diverges at the very first token
        ([*BASE[:6], 11, *BASE[7:]], BASE, 6),  # diverges later, same length
        (BASE[:7], BASE, 7),  # a prefix of b: the shorter length
        ([*BASE, 271, 40], BASE, 10),  # b a prefix of a
        ((1, 2, 3), [1, 2, 4, 5], 2),  # tuples work, first difference before the length difference
    ],
)
def test_first_difference(a: list[int], b: list[int], first: int | None) -> None:
    assert first_difference(a, b) == first
