"""The checks of a validated config that a schema cannot express: names that must refer to each other (the
baseline, select, resources, machines), server flags the pipeline sets itself or every request states (sampling),
known --spec-type values, the models a condition needs, and each task's prompts and the source archive
(prompt_checks, sources)."""

from __future__ import annotations

import re
from pathlib import Path

from specbench.core.config import sampling
from specbench.core.config.backends import backend_options_in
from specbench.core.config.error import ConfigError, did_you_mean
from specbench.core.config.prompt_checks import check_task
from specbench.core.config.sources import check_local_archive, model_source, resolve_path

# --spec-type names known to llama.cpp builds b11223 .. b11434 (common/speculative.cpp).
KNOWN_SPEC_TYPES = frozenset(
    {
        "none",
        "draft-simple",
        "draft-eagle3",
        "draft-mtp",
        "draft-dflash",
        "draft-dspark",
        "ngram-simple",
        "ngram-map-k",
        "ngram-map-k4v",
        "ngram-mod",
        "ngram-cache",
    }
)
LOAD_SEGMENT = re.compile(r"c[0-9]+")  # a cell path's concurrency component (core.plan.coordinates)
# Flags the pipeline sets itself; a config that sets them would bind elsewhere or clash.
RESERVED_SERVER_FLAGS = frozenset({"--host", "--port", "-m", "--model", "--log-file", "--api-key"})


def check_config(config: dict, base: Path) -> None:
    """Cross-key checks that a schema cannot express; raise ConfigError on the first problem."""
    conditions: dict = config["conditions"]
    if config["baseline"] not in conditions:
        hint = did_you_mean(config["baseline"], conditions)
        message = f"'{config['baseline']}' is not one of the conditions {sorted(conditions)}{hint}"
        raise ConfigError("baseline", message)
    for kind in ("tasks", "conditions"):
        for name in config["select"].get(kind, []):
            if name not in config[kind]:
                hint = did_you_mean(name, config[kind])
                raise ConfigError(f"select.{kind}", f"'{name}' is not one of the {kind}{hint}")
    chosen = config["select"].get("conditions")
    if chosen and config["baseline"] not in chosen:
        raise ConfigError("select.conditions", f"must include the baseline '{config['baseline']}'")
    chosen_backend = backend_options_in(config["llama_cpp"]["cmake_args"])
    if chosen_backend:
        raise ConfigError(
            "llama_cpp.cmake_args",
            f"{chosen_backend[0]}: the GPU backend is set by llama_cpp.backend "
            f"('{config['llama_cpp']['backend']}' here), which sets every -DGGML_<backend> option; "
            "remove it from cmake_args",
        )
    for flag in config["server"]["args"]:
        if flag in RESERVED_SERVER_FLAGS:
            raise ConfigError("server.args", f"'{flag}' is set by the pipeline (it binds 127.0.0.1 on a free port)")
    sampling.check_flags(config["server"]["args"], "server.args")
    for name, condition in conditions.items():
        if LOAD_SEGMENT.fullmatch(name):
            raise ConfigError(
                f"conditions.{name}", "a condition's name cannot be c<number>: a cell path would read it as a load"
            )
        _check_condition(name, condition, config)
    for name, task in config["tasks"].items():
        check_task(name, task, base, config)
    check_local_archive(config, base)
    _check_machines(config, base)
    _check_load(config)
    _check_resources(config)
    for role in ("target", "draft"):
        source = model_source(config, role)
        if source["kind"] in ("gguf", "checkpoint") and "path" in source:
            path = resolve_path(source["path"], base)
            if not path.exists():
                raise ConfigError(f"models.{role}.{source['kind']}.path", f"'{path}' does not exist")
    draft = model_source(config, "draft")["kind"]
    selected = config["select"].get("conditions") or list(conditions)
    needs_draft = any("draft" in conditions[name]["requires"] for name in selected)
    if needs_draft and model_source(config, "target")["kind"] == "gguf" and draft in ("hf", "checkpoint", "tiny"):
        raise ConfigError(
            "models.draft.source",
            f"a '{draft}' draft is converted against its target's checkpoint "
            "(--target-model-dir), which a 'gguf' target does not have: give the draft as a gguf too",
        )
    needs_mtp = [name for name in selected if "mtp" in conditions[name]["requires"]]
    if needs_mtp and not config["models"]["target"]["require_mtp"]:
        raise ConfigError(
            f"conditions.{needs_mtp[0]}.requires",
            "needs the target's MTP layer, but "
            "models.target.require_mtp is false, so the target is not checked for one (a model without "
            "one cannot run it): set require_mtp: true for a target that has the layer, or leave "
            f"{needs_mtp} out of select.conditions",
        )


def _check_load(config: dict) -> None:
    """A load dimension holds the one-request point (the study's tables and the identity control are measured there)
    and runs only fresh-server conditions (a warm server answers its cells one after another)."""
    levels = list(config["load"]["concurrency"])
    if levels == [1]:
        return
    if 1 not in levels:
        raise ConfigError(
            "load.concurrency",
            f"{levels} must include 1: the study's tables, the multiplier at each load and the token identity "
            "under load are measured against the one-request cells",
        )
    selected = config["select"].get("conditions") or list(config["conditions"])
    warm = [name for name in selected if config["conditions"][name]["server"] == "warm"]
    if warm:
        raise ConfigError(
            "load.concurrency",
            f"{levels} with warm condition(s) {warm}: a load point starts a fresh server for its N requests; "
            "leave them out with select.conditions",
        )


def _check_resources(config: dict) -> None:
    """The conditions resources.conditions names must exist."""
    known = list(config["conditions"])
    for name in config["resources"]["conditions"]:
        if name not in known:
            raise ConfigError(
                "resources.conditions", f"'{name}' is not a condition of this workflow{did_you_mean(name, known)}"
            )


def _check_machines(config: dict, base: Path) -> None:
    """Machine and import labels name folders of results: each once; an import's records must exist."""
    seen: dict[str, str] = {}
    for key in ("machines", "imports"):
        for index, entry in enumerate(config.get(key, [])):
            label = entry["label"]
            if label in seen:
                raise ConfigError(f"{key}[{index}].label", f"'{label}' is already the label of {seen[label]}")
            seen[label] = f"{key}[{index}]"
    for index, entry in enumerate(config.get("imports", [])):
        path = resolve_path(entry["path"], base)
        if not path.exists():
            raise ConfigError(f"imports[{index}].path", f"'{path}' does not exist")


def _check_condition(name: str, condition: dict, config: dict) -> None:
    key = f"conditions.{name}.args"
    args: list[str] = condition["args"]
    for flag in args:
        if flag in RESERVED_SERVER_FLAGS:
            raise ConfigError(key, f"'{flag}' is set by the pipeline")
    sampling.check_flags(args, key)
    for i, flag in enumerate(args):
        if flag == "--spec-type":
            if i + 1 >= len(args):
                raise ConfigError(key, "--spec-type needs a value")
            for spec in args[i + 1].split(","):
                if spec not in KNOWN_SPEC_TYPES:
                    hint = did_you_mean(spec, sorted(KNOWN_SPEC_TYPES))
                    raise ConfigError(key, f"unknown --spec-type '{spec}'{hint}")
    uses_draft = any("{draft}" in a for a in args)
    if uses_draft and "draft" not in condition["requires"]:
        raise ConfigError(f"conditions.{name}.requires", "args use '{draft}': add 'draft' to requires")
    if "draft" in condition["requires"] and "draft" not in config["models"]:
        raise ConfigError(f"conditions.{name}.requires", "needs a draft model but models.draft is not set")
