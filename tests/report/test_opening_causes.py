"""The cause the opening's "Not compared" item gives, on a study-shaped run (support.study_run) on an H200: absolute
figures are not compared on other hardware; what the model computes (acceptance, any-device) is compared there, and is
not compared, for a cause of its own, only where the settings differ from the study's."""

from __future__ import annotations

import pandas as pd
import pytest

from specbench.claims.claim import ANY_DEVICE, NOT_COMPARABLE, Claim
from specbench.claims.claims_file import load_claims
from specbench.claims.evaluate import Setup, evaluate
from specbench.report.sections.opening import NOT_COMPARED_CAUSE, SETTINGS_CAUSE, opening_entries, opening_notes
from support.counterfactuals import BASELINE, CONFIG
from support.paths import REPO
from support.study_run import study_run

DEVICE = "NVIDIA H200"
ONLY_THE_DEVICE = Setup(comparable=False, same_model=True, device=DEVICE, same_settings=True)
SETTINGS_DIFFER = Setup(comparable=False, same_model=True, device=DEVICE, same_settings=False)


@pytest.fixture(scope="module")
def claims() -> list[Claim]:
    return load_claims(REPO / "config" / "claims.yaml", CONFIG)


@pytest.fixture(scope="module")
def run() -> dict[str, pd.DataFrame]:
    return study_run()


def not_compared(claims: list[Claim], run: dict[str, pd.DataFrame], setup: Setup) -> tuple[pd.DataFrame, str]:
    """The claims judged on the run under ``setup``, and the opening's "Not compared" item."""
    result = evaluate(claims, run, baseline=BASELINE, setup=setup)
    notes = opening_notes(opening_entries(result, DEVICE), DEVICE, comparable=False)
    (item,) = [n.text for n in notes if n.text.startswith("Not compared")]
    return result, item


def test_only_the_device_differs_absolute_figures_alone_are_not_compared(claims, run) -> None:
    result, item = not_compared(claims, run, ONLY_THE_DEVICE)
    assert NOT_COMPARABLE not in set(result.loc[result.scope == ANY_DEVICE, "verdict"])  # judged on any device
    assert item.startswith(f"Not compared on {DEVICE} ({NOT_COMPARED_CAUSE}): ")
    assert "settings differ" not in item


def test_settings_that_differ_are_named_as_the_cause_of_what_the_model_computes(claims, run) -> None:
    """Acceptance (any-device) reads "not comparable" where the quantization, draft, build or flags differ: the item
    says the settings differ beside the absolute figures' cause, and names the acceptance figures it leaves out."""
    result, item = not_compared(claims, run, SETTINGS_DIFFER)
    acceptance = result[result.scope == ANY_DEVICE]
    assert not acceptance.empty and set(acceptance.verdict) == {NOT_COMPARABLE}
    assert item.startswith(f"Not compared on {DEVICE} ({NOT_COMPARED_CAUSE}; {SETTINGS_CAUSE}): ")
    assert "the settings differ from the study's" in item
    assert "mtp-acceptance" in item
