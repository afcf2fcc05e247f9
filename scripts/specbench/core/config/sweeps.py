"""A sweep: one condition declared over several values of one server flag, which stands for one ordinary condition per
value (its own setup, cells and rows), expanded when the config is validated (``expand_sweeps``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from specbench.core.config.error import ConfigError

NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")  # schema $defs.name: a path component


def sweep_member(name: str, value: Any) -> str:
    """The name of the condition a sweep makes for one value: '<sweep>-<value>', a '.' written 'p' (0.5 -> 0p5)."""
    return f"{name}-{str(value).replace('.', 'p')}"


def sweeps_of(conditions: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """Sweep name -> {member condition: its swept facts}, in the members' order (``conditions``: each swept
    condition's ``swept`` block, as the report's params carry them)."""
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for name, swept in conditions.items():
        out.setdefault(str(swept["of"]), {})[name] = swept
    return out


def expand_sweeps(config: dict) -> dict[str, list[str]]:
    """Replace each sweep condition, in place and in its position, by the ordinary conditions it stands for (its args
    plus the flag and one value each, marked ``swept``); ``select.conditions`` and ``resources.conditions`` naming a
    sweep name its members. Returns sweep -> member names (empty when there is none, or on a second call)."""
    conditions: dict = config["conditions"]
    expanded: dict[str, dict] = {}
    members: dict[str, list[str]] = {}
    for name, condition in conditions.items():
        sweep = condition.get("sweep")
        if sweep is None:
            expanded[name] = condition
            continue
        key = f"conditions.{name}.sweep"
        if sweep["flag"] in condition["args"]:
            raise ConfigError(
                f"{key}.flag", f"'{sweep['flag']}' is already in conditions.{name}.args: the sweep sets it"
            )
        members[name] = []
        for value in sweep["values"]:
            member = sweep_member(name, value)
            if not NAME.fullmatch(member):
                raise ConfigError(
                    f"{key}.values",
                    f"{value!r} makes the condition name '{member}', which is not "
                    "valid: lower-case letters, digits, '-' and '_' only",
                )
            if member in conditions or member in expanded:
                raise ConfigError(f"{key}.values", f"{value!r} makes the condition '{member}', which already exists")
            own = {k: v for k, v in condition.items() if k != "sweep"}
            described = condition.get("description") or name
            expanded[member] = {
                **own,
                "args": [*condition["args"], sweep["flag"], str(value)],
                "description": f"{described} ({sweep['flag']} {value})",
                "swept": {"of": name, "flag": sweep["flag"], "value": value},
            }
            members[name].append(member)
    if not members:
        return members
    config["conditions"] = expanded
    select = config.get("select", {})
    if select.get("conditions"):
        select["conditions"] = list(dict.fromkeys(m for c in select["conditions"] for m in members.get(c, [c])))
    by_condition = config.get("resources", {}).get("conditions", {})
    for name in [n for n in by_condition if n in members]:
        settings = by_condition.pop(name)
        for member in members[name]:
            by_condition[member] = {**settings, **by_condition.get(member, {})}
    return members
