"""Snakemake entry: run one cell (or a warm server's sequence of repeats) and write each record atomically.

A failure prints one line naming the cell and the log to read, and writes no cell file."""

from pathlib import Path

from specbench.cell import CellError, Setup, run_cells
from specbench.cells import parse_cell_path
from specbench.entry import fail, logged_to
from specbench.files import read_json, write_json_atomic

snakemake = globals()["snakemake"]
params, inp, log = snakemake.params.cell, snakemake.input, snakemake.log
cells = [parse_cell_path(path) for path in snakemake.output]
build_dir = Path(inp.build)
with logged_to(log.run):
    print(f"cells {', '.join(c.label for c in cells)}: starting", flush=True)
    setup = Setup(
        condition=cells[0].condition,
        server_binary=build_dir / "llama-server",
        build_manifest=read_json(build_dir / "manifest.json"),
        model_path=Path(inp.model),
        model_manifest=read_json(Path(inp.model_manifest)),
        draft_path=Path(inp.draft) if hasattr(inp, "draft") else None,
        draft_manifest=read_json(Path(inp.draft_manifest)) if hasattr(inp, "draft_manifest") else None,
        prompt_manifest=read_json(Path(inp.prompt)),
        server_log=Path(log.server),
        gpu_samples=Path(log.gpu),
        **params,
    )
    try:
        records = run_cells(setup, cells)
    except CellError as error:
        fail(str(error), log.run)
    lines = []
    for cell, record in zip(cells, records, strict=True):
        write_json_atomic(Path(cell.path), record)
        fig = record["figures"]
        lines.append(
            f"cell {cell.label}: {fig['tokens_per_s']:.1f} tok/s, {fig['predicted_n']} tokens, drafted "
            f"{fig['draft_n']} accepted {fig['draft_n_accepted']}, attempt {record['attempt']}, "
            f"wall {fig['cell_wall_s']:.1f} s"
        )
    print("\n".join(lines))
print("\n".join(f"specbench: {line}" for line in lines), flush=True)
