"""The checkpoints a vLLM cell records (measure.condition_setup.checkpoint_identity): a Hub download's repo, commit
and file hashes as its download recorded them; a local or tiny checkpoint's files hashed, Snakemake's mark left out."""

from __future__ import annotations

import hashlib
from pathlib import Path

from specbench.measure.condition_setup import checkpoint_identity


def test_a_downloaded_checkpoint_is_its_hub_commit_and_files(tmp_path: Path) -> None:
    files = [{"path": "config.json", "size": 2, "sha256": "ab" * 32}]
    download = {"repo": "Qwen/Qwen3.5-9B", "commit": "c" * 40, "files": files, "snapshot": "/cache/x"}
    identity = checkpoint_identity(tmp_path, download)
    assert identity == {"path": str(tmp_path), "repo": "Qwen/Qwen3.5-9B", "commit": "c" * 40, "files": files}


def test_a_local_checkpoint_is_its_files_hashed(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / ".snakemake_timestamp").write_text("")
    identity = checkpoint_identity(tmp_path, None)
    assert identity["repo"] is None and identity["commit"] is None
    assert identity["files"] == [{"path": "config.json", "size": 2, "sha256": hashlib.sha256(b"{}").hexdigest()}]
