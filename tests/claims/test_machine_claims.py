"""Each machine's claims (claims.judging.machine_claims) are judged under the run's setup as the main judgement is:
a claim of what the model computes (scope any-device) reads on each machine as it reads on the study's setup where
nothing but the GPU differs, and is not compared where the settings differ too."""

from __future__ import annotations

from dataclasses import replace

import pytest

from specbench.claims.claim import ANY_DEVICE, NOT_COMPARABLE, REPRODUCED, Claim
from specbench.claims.claims_file import load_claims
from specbench.claims.judging import machine_claims
from specbench.core.results.judged import GPU_FACT, MODEL_FACT, Comparability, Fact
from support.counterfactuals import BASELINE, CONFIG, COUNTERFACTUALS
from support.paths import REPO

MACHINES = {"machines": {"one": {}, "two": {}}}  # the cells index's machines: no device recorded (a CPU label)


def comparability(*differing: str) -> Comparability:
    """A setup where the facts named in ``differing`` differ from the study's and every other matches."""
    names = [GPU_FACT, "llama.cpp", MODEL_FACT, "quantization", "draft model", "server flags"]
    return Comparability([Fact(name, "study", "run", name not in differing) for name in names], "a device")


@pytest.fixture(scope="module")
def any_device() -> Claim:
    """The first claim of the study's file about what the model computes, without variants."""
    claims = load_claims(REPO / "config" / "claims.yaml", CONFIG)
    return replace(next(c for c in claims if c.scope == ANY_DEVICE and c.kind in COUNTERFACTUALS), variants=())


@pytest.mark.parametrize(
    ("differing", "shown"),
    [((GPU_FACT,), REPRODUCED), ((GPU_FACT, "quantization"), NOT_COMPARABLE)],
    ids=["only-the-gpu-differs", "the-settings-differ-too"],
)
def test_each_machine_reads_what_the_model_computes_as_the_main_judgement_does(
    any_device: Claim, differing: tuple[str, ...], shown: str
) -> None:
    tables = COUNTERFACTUALS[any_device.kind](any_device).reproduced
    judged = machine_claims([any_device], {"one": tables, "two": tables}, MACHINES, BASELINE, comparability(*differing))
    assert set(judged) == {"one", "two"}
    for frame in judged.values():
        assert set(frame.verdict) == {shown}
        assert set(frame.verdict_t1.dropna()) <= {shown}


def test_one_machine_is_judged_only_by_the_main_judgement(any_device: Claim) -> None:
    tables = COUNTERFACTUALS[any_device.kind](any_device).reproduced
    assert machine_claims([any_device], {"one": tables}, MACHINES, BASELINE, comparability(GPU_FACT)) == {}
