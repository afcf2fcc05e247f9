"""File helpers: sha256 (of a file, a text, a folder's files) and atomic writes (a result file is whole or absent)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file's bytes (links are followed)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def file_manifest(root: Path, known: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every file under ``root`` (links followed) with its size and sha256, sorted by path; ``known``: the sha256 of
    files already hashed (by their path under ``root``), not read again."""
    known = known or {}
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".cache" not in p.relative_to(root).parts)
    manifest = []
    for p in files:
        relative = p.relative_to(root).as_posix()
        manifest.append({"path": relative, "size": p.stat().st_size, "sha256": known.get(relative) or sha256_file(p)})
    return manifest


def sha256_text(text: str) -> str:
    """Hex sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomic(path: Path, obj: Any) -> None:
    """Atomically write ``obj`` as indented, key-sorted JSON."""
    write_atomic(path, (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))


def read_json(path: Path) -> Any:
    """Read a JSON file."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def read_json_lines(path: Path) -> list[Any]:
    """Read a JSON-lines file: one value per non-blank line."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
