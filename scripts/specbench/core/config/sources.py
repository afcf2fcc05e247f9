"""Where the inputs a config names come from: paths resolved against the workflow directory, the chosen llama.cpp
source route and model sources as one dict each, and a local source archive checked against its pinned sha256."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specbench.core.config.error import ConfigError
from specbench.core.steps.files import sha256_file
from specbench.core.steps.repo import REPO_ROOT


def resolve_path(value: str, base: Path) -> Path:
    """A config path: absolute as given, relative ones against the workflow directory."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def llama_source(config: dict, base: Path = REPO_ROOT) -> dict[str, Any]:
    """The chosen llama.cpp source route as one dict: ``{"kind": ..., **its block}``; a local archive path is
    resolved against the workflow directory."""
    kind = config["llama_cpp"]["source"]
    source = {"kind": kind, **config["llama_cpp"][kind]}
    if kind == "archive" and not source["url"].startswith(("http://", "https://")):
        source["url"] = str(resolve_path(source["url"], base))
    return source


def model_source(config: dict, role: str) -> dict[str, Any]:
    """The chosen source of a model role as one dict (kind 'none' when the role is not configured)."""
    model = config["models"].get(role)
    if not model:
        return {"kind": "none"}
    kind = model["source"]
    return {**model.get(kind, {}), "kind": kind}


def check_local_archive(config: dict, base: Path) -> None:
    """A local llama.cpp source archive must exist and match its pinned sha256 before any job runs (a download
    is checked by the fetch step)."""
    if config["llama_cpp"]["source"] != "archive":
        return
    source = llama_source(config, base)
    if source["url"].startswith(("http://", "https://")):
        return
    path = Path(source["url"])
    if not path.is_file():
        raise ConfigError("llama_cpp.archive.url", f"source archive '{path}' does not exist")
    actual = sha256_file(path)
    if actual != source["sha256"]:
        raise ConfigError(
            "llama_cpp.archive.sha256",
            f"source archive '{path}' has sha256 {actual}, not the pinned {source['sha256']}",
        )
