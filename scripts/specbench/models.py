"""Model preparation: Hugging Face snapshot, conversion with the pinned converter, quantization."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from .core.files import sha256_file


class PreparationError(RuntimeError):
    """A preparation step failed; the message says which and where to look."""


def _run(argv: list[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(argv), file=sys.stderr, flush=True)
    result = subprocess.run(argv, env=env, stdout=sys.stderr, stderr=sys.stderr)
    if result.returncode != 0:
        raise PreparationError(f"command failed ({result.returncode}): {' '.join(argv)}")


def file_manifest(root: Path) -> list[dict[str, Any]]:
    """Every file under ``root`` (links followed) with its size and sha256, sorted by path."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".cache" not in p.relative_to(root).parts)
    return [{"path": p.relative_to(root).as_posix(), "size": p.stat().st_size, "sha256": sha256_file(p)}
            for p in files]


def hf_snapshot(repo: str, revision: str, out_dir: Path, repo_type: str = "model") -> dict[str, Any]:
    """Download (or reuse from the HF cache) a pinned snapshot; link its files into ``out_dir``.

    Honours HF_HOME, HF_TOKEN and HF_HUB_OFFLINE through huggingface_hub itself; downloads resume.
    """
    from huggingface_hub import snapshot_download

    snapshot = Path(snapshot_download(repo_id=repo, revision=revision, repo_type=repo_type))
    commit = snapshot.name
    if len(revision) == 40 and revision != commit:
        raise PreparationError(f"{repo}: asked for revision {revision}, the cache gave {commit}")
    check_snapshot(snapshot, f"{repo}@{commit}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(snapshot.rglob("*")):
        if path.is_file():
            link = out_dir / path.relative_to(snapshot)
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(path.resolve())
    return {
        "repo": repo,
        "repo_type": repo_type,
        "revision_requested": revision,
        "commit": commit,
        "snapshot": str(snapshot),
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
            raise PreparationError(f"{label}: {relative} is missing (its link points to a blob that is gone: "
                                   f"{os.path.realpath(path)}); delete it from the cache and download again")
        if not path.is_file():
            continue
        blob = Path(os.path.realpath(path))
        if _SHA256_NAME.match(blob.name):
            actual = sha256_file(path)
            if actual != blob.name:
                raise PreparationError(
                    f"{label}: {relative} is truncated or damaged ({path.stat().st_size} bytes, sha256 {actual}, "
                    f"but its blob {blob} is named by the sha256 it should have); delete it and download again")
        if relative.endswith(".index.json"):
            try:
                weight_map = json.loads(path.read_text(encoding="utf-8")).get("weight_map", {})
            except (ValueError, UnicodeDecodeError) as error:
                raise PreparationError(f"{label}: {relative} is not a valid index ({error})") from None
            parent = path.parent
            for shard in sorted(set(weight_map.values())):
                if not (parent / shard).is_file():
                    raise PreparationError(f"{label}: shard {shard} listed in {relative} is missing from {snapshot}")


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
        raise PreparationError(f"{dataset['repo']}@{snapshot.name}: no files match {pattern}")
    frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    partial = out.with_name(out.name + ".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_json(partial, orient="records", lines=True, force_ascii=False)
    partial.replace(out)
    return {"repo": dataset["repo"], "commit": snapshot.name, "files": [f.name for f in files], "rows": len(frame)}


def convert_checkpoint(llama_src: Path, checkpoint: Path, out: Path, outtype: str, extra: list[str]) -> None:
    """Run the pinned tree's own convert_hf_to_gguf.py (with its own gguf-py) into ``out`` atomically."""
    if "--no-mtp" in extra or "--no-nextn" in extra:
        print("warning: converting WITHOUT the MTP layer", file=sys.stderr)
    partial = out.with_name(out.name + ".part")
    env = {k: v for k, v in os.environ.items() if k != "NO_LOCAL_GGUF"}
    env["PYTHONPATH"] = os.pathsep.join([str(llama_src / "gguf-py"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    _run([sys.executable, str(llama_src / "convert_hf_to_gguf.py"), str(checkpoint), "--outtype", outtype,
          "--outfile", str(partial), *extra], env=env)
    partial.replace(out)


def quantize(binary: Path, source: Path, out: Path, quant: str, threads: int) -> None:
    """``llama-quantize`` without an importance matrix, written atomically."""
    partial = out.with_name(out.name + ".part")
    _run([str(binary), str(source), str(partial), quant, str(threads)])
    partial.replace(out)
