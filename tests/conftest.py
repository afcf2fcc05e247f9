"""Shared fixtures (the study config as loaded by the workflow) and how the run uses the machine: the workflow suites
after the unit tests, longest first; the test cache prepared in the background meanwhile (support.prepare); every test
sharing the machine, a test marked ``alone`` having it to itself (support.machine)."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from support.machine import machine_share
from support.paths import REPO
from support.prepare import Preparation

WORKFLOW = REPO / "tests" / "workflow"
# The workflow suites, longest first (on a 2-core machine with a warm test cache): two workers finish together when
# the long ones start early. A suite not named here runs after these.
LONGEST_FIRST = [
    "test_tiny_demo.py",
    "test_faults.py",
    "test_slurm.py",
    "test_builds.py",
    "test_prompt_set_run.py",
    "test_warm_scope.py",
    "test_load.py",
    "test_two_models.py",
    "test_smollm2.py",  # alone, at the end: the other worker is done or nearly
    "test_divergence_run.py",  # alone
    "test_vulkan.py",
]


# Every llama-server of the run on one thread: two suites run beside each other on two cores, and a thread pool of two
# beside another busy process spins waiting for its descheduled thread (a SmolLM2 cell took 250 s instead of 6 s).
# llama-server reads LLAMA_ARG_THREADS as -t; its log says n_threads = 1. (Not OMP_NUM_THREADS: nproc reads it, and the
# SLURM test's node would then have one CPU.)
ONE_THREAD = {"LLAMA_ARG_THREADS": "1"}


def pytest_configure(config: pytest.Config) -> None:
    for key, value in ONE_THREAD.items():
        os.environ.setdefault(key, value)


@pytest.fixture(scope="session")
def study_config_raw() -> dict:
    """config/config.yaml as written (not yet validated)."""
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


@pytest.fixture
def study_config(study_config_raw: dict) -> dict:
    """A fresh, mutable copy of the study config for each test."""
    return copy.deepcopy(study_config_raw)


def _rank(path: Path) -> tuple[int, int]:
    if WORKFLOW not in path.parents:
        return (0, 0)
    return (1, LONGEST_FIRST.index(path.name) if path.name in LONGEST_FIRST else len(LONGEST_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Unit tests first (in collection order), then the workflow suites, longest first (a stable sort)."""
    items.sort(key=lambda item: _rank(item.path))


def _needs_preparation(paths: list[str]) -> bool:
    return any(p.startswith("tests/workflow/") for p in paths)


_PREPARATION: list[Preparation] = []


def _prepare(config: pytest.Config, node_ids: list[str]) -> None:
    """Start the background preparation once per run, in the process that does not run tests under xdist."""
    if hasattr(config, "workerinput") or _PREPARATION or not _needs_preparation(node_ids):
        return
    _PREPARATION.append(Preparation().start())


def pytest_collection_finish(session: pytest.Session) -> None:
    _prepare(session.config, [item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    _prepare(node.config, ids)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _PREPARATION:
        _PREPARATION.pop().stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Each test (with its fixtures' setup and teardown) holds the machine: shared, or alone when marked so."""
    with machine_share(alone=item.get_closest_marker("alone") is not None):
        return (yield)
