"""Snakemake entry: inspect a GGUF, check quantization, MTP layer and chat template, write the model manifest."""

from pathlib import Path

from specbench.models.verify import verify_step

snakemake = globals()["snakemake"]
params = snakemake.params
verify_step(
    Path(snakemake.input.gguf),
    Path(snakemake.output[0]),
    role=params.role,
    source=params.source,
    expected_file_type=params.expected_file_type,
    require_mtp=params.require_mtp,
    chat_template=params.chat_template,
    log=Path(snakemake.log[0]),
)
