"""A pinned Hugging Face snapshot of a model: downloaded (or reused from the cache) through huggingface_hub, checked
file by file, linked into the workflow's folder, with a manifest of every file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import sha256_file, write_json_atomic
from specbench.core.steps.hf_hub import HubUnreachable, snapshot
from specbench.models.preparation_error import PreparationError

# How to run without the hub, for a model (the config's alternatives to models.<role>.source: hf)
LOCAL_MODEL = (
    "point the config at local files instead: models.<role>.source: checkpoint (a Hugging Face-layout "
    "folder) or gguf (a ready GGUF file)"
)


def file_manifest(root: Path) -> list[dict[str, Any]]:
    """Every file under ``root`` (links followed) with its size and sha256, sorted by path."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".cache" not in p.relative_to(root).parts)
    return [{"path": p.relative_to(root).as_posix(), "size": p.stat().st_size, "sha256": sha256_file(p)} for p in files]


def hf_snapshot(repo: str, revision: str, out_dir: Path, repo_type: str = "model") -> dict[str, Any]:
    """Download (or reuse from the HF cache) a pinned snapshot; link its files into ``out_dir``.

    Honours HF_HOME, HF_TOKEN and HF_HUB_OFFLINE through huggingface_hub itself; downloads resume.
    """
    folder = snapshot(repo, revision, repo_type=repo_type, local=LOCAL_MODEL)
    commit = folder.name
    if len(revision) == 40 and revision != commit:
        raise PreparationError(f"{repo}: asked for revision {revision}, the cache gave {commit}")
    check_snapshot(folder, f"{repo}@{commit}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            link = out_dir / path.relative_to(folder)
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(path.resolve())
    return {
        "repo": repo,
        "repo_type": repo_type,
        "revision_requested": revision,
        "commit": commit,
        "snapshot": str(folder),
        "files": file_manifest(out_dir),
    }


_SHA256_NAME = re.compile(r"^[0-9a-f]{64}$")


def check_snapshot(snapshot: Path, label: str) -> None:
    """Refuse a snapshot with a missing or damaged file before anything reads it.

    Offline (HF_HUB_OFFLINE) huggingface_hub returns a cached snapshot as it is. Large (LFS) files are stored as
    blobs named by their sha256, so each one is checked against its name; every shard that a ``*.index.json``
    lists must be there.
    """
    for path in sorted(snapshot.rglob("*")):
        relative = path.relative_to(snapshot).as_posix()
        if path.is_symlink() and not path.exists():
            raise PreparationError(
                f"{label}: {relative} is missing (its link points to a blob that is gone: "
                f"{os.path.realpath(path)}); delete it from the cache and download again"
            )
        if not path.is_file():
            continue
        blob = Path(os.path.realpath(path))
        if _SHA256_NAME.match(blob.name):
            actual = sha256_file(path)
            if actual != blob.name:
                raise PreparationError(
                    f"{label}: {relative} is truncated or damaged ({path.stat().st_size} bytes, sha256 {actual}, "
                    f"but its blob {blob} is named by the sha256 it should have); delete it and download again"
                )
        if relative.endswith(".index.json"):
            try:
                weight_map = json.loads(path.read_text(encoding="utf-8")).get("weight_map", {})
            except (ValueError, UnicodeDecodeError) as error:
                raise PreparationError(f"{label}: {relative} is not a valid index ({error})") from None
            parent = path.parent
            for shard in sorted(set(weight_map.values())):
                if not (parent / shard).is_file():
                    raise PreparationError(f"{label}: shard {shard} listed in {relative} is missing from {snapshot}")


def download_step(repo: str, revision: str, out_dir: Path, manifest_path: Path, log: Path) -> None:
    """The snapshot linked into ``out_dir`` and its manifest of every file; a damaged cache fails naming the file."""
    with logged_to(log):
        try:
            manifest = hf_snapshot(repo, revision, out_dir)
        except (PreparationError, HubUnreachable) as error:
            fail(str(error), log)
        write_json_atomic(manifest_path, manifest)
        print(f"{manifest['repo']}@{manifest['commit']}: {len(manifest['files'])} files")
