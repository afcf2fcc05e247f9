"""Per-cell rows of token sequences, by hand: each cell's file path, rows of its tokens (speed and length filled in),
and a run whose baseline itself drifts (the identity tests' and the table round trip's data)."""

from __future__ import annotations


def cell_file(task: str, condition: str, temperature: float, repeat: int) -> str:
    return f"results/cells/{task}/{condition}/t{temperature}/r{repeat}.json"


def token_rows(tokens: dict[tuple[str, str, int], list[int]], temperature: float = 0.0) -> list[dict]:
    """One per-cell row per (task, condition, repeat) and its tokens, at 100 tokens/s."""
    return [
        {
            "task": t,
            "condition": c,
            "temperature": temperature,
            "repeat": r,
            "tokens": ids,
            "predicted_n": len(ids),
            "tokens_per_s": 100.0,
            "cell_file": cell_file(t, c, temperature, r),
        }
        for (t, c, r), ids in tokens.items()
    ]


def seq(length: int, start: int = 1000) -> list[int]:
    return list(range(start, start + length))


def drifting_tokens() -> dict[tuple[str, str, int], list[int]]:
    """Two tasks' tokens per condition and repeat: the baseline drifts in r3, n-gram diverges in r2, a repeat or a
    baseline is missing."""
    off = seq(898)
    off3 = [*off[:512], 7, *off[513:]]  # the baseline itself drifts at token 512 in r3
    return {
        ("rewrite", "off", 1): off,
        ("rewrite", "off", 2): list(off),
        ("rewrite", "off", 3): off3,
        ("rewrite", "ngram", 1): list(off),
        ("rewrite", "ngram", 2): [*off[:415], *seq(414, 50_000)],  # diverges at 415, ends at 829 tokens
        ("rewrite", "ngram", 3): list(off3),  # same repeat, same tokens: identical to off r3, not to off r1
        ("rewrite", "mtp", 1): list(off),
        ("rewrite", "mtp", 2): list(off),
        ("rewrite", "mtp", 3): list(off3),
        ("rewrite", "mtp", 4): list(off),  # a repeat the baseline lacks
        ("gsm8k", "off", 2): seq(300),  # baseline r1 missing: the control has nothing to compare with
        ("gsm8k", "ngram", 2): [5, *seq(299, 1001)],  # diverges at token 0
    }
