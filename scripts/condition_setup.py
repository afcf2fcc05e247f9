"""Snakemake entry: write what every cell of one condition is served with (specbench.cell.condition_setup)."""

from pathlib import Path

from specbench.core.entry import logged_to
from specbench.core.files import read_json, write_json_atomic
from specbench.measure.setup import condition_setup

snakemake = globals()["snakemake"]
inp = snakemake.input
with logged_to(snakemake.log[0]):
    setup = condition_setup(
        snakemake.wildcards.condition,
        Path(inp.build),
        read_json(Path(inp.model_manifest)),
        read_json(Path(inp.draft_manifest)) if hasattr(inp, "draft_manifest") else None,
        read_json(Path(inp.code)),
        dict(snakemake.params.settings),
    )
    write_json_atomic(Path(snakemake.output[0]), setup)
    print(f"condition {setup['condition']}: {setup['server_binary']} {' '.join(setup['server_args'])}")
