"""Snakemake entry: pinned Hugging Face snapshot of a model, with a manifest of every file."""

from pathlib import Path

from specbench.core.entry import fail, logged_to
from specbench.core.files import write_json_atomic
from specbench.models.hub import PreparationError, hf_snapshot

snakemake = globals()["snakemake"]
with logged_to(snakemake.log[0]):
    try:
        manifest = hf_snapshot(snakemake.params.repo, snakemake.params.revision, Path(snakemake.output[0]))
    except PreparationError as error:
        fail(str(error), snakemake.log[0])
    write_json_atomic(Path(snakemake.output.manifest), manifest)
    print(f"{manifest['repo']}@{manifest['commit']}: {len(manifest['files'])} files")
