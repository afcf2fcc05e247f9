"""Snakemake entry: the manifest of a rule's code (each file's sha256 and the fingerprint over all of them), one
input that stands for the dozen files of the cells' measurement code."""

from pathlib import Path

from specbench.core.code import manifest
from specbench.core.entry import logged_to
from specbench.core.files import write_json_atomic

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    record = manifest(snakemake.params.entry, [Path(p) for p in snakemake.input.code])
    write_json_atomic(Path(snakemake.output[0]), record)
    print(f"{snakemake.params.entry}: {len(record['files'])} files, fingerprint {record['fingerprint']}")
