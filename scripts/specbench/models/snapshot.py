"""A pinned Hugging Face snapshot of a model: downloaded (or reused from the cache) through huggingface_hub, checked
file by file, linked into the workflow's folder, with a manifest of every file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from huggingface_hub.utils.sha import git_hash

from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import file_manifest, sha256_file, write_json_atomic
from specbench.core.steps.hf_hub import HubUnreachable, snapshot
from specbench.models.preparation_error import PreparationError

# How to run without the hub, for a model (the config's alternatives to models.<role>.source: hf)
LOCAL_MODEL = (
    "point the config at local files instead: models.<role>.source: checkpoint (a Hugging Face-layout "
    "folder) or gguf (a ready GGUF file)"
)


def hf_snapshot(repo: str, revision: str, out_dir: Path, repo_type: str = "model") -> dict[str, Any]:
    """Download (or reuse from the HF cache) a pinned snapshot; link its files into ``out_dir``.

    Honours HF_HOME, HF_TOKEN and HF_HUB_OFFLINE through huggingface_hub itself; downloads resume.
    """
    folder = snapshot(repo, revision, repo_type=repo_type, local=LOCAL_MODEL)
    commit = folder.name
    if len(revision) == 40 and revision != commit:
        raise PreparationError(f"{repo}: asked for revision {revision}, the cache gave {commit}")
    checked = check_snapshot(folder, f"{repo}@{commit}")
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
        "files": file_manifest(out_dir, checked),
    }


_SHA256_NAME = re.compile(r"^[0-9a-f]{64}$")
_GIT_SHA1_NAME = re.compile(r"^[0-9a-f]{40}$")


def blob_name(path: Path) -> str | None:
    """The name of the blob a snapshot file links to, one link deep (huggingface_hub's cache: ``snapshots/<commit>/
    <file> -> ../../blobs/<etag>``, whichever store then holds the bytes); None for a file that is no link."""
    return Path(os.readlink(path)).name if path.is_symlink() else None


def check_snapshot(snapshot: Path, label: str) -> dict[str, str]:
    """Refuse a snapshot with a missing or damaged file before anything reads it; return the sha256 of each file it
    hashed (by path in the snapshot).

    Offline (HF_HUB_OFFLINE) huggingface_hub returns a cached snapshot as it is. Each snapshot file links to a blob
    named by its hub etag: the sha256 of a large (LFS or Xet) file, the git blob sha1 of a small one, so each file is
    checked against that name. The blob may itself link on (huggingface_hub's cache-wide store of Xet files names
    its files by their Xet hash), so only the first link's name counts. Every shard that a ``*.index.json`` lists
    must be there.
    """
    hashed: dict[str, str] = {}
    for path in sorted(snapshot.rglob("*")):
        relative = path.relative_to(snapshot).as_posix()
        if path.is_symlink() and not path.exists():
            raise PreparationError(
                f"{label}: {relative} is missing (its link points to a blob that is gone: "
                f"{os.path.realpath(path)}); delete it from the cache and download again"
            )
        if not path.is_file():
            continue
        name = blob_name(path)
        if name is not None and _SHA256_NAME.match(name):
            hashed[relative] = sha256_file(path)
            _check_digest(path, relative, label, "sha256", hashed[relative], name)
        elif name is not None and _GIT_SHA1_NAME.match(name):
            _check_digest(path, relative, label, "git blob sha1", git_hash(path.read_bytes()), name)
        if relative.endswith(".index.json"):
            try:
                weight_map = json.loads(path.read_text(encoding="utf-8")).get("weight_map", {})
            except (ValueError, UnicodeDecodeError) as error:
                raise PreparationError(f"{label}: {relative} is not a valid index ({error})") from None
            parent = path.parent
            for shard in sorted(set(weight_map.values())):
                if not (parent / shard).is_file():
                    raise PreparationError(f"{label}: shard {shard} listed in {relative} is missing from {snapshot}")
    return hashed


def _check_digest(path: Path, relative: str, label: str, kind: str, actual: str, expected: str) -> None:
    """Refuse a file whose digest is not the one its blob is named by, in one line naming the file and its blob."""
    if actual != expected:
        raise PreparationError(
            f"{label}: {relative} is truncated or damaged ({path.stat().st_size} bytes, {kind} {actual}, but its "
            f"blob {os.path.realpath(path)} is linked as {expected}, the {kind} it should have); delete it and "
            "download again"
        )


def download_step(repo: str, revision: str, out_dir: Path, manifest_path: Path, log: Path) -> None:
    """The snapshot linked into ``out_dir`` and its manifest of every file; a damaged cache fails naming the file."""
    with logged_to(log):
        try:
            manifest = hf_snapshot(repo, revision, out_dir)
        except (PreparationError, HubUnreachable) as error:
            fail(str(error), log)
        write_json_atomic(manifest_path, manifest)
        print(f"{manifest['repo']}@{manifest['commit']}: {len(manifest['files'])} files")
