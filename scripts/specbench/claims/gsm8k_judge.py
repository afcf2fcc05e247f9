"""The judge of a GSM8K score (kind ``gsm8k``): every run's score on the same problems, and the wrong answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specbench.claims.claim import NOT_COMPARABLE, NOT_MEASURED, NOT_REPRODUCED, REPRODUCED
from specbench.claims.judge_inputs import Outcome, Run, listed

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def number(answer: str) -> float | str:
    """An answer as a number where it reads as one ('25,000', '$25000' and '25000.0' are one answer)."""
    text = answer.replace(",", "").replace("$", "").strip()
    try:
        return float(text)
    except ValueError:
        return text


def _gsm8k_text(scored: Any) -> str:
    parts = []
    for r in scored.itertuples():
        wrong = ", ".join(
            f"problem {w['problem']}: {w['extracted'] or 'none'} vs {w['reference']}" for w in r.gsm8k_wrong
        )
        parts.append(f"r{int(r.repeat)} {int(r.gsm8k_correct)}/{int(r.gsm8k_total)}" + (f" ({wrong})" if wrong else ""))
    return "; ".join(parts) or "n/a"


def _other_problems(claim: Claim, asked: list[list[str]]) -> str:
    """The claim's problems (by their reference answers) that some run was not asked, named ('' where none)."""
    other = []
    for p in claim.problems:
        theirs = sorted({refs[p["problem"] - 1] if len(refs) >= p["problem"] else "none" for refs in asked})
        if any(number(r) != number(p["reference"]) for r in theirs):
            other.append(f"problem {p['problem']}'s answer here is {listed(theirs)}, the study's {p['reference']}")
    return listed(other)


def judge_gsm8k(claim: Claim, run: Run) -> Outcome:
    task = claim.tasks[0]
    score = f"{claim.published}/{claim.total}"
    problem = (claim.wrong or {}).get("problem")
    answer = (claim.wrong or {}).get("answer")
    rows = run.rows("cells", task=task, condition=claim.condition, temperature=claim.temperature)
    scored = rows[rows.gsm8k_total.notna()].sort_values("repeat")
    runs = [
        {
            "repeat": int(r.repeat),
            "correct": int(r.gsm8k_correct),
            "total": int(r.gsm8k_total),
            "wrong": {w["problem"]: w["extracted"] or "none" for w in r.gsm8k_wrong},
        }
        for r in scored.itertuples()
    ]
    text = _gsm8k_text(scored)
    asked = [list(r.gsm8k_references) for r in scored.itertuples()]

    def outcome(verdict: str, detail: str) -> Outcome:
        return Outcome(runs, text, list(rows.cell_file), verdict, detail)

    if not runs:
        where = f"{claim.condition} at temperature {claim.temperature:g}"
        return outcome(NOT_MEASURED, f"no scored {task} run for {where} in this run's tables")
    totals = sorted({r["total"] for r in runs})
    if totals != [claim.total]:
        scored_on = "/".join(map(str, totals))
        return outcome(NOT_MEASURED, f"this run scored {scored_on} problems, the claim is about {claim.total}")
    if claim.problems and not all(asked):
        return outcome(NOT_MEASURED, "this run's cells do not record which problems were asked")
    other = _other_problems(claim, asked)
    if other:
        return outcome(NOT_COMPARABLE, f"other problems: {other}")
    counted = "".join(f", problem {p['problem']} the one whose answer is {p['reference']}" for p in claim.problems)
    matching = [r for r in runs if r["correct"] == claim.published]
    right = [r for r in matching if problem is None or problem in r["wrong"]]
    exact = [r for r in right if not answer or number(r["wrong"][problem]) == number(answer)]
    if len(exact) == len(runs):
        answers = listed(sorted({r["wrong"][problem] for r in right})) if problem else ""
        wrong_one = f", problem {problem} wrong ({answers})" if problem else ""
        return outcome(REPRODUCED, f"every run scored {score}{wrong_one}{counted}")
    if len(right) == len(runs):
        other = listed(f"{r['wrong'][problem]} in r{r['repeat']}" for r in right if r not in exact)
        return outcome(
            NOT_REPRODUCED, f"every run scored {score} with problem {problem} wrong, but answered {other}, not {answer}"
        )
    in_some = f"; problem {problem} wrong in {len(right)}" if problem else ""
    return outcome(NOT_REPRODUCED, f"{len(matching)} of {len(runs)} run(s) scored {score}{in_some}")
