"""The workflow's root folder (the one that holds the Snakefile and config/), found from where the package sits."""

from __future__ import annotations

from pathlib import Path


def find_repo_root(start: Path) -> Path:
    """The workflow's root: the nearest folder at or above ``start`` that holds the Snakefile and config/ (so a
    module finds it wherever in the package it sits)."""
    for folder in (start, *start.parents):
        if (folder / "Snakefile").is_file() and (folder / "config").is_dir():
            return folder
    raise FileNotFoundError(f"no Snakefile with a config/ folder at or above {start}")


REPO_ROOT = find_repo_root(Path(__file__).resolve().parent)
