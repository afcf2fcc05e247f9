"""Each condition's server as the plan sees it, whatever the engine (each engine's argv is its own: specbench.engines):
the measurement settings every cell records, its warm scope and the regex of the conditions one cell rule serves."""

from __future__ import annotations

import re
from typing import Any


def measurement_settings(config: dict) -> dict[str, Any]:
    """The measurement settings every cell of a condition is served with (fields of
    specbench.measure.condition_setup.Setup)."""
    return {
        "reasoning": config["reasoning"],
        "base_seed": config["seed"],
        "startup_timeout_s": config["server"]["startup_timeout_s"],
        "request_timeout_s": config["server"]["request_timeout_s"],
        "warmup_tokens": config["server"]["warmup_tokens"],
        "sampling": dict(config["sampling"]),
        **{
            key: config["measurement"][key]
            for key in (
                "sample_interval_s",
                "max_attempts",
                "max_load_per_cpu",
                "max_foreign_cpu",
                "quiet_window_s",
                "quiet_timeout_s",
            )
        },
    }


def warm_scope(config: dict, condition: str) -> str:
    """What one server of a warm condition answers: the condition's own ``warm_scope``, else the config's."""
    return config["conditions"][condition].get("warm_scope") or config["warm_scope"]


def warm_scopes(config: dict, conditions: list[str]) -> set[str]:
    """The scopes the warm ones among ``conditions`` (the run's) run with: one cell rule each, defined only where a
    condition of the run needs it (a rule's outputs are matched against every file Snakemake plans, and one warm
    condition's server writes all its cells: thousands of output patterns in a large run)."""
    return {warm_scope(config, n) for n in conditions if config["conditions"][n]["server"] == "warm"}


def conditions_regex(config: dict, server: str, scope: str | None = None) -> str:
    """Wildcard regex of the conditions with this server mode ('fresh' or 'warm'; a warm one with this
    ``warm_scope`` where given); never matches if none."""
    names = [
        n
        for n, c in config["conditions"].items()
        if c["server"] == server and (scope is None or warm_scope(config, n) == scope)
    ]
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "(?!)"
