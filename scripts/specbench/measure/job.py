"""One cell job, as the workflow's cell rules run it: its cells (one, or a warm server's sequence), measured under the
interrupt guard, each record written atomically, one progress line per cell; a failure is one line naming the cell and
the log to read, with no cell file written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from specbench.core.plan.cells import Cell
from specbench.core.plan.rule_names import SCOPE_OF_CELL_RULE
from specbench.core.records.ownership import OtherModelsCell, check_cells, setup_models
from specbench.core.records.timings import record_timings
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import read_json, write_json_atomic
from specbench.core.steps.guard import Interrupted, interrupt_guard
from specbench.measure.condition_setup import job_setup
from specbench.measure.requests import CellError
from specbench.measure.runner import run_cells


def progress_line(label: str, record: Mapping[str, Any]) -> str:
    """'cell essay/off/t0.0/r1: 52.3 tok/s, 256 tokens, drafted 0 accepted 0, attempt 1, wall 6.1 s' (as the server
    reported it; an endpoint without timings: as its stream arrived, ``record_timings``)."""
    timings = record_timings(record)
    return (
        f"cell {label}: {float(timings['predicted_per_second']):.1f} tok/s, {timings['predicted_n']} tokens, "
        f"drafted {timings.get('draft_n', 0) or 0} accepted {timings.get('draft_n_accepted', 0) or 0}, attempt "
        f"{record['attempt']}, wall {record['timing']['cell_wall_s']:.1f} s"
    )


def run_job(
    rule: str,
    cell_files: Sequence[str],
    *,
    setup: Path,
    prompts: Sequence[Path],
    server_log: Path,
    gpu_samples: Path,
    run_log: Path,
) -> None:
    """Measure the cells of one job of a cell rule (``rule``: which one, and so what its server answers;
    ``cell_files``: the job's outputs, its cells in serving order) and write each record; SIGTERM, SIGHUP, Ctrl-C and
    the death of the Snakemake process above stop the server and end the job with one line, writing nothing."""
    scope = SCOPE_OF_CELL_RULE[rule]
    cells = [Cell.from_path(path) for path in cell_files]
    labels = ", ".join(c.label for c in cells)
    lines: list[str] = []
    with logged_to(run_log), interrupt_guard() as guarded:
        print(f"cells {labels}: starting ({guarded.describe()})", flush=True)
        resolved = read_json(setup)
        try:  # in front of the writes: a cell file of another model's is never measured over
            check_cells([Path(c.path) for c in cells], setup_models(resolved))
        except OtherModelsCell as error:
            fail(f"cells {labels}: {error}", run_log)
        served = job_setup(
            resolved,
            [read_json(p) for p in prompts],
            scope=scope,
            server_log=server_log,
            gpu_samples=gpu_samples,
        )
        try:
            for cell, record in zip(cells, run_cells(served, cells), strict=True):
                write_json_atomic(Path(cell.path), record)
                lines.append(progress_line(cell.label, record))
        except CellError as error:
            fail(str(error), run_log)
        except OSError as error:  # a record or log could not be written (disk full, read-only): no partial file
            fail(f"cells {labels}: could not write its files: {error}; no cell file was written", run_log)
        except (Interrupted, KeyboardInterrupt) as stop:
            fail(
                f"cells {labels}: stopped ({str(stop) or 'interrupted'}); the server was stopped and no cell file was "
                "written. To resume, run the same snakemake command again (after a kill -9 of Snakemake, first "
                "`snakemake --unlock` with the same options)",
                run_log,
            )
        print("\n".join(lines))
    print("\n".join(f"specbench: {line}" for line in lines), flush=True)
