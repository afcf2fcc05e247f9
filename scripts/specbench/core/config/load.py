"""Load and validate a study configuration before any work runs: a prompt set expanded into tasks, the schema (its
defaults filled in), the sweeps expanded into conditions (draft lengths matched across engines), then the cross-key
checks.

Every error names the config key it is about (e.g. ``conditions.ngram.args``) so a typo fails at once.
"""

from __future__ import annotations

from pathlib import Path

from specbench.core.config.builds import expand_builds
from specbench.core.config.cross_checks import check_config
from specbench.core.config.draft_lengths import match_lengths, match_swept
from specbench.core.config.error import ConfigError
from specbench.core.config.prompt_sets import expand_prompt_set
from specbench.core.config.schema import load_schema, validate_document
from specbench.core.config.sweeps import expand_sweeps
from specbench.core.steps.repo import REPO_ROOT


def validate_config(config: dict, base: Path = REPO_ROOT, schema: dict | None = None) -> dict:
    """Validate ``config`` in place (a prompt set's categories as tasks, filling defaults, expanding sweeps,
    resolving builds) and return it; raise ConfigError on the first problem."""
    if "cuda" in (config.get("llama_cpp") or {}):
        old = config["llama_cpp"]["cuda"]
        raise ConfigError(
            "llama_cpp.cuda",
            f"was replaced by llama_cpp.backend (cuda, metal, hip, vulkan or cpu): "
            f"write `backend: {'cuda' if old is True else 'cpu'}` instead of `cuda: {old}`".lower(),
        )
    schema = schema if schema is not None else load_schema()
    expand_prompt_set(config, schema)
    validate_document(config, schema)
    match_lengths(config)
    match_swept(config, expand_sweeps(config))
    build_schema = {**schema["properties"]["llama_cpp"], "$defs": schema["$defs"]}
    expand_builds(config, lambda block: validate_document(block, build_schema))
    check_config(config, base)
    return config
