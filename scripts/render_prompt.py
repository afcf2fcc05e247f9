"""Snakemake entry: render one task's prompt manifest (specbench.tasks.render.prompt_step)."""

from pathlib import Path

from specbench.tasks.render import prompt_step

snakemake = globals()["snakemake"]
inp = snakemake.input
prompt_step(
    snakemake.wildcards.prompt,
    snakemake.params.task,
    Path(inp.template),
    {name[3:]: Path(path) for name, path in inp.items() if name.startswith("in_")},
    Path(inp.dataset) if hasattr(inp, "dataset") else None,
    snakemake.params.max_tokens,
    Path(snakemake.output[0]),
    Path(snakemake.log[0]),
)
