"""The sampling every request states (core.config.sampling): the config's value, else the target GGUF's, else
llama.cpp's, each with where it came from; a server flag that would set one is refused, naming the key."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from snakemake.utils import update_config

from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.config.sampling import FROM_CONFIG, FROM_GGUF, FROM_LLAMA_CPP, KNOBS, resolve, values
from support.paths import REPO

SOME = st.dictionaries(st.sampled_from(sorted(KNOBS)), st.one_of(st.none(), st.floats(0.01, 0.99)))


@given(configured=SOME, gguf=SOME)
def test_each_setting_comes_from_the_config_else_the_gguf_else_llama_cpp(configured: dict, gguf: dict) -> None:
    resolved = resolve(configured, gguf)
    assert set(resolved) == set(KNOBS)
    for name, entry in resolved.items():
        if configured.get(name) is not None:
            assert entry == {"value": configured[name], "from": FROM_CONFIG}
        elif gguf.get(name) is not None:
            assert entry == {"value": gguf[name], "from": FROM_GGUF}
        else:
            assert entry == {"value": KNOBS[name].default, "from": FROM_LLAMA_CPP}
    assert values(resolved) == {name: entry["value"] for name, entry in resolved.items()}


def test_llama_cpps_own_defaults_are_b11223s() -> None:
    assert values(resolve({}, {})) == {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}


def _config(**override: object) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
    update_config(config, override)
    return config


@pytest.mark.parametrize(
    ("override", "key", "flag"),
    [
        ({"server": {"args": ["-ngl", "99", "--top-k", "20"]}}, "server.args", "--top-k"),
        (
            {"conditions": {"mtp": {"args": ["--spec-type", "draft-mtp", "--min-p", "0"]}}},
            "conditions.mtp.args",
            "--min-p",
        ),
    ],
)
def test_a_server_flag_that_every_request_overrides_is_refused(override: dict, key: str, flag: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key}.*'{flag}' is overridden by every request's own .*: set sampling\."):
        validate_config(_config(**override), REPO)


def test_the_sampling_key_takes_the_four_settings_and_nothing_else() -> None:
    assert validate_config(_config(), REPO)["sampling"] == {}
    assert validate_config(_config(sampling={"top_k": 20, "top_p": 0.8}), REPO)["sampling"] == {
        "top_k": 20,
        "top_p": 0.8,
    }
    with pytest.raises(ConfigError, match="sampling"):
        validate_config(_config(sampling={"temperature": 0.7}), REPO)
