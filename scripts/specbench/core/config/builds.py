"""The llama.cpp builds a run measures with (config ``builds``): each a label and a ``llama_cpp`` block whose keys
replace the top-level block's; without ``builds``, the one build of ``llama_cpp`` (label '', folders and paths as
they always were). Resolved when the config is validated (``expand_builds``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from specbench.core.config.backends import backend_options_in
from specbench.core.config.error import ConfigError

LLAMA_DIR = "resources/llama.cpp"  # the one build's folders; another build's are under builds/<label>/
ONE_BUILD = ""  # the build coordinate of a run without ``builds``


@dataclass(frozen=True)
class Build:
    """One build: its label ('' for the one build), its resolved llama_cpp block and the suffix of its folders
    (``LLAMA_DIR + suffix``; logs and benchmarks likewise): '' for the top-level build, '/builds/<label>' else."""

    label: str
    llama_cpp: Mapping[str, Any]
    suffix: str
    description: str = ""

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
        Build(b["label"], b["llama_cpp"], "" if b["llama_cpp"] == top else f"/builds/{b['label']}", b["description"])
        for b in config["builds"]
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
    routes = {_fetched(b["llama_cpp"]["source"]) for b in config.get("builds") or []}
    if len(routes) > 1:
        raise ConfigError(
            "builds",
            "mixes the git route with archive or pypi-sdist sources (their fetched forms differ, a folder or a "
            "file): give every build the same kind of source",
        )


def _fetched(source: str) -> str:
    """What the fetch step leaves: a git checkout (a folder) or an archive (a file)."""
    return "git" if source == "git" else "archive"
