"""Snakemake entry: a vLLM build's environment, made or named, checked and described (specbench.engines.vllm_env)."""

from pathlib import Path

from specbench.engines.vllm_env import env_step

snakemake = globals()["snakemake"]
params = snakemake.params
env_step(
    params.python,
    Path(params.requirements),
    Path(params.venv),
    Path(snakemake.output[0]),
    Path(snakemake.log[0]),
)
