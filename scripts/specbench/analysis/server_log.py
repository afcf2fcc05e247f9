"""Read what llama-server reported: the response's ``timings`` and the speculative lines of its log."""

from __future__ import annotations

import re
from typing import Any

from specbench.core.records.log_lines import is_speculative

_IMPL_RE = re.compile(r"adding speculative implementation '([^']+)'")
_SETTING_LINE_RE = re.compile(r"(common_speculative_\w+|spec\s+\w+):\s+-\s+(.*)$")
_KV_RE = re.compile(r"(\w+)=([^,\s]+)")
_ACCEPT_RE = re.compile(
    r"draft acceptance = ([0-9.]+) \(\s*(\d+) accepted /\s*(\d+) generated\)(?:, mean len =\s*([0-9.]+))?"
)


def _number(text: str) -> int | float | str:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def parse_speculative_log(log_text: str) -> dict[str, Any]:
    """Effective speculative settings and acceptance as the server logged them (empty when it did not)."""
    implementations: list[str] = []
    settings: dict[str, dict[str, Any]] = {}
    acceptance: list[dict[str, float]] = []
    lines: list[str] = []
    current = "speculative"
    for line in log_text.splitlines():
        if not is_speculative(line):
            continue
        lines.append(line.rstrip())
        impl = _IMPL_RE.search(line)
        if impl:
            current = impl.group(1)
            implementations.append(current)
            continue
        setting = _SETTING_LINE_RE.search(line)
        if setting:
            pairs = {key: _number(value) for key, value in _KV_RE.findall(setting.group(2))}
            settings.setdefault(current, {}).update(pairs)
            continue
        accept = _ACCEPT_RE.search(line)
        if accept:
            rate, accepted, generated, mean_len = accept.groups()
            acceptance.append(
                {
                    "rate": float(rate),
                    "accepted": int(accepted),
                    "generated": int(generated),
                    "mean_len": float(mean_len) if mean_len else None,
                }
            )
    return {"implementations": implementations, "settings": settings, "acceptance": acceptance, "lines": lines[:200]}
