"""The builds a run measures with (config ``builds``): each a label and an engine. A llama.cpp build has a
``llama_cpp`` block whose keys replace the top-level block's; an endpoint build names the servers the user already
runs, one URL per condition. Without ``builds``, the one build of ``llama_cpp`` (label '', folders and paths as
they always were). Resolved when the config is validated (``expand_builds``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from specbench.core.config.backends import backend_options_in
from specbench.core.config.error import ConfigError

LLAMA_DIR = "resources/llama.cpp"  # the one build's folders; another build's are under builds/<label>/
ONE_BUILD = ""  # the build coordinate of a run without ``builds``
LLAMA_CPP = "llama.cpp"  # the engine built and started here, a fresh llama-server per cell
ENDPOINT = "endpoint"  # an OpenAI-compatible server the user runs, measured without starting it


@dataclass(frozen=True)
class Build:
    """One build: its label ('' for the one build), its resolved llama_cpp block and the suffix of its folders
    (``LLAMA_DIR + suffix``; logs and benchmarks likewise): '' for the top-level build, '/builds/<label>' else."""

    label: str
    llama_cpp: Mapping[str, Any]
    suffix: str
    description: str = ""
    engine: str = LLAMA_CPP
    urls: Mapping[str, str] = field(default_factory=dict)  # an endpoint build's: condition -> base URL

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
            {c: u.rstrip("/") for c, u in (b.get("endpoint") or {}).get("urls", {}).items()},
        )
        for b in config["builds"]
    ]


def llama_builds(config: Mapping[str, Any]) -> list[Build]:
    """The builds fetched and built here (every build but the endpoints), in config order."""
    return [b for b in builds(config) if b.engine == LLAMA_CPP]


def build_conditions(build: Build, conditions: list[str]) -> list[str]:
    """The ``conditions`` a build serves: all for llama.cpp, those with a URL for an endpoint."""
    return conditions if build.engine == LLAMA_CPP else [c for c in conditions if c in build.urls]


def left_out(config: Mapping[str, Any], conditions: list[str]) -> list[tuple[str, str, str]]:
    """(build, condition, why) for each of ``conditions`` a build does not serve, for the report to list."""
    return [
        (b.label, c, f"endpoint build '{b.label}' names no server for it (endpoint.urls)")
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
    """An endpoint build names its servers and nothing to build; a llama.cpp build names no servers; the first build
    is a llama.cpp build (its converter and quantizer make the models)."""
    if build["engine"] == LLAMA_CPP:
        if "endpoint" in build:
            raise ConfigError(f"{key}.endpoint", "is for engine: endpoint only (this build is built with llama.cpp)")
        return
    if index == 0:
        raise ConfigError(
            f"{key}.engine",
            "the first build converts and quantizes the models, so it is a llama.cpp build: list the endpoint after it",
        )
    if build["llama_cpp"]:
        raise ConfigError(f"{key}.llama_cpp", "an endpoint build is not built here: remove its llama_cpp block")
    if "endpoint" not in build:
        raise ConfigError(f"{key}.endpoint", "engine endpoint needs endpoint.urls: condition -> the server's URL")
    for condition in build["endpoint"]["urls"]:
        if condition not in conditions:
            raise ConfigError(
                f"{key}.endpoint.urls.{condition}",
                f"is not a condition of this config ({', '.join(conditions)})",
            )
