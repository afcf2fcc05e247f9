"""Where the repository, the tests' recorded data and the test cache are."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_DATA = REPO / "tests" / "data"
# Expensive results kept between runs (downloads, llama.cpp builds: Snakemake's between-workflow cache), and locks
TEST_CACHE = Path(os.environ.get("SPECBENCH_TEST_CACHE", Path.home() / ".cache" / "specbench-tests")).expanduser()
OUTPUT_CACHE = TEST_CACHE / "snakemake-output-cache"
