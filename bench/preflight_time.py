"""Benchmark: how long `snakemake --cores 1 preflight` takes from the command to its answer, for the study
(config/config.yaml) and the tiny CPU demo, each in a fresh working directory (nothing made yet: every check
planned), several times: the median wall time of the whole command and of the checks themselves (the time the
preflight's title states), the exit code, and with ``--show`` the last run's table. Not a test: it prints figures.

    python bench/preflight_time.py                  # both configs, 3 runs each
    python bench/preflight_time.py --runs 5 --show
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = {"study": ["config/config.yaml"], "tiny": ["config/config.yaml", "config/tiny.yaml"]}
_TITLE = re.compile(r"specbench preflight: \d+ checks for \d+ planned jobs \(([\d.]+) s\)")


def run_once(configs: list[str]) -> tuple[float, float | None, int, str]:
    """One `snakemake --cores 1 preflight` in a fresh directory: wall and checks seconds, exit code, output."""
    with tempfile.TemporaryDirectory(prefix="specbench-preflight-") as work:
        argv = [sys.executable, "-m", "snakemake", "preflight", "--snakefile", str(REPO / "Snakefile")]
        argv += ["--directory", work, "--cores", "1", "--configfile", *(str(REPO / c) for c in configs)]
        started = time.monotonic()
        result = subprocess.run(argv, cwd=work, capture_output=True, text=True)
        wall = time.monotonic() - started
    output = result.stdout + result.stderr
    match = _TITLE.search(output)
    return wall, float(match.group(1)) if match else None, result.returncode, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--show", action="store_true", help="print the last run's preflight lines")
    args = parser.parse_args()
    for name, configs in CONFIGS.items():
        runs = [run_once(configs) for _ in range(args.runs)]
        walls = [r[0] for r in runs]
        checks = [r[1] for r in runs if r[1] is not None]
        codes = sorted({r[2] for r in runs})
        checked = f"{statistics.median(checks):.2f} s" if checks else "no table"
        print(
            f"{name}: command {statistics.median(walls):.1f} s median (min {min(walls):.1f}, max {max(walls):.1f}), "
            f"checks {checked}, exit {codes}, {args.runs} runs"
        )
        if args.show:
            lines = runs[-1][3].splitlines()
            start = next((i for i, line in enumerate(lines) if line.startswith("specbench preflight: ")), len(lines))
            print("\n".join(lines[start:]))


if __name__ == "__main__":
    main()
