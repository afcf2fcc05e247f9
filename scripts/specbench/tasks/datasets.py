"""A task's dataset rows from the Hugging Face hub (GSM8K's test split), at a pinned revision, as JSON lines."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.entry import logged_to


class DatasetError(RuntimeError):
    """The dataset's files are not what the config names (no file of the split at that revision)."""


def hf_dataset_split(dataset: dict[str, Any], out: Path) -> dict[str, Any]:
    """Every row of one split (parquet files of a hub dataset at a pinned revision) as JSON lines in ``out``."""
    import pandas as pd
    from huggingface_hub import snapshot_download

    folder = f"{dataset['config']}/" if dataset.get("config") else ""
    pattern = f"{folder}{dataset['split']}-*.parquet"
    snapshot = Path(snapshot_download(repo_id=dataset["repo"], repo_type="dataset",
                                      revision=dataset.get("revision", "main"), allow_patterns=[pattern]))
    files = sorted(snapshot.glob(pattern))
    if not files:
        raise DatasetError(f"{dataset['repo']}@{snapshot.name}: no files match {pattern}")
    frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    partial = out.with_name(out.name + ".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_json(partial, orient="records", lines=True, force_ascii=False)
    partial.replace(out)
    return {"repo": dataset["repo"], "commit": snapshot.name, "files": [f.name for f in files], "rows": len(frame)}


def dataset_step(dataset: Mapping[str, Any], out: Path, log: Path) -> None:
    """One split of a hub dataset at its pinned revision, as JSON lines."""
    with logged_to(log):
        print(hf_dataset_split(dict(dataset), out))
