"""Snakemake entry: run one cell (or a warm server's sequence: a task's repeats, or every cell of a condition) and
write each record atomically.

A failure prints one line naming the cell and the log to read, and writes no cell file. SIGTERM, SIGHUP and the
death of the Snakemake process above this script stop the server and end the script the same way."""

from pathlib import Path

from specbench.cell import CellError, job_setup, run_cells
from specbench.core.entry import fail, logged_to
from specbench.core.files import read_json, write_json_atomic
from specbench.core.matrix import job_cells
from specbench.server import Interrupted, interrupt_guard

snakemake = globals()["snakemake"]
inp, log = snakemake.input, snakemake.log
# The job's cells, in the order its server answers them
cells = job_cells(snakemake.config, dict(snakemake.wildcards.items()))
labels = ", ".join(c.label for c in cells)
prompts = [inp.prompt] if isinstance(inp.prompt, str) else list(inp.prompt)
with logged_to(log.run), interrupt_guard() as snakemake_pid:
    print(f"cells {labels}: starting (watching Snakemake pid {snakemake_pid})", flush=True)
    setup = job_setup(read_json(Path(inp.setup)), [read_json(Path(p)) for p in prompts],
                      scope=snakemake.params.scope, server_log=Path(log.server), gpu_samples=Path(log.gpu))
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
