"""Helpers for the thin Snakemake entry scripts: send output to the rule's log, report one-line failures."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def logged_to(path: str | Path) -> Iterator[None]:
    """Send this process's stdout and stderr (Python-level) to the rule's log file for the block."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", buffering=1) as log:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        try:
            yield
        finally:
            sys.stdout, sys.stderr = old_out, old_err


def fail(message: str, log_path: str | Path | None = None) -> None:
    """Print one clear line to the terminal (and the log) and exit non-zero."""
    line = f"specbench: {message}"
    if log_path is not None:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(line + "\n")
    print(line, file=sys.__stderr__, flush=True)
    raise SystemExit(1)
