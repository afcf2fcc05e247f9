"""A Hugging Face hub cache laid out by huggingface_hub's own code, offline: the steps its download takes once a file's
bytes have arrived (the ref of the revision, the blob named by the file's etag, the cache-wide store of Xet files
with the blob linked into it, the snapshot's link), each done by the function huggingface_hub itself calls there."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

# What the hub stores as large files, named by their sha256 (and, as Xet files, shared across the cache): its
# .gitattributes' patterns for weights and data files, and anything over its 10 MB limit for plain git files.
LARGE_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".onnx", ".msgpack", ".h5", ".parquet")
LARGE_BYTES = 10 * 1024 * 1024


def sharded_checkpoint(folder: Path, shard_bytes: int = 4096) -> Path:
    """A sharded Hugging Face checkpoint of random bytes (the download step reads files, it does not load them): two
    weight shards (Xet files on the hub), their index and a config (git files)."""
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["Qwen3_5ForCausalLM"]}')
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    for index, shard in enumerate(shards):
        (folder / shard).write_bytes(os.urandom(shard_bytes + index))
    weight_map = {"a.weight": shards[0], "b.weight": shards[1]}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return folder


def is_large(path: Path) -> bool:
    """Whether the hub would store ``path`` as a large (LFS/Xet) file."""
    return path.suffix in LARGE_SUFFIXES or path.stat().st_size > LARGE_BYTES


def populate_hf_cache(
    hf_home: Path, repo: str, checkpoint: Path, *, shared: bool | None = None, repo_type: str = "model"
) -> str:
    """Put ``checkpoint`` (a model's files, or with ``repo_type="dataset"`` a dataset's) into the hub cache under
    ``hf_home`` as ``hf_hub_download`` leaves it; return the commit id.

    Large files are Xet files: named by their sha256, their Xet hash computed by hf_xet, and, with ``shared`` (by
    default when huggingface_hub's shared store is on, as it is unless HF_HUB_DISABLE_SHARED_BLOBS is set), moved
    into ``<cache>/blobs/<2 hex>/<xet hash>`` with the repo's blob linked to it; small files are named by their git
    blob sha1. The commit id is made from the files' names and contents.
    """
    import hf_xet
    from huggingface_hub import file_download
    from huggingface_hub.utils import _shared_blobs
    from huggingface_hub.utils.sha import git_hash

    shared = _shared_blobs.shared_blobs_enabled() if shared is None else shared
    cache = hf_home / "hub"
    storage = cache / file_download.repo_folder_name(repo_id=repo, repo_type=repo_type)
    files = sorted(p for p in checkpoint.rglob("*") if p.is_file())
    listing = hashlib.sha1()
    for path in files:
        listing.update(path.relative_to(checkpoint).as_posix().encode())
        listing.update(hashlib.sha256(path.read_bytes()).digest())
    commit = listing.hexdigest()
    storage.mkdir(parents=True, exist_ok=True)
    file_download._cache_commit_hash_for_specific_revision(str(storage), "main", commit)
    for path in files:
        large = is_large(path)
        etag = hashlib.sha256(path.read_bytes()).hexdigest() if large else git_hash(path.read_bytes())
        blob = storage / "blobs" / etag
        blob.parent.mkdir(parents=True, exist_ok=True)
        is_shared = blob.is_symlink()
        if not blob.exists():
            shutil.copyfile(path, blob)
            if large and shared:
                [info] = hf_xet.hash_files([str(path)])
                is_shared = _shared_blobs.publish_blob_to_shared_store(
                    blob_path=str(blob), xet_hash=info.hash, cache_dir=cache, expected_size=path.stat().st_size
                )
                assert is_shared, f"huggingface_hub did not publish {blob} to its shared store"
        pointer = Path(file_download._get_pointer_path(str(storage), commit, path.relative_to(checkpoint).as_posix()))
        pointer.parent.mkdir(parents=True, exist_ok=True)
        file_download._create_symlink(str(blob), str(pointer), new_blob=not is_shared)
    return commit


def shared_store_file(snapshot_file: Path) -> Path | None:
    """The file of huggingface_hub's shared store that holds a snapshot file's bytes (None when its repo blob holds
    them itself)."""
    from huggingface_hub.utils import _shared_blobs

    blob = Path(os.path.normpath(snapshot_file.parent / snapshot_file.readlink()))
    cache = blob.parents[2]
    return _shared_blobs.shared_blob_target(blob, cache)
