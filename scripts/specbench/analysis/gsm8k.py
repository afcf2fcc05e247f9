"""GSM8K answers: the final number given for each problem, and the score against the dataset's references.

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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

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
            following = next((line for line in text[match.end() :].split("\n") if line.strip()), "")
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
        segments[n] = text[start : min(later) if later else len(text)]
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
    """Correct answers out of the references, and per problem what was extracted, the reference and the verdict."""
    extracted = extract_final_numbers(text, len(references), complete=complete)
    per_problem = [
        {
            "problem": n,
            "extracted": value,
            "reference": normalise_number(reference) or reference,
            "correct": numbers_equal(value, reference),
        }
        for n, (value, reference) in enumerate(zip(extracted, references, strict=True), start=1)
    ]
    return {"correct": sum(p["correct"] for p in per_problem), "total": len(references), "per_problem": per_problem}
