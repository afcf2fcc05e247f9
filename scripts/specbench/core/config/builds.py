"""The builds a run measures with (config ``builds``): each a label and an engine. A llama.cpp build has a
``llama_cpp`` block whose keys replace the top-level block's; a vLLM build names its environment and each
condition's flags (a fresh vLLM server per cell, like llama-server); an endpoint build names the servers the user
already runs, one URL per condition (an sglang build likewise: SGLang servers, asked for their speculative details).
Without ``builds``, the one build of ``llama_cpp`` (label '', folders and paths as they always were). Resolved when
the config is validated (``expand_builds``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from specbench.core.config.backends import backend_options_in
from specbench.core.config.error import ConfigError
from specbench.core.config.sources import model_source

LLAMA_DIR = "resources/llama.cpp"  # the one build's folders; another build's are under builds/<label>/
VLLM_DIR = "resources/vllm"  # the vLLM builds' environments, one folder each (vllm_dir)
ONE_BUILD = ""  # the build coordinate of a run without ``builds``
LLAMA_CPP = "llama.cpp"  # the engine built and started here, a fresh llama-server per cell
VLLM = "vllm"  # vLLM from an environment the workflow makes (or the user names), a fresh server per cell
ENDPOINT = "endpoint"  # an OpenAI-compatible server the user runs, measured without starting it
SGLANG = "sglang"  # an SGLang server the user runs: an endpoint asked for SGLang's per-request speculative details
# The engines whose servers the user runs (never started here): a block of their name with urls, condition -> URL
USER_RUN = (ENDPOINT, SGLANG)
DEFAULT_ENGINE = LLAMA_CPP  # a build's engine where the config names none (the one build of a run without builds)


@dataclass(frozen=True)
class Build:
    """One build: its label ('' for the one build), its resolved llama_cpp block and the suffix of its folders
    (``LLAMA_DIR + suffix``; logs and benchmarks likewise): '' for the top-level build, '/builds/<label>' else."""

    label: str
    llama_cpp: Mapping[str, Any]
    suffix: str
    description: str = ""
    engine: str = DEFAULT_ENGINE
    urls: Mapping[str, str] = field(default_factory=dict)  # an endpoint or sglang build's: condition -> base URL
    vllm: Mapping[str, Any] = field(
        default_factory=dict
    )  # a vLLM build's block (python, requirements, args, conditions)
    env: Mapping[str, str] = field(default_factory=dict)  # variables set for its servers (its env)

    @property
    def root(self) -> str:
        """The folder of its fetched source, tree, build and installed binaries."""
        return LLAMA_DIR + self.suffix


def declared(config: Mapping[str, Any]) -> bool:
    """Whether the config names builds (then every cell path and record carries the build's label)."""
    return bool(config.get("builds"))


def builds(config: Mapping[str, Any]) -> list[Build]:
    """The builds of a validated config, in config order (the one build of ``llama_cpp`` when none are named)."""
    top = config["llama_cpp"]
    if not declared(config):
        return [Build(ONE_BUILD, top, "")]
    return [
        Build(
            b["label"],
            b["llama_cpp"],
            "" if b["llama_cpp"] == top else f"/builds/{b['label']}",
            b["description"],
            b["engine"],
            {c: u.rstrip("/") for c, u in (b.get(b["engine"]) or {}).get("urls", {}).items()}
            if b["engine"] in USER_RUN
            else {},
            b.get("vllm") or {},
            {k: str(v) for k, v in (b.get("env") or {}).items()},
        )
        for b in config["builds"]
    ]


def llama_builds(config: Mapping[str, Any]) -> list[Build]:
    """The llama.cpp builds, fetched and built here, in config order."""
    return [b for b in builds(config) if b.engine == LLAMA_CPP]


def vllm_builds(config: Mapping[str, Any]) -> list[Build]:
    """The vLLM builds (each with its own environment), in config order."""
    return [b for b in builds(config) if b.engine == VLLM]


def vllm_dir(label: str) -> str:
    """A vLLM build's folder: its environment's manifest (``vllm_manifest``), and ``venv/`` when the workflow makes
    the environment."""
    return f"{VLLM_DIR}/{label}"


def vllm_manifest(label: str) -> str:
    """The manifest of a vLLM build's environment (rule vllm_env), which its condition setups read."""
    return f"{vllm_dir(label)}/manifest.json"


def build_conditions(build: Build, conditions: list[str]) -> list[str]:
    """The ``conditions`` a build serves: all for llama.cpp, those it names flags for (vLLM) or a URL (endpoint,
    sglang)."""
    if build.engine == LLAMA_CPP:
        return conditions
    named = build.vllm.get("conditions", {}) if build.engine == VLLM else build.urls
    return [c for c in conditions if c in named]


def _why_left_out(build: Build) -> str:
    """Why a build does not serve a condition: it names nothing for it."""
    if build.engine == VLLM:
        return f"vllm build '{build.label}' names no flags for it (vllm.conditions)"
    return f"{build.engine} build '{build.label}' names no server for it ({build.engine}.urls)"


def left_out(config: Mapping[str, Any], conditions: list[str]) -> list[tuple[str, str, str]]:
    """(build, condition, why) for each of ``conditions`` a build does not serve, for the report to list."""
    return [
        (b.label, c, _why_left_out(b))
        for b in builds(config)
        for c in conditions
        if c not in build_conditions(b, conditions)
    ]


def build_labels(config: Mapping[str, Any]) -> list[str]:
    """The build coordinates of the cells: each build's label, or [''] for the one build."""
    return [b.label for b in builds(config)]


def expand_builds(config: dict, validate: Callable[[dict], Any]) -> None:
    """Resolve each build's llama_cpp block in place: the top-level block with the build's keys over it, checked
    by ``validate`` (the schema's llama_cpp, filling its defaults); errors name the build's key."""
    seen: dict[str, int] = {}
    for index, build in enumerate(config.get("builds") or []):
        key = f"builds[{index}]"
        if build["label"] in seen:
            raise ConfigError(
                f"{key}.label", f"'{build['label']}' is already the label of builds[{seen[build['label']]}]"
            )
        seen[build["label"]] = index
        _check_engine(build, key, index, list(config["conditions"]))
        if build["engine"] == VLLM:
            _check_vllm(config, build, key)
        if build["engine"] != LLAMA_CPP:
            continue  # nothing of llama.cpp's is built for it
        block = {**config["llama_cpp"], **build["llama_cpp"]}
        try:
            validate(block)
        except ConfigError as error:
            inner = "" if error.key == "<top level>" else f".{error.key}"
            raise ConfigError(
                f"{key}.llama_cpp{inner}", error.problem, ("builds", index, "llama_cpp", *error.path)
            ) from None
        chosen = backend_options_in(block["cmake_args"])
        if chosen:
            raise ConfigError(
                f"{key}.llama_cpp.cmake_args",
                f"{chosen[0]}: the GPU backend is set by llama_cpp.backend ('{block['backend']}' here); "
                "remove it from cmake_args",
            )
        build["llama_cpp"] = block
    routes = {_fetched(b["llama_cpp"]["source"]) for b in config.get("builds") or [] if b["engine"] == LLAMA_CPP}
    if len(routes) > 1:
        raise ConfigError(
            "builds",
            "mixes the git route with archive or pypi-sdist sources (their fetched forms differ, a folder or a "
            "file): give every build the same kind of source",
        )


def _fetched(source: str) -> str:
    """What the fetch step leaves: a git checkout (a folder) or an archive (a file)."""
    return "git" if source == "git" else "archive"


def _check_engine(build: Mapping[str, Any], key: str, index: int, conditions: list[str]) -> None:
    """A llama.cpp build names no servers and no vLLM block; the first build is a llama.cpp build (its converter and
    quantizer make the models); a vLLM, endpoint or sglang build is not built here and names only conditions of the
    config."""
    engine = build["engine"]
    for block in (VLLM, *USER_RUN):
        if block in build and engine != block:
            raise ConfigError(f"{key}.{block}", f"is for engine: {block} only (this build's engine is {engine})")
    if engine == LLAMA_CPP:
        return
    if index == 0:
        raise ConfigError(
            f"{key}.engine",
            f"the first build converts and quantizes the models, so it is a llama.cpp build: list the {engine} build "
            "after it",
        )
    if build["llama_cpp"]:
        raise ConfigError(f"{key}.llama_cpp", f"this {engine} build is not built here: remove its llama_cpp block")
    if engine not in build:
        needs = (
            "vllm.conditions: condition -> its flags"
            if engine == VLLM
            else f"{engine}.urls: condition -> the server's URL"
        )
        raise ConfigError(f"{key}.{engine}", f"engine {engine} needs {needs}")
    field_name = "conditions" if engine == VLLM else "urls"
    for condition in build[engine][field_name]:
        if condition not in conditions:
            raise ConfigError(
                f"{key}.{engine}.{field_name}.{condition}",
                f"is not a condition of this config ({', '.join(conditions)})",
            )


def _check_vllm(config: Mapping[str, Any], build: Mapping[str, Any], key: str) -> None:
    """vLLM serves the Hugging Face checkpoints the GGUFs are made from (a ready GGUF has none), a condition that
    loads the draft says where its folder goes ('{draft}' in its flags), and a speculative one asks for each answer's
    acceptance (without it a cell would record 0 drafted tokens)."""
    for role in ("target", "draft"):
        if model_source(dict(config), role)["kind"] == "gguf":
            raise ConfigError(
                f"{key}.engine",
                f"vllm serves the model's Hugging Face checkpoint, but models.{role} is a ready GGUF (source: gguf): "
                "give it a checkpoint, hf or tiny source, or leave the vllm build out",
            )
    for condition, flags in build[VLLM]["conditions"].items():
        loads_draft = "draft" in config["conditions"][condition]["requires"]
        if loads_draft and not any(DRAFT_FIELD in flag for flag in flags):
            raise ConfigError(
                f"{key}.vllm.conditions.{condition}",
                f"condition '{condition}' loads the draft model: name its folder as {DRAFT_FIELD} in the flags "
                '(e.g. in --speculative-config\'s "model")',
            )
        own = [*build[VLLM].get("args", []), *flags]
        if "--speculative-config" in own and "--per-request-spec-decode-metrics" not in own:
            raise ConfigError(
                f"{key}.vllm.conditions.{condition}",
                "a speculative condition needs --per-request-spec-decode-metrics summary: without it vLLM answers "
                "without its acceptance, which would read as 0 drafted tokens",
            )


DRAFT_FIELD = "{draft}"  # in a vLLM condition's flags: the draft's Hugging Face folder
