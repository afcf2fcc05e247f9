"""Measures on cell records: output identity at temperature 0, GSM8K correctness and draft acceptance.

Identity: a speculative condition at temperature 0 should reproduce the baseline's tokens exactly; the
baseline's own repeats compared with its first repeat are the control ("off vs off across repeats").

GSM8K: the prompt asks for a line ``Answer N: <number>`` per problem. Extraction order, per problem N:

1. the last ``Answer N: ...`` line (markdown such as ``**Answer 2:** 45`` allowed; when the rest of the line
   holds no number, the next non-empty line is read; with ``=`` on the line the number after the last ``=``);
2. otherwise, within that problem's segment of the text, the explicit forms in this order, the last occurrence of
   the first form found: ``#### 42``, ``\\boxed{42}``, ``the answer is 42``, ``Answer: 42`` / ``**Final answer:** 42``;
3. otherwise the last number in the segment, but only when the segment is closed (a later problem's heading
   follows it, so the model moved on) or the caller says the generation completed (``complete=True``); a response
   cut off inside a problem therefore scores "none" there rather than an intermediate number.

Segments: from the last ``Problem N`` heading (line start) to the next heading of another problem; without such
headings, from the end of the ``Answer N-1`` line to the next ``Answer`` line (explicit forms only, as such a span
may hold the next problem's work). Without any heading, a form counts only if it occurs exactly once per problem
(assigned in order), or, for a single problem, as in step 2.

Acceptance: llama-server reports ``predicted_n`` (generated tokens) and ``draft_n_accepted`` but not the number of
drafting steps. Each target-model decode step yields one token of its own plus the drafts it accepted, so the
number of target steps is ``predicted_n - draft_n_accepted`` and ``tokens_per_step = predicted_n / (predicted_n -
draft_n_accepted)`` (>= 1; 1 without drafting). ``accepted_per_step = accepted / steps`` (= tokens_per_step - 1)
counts every target step as a drafting step, so it is a lower bound of the accepted tokens per actual draft.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

# --------------------------------------------------------------------------------------------------------------
# Output identity
# --------------------------------------------------------------------------------------------------------------

IDENTITY_COLUMNS = ["task", "condition", "repeat", "compared_with", "identical", "first_difference", "length",
                    "baseline_length", "note"]
IDENTITY_SUMMARY_COLUMNS = ["task", "condition", "repeats_compared", "identical", "missing", "all_identical",
                            "differing_repeats", "token_counts", "first_differences"]


def compare_tokens(a: Sequence[int], b: Sequence[int]) -> dict[str, Any]:
    """Whether two token sequences are identical, and the index of the first difference (None if identical)."""
    first: int | None = None
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            first = index
            break
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    return {"identical": first is None, "first_difference": first, "length_a": len(a), "length_b": len(b)}


def _identity_row(task: str, condition: str, repeat: int, compared_with: str, tokens: Sequence[int],
                  reference: Sequence[int] | None, missing_note: str) -> dict[str, Any]:
    if reference is None:
        return {"task": task, "condition": condition, "repeat": repeat, "compared_with": compared_with,
                "identical": None, "first_difference": None, "length": len(tokens), "baseline_length": None,
                "note": missing_note}
    result = compare_tokens(tokens, reference)
    return {"task": task, "condition": condition, "repeat": repeat, "compared_with": compared_with,
            "identical": result["identical"], "first_difference": result["first_difference"],
            "length": result["length_a"], "baseline_length": result["length_b"], "note": ""}


def _identity_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=IDENTITY_COLUMNS)
    frame["repeat"] = frame["repeat"].astype("int64")
    frame["identical"] = frame["identical"].astype("boolean")
    for column in ("first_difference", "length", "baseline_length"):
        frame[column] = frame[column].astype("Int64")
    return frame


def identity_table(tokens: Mapping[tuple[str, str, int], Sequence[int]], baseline: str = "off") -> pd.DataFrame:
    """Each condition's temperature-0 tokens vs the baseline's same repeat, plus baseline repeats vs repeat 1."""
    rows: list[dict[str, Any]] = []
    for task in sorted({key[0] for key in tokens}):
        base = {repeat: seq for (t, c, repeat), seq in tokens.items() if t == task and c == baseline}
        conditions = sorted({c for (t, c, _) in tokens if t == task and c != baseline})
        for condition in conditions:
            repeats = sorted(r for (t, c, r) in tokens if t == task and c == condition)
            for repeat in repeats:
                rows.append(_identity_row(task, condition, repeat, f"{baseline} r{repeat}",
                                          tokens[(task, condition, repeat)], base.get(repeat),
                                          f"missing {baseline} r{repeat} for {task}"))
        for repeat in sorted(r for r in base if r > 1):
            rows.append(_identity_row(task, f"{baseline} (control: r1)", repeat, f"{baseline} r1", base[repeat],
                                      base.get(1), f"missing {baseline} r1 for {task}"))
    return _identity_frame(rows)


def identity_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per task x condition: repeats compared, how many identical, and token counts of the differing ones."""
    rows = []
    for (task, condition), group in table.groupby(["task", "condition"], sort=False):
        compared = group[group["identical"].notna()]
        differing = compared[~compared["identical"].astype(bool)]
        identical = len(compared) - len(differing)
        missing = len(group) - len(compared)
        rows.append(
            {
                "task": task,
                "condition": condition,
                "repeats_compared": len(compared),
                "identical": identical,
                "missing": missing,
                "all_identical": bool(len(compared) > 0 and identical == len(compared) and missing == 0),
                "differing_repeats": "; ".join(str(r) for r in differing["repeat"]),
                "token_counts": "; ".join(f"{n} vs {m}" for n, m in
                                          zip(differing["length"], differing["baseline_length"], strict=True)),
                "first_differences": "; ".join(str(i) for i in differing["first_difference"]),
            }
        )
    return pd.DataFrame(rows, columns=IDENTITY_SUMMARY_COLUMNS)


# --------------------------------------------------------------------------------------------------------------
# GSM8K
# --------------------------------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−])?\\?\$?[ ]?(?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:/(?P<den>\d+))?(?!\d)"
)
_FRAC = re.compile(r"\\[dt]?frac\{\s*(-?\d+)\s*\}\{\s*(\d+)\s*\}")
_ANSWER_LINE = re.compile(r"\banswer[ \t]*#?(\d+)[ \t]*[*_]*[ \t]*[:：][ \t]*[*_]*(?P<rest>[^\n]*)", re.IGNORECASE)
_LABEL = re.compile(r"\b(?:answer|problem|question)[ \t]*#?\d+", re.IGNORECASE)
_PROBLEM_HEADING = re.compile(r"^[ \t>#*_]*(?:problem|question)[ \t]*#?(\d+)\b", re.IGNORECASE | re.MULTILINE)
_EXPLICIT_FORMS = [
    re.compile(r"####[ \t]*(?P<rest>[^\n]*)"),
    re.compile(r"\\boxed\{(?P<rest>(?:[^{}]|\{[^{}]*\})*)\}"),
    re.compile(r"\banswer[ \t]+is[ \t]*[:：]?[ \t]*(?P<rest>[^\n]*)", re.IGNORECASE),
    re.compile(r"\banswer[ \t]*[*_]*[ \t]*[:：][ \t]*[*_]*(?P<rest>[^\n]*)", re.IGNORECASE),
]


def normalise_number(text: str) -> str | None:
    """The first number in text without '$', thousands commas or trailing zeros ('12.50' -> '12.5'); None if none."""
    text = _FRAC.sub(r"\1/\2", text)
    match = _NUMBER.search(text)
    if match is None:
        return None
    sign = "-" if match.group("sign") else ""
    body = match.group("body").replace(",", "")
    if match.group("den"):
        return f"{sign}{body}/{match.group('den')}"
    if "." in body:
        body = body.rstrip("0").rstrip(".")
    if body.strip("0") == "":
        return "0"
    return f"{sign}{body}"


def _number_in(rest: str) -> str | None:
    """The number an answer phrase states: boxed, else the first after the last '=' outside (), else the first."""
    boxed = _EXPLICIT_FORMS[1].search(rest)
    if boxed is not None and normalise_number(boxed.group("rest")) is not None:
        return normalise_number(boxed.group("rest"))
    unbracketed = re.sub(r"\([^()]*\)", " ", rest)
    if "=" in unbracketed:
        after = normalise_number(unbracketed.rsplit("=", 1)[1])
        if after is not None:
            return after
    return normalise_number(rest)


def _last_number(text: str) -> str | None:
    """The last number in text, not counting labels such as 'Problem 2' or 'Answer 1'."""
    matches = list(_NUMBER.finditer(_FRAC.sub(r"\1/\2", _LABEL.sub(" ", text))))
    return normalise_number(matches[-1].group(0)) if matches else None


def _explicit(segment: str) -> str | None:
    """The last occurrence of the first explicit answer form (in priority order) that yields a number."""
    for form in _EXPLICIT_FORMS:
        found = [value for m in form.finditer(segment) if (value := _number_in(m.group("rest"))) is not None]
        if found:
            return found[-1]
    return None


def _answer_lines(text: str, expected_count: int) -> tuple[dict[int, str], dict[int, tuple[int, int]]]:
    """Numbers from 'Answer N:' lines (last one per N) and the span of every such line."""
    numbers: dict[int, str] = {}
    spans: dict[int, tuple[int, int]] = {}
    for match in _ANSWER_LINE.finditer(text):
        n = int(match.group(1))
        if not 1 <= n <= expected_count:
            continue
        spans[n] = match.span()
        rest = match.group("rest")
        if normalise_number(rest) is None and not rest.strip(" *_$\\"):
            following = next((line for line in text[match.end():].split("\n") if line.strip()), "")
            heading = _PROBLEM_HEADING.match(following) or _ANSWER_LINE.search(following)
            rest = "" if heading else following
        value = _number_in(rest)
        if value is not None:
            numbers[n] = value
    return numbers, spans


def _problem_segments(text: str, expected_count: int) -> dict[int, tuple[str, bool]]:
    """Text from the last 'Problem N' heading to the next heading of another problem, and whether one follows."""
    headings = [(m.start(), int(m.group(1))) for m in _PROBLEM_HEADING.finditer(text)]
    segments: dict[int, tuple[str, bool]] = {}
    for n in range(1, expected_count + 1):
        starts = [start for start, number in headings if number == n]
        if not starts:
            continue
        start = starts[-1]
        later = [s for s, number in headings if s > start and number != n]
        end = min(later) if later else len(text)
        segments[n] = (text[start:end], bool(later))
    return segments


def _answer_segments(text: str, spans: dict[int, tuple[int, int]], expected_count: int) -> dict[int, str]:
    """Without problem headings: the text after the 'Answer N-1' line up to the next 'Answer' line."""
    segments: dict[int, str] = {}
    for n in range(1, expected_count + 1):
        if n in spans:
            continue
        if n > 1 and n - 1 not in spans:
            continue
        start = spans[n - 1][1] if n > 1 else 0
        later = [s for s, _ in spans.values() if s >= start]
        segments[n] = text[start:min(later) if later else len(text)]
    return segments


def _unsegmented(text: str, expected_count: int) -> list[str | None]:
    """No headings at all: one explicit form per problem, in order, or nothing."""
    if expected_count == 1:
        return [_explicit(text)]
    for form in _EXPLICIT_FORMS:
        values = [_number_in(m.group("rest")) for m in form.finditer(text)]
        if len(values) == expected_count and all(v is not None for v in values):
            return list(values)
    return [None] * expected_count


def extract_final_numbers(text: str, expected_count: int, *, complete: bool = False) -> list[str | None]:
    """The final number given for each of expected_count problems (normalised; None where none is found)."""
    if expected_count <= 0:
        return []
    numbers, spans = _answer_lines(text, expected_count)
    problem_segments = _problem_segments(text, expected_count)
    if not spans and not problem_segments:
        return _unsegmented(text, expected_count)
    answer_segments = {} if problem_segments else _answer_segments(text, spans, expected_count)
    result: list[str | None] = []
    for n in range(1, expected_count + 1):
        if n in numbers:
            result.append(numbers[n])
        elif n in problem_segments:
            segment, closed = problem_segments[n]
            value = _explicit(segment)
            if value is None and (closed or complete):
                value = _last_number(segment)
            result.append(value)
        elif n in answer_segments:
            result.append(_explicit(answer_segments[n]))
        else:
            result.append(None)
    return result


def _as_float(value: str) -> float | None:
    normalised = normalise_number(value)
    if normalised is None:
        return None
    try:
        if "/" in normalised:
            numerator, denominator = normalised.split("/")
            return float(numerator) / float(denominator) if float(denominator) != 0 else None
        return float(normalised)
    except ValueError:
        return None


def numbers_equal(a: str | None, b: str) -> bool:
    """Numeric equality within 1e-6 when both parse as numbers, else equal normalised text; False for None."""
    if a is None:
        return False
    x, y = _as_float(a), _as_float(b)
    if x is not None and y is not None:
        return abs(x - y) <= 1e-6
    return (normalise_number(a) or a.strip()) == (normalise_number(b) or b.strip())


def score_gsm8k(text: str, references: Sequence[str], *, complete: bool = False) -> dict[str, Any]:
    """Correct answers out of the references, per problem, and a one-line summary naming every wrong one."""
    extracted = extract_final_numbers(text, len(references), complete=complete)
    per_problem = []
    for n, (value, reference) in enumerate(zip(extracted, references, strict=True), start=1):
        per_problem.append({"problem": n, "extracted": value, "reference": normalise_number(reference) or reference,
                            "correct": numbers_equal(value, reference)})
    correct = sum(p["correct"] for p in per_problem)
    wrong = [f"problem {p['problem']}: {p['extracted'] or 'none'} vs {p['reference']}"
             for p in per_problem if not p["correct"]]
    summary = ", ".join([f"{correct}/{len(references)} correct", *wrong])
    return {"correct": correct, "total": len(references), "per_problem": per_problem, "summary": summary}


# --------------------------------------------------------------------------------------------------------------
# Acceptance
# --------------------------------------------------------------------------------------------------------------

ACCEPTANCE_COLUMNS = ["task", "condition", "temperature", "runs", "drafted", "accepted", "pooled_rate",
                      "min_rate", "max_rate", "predicted", "tokens_per_step", "accepted_per_step", "note"]


def tokens_per_step(predicted_n: float | None, accepted: float | None) -> float:
    """Mean tokens per target-model step, predicted_n / (predicted_n - accepted); NaN when not computable."""
    if predicted_n is None or accepted is None or pd.isna(predicted_n) or pd.isna(accepted):
        return math.nan
    steps = float(predicted_n) - float(accepted)
    return float(predicted_n) / steps if steps > 0 else math.nan


def with_tokens_per_step(runs: pd.DataFrame) -> pd.DataFrame:
    """A copy of runs with a per-cell tokens_per_step column (NaN where predicted_n is missing)."""
    frame = runs.copy()
    predicted = frame["predicted_n"] if "predicted_n" in frame else pd.Series(math.nan, index=frame.index)
    accepted = frame["draft_n_accepted"].fillna(0) if "draft_n_accepted" in frame else 0
    frame["tokens_per_step"] = [tokens_per_step(n, a) for n, a in
                                zip(predicted, pd.Series(accepted, index=frame.index), strict=True)]
    return frame


def acceptance_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per task x condition x temperature: drafted, accepted, pooled and per-cell rates, tokens per target step."""
    rows = []
    if runs.empty:
        return pd.DataFrame(rows, columns=ACCEPTANCE_COLUMNS)
    for (task, condition, temperature), group in runs.groupby(["task", "condition", "temperature"], sort=True):
        draft_n = group["draft_n"].fillna(0) if "draft_n" in group else pd.Series(0, index=group.index)
        accepted_n = (group["draft_n_accepted"].fillna(0) if "draft_n_accepted" in group
                      else pd.Series(0, index=group.index))
        drafted, accepted = int(draft_n.sum()), int(accepted_n.sum())
        rates = [a / d for d, a in zip(draft_n, accepted_n, strict=True) if d > 0]
        known = group["predicted_n"].notna() if "predicted_n" in group else pd.Series(False, index=group.index)
        if known.any():
            predicted = float(group.loc[known, "predicted_n"].sum())
            steps = predicted - float(accepted_n[known].sum())
            per_step = predicted / steps if steps > 0 else math.nan
            accepted_per_step = float(accepted_n[known].sum()) / steps if steps > 0 else math.nan
        else:
            predicted, per_step, accepted_per_step = math.nan, math.nan, math.nan
        rows.append(
            {
                "task": task,
                "condition": condition,
                "temperature": temperature,
                "runs": len(group),
                "drafted": drafted,
                "accepted": accepted,
                "pooled_rate": accepted / drafted if drafted > 0 else math.nan,
                "min_rate": min(rates) if rates else math.nan,
                "max_rate": max(rates) if rates else math.nan,
                "predicted": predicted,
                "tokens_per_step": per_step,
                "accepted_per_step": accepted_per_step,
                "note": "" if drafted > 0 else "drafted nothing",
            }
        )
    return pd.DataFrame(rows, columns=ACCEPTANCE_COLUMNS)
