"""Token sequences compared: where two generated outputs first part (the identity checks' one definition)."""

from __future__ import annotations

from collections.abc import Sequence


def compare_tokens(a: Sequence[int], b: Sequence[int]) -> int | None:
    """The index of the first difference between two token sequences, None when they are identical."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))
