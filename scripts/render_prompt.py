"""Snakemake entry: render one prompt's manifest: a task's (specbench.tasks.render.prompt_step) or a prompt set
question's (question_step)."""

from pathlib import Path

from specbench.tasks.render import manifest_step

snakemake = globals()["snakemake"]
manifest_step(
    snakemake.wildcards.prompt,
    snakemake.params.task,
    {name: Path(path) for name, path in snakemake.input.items() if name != "code"},
    snakemake.params.max_tokens,
    Path(snakemake.output[0]),
    Path(snakemake.log[0]),
)
