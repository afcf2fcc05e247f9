"""Each claim kind's judge, by kind: one module a kind (``*_judge.py``), each a chain of plain ``if`` rules written in
the order of its kind's row in docs/claims.md, reading the typed tables of analysis.summaries.tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from specbench.claims.claim import BACKGROUND
from specbench.claims.gsm8k_judge import judge_gsm8k
from specbench.claims.identity_judge import judge_identity
from specbench.claims.judge_inputs import Outcome, Run
from specbench.claims.load_judge import judge_acceptance_under_load, judge_pays_up_to
from specbench.claims.ordering_judge import judge_ordering
from specbench.claims.sizes_judge import judge_numeric
from specbench.claims.thesis_judge import judge_thesis
from specbench.claims.verdict_judge import judge_verdict
from specbench.claims.warm_judge import judge_warm

if TYPE_CHECKING:
    from specbench.claims.claim import Claim


def _background(claim: Claim, run: Run) -> Outcome:
    return Outcome(None, "n/a", [], BACKGROUND, "quoted by the study as background; no run here measures it")


JUDGES: dict[str, Callable[[Claim, Run], Outcome]] = {
    "speedup": judge_numeric,
    "tokens_per_s": judge_numeric,
    "acceptance": judge_numeric,
    "verdict": judge_verdict,
    "identity": judge_identity,
    "gsm8k": judge_gsm8k,
    "warm_vs_fresh": judge_warm,
    "ordering": judge_ordering,
    "background": _background,
    "thesis": judge_thesis,
    "pays_up_to": judge_pays_up_to,
    "acceptance_under_load": judge_acceptance_under_load,
}
