"""Benchmark: how far the client-observed decode rate (streamed tokens) agrees with the server's own
``predicted_per_second``. Runs the tiny model's cells with Snakemake (or reads an existing runs.csv) and prints
the distribution of client/server per condition. Not a test: it prints figures.

    python bench/client_vs_server.py                      # tiny model, CPU, fresh working directory
    python bench/client_vs_server.py --runs results/runs.csv   # an existing run (e.g. the GPU study)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]

from _common import run_tiny  # noqa: E402


def tiny_runs(workdir: Path, repeats: int, max_tokens: int, cores: int) -> Path:
    """Run the tiny config's matrix (temperature 0) in ``workdir``; return its runs.csv."""
    settings = {
        "temperatures": [0.0],
        "repeats": repeats,
        "max_tokens": max_tokens,
        "select": {"tasks": ["file-rewrite", "essay"]},
    }
    run_tiny(workdir, settings, cores)
    return workdir / "results" / "runs.csv"


def ratio_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Quantiles of client/server decode rate per condition."""
    runs = runs.dropna(subset=["client_tokens_per_s", "tokens_per_s"])
    runs = runs.assign(ratio=runs.client_tokens_per_s / runs.tokens_per_s)
    grouped = runs.groupby("condition").ratio
    table = grouped.describe(percentiles=[0.1, 0.5, 0.9])[["count", "min", "10%", "50%", "90%", "max"]]
    overall = runs.ratio.describe(percentiles=[0.1, 0.5, 0.9])[["count", "min", "10%", "50%", "90%", "max"]]
    table.loc["(all)"] = overall
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, help="an existing runs.csv to analyse instead of running the tiny model")
    parser.add_argument("--workdir", type=Path, help="working directory for the tiny run (default: a new temp dir)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    runs_csv = args.runs
    if runs_csv is None:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="specbench-bench-"))
        workdir.mkdir(parents=True, exist_ok=True)
        runs_csv = tiny_runs(workdir, args.repeats, args.max_tokens, args.cores)
    table = ratio_table(pd.read_csv(runs_csv))
    print(f"client-observed / server-reported decode rate ({runs_csv}):")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
