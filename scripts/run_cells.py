"""Snakemake entry: run one cell (or a warm server's sequence: a task's repeats, or every cell of a condition) and
write each record atomically.

A failure prints one line naming the cell and the log to read, and writes no cell file. SIGTERM, SIGHUP and the
death of the Snakemake process above this script stop the server and end the script the same way."""

from pathlib import Path

from specbench.cell import CellError, Setup, run_cells
from specbench.cells import Cell
from specbench.entry import fail, logged_to
from specbench.files import read_json, write_json_atomic
from specbench.server import Interrupted, interrupt_guard

# The entries of params.cell that are Setup fields of the same name (max_tokens: by task).
SETTINGS = ("max_tokens", "reasoning", "base_seed", "startup_timeout_s", "request_timeout_s", "sample_interval_s",
            "max_attempts", "max_load_per_cpu", "max_foreign_cpu")

snakemake = globals()["snakemake"]
inp, log, wc = snakemake.input, snakemake.log, snakemake.wildcards
params = snakemake.params.cell  # rules/common.smk: cell_params
# The job's cells, in the order its server answers them: (task, temperature, repeat) each (common.smk: job_cells).
cells = [Cell(task, wc.condition, float(temperature), int(repeat), wc.machine)
         for task, temperature, repeat in params["cells"]]
labels = ", ".join(c.label for c in cells)
build_dir = Path(inp.build)
# The verified model manifests (rule verify_model) name the GGUFs the server loads
model_info = read_json(Path(inp.model_manifest))
draft_info = read_json(Path(inp.draft_manifest)) if hasattr(inp, "draft_manifest") else None
with logged_to(log.run), interrupt_guard() as snakemake_pid:
    print(f"cells {labels}: starting (watching Snakemake pid {snakemake_pid})", flush=True)
    setup = Setup(
        condition=wc.condition,
        server_binary=build_dir / "llama-server",
        build_manifest=read_json(build_dir / "manifest.json"),
        model_path=Path(model_info["path"]),
        model_manifest=model_info,
        draft_path=Path(draft_info["path"]) if draft_info else None,
        draft_manifest=draft_info,
        prompt_manifests={manifest["task"]: manifest for manifest in (read_json(Path(p)) for p in inp.prompt)},
        server_args=list(params["server_args"]),
        requires=list(params["requires"]),
        scope=snakemake.params.scope,
        server_log=Path(log.server),
        gpu_samples=Path(log.gpu),
        code_fingerprint=read_json(Path(inp.code))["fingerprint"],
        **{name: params[name] for name in SETTINGS},
    )
    lines = []
    try:
        records = run_cells(setup, cells)
        for cell, record in zip(cells, records, strict=True):
            write_json_atomic(Path(cell.path), record)
            fig = record["figures"]
            lines.append(
                f"cell {cell.label}: {fig['tokens_per_s']:.1f} tok/s, {fig['predicted_n']} tokens, drafted "
                f"{fig['draft_n']} accepted {fig['draft_n_accepted']}, attempt {record['attempt']}, "
                f"wall {fig['cell_wall_s']:.1f} s"
            )
    except CellError as error:
        fail(str(error), log.run)
    except OSError as error:  # a record or log could not be written (disk full, read-only): no partial file is left
        fail(f"cells {labels}: could not write its files: {error}; no cell file was written", log.run)
    except (Interrupted, KeyboardInterrupt) as stop:
        fail(f"cells {labels}: stopped ({stop or 'interrupted'}); the server was stopped and no cell file was "
             "written. To resume, run the same snakemake command again (after a kill -9 of Snakemake, first "
             "`snakemake --unlock` with the same options)", log.run)
    print("\n".join(lines))
print("\n".join(f"specbench: {line}" for line in lines), flush=True)
