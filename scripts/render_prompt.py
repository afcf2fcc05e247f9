"""Snakemake entry: render one task's prompt manifest."""

from pathlib import Path

from specbench.core.entry import logged_to
from specbench.core.files import write_json_atomic
from specbench.tasks.prompts import read_dataset_rows, render_prompt

snakemake = globals()["snakemake"]
task = snakemake.params.task
with logged_to(snakemake.log[0]):
    inputs = {name[3:]: Path(path) for name, path in snakemake.input.items() if name.startswith("in_")}
    rows = None
    if task.get("dataset"):
        rows = read_dataset_rows(Path(snakemake.input.dataset), task["dataset"]["rows"])
    manifest = render_prompt(snakemake.wildcards.task, Path(snakemake.input.template), inputs, rows)
    if task.get("dataset"):
        manifest["dataset_source"] = task["dataset"]
    manifest["max_tokens"] = snakemake.params.max_tokens  # what a cell asks for at most, with this prompt
    write_json_atomic(Path(snakemake.output[0]), manifest)
    print("prompt sha256:", manifest["sha256"])
