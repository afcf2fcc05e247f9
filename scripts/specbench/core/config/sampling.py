"""The sampling every request states, whatever the engine (config ``sampling``): each value the config gives, else
the target GGUF's own default (``general.sampling.*``, which llama-server applies, written from the checkpoint's
generation_config.json), else llama.cpp's. A request's value overrides a server's, so the llama-server flags that
would set one are refused in the config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from specbench.core.config.error import ConfigError


class Knob(NamedTuple):
    """One sampling setting: the GGUF key that carries the model's default, llama.cpp's own, the server's flags."""

    gguf_key: str
    default: float
    flags: tuple[str, ...]


# llama.cpp's defaults (common/common.h, b11223 .. b11434) and the GGUF keys that replace them (llama-arch.cpp)
KNOBS = {
    "top_k": Knob("general.sampling.top_k", 40, ("--top-k",)),
    "top_p": Knob("general.sampling.top_p", 0.95, ("--top-p",)),
    "min_p": Knob("general.sampling.min_p", 0.05, ("--min-p",)),
    "repeat_penalty": Knob("general.sampling.penalty_repeat", 1.0, ("--repeat-penalty",)),
}
FROM_CONFIG, FROM_GGUF, FROM_LLAMA_CPP = "config", "the target GGUF", "llama.cpp's default"


def gguf_defaults(value_of: Any) -> dict[str, float | None]:
    """The model's own defaults as its GGUF states them (``value_of``: a GGUF key's value, None where absent)."""
    return {name: value_of(knob.gguf_key) for name, knob in KNOBS.items()}


def resolve(configured: Mapping[str, Any], gguf: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each setting's value and where it came from: the config, else the GGUF, else llama.cpp."""
    out = {}
    for name, knob in KNOBS.items():
        if configured.get(name) is not None:
            out[name] = {"value": configured[name], "from": FROM_CONFIG}
        elif gguf.get(name) is not None:
            out[name] = {"value": gguf[name], "from": FROM_GGUF}
        else:
            out[name] = {"value": knob.default, "from": FROM_LLAMA_CPP}
    return out


def values(resolved: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The values alone, by setting (what a request states)."""
    return {name: entry["value"] for name, entry in resolved.items()}


def check_flags(args: list[str], key: str) -> None:
    """Refuse a server flag that sets what every request states (the request would override it silently)."""
    for name, knob in KNOBS.items():
        for flag in knob.flags:
            if flag in args:
                raise ConfigError(key, f"'{flag}' is overridden by every request's own {name}: set sampling.{name}")
