"""The figures' index, as rule figures writes it and the report reads it back without the drawing code:
``results/figures/index.json`` (schema ``figures``, core.results.documents) lists every figure in the report's order
with its name and caption, as a PNG file beside the index or, for a figure the HTML report alone shows, kept inside
it (base64)."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from specbench.core.results.documents import read_document, write_document

SCHEMA = "figures"
THESIS_FIGURE = "thesis"  # the figure the report shows in its thesis section, not among the others


class Drawn(NamedTuple):
    """One figure as the index lists it: its name, caption, the PNG, and its file (None for one kept in the index)."""

    name: str
    caption: str
    png: bytes
    file: Path | None


def write_figure_index(index: Path, drawn: Sequence[Drawn]) -> None:
    """Write the index of ``drawn`` to ``index`` (a figure's file relative to the index's folder), atomically."""
    entries = [
        {"name": d.name, "caption": d.caption, "file": Path(os.path.relpath(d.file, Path(index).parent)).as_posix()}
        if d.file is not None
        else {"name": d.name, "caption": d.caption, "png": base64.b64encode(d.png).decode("ascii")}
        for d in drawn
    ]
    write_document(index, {"figures": entries}, SCHEMA)


def read_figure_index(index: Path) -> list[Drawn]:
    """Every figure the index at ``index`` lists, in the report's order; a file is found beside the index."""
    out = []
    for entry in read_document(index, SCHEMA)["figures"]:
        if "file" in entry:
            path = Path(index).parent / entry["file"]
            out.append(Drawn(entry["name"], entry["caption"], path.read_bytes(), path))
        else:
            out.append(Drawn(entry["name"], entry["caption"], base64.b64decode(entry["png"]), None))
    return out


def png_data_uri(png: bytes) -> str:
    """The PNG as a data: URI, to embed in HTML or Markdown."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
