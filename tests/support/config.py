"""Configs for tests: YAML files merged left to right as Snakemake merges several --configfile files, validated."""

from __future__ import annotations

from pathlib import Path

import yaml
from snakemake.utils import update_config

from specbench.core.config.load import validate_config
from specbench.core.steps.repo import REPO_ROOT

# config/config.yaml's conditions in its order (the interleaved run order follows it): the study's four, its warm
# n-gram column under both readings of "one server", and DFlash at 15 draft tokens
STUDY_CONDITIONS = ["off", "ngram-mod", "mtp", "dflash", "ngram-mod-warm", "ngram-mod-warm-all", "dflash-n15"]

# A vLLM build of the tiny config (its interpreter named, so nothing is installed): off, mtp and dflash, each
# speculative one asking for its per-request acceptance
PER_REQUEST = ["--per-request-spec-decode-metrics", "summary"]
VLLM_BUILD = {
    "label": "vllm",
    "engine": "vllm",
    "vllm": {
        "python": "/opt/vllm/bin/python",
        "args": ["--enforce-eager"],
        "conditions": {
            "off": [],
            "mtp": ["--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}', *PER_REQUEST],
            "dflash": ["--speculative-config", '{"method": "dflash", "model": "{draft}"}', *PER_REQUEST],
        },
    },
}


def load_config(paths: list[Path], base: Path = REPO_ROOT) -> dict:
    """Merge YAML files left to right (later ones override keys, recursively) and validate the result."""
    merged: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            update_config(merged, yaml.safe_load(handle) or {})
    return validate_config(merged, base)
