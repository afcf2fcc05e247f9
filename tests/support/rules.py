"""The workflow's rules as Snakemake parses them (its API, not the .smk text): their names and the local ones."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

from support.paths import REPO


@dataclass(frozen=True)
class Rules:
    names: frozenset[str]
    local: frozenset[str]  # kept on the submitting host of a cluster run (localrules)


def workflow_rules(workdir: Path, configfiles: list[Path], config: dict | None = None) -> Rules:
    """Parse the Snakefile with these config files (and ``config`` over them) in ``workdir``; its rules."""
    workdir.mkdir(parents=True, exist_ok=True)
    here = Path.cwd()
    with contextlib.redirect_stderr(io.StringIO()), SnakemakeApi(OutputSettings(quiet=None)) as api:
        try:
            workflow = api.workflow(
                resource_settings=ResourceSettings(),
                config_settings=ConfigSettings(configfiles=configfiles, config=config or {}),
                storage_settings=StorageSettings(),
                snakefile=REPO / "Snakefile",
                workdir=workdir,
            )._workflow
            names = frozenset(rule.name for rule in workflow.rules)
            return Rules(names, frozenset(workflow._localrules) & names)
        finally:
            os.chdir(here)
