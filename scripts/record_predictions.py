"""Snakemake entry: stamp the predictions file (sha256, modification time) before the first cell starts."""

from pathlib import Path

from specbench.claims.predictions import stamp
from specbench.core.entry import logged_to
from specbench.core.files import write_json_atomic

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    record = stamp(Path(snakemake.params.path))
    write_json_atomic(Path(snakemake.output[0]), record)
    print("predictions stamped:", record)
