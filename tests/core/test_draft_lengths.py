"""One draft length on every engine (core.config.draft_lengths): ``draft_length`` sets llama-server's flag and each
vLLM build's speculative config alike; ``draft_lengths`` sweeps it, every member matched; bad combinations fail at
config time naming the key."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.builds import builds
from specbench.core.config.load import ConfigError, validate_config
from specbench.core.plan.cells import selected_cells
from specbench.core.records.draft_budget import argv_draft_length
from specbench.engines.registry import engine
from support.config import VLLM_BUILD
from support.paths import REPO


@pytest.fixture
def config(study_config: dict) -> dict:
    """The tiny demo's config with b11223 and a vLLM build, the essay at temperature 0, off and mtp."""
    update_config(study_config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
    study_config["builds"] = [{"label": "b11223"}, copy.deepcopy(VLLM_BUILD)]
    study_config["select"] = {"tasks": ["essay"], "conditions": ["off", "mtp"]}
    study_config["temperatures"], study_config["repeats"] = [0.0], 1
    return study_config


def _argv(config: dict, label: str, condition: str) -> list[str]:
    build = next(b for b in builds(config) if b.label == label)
    return engine(build.engine).server_args(config, build, condition, REPO)


def test_one_draft_length_is_set_on_every_engine(config: dict) -> None:
    config["conditions"]["mtp"]["draft_length"] = 4
    validate_config(config, REPO)
    assert config["conditions"]["mtp"]["args"][-2:] == ["--spec-draft-n-max", "4"]
    assert argv_draft_length(_argv(config, "b11223", "mtp")) == argv_draft_length(_argv(config, "vllm", "mtp")) == 4
    spec = json.loads(config["builds"][1]["vllm"]["conditions"]["mtp"][1])
    assert spec == {"method": "mtp", "num_speculative_tokens": 4}  # only the length changed
    assert argv_draft_length(_argv(config, "vllm", "off")) is None


def test_a_sweep_of_draft_lengths_is_one_matched_condition_per_length(config: dict) -> None:
    config["conditions"]["mtp"]["draft_lengths"] = [1, 3]
    validate_config(config, REPO)
    assert [c for c in config["conditions"] if c.startswith("mtp")] == ["mtp-1", "mtp-3"]
    assert config["select"]["conditions"] == ["off", "mtp-1", "mtp-3"]
    for member, length in (("mtp-1", 1), ("mtp-3", 3)):
        assert config["conditions"][member]["swept"] == {"of": "mtp", "flag": "--spec-draft-n-max", "value": length}
        assert argv_draft_length(_argv(config, "b11223", member)) == length
        assert argv_draft_length(_argv(config, "vllm", member)) == length
    assert "mtp" not in config["builds"][1]["vllm"]["conditions"]
    cells = {(c.build, c.condition) for c in selected_cells(config)}
    assert {("vllm", "mtp-1"), ("vllm", "mtp-3"), ("b11223", "mtp-1"), ("b11223", "mtp-3")} <= cells


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (
            lambda c: c["conditions"]["mtp"].update(
                draft_length=3, args=[*c["conditions"]["mtp"]["args"], "--spec-draft-n-max", "2"]
            ),
            "conditions.mtp.draft_length",
            "already set the draft length (--spec-draft-n-max)",
        ),
        (
            lambda c: c["conditions"]["mtp"].update(
                draft_lengths=[2], sweep={"flag": "--spec-draft-p-min", "values": [0.5]}
            ),
            "conditions.mtp.draft_lengths",
            "give it or sweep, not both",
        ),
        (
            lambda c: (
                c["conditions"]["mtp"].update(draft_length=3),
                c["builds"][1]["vllm"]["conditions"].update(mtp=[]),
            ),
            "builds[1].vllm.conditions.mtp",
            "sets no --speculative-config",
        ),
        (lambda c: c["conditions"]["mtp"].update(draft_length=0), "conditions.mtp.draft_length", ""),
    ],
)
def test_draft_length_errors_name_the_key(config: dict, change, key: str, words: str) -> None:
    change(config)
    with pytest.raises(ConfigError) as caught:
        validate_config(config, REPO)
    assert caught.value.key == key and words in caught.value.problem
