"""Configs for tests: YAML files merged left to right as Snakemake merges several --configfile files, validated."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path

import yaml

from specbench.core.config import validate_config
from specbench.core.repo import REPO_ROOT


def load_config(paths: list[Path], base: Path = REPO_ROOT) -> dict:
    """Merge YAML files left to right (later ones override keys, recursively) and validate the result."""
    merged: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            merge_into(merged, yaml.safe_load(handle) or {})
    return validate_config(merged, base)


def merge_into(base: dict, override: Mapping) -> dict:
    """Recursive dict update, as Snakemake merges several --configfile files."""
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            merge_into(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base
