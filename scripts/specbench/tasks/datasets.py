"""A task's dataset rows from the Hugging Face hub (GSM8K's test split), at a pinned revision, as JSON lines."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.hf_hub import HubUnreachable, snapshot


class DatasetError(RuntimeError):
    """The dataset's files are not what the config names (no file of the split at that revision)."""


def hf_dataset_split(dataset: dict[str, Any], out: Path) -> dict[str, Any]:
    """Every row of one split (parquet files of a hub dataset at a pinned revision) as JSON lines in ``out``."""
    import pandas as pd

    folder = f"{dataset['config']}/" if dataset.get("config") else ""
    pattern = f"{folder}{dataset['split']}-*.parquet"
    local = (
        "give the task a local dataset: dataset: {kind: local-jsonl, path: <rows with 'question' and "
        "'answer'>, rows: [...]} (config/tiny.yaml does so with marked stand-in problems)"
    )
    found = snapshot(
        dataset["repo"], dataset.get("revision", "main"), repo_type="dataset", patterns=[pattern], local=local
    )
    files = sorted(found.glob(pattern))
    if not files:
        raise DatasetError(f"{dataset['repo']}@{found.name}: no files match {pattern}")
    frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    partial = out.with_name(out.name + ".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_json(partial, orient="records", lines=True, force_ascii=False)
    partial.replace(out)
    return {"repo": dataset["repo"], "commit": found.name, "files": [f.name for f in files], "rows": len(frame)}


def dataset_step(dataset: Mapping[str, Any], out: Path, log: Path) -> None:
    """One split of a hub dataset at its pinned revision, as JSON lines."""
    with logged_to(log):
        try:
            print(hf_dataset_split(dict(dataset), out))
        except HubUnreachable as error:
            fail(str(error), log)
