"""Rule aggregate's step: every cell record (measured here, or imported) to the typed per-cell table, its CSV copy,
and the cell index (the summaries are computed from the table once, by the report)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from specbench.analysis.cell_index import cells_index, imported_records
from specbench.analysis.cell_table import BUILD, csv_copy, write_table
from specbench.analysis.divergence import ExplanationError
from specbench.analysis.record_reader import load_records
from specbench.analysis.record_rows import MixedCodeError, cell_table, check_code
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import read_json, sha256_file, write_atomic, write_json_atomic


def aggregate_step(
    cells: Sequence[Path],
    imports: Sequence[Path],
    *,
    baseline: str,
    machines: Sequence[str],
    code_fingerprint: str,
    builds: Sequence[str] = (),
    table: Path,
    runs_csv: Path,
    index: Path,
    log: Path,
    explanations: Sequence[Path] = (),
) -> None:
    """The typed per-cell table of every cell measured here (refused when made by other measurement code) and every
    imported one, with what the explanations of their temperature-0 divergences say, its CSV copy (with a build
    column when ``builds`` names the run's builds), and the cell index."""
    with logged_to(log):
        records = load_records(cells)
        try:  # cells measured here must come from the current code; imported ones say which code made them
            check_code(records, code_fingerprint)
        except MixedCodeError as error:
            fail(str(error), log)
        records += imported_records(imports)
        explained = [(str(p), read_json(p)) for p in explanations]
        named = {r[side]["path"] for _, r in explained for side in ("cell", "reference")}
        try:
            frame = cell_table(
                records, baseline, explained, {path: sha256_file(Path(path)) for path in named if Path(path).is_file()}
            )
        except ExplanationError as error:
            fail(str(error), log)
        write_table(frame, table)
        runs = frame if builds else frame.drop(columns=[BUILD])
        write_atomic(runs_csv, csv_copy(runs).to_csv(index=False).encode("utf-8"))
        write_json_atomic(index, cells_index(records, machines))
        print(f"{len(frame)} cells aggregated ({len(frame) - len(cells)} imported)")
