"""The workflow and the code pass Snakemake's linter, snakefmt and ruff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.paths import REPO

SNAKE_FILES = [str(REPO / "Snakefile"), *sorted(str(p) for p in (REPO / "rules").glob("*.smk"))]


def _run(*argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True)


def test_snakemake_lint(tmp_path: Path) -> None:
    result = _run(
        sys.executable,
        "-m",
        "snakemake",
        "--lint",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Lints for" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_snakefmt_check() -> None:
    result = _run(sys.executable, "-m", "snakefmt", "--check", *SNAKE_FILES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", "scripts", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(sys.executable, "-m", "ruff", "format", "--check", "scripts", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr
