"""Snakemake entry: fetch the pinned llama.cpp source archive (PyPI sdist or archive URL/path)."""

from pathlib import Path

from specbench.build.source import fetch_archive, fetch_pypi_sdist
from specbench.core.entry import logged_to

snakemake = globals()["snakemake"]
source = snakemake.params.source
out = Path(snakemake.output[0])
with logged_to(snakemake.log[0]):
    if source["kind"] == "pypi-sdist":
        fetch_pypi_sdist(source["package"], source["version"], source["sha256"], out)
    else:
        fetch_archive(source["url"], source["sha256"], out)
