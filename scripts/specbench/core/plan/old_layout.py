"""Cell files of working directories from before models folders (``results/cells/<machine>/<prompt>/...``): found
for the cells a run plans, left where they are, and named in one line when the run plans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from specbench.core.plan.cells import NO_MODELS, Cell
from specbench.core.plan.coordinates import LAYOUT


def old_layout_files(cells: Sequence[Cell], root: Path = Path()) -> list[str]:
    """The files, among the paths ``cells`` had before models folders, that exist under ``root``."""
    return [old for old in (replace(cell, models=NO_MODELS).path for cell in cells) if (root / old).is_file()]


def old_layout_note(found: Sequence[str], cells: Sequence[Cell]) -> str | None:
    """The one line a run prints when ``found`` (``old_layout_files``) is not empty: what they are, that they stay
    as they are and unread, and where this run's cells go instead."""
    if not found:
        return None
    where = sorted({cell.path.removesuffix("/" + LAYOUT.crossed_path(cell.values)) for cell in cells})
    return (
        f"specbench: {len(found)} cell file(s) of this matrix are in the layout from before models folders (e.g. "
        f"{found[0]}): left as they are and not read (an earlier version of the measurement code made them, and the "
        f"tables take only the current code's cells); this run's cells go under {', '.join(where)}"
    )
