"""What an explanation record says, computed when the table is built: at the first difference between a
temperature-0 cell's tokens and its reference's, the two tokens as text with their context, and the model's own
log-probabilities there in two views: (a) *sequential*, token by token as the baseline generated (the reference's
request replayed with ``n_probs``; its tokens must equal the reference's, else the replay is not the baseline), and
(b) *batched*, the prompt and the reference's tokens as one token prompt.

The margin is the reference token's log-probability minus the cell's token's (nats; positive: the model ranks the
reference's token first). A margin within ``NEAR_TIE_NATS`` in (a), or an order that flips in (b), is a *near-tie*:
the speculative path picked the other of two nearly equal tokens through the numerics of batched verification (as
in llama.cpp issues #23302, #23335, #25618, #27407). A larger margin that does not flip is a *disagreement*: the
path chose a token the model ranks below. Where a side ended at the difference the cause is a *length* one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from specbench.core.records.explanations import BATCHED, EXPLANATION_VERSION, SEQUENTIAL

NEAR_TIE_NATS = 0.1
NEAR_TIE, DISAGREEMENT, LENGTH, REPLAY_DIFFERS = "near-tie", "disagreement", "length", "replay differs"
# the per-cell columns an explanation fills (analysis.cell_table.SCHEMA has their types)
COLUMNS = (
    "explanation_file",
    "divergence_token",
    "divergence_reference_token",
    "divergence_text",
    "divergence_reference_text",
    "divergence_before",
    "divergence_after",
    "divergence_reference_after",
    "margin_sequential",
    "margin_batched",
    "rank_sequential",
    "rank_batched",
    "divergence_flipped",
    "replay_matches",
    "divergence_kind",
)


class ExplanationError(ValueError):
    """An explanation record that does not belong to the cells it names (stale, or of another version)."""


def _answers(record: Mapping[str, Any]) -> dict[str, Any]:
    return {r["name"]: r["response"] for r in record["requests"]}


def _at(candidates: Sequence[Mapping[str, Any]], token: int | None) -> tuple[int | None, float | None]:
    """A token's rank (1-based) and log-probability among the top-k candidates; (None, None) beyond them."""
    for rank, candidate in enumerate(candidates, start=1):
        if candidate["id"] == token:
            return rank, float(candidate["logprob"])
    return None, None


def _view(candidates: Sequence[Mapping[str, Any]], token: int, reference: int) -> tuple[int | None, float | None, bool]:
    """In one view: the cell's token's rank, the margin (a lower bound, its rank None, when it is beyond the top-k;
    None when the reference's token is too), and whether the cell's token ranks ahead of the reference's."""
    rank, own = _at(candidates, token)
    reference_rank, theirs = _at(candidates, reference)
    if theirs is None:
        return rank, None, rank is not None
    floor = own if own is not None else min(float(c["logprob"]) for c in candidates)
    return rank, theirs - floor, rank is not None and rank < (reference_rank or 0)


def divergence(record: Mapping[str, Any], reference_tokens: Sequence[int]) -> dict[str, Any]:
    """The divergence columns (``COLUMNS`` but the file) of an explanation record; all None where the cell is
    identical to its reference."""
    at = record["first_difference"]
    empty = dict.fromkeys(COLUMNS[1:])
    if at is None:
        return empty
    answers, texts = _answers(record), {}
    for name, response in answers.items():
        if name.startswith("detokenize:"):
            texts[name.split(":", 1)[1]] = response.get("content", "")
    bodies = {r["name"]: r["body"] for r in record["requests"]}
    token = next(iter(bodies["detokenize:token"]["tokens"]), None)
    reference = next(iter(bodies["detokenize:reference_token"]["tokens"]), None)
    sequential, batched = answers[SEQUENTIAL], answers[BATCHED]
    replay = list(sequential.get("tokens") or [])
    matches = replay == list(reference_tokens[: at + 1])
    out = {
        **empty,
        "divergence_token": token,
        "divergence_reference_token": reference,
        "divergence_text": texts["token"] if token is not None else None,
        "divergence_reference_text": texts["reference_token"] if reference is not None else None,
        "divergence_before": texts["before"],
        "divergence_after": texts["after"],
        "divergence_reference_after": texts["reference_after"],
        "replay_matches": matches,
    }
    if token is None or reference is None:
        return {**out, "divergence_kind": LENGTH}
    steps = sequential.get("completion_probabilities") or []
    top_a = steps[at]["top_logprobs"] if len(steps) > at else []
    top_b = (batched.get("completion_probabilities") or [{}])[0].get("top_logprobs") or []
    rank_a, margin_a, _ = _view(top_a, token, reference)
    rank_b, margin_b, flipped = _view(top_b, token, reference)
    near = flipped or (margin_a is not None and rank_a is not None and margin_a <= NEAR_TIE_NATS)
    kind = REPLAY_DIFFERS if not matches else NEAR_TIE if near else DISAGREEMENT
    return {
        **out,
        "margin_sequential": margin_a,
        "margin_batched": margin_b,
        "rank_sequential": rank_a,
        "rank_batched": rank_b,
        "divergence_flipped": flipped,
        "divergence_kind": kind,
    }


def attach(
    rows: Sequence[dict[str, Any]], explanations: Sequence[tuple[str, dict[str, Any]]], sha256: Mapping[str, str]
) -> None:
    """Fill the divergence columns of ``rows`` (cell rows, with ``tokens`` and ``cell_file``) in place from the
    explanation records (path, record); ``sha256``: each cell file's current sha256. Raise ExplanationError for a
    record of another version, or made for another version of its cell or reference."""
    by_file = {row["cell_file"]: row for row in rows}
    for path, record in explanations:
        if record.get("explanation_version") != EXPLANATION_VERSION:
            raise ExplanationError(
                f"{path}: explanation version {record.get('explanation_version')} cannot be read "
                f"(readable: {EXPLANATION_VERSION}); delete it and run the workflow again"
            )
        for side in ("cell", "reference"):
            named = record[side]
            if sha256.get(named["path"]) != named["sha256"]:
                raise ExplanationError(
                    f"{path} explains another version of {named['path']} than the one in this "
                    f"run; run it again: snakemake --cores 1 --forcerun explain_divergence "
                    f"explain_control -- {path}"
                )
        row, reference = by_file[record["cell"]["path"]], by_file[record["reference"]["path"]]
        row.update(divergence(record, reference["tokens"]), explanation_file=path)
