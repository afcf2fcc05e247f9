"""One draft length for every engine: a condition's ``draft_length: N`` sets llama-server's ``--spec-draft-n-max N``
and, in each vLLM build that serves the condition, ``num_speculative_tokens: N`` in its ``--speculative-config``
(matched); ``draft_lengths: [...]`` sweeps it: a sweep of ``--spec-draft-n-max`` (core.config.sweeps) whose members
each vLLM build serves at the same length. Any sweep of a llama-server draft-length flag is matched so."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from specbench.core.config.error import ConfigError
from specbench.core.records.draft_budget import LLAMA_DRAFT_MAX, SPECULATIVE_CONFIG, VLLM_DRAFT_LENGTH

LLAMA_FLAG = "--spec-draft-n-max"  # b11223's flag for the most tokens one draft holds


def with_vllm_length(flags: list[str], length: int, key: str) -> list[str]:
    """A vLLM condition's flags with its speculative config drafting ``length`` tokens; ConfigError (at ``key``)
    where the flags set no speculative config (it does not draft)."""
    if SPECULATIVE_CONFIG not in flags[:-1]:
        raise ConfigError(
            key, f"sets no {SPECULATIVE_CONFIG}, so vLLM cannot draft {length} tokens for it: give it one, or no length"
        )
    at = flags.index(SPECULATIVE_CONFIG) + 1
    try:
        spec = json.loads(flags[at])
    except ValueError as error:
        raise ConfigError(key, f"{SPECULATIVE_CONFIG} is not JSON: {error}") from None
    return [*flags[:at], json.dumps({**spec, VLLM_DRAFT_LENGTH: length}), *flags[at + 1 :]]


def _vllm_conditions(config: Mapping[str, Any]) -> Iterator[tuple[int, dict[str, list[str]]]]:
    """Each vLLM build's index and its condition -> flags map (edited in place)."""
    for index, build in enumerate(config.get("builds") or []):
        if build.get("engine") == "vllm" and isinstance(build.get("vllm"), dict):
            yield index, build["vllm"].setdefault("conditions", {})


def match_lengths(config: dict) -> None:
    """Before the sweeps are expanded: ``draft_lengths`` becomes a sweep of LLAMA_FLAG; ``draft_length`` is set on
    the condition's llama-server flags and each vLLM build's flags for it (in place)."""
    for name, condition in config["conditions"].items():
        key = f"conditions.{name}"
        if "draft_lengths" in condition:
            if "sweep" in condition:
                raise ConfigError(f"{key}.draft_lengths", "sweeps the draft length: give it or sweep, not both")
            condition["sweep"] = {"flag": LLAMA_FLAG, "values": condition.pop("draft_lengths")}
        if "draft_length" not in condition:
            continue
        length = condition.pop("draft_length")
        if "sweep" in condition:
            raise ConfigError(f"{key}.draft_length", "is one length: a swept condition sets its own")
        set_already = [a for a in condition["args"] if a in LLAMA_DRAFT_MAX]
        if set_already:
            raise ConfigError(
                f"{key}.draft_length", f"args already set the draft length ({set_already[0]}): give one or the other"
            )
        condition["args"] = [*condition["args"], LLAMA_FLAG, str(length)]
        for index, conditions in _vllm_conditions(config):
            if name in conditions:
                conditions[name] = with_vllm_length(conditions[name], length, f"builds[{index}].vllm.conditions.{name}")


def match_swept(config: dict, members: Mapping[str, list[str]]) -> None:
    """After the sweeps are expanded (``members``: sweep -> its conditions): a vLLM build that serves a sweep of a
    llama-server draft-length flag serves each of its members at the member's length (in place)."""
    for sweep, names in members.items():
        swept = [config["conditions"][m]["swept"] for m in names]
        if not names or swept[0]["flag"] not in LLAMA_DRAFT_MAX:
            continue
        for index, conditions in _vllm_conditions(config):
            if sweep not in conditions:
                continue
            flags = conditions.pop(sweep)
            for member, facts in zip(names, swept, strict=True):
                key = f"builds[{index}].vllm.conditions.{sweep}"
                conditions[member] = with_vllm_length(flags, int(facts["value"]), key)
