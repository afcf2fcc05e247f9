"""What the benchmarks share: a run of the workflow on the tiny config, and the spread of repeated figures. A
benchmark puts the package and the tests' support (scripts/, tests/) on ``sys.path`` before it imports this."""

from __future__ import annotations

import statistics
import subprocess
from pathlib import Path

from support.paths import REPO
from support.workflow import snakemake_argv, write_yaml


def run_tiny(workdir: Path, settings: dict, cores: int) -> None:
    """``snakemake all`` in ``workdir`` on config/tiny.yaml with ``settings`` merged over it (written to
    ``workdir/bench.yaml``), its output shown as it runs; CalledProcessError when it fails."""
    configs = [REPO / "config" / "tiny.yaml", write_yaml(workdir / "bench.yaml", settings)]
    subprocess.run(snakemake_argv(workdir, ["all"], configs, cores=cores), check=True)


def spread(values: list[float], digits: int) -> str:
    """'mean 12.3 (range 11.9-12.8, 7.3%)': the mean, the range and the range as a share of the mean."""
    mean = statistics.fmean(values)
    low, high = min(values), max(values)
    return f"mean {mean:.{digits}f} (range {low:.{digits}f}-{high:.{digits}f}, {(high - low) / mean:.1%})"
