"""Snakemake entry: the llama.cpp source tree, from git at the pinned commit or from the verified archive."""

from pathlib import Path

from specbench.build.source import extract_source, git_checkout
from specbench.core.entry import logged_to

snakemake = globals()["snakemake"]
source = snakemake.params.source
out = Path(snakemake.output[0])
with logged_to(snakemake.log[0]):
    if source["kind"] == "git":
        info = git_checkout(source["url"], source["commit"], out, source.get("label"))
    else:
        info = extract_source(Path(snakemake.input.archive), source["sha256"], source["subdir"], out, source)
    print("source:", info)
