"""The report's Contention section body: attempts rejected as contended and the waits for a quiet machine."""

from __future__ import annotations

import pandas as pd

from .document import Column, Note, Table, digits, joined, records


def contention_parts(cells: pd.DataFrame) -> tuple[Note, Table | None]:
    """The count of rejected attempts and waits, and the table of the cells that had any (None when none had)."""
    rejected = cells[cells.rejected_attempts > 0]
    note = Note(
        f"{int(cells.rejected_attempts.sum())} attempt(s) rejected as contended and measured again, in "
        f"{len(rejected)} cell(s); {int(cells.quiet_waits.sum())} wait(s) for a quiet machine before "
        f"measuring again, {float(cells.quiet_wait_s.sum()):.0f} s in all."
    )
    table = Table(
        [
            Column("cell", "cell_file", files=True, text=True),
            Column("rejected attempts", "rejected_attempts"),
            Column("waited s", "quiet_wait_s", digits(1)),
            Column("reasons", "rejected_reasons", lambda r: joined(r, "; "), text=True),
        ],
        records(rejected),
    )
    return note, table if len(rejected) else None
