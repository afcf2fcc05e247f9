"""The workflow's rules as Snakemake itself loads them (its API, in a subprocess: loading sets up Snakemake's logging
and the workflow's sys.path): each rule's name, script, conda env and where it is defined, and the outputs it flags
for Snakemake's report with their captions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from support.paths import REPO

# Rules that exist only under some config (each 'warm_scope' defines its own warm rule, a vLLM build its environment's,
# tasks from a public prompt set the set's):
# the workflow is loaded once per entry, and the rules of every load are kept.
CONFIG_VARIANTS = (
    {"warm_scope": "task"},
    {"warm_scope": "condition"},
    {"builds": yaml.safe_load((REPO / "config" / "study-vllm.yaml").read_text())["builds"]},
    {
        "tasks": {
            "from": "spec-bench",
            "revision": "0" * 40,
            "sha256": "0" * 64,
            "per_category": 1,
            "categories": ["qa"],
        }
    },
)


@dataclass(frozen=True)
class Rule:
    """A rule with a ``script:``, its conda env file (None when it names none) and where it is defined."""

    name: str
    script: Path
    env: Path | None
    source: str


def _load(snakefile: Path, variants: list[dict]) -> list[dict]:
    """Every rule of the workflow under each config variant, as plain facts (run in the subprocess)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    facts = []
    for config in variants:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, enable_file_logging=False)) as api:
            workflow = api.workflow(ResourceSettings(), ConfigSettings(config=config), snakefile=snakefile)._workflow
            for rule in workflow.rules:
                base = Path(str(rule.basedir))
                facts.append(
                    {
                        "name": rule.name,
                        "script": str((base / rule.script).resolve()) if rule.script else None,
                        "env": str((base / rule.conda_env).resolve()) if isinstance(rule.conda_env, str) else None,
                        "source": f"{Path(rule.snakefile).relative_to(snakefile.parent)}:{rule.lineno}",
                        "reports": {
                            str(f): str(f.flags["report"].caption.get_path_or_uri(secret_free=True))
                            for f in rule.output
                            if f.flags.get("report") and f.flags["report"].caption
                        },
                    }
                )
    return facts


@cache
def _facts() -> list[dict]:
    done = subprocess.run(
        [sys.executable, __file__, str(REPO / "Snakefile"), json.dumps(CONFIG_VARIANTS)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},  # this module's own imports
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])


def workflow_rules() -> list[Rule]:
    """Every rule with a ``script:`` (paths resolved as Snakemake resolves them), in the order they are defined."""
    rules = {}
    for fact in _facts():
        if fact["script"] is not None:
            env = Path(fact["env"]) if fact["env"] else None
            rules.setdefault(fact["name"], Rule(fact["name"], Path(fact["script"]), env, fact["source"]))
    return sorted(rules.values(), key=lambda rule: (rule.source.split(":")[0], int(rule.source.split(":")[1])))


def all_rule_names() -> frozenset[str]:
    """The name of every rule of the workflow under any of the config variants."""
    return frozenset(fact["name"] for fact in _facts())


def report_outputs() -> dict[str, Path]:
    """Every output flagged ``report(..., caption=...)``: its path and its caption file."""
    return {path: Path(caption) for fact in _facts() for path, caption in fact["reports"].items()}


@dataclass(frozen=True)
class RuleNames:
    """The rules one load of the workflow defines, and those kept on the submitting host (localrules)."""

    names: frozenset[str]
    local: frozenset[str]


def rule_names(workdir: Path, configfiles: list[Path], config: dict | None = None) -> RuleNames:
    """Load the Snakefile in this process with these config files (and ``config`` over them) in ``workdir``."""
    import contextlib
    import io

    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

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
            return RuleNames(names, frozenset(workflow._localrules) & names)
        finally:
            os.chdir(here)


if __name__ == "__main__":
    print(json.dumps(_load(Path(sys.argv[1]), json.loads(sys.argv[2]))))
