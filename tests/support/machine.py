"""The machine as the test run's shared resource: every test shares it, a test marked ``alone`` (one that judges CPU
contention) has it to itself. A reader-writer lock on two files, so it holds across pytest-xdist workers and beside
the background preparation (``support.prepare``)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from support.paths import TEST_CACHE

LOCKS = TEST_CACHE / "locks"


def lock_file(name: str) -> Path:
    """A lock file of the test cache (made on first use)."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    path = LOCKS / f"{name}.lock"
    path.touch()
    return path


@contextlib.contextmanager
def machine_share(alone: bool) -> Iterator[None]:
    """Hold the machine shared, or alone once every current holder is done. A writer waiting at the turnstile stops
    new readers from passing it, so a test marked alone is never starved by a stream of shared ones."""
    with open(lock_file("turnstile"), "rb") as turnstile, open(lock_file("machine"), "rb") as machine:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(machine, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(machine, fcntl.LOCK_UN)
