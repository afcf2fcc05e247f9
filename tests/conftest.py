"""Shared fixtures: the study config as loaded by the workflow, and paths of the repository."""

from __future__ import annotations

import copy

import pytest
import yaml

from support.paths import REPO


@pytest.fixture(scope="session")
def study_config_raw() -> dict:
    """config/config.yaml as written (not yet validated)."""
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


@pytest.fixture
def study_config(study_config_raw: dict) -> dict:
    """A fresh, mutable copy of the study config for each test."""
    return copy.deepcopy(study_config_raw)
