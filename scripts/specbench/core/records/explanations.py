"""What an explanation record is: the format shared by the step that asks a server why a temperature-0 cell's
tokens differ from its reference's (measure.explain) and the table that reads the answers (analysis.divergence).
Where two token sequences first differ is defined here, once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from specbench.core.plan.cells import Cell, folders
from specbench.core.plan.coordinates import LAYOUT

EXPLANATION_VERSION = 1
EXPLANATIONS_DIR = "results/explanations"
EXPLAINED_TEMPERATURE = 0.0  # only temperature-0 cells are compared, and explained
# The requests, by name, in the order they are sent (each recorded with its body, sha256 and answer):
TOKENIZE = "tokenize"  # the prompt's token ids (as /completion tokenizes a text prompt)
SEQUENTIAL = "sequential"  # (a) the reference's own request again, with n_probs, just past the difference
BATCHED = "batched"  # (b) the prompt + the reference's tokens before the difference as one token prompt, 1 token
# the texts around the difference: before it (shared), the two tokens, and what follows on each side
TEXTS = ("before", "reference_token", "token", "reference_after", "after")
CONTEXT_TOKENS = 4  # tokens of context on each side
TOP_K = 10  # n_probs: the log-probabilities of the K most likely tokens at each position


def first_difference(a: Sequence[int], b: Sequence[int]) -> int | None:
    """The index of the first difference between two token sequences, None when they are identical (a sequence that
    is a prefix of the other differs where it ends)."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def text_segments(tokens: Sequence[int], reference: Sequence[int], at: int) -> dict[str, list[int]]:
    """The token ids each text around the difference at ``at`` is made of (``TEXTS``); a side that ended there has
    an empty token."""
    return {
        "before": list(reference[max(0, at - CONTEXT_TOKENS) : at]),
        "reference_token": list(reference[at : at + 1]),
        "token": list(tokens[at : at + 1]),
        "reference_after": list(reference[at + 1 : at + 1 + CONTEXT_TOKENS]),
        "after": list(tokens[at + 1 : at + 1 + CONTEXT_TOKENS]),
    }


def reference_repeat(condition: str, repeat: int, baseline: str) -> int | None:
    """The baseline repeat a temperature-0 cell is compared with: the same repeat, or for the baseline's own (its
    control) its first; None for the baseline's first repeat, which is the reference itself."""
    if condition != baseline:
        return repeat
    return None if repeat == 1 else 1


def compared_cells(cells: Iterable[Cell], baseline: str) -> list[Cell]:
    """The temperature-0 cells whose reference (the same prompt's, on the same machine and build, served by the
    baseline's models) is among ``cells``, in their order."""
    cells = list(cells)
    present = {replace(c, models="") for c in cells if c.condition == baseline}
    compared = []
    for cell in cells:
        repeat = reference_repeat(cell.condition, cell.repeat, baseline) if cell.temperature == 0.0 else None
        if repeat is not None and replace(cell, condition=baseline, repeat=repeat, models="") in present:
            compared.append(cell)
    return compared


def explanation_path(cell: Cell) -> str:
    """The explanation record of a temperature-0 cell (with its build and models components, as its cell's path)."""
    return LAYOUT.fill(EXPLANATIONS_DIR, {**cell.values, "temperature": EXPLAINED_TEMPERATURE})


def explanation_pattern(builds: bool, load: bool = False) -> str:
    """The explanation records' path pattern (with a build component in a run with builds, a concurrency component
    in a run with a load dimension)."""
    pattern = LAYOUT.pattern(EXPLANATIONS_DIR, folders(builds, load))
    return LAYOUT.partial(pattern, {"temperature": EXPLAINED_TEMPERATURE})
