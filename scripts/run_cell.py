"""Snakemake entry: run one cell and write its record atomically; a failure is one line naming cell and log."""

from pathlib import Path

from specbench.cell import CellError, CellInputs, run_cell
from specbench.cells import Cell
from specbench.entry import fail, logged_to
from specbench.files import read_json, write_json_atomic

snakemake = globals()["snakemake"]
wc, params, inp = snakemake.wildcards, snakemake.params, snakemake.input
cell = Cell.from_wildcards(wc.task, wc.condition, wc.temperature, wc.repeat)
build_dir = Path(inp.build)
with logged_to(snakemake.log.run):
    print(f"cell {cell.label}: starting", flush=True)
    inputs = CellInputs(
        cell=cell,
        server_binary=build_dir / "bin" / "llama-server",
        build_manifest=read_json(build_dir / "manifest.json"),
        model_path=Path(inp.model),
        model_manifest=read_json(Path(inp.model_manifest)),
        draft_path=Path(inp.draft) if hasattr(inp, "draft") else None,
        draft_manifest=read_json(Path(inp.draft_manifest)) if hasattr(inp, "draft_manifest") else None,
        prompt_manifest=read_json(Path(inp.prompt)),
        shared_args=list(params.server["args"]),
        condition_args=list(params.condition["args"]),
        requires=list(params.condition["requires"]),
        max_tokens=int(params.max_tokens),
        reasoning=bool(params.reasoning),
        base_seed=int(params.seed),
        startup_timeout_s=float(params.server["startup_timeout_s"]),
        request_timeout_s=float(params.server["request_timeout_s"]),
        server_log=Path(snakemake.log.server),
    )
    try:
        record = run_cell(inputs)
    except CellError as error:
        fail(str(error), snakemake.log.run)
    write_json_atomic(Path(snakemake.output[0]), record)
    figures = record["figures"]
    line = (
        f"cell {cell.label}: {figures['tokens_per_s']:.1f} tok/s, {figures['predicted_n']} tokens, "
        f"drafted {figures['draft_n']} accepted {figures['draft_n_accepted']}, wall {figures['cell_wall_s']:.1f} s"
    )
    print(line)
print(f"specbench: {line}", flush=True)
