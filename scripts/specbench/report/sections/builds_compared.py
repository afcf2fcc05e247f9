"""The report's opening "Builds compared" (a run with two or more llama.cpp builds): what each build is, and per task
and condition each build's multiplier with its interval, whether the builds are separated, the baseline's tokens/s
per build, the temperature-0 outputs between builds and the speculative settings each build's server logged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from specbench.analysis.build_comparison import compare_builds
from specbench.core.config.builds import USER_RUN, VLLM
from specbench.core.records.timings import SERVER
from specbench.report.document import (
    CONDITION,
    GROUP_COLUMNS,
    Column,
    Note,
    Section,
    Table,
    digits,
    fmt_interval,
    fmt_multiplier,
    is_missing,
    records,
    verdict_tone,
)


def fmt_separated(value: Any) -> str:
    """A later build's interval against the first build's: separated, not separated, or no interval."""
    if value is None or is_missing(value):
        return "no interval"
    return "separated" if value else "not separated"


def fmt_same_tokens(outputs: Any) -> str:
    """A later build's temperature-0 outputs against the first build's: 'yes (2/2)', or which differ and where."""
    if not isinstance(outputs, Mapping) or not outputs.get("compared"):
        return ""
    compared, identical = outputs["compared"], outputs["identical"]
    unit, by_text = ("character", " by text") if outputs.get("by") == "text" else ("token", "")
    if identical == compared:
        return f"yes ({identical}/{compared}{by_text})"
    where = ", ".join(str(at) for at in outputs["first_differences"])
    return f"no: {compared - identical}/{compared} differ{by_text} (first at {unit} {where})"


def _multiplier(row: Mapping[str, Any], build: str, baseline: str) -> str:
    if row["condition"] == baseline:
        return "baseline"
    if build not in row["speedup"]:
        return "not measured"
    interval = fmt_interval((row["ci_low"][build], row["ci_high"][build]))
    return f"{fmt_multiplier(row['speedup'][build])} [{interval}] {row['verdict'][build]}"


def _budget(row: Mapping[str, Any], build: str) -> str:
    """A build's draft length for the row: as set, and what it drafted per verification step by its counts."""
    if build not in row["draft_length"]:
        return ""
    length, drafted = row["draft_length"][build], row["drafted_per_step"].get(build)
    per_step = "" if drafted is None or is_missing(drafted) else f"{drafted:.2f} drafted/step"
    if length and per_step:
        return f"{length} ({per_step})"
    return length or (f"default ({per_step})" if per_step else "")


def clocks_of(comparison: pd.DataFrame) -> dict[str, str]:
    """Each build's clock for its own tokens/s: the server's timings or the client stream ('a / b' where mixed)."""
    found: dict[str, set[str]] = {}
    for clocks in comparison.clock:
        for build, clock in clocks.items():
            found.setdefault(build, set()).update(c for c in clock.split(" / ") if c)
    return {b: " / ".join(sorted(c)) for b, c in found.items()}


def _sampling_note(comparison: pd.DataFrame, builds: Sequence[str]) -> Note:
    """The sampling every build's requests stated: the same, or where it differs."""
    stated = {b: {s for row in comparison.sampling for s in [row.get(b)] if s} for b in builds}
    values = {v for found in stated.values() for v in found}
    if len(values) == 1:
        return Note(f"Every build's requests stated the same sampling: {next(iter(values))}.")
    listed = "; ".join(f"{b}: {' / '.join(sorted(v)) or 'not recorded'}" for b, v in stated.items())
    return Note(f"The builds' requests stated different sampling: {listed}.", "warn")


def _rate(build: str, label: str, key: str) -> Column:
    """A build's tokens/s column: the row's ``key`` figure for ``build``, headed '<build> <label>'."""
    return Column(f"{build} {label}", lambda r: r[key].get(build), digits(1))


def _columns(builds: Sequence[str], baseline: str, clocks: Mapping[str, str]) -> list[Column]:
    first, later = builds[0], builds[1:]
    several = len(later) > 1
    columns = list(GROUP_COLUMNS)
    columns += [
        Column(
            f"{b} multiplier [95 %]",
            lambda r, b=b: _multiplier(r, b, baseline),
            str,
            text=True,
            tone=lambda v: verdict_tone(str(v).rsplit(" ", 1)[-1]),
        )
        for b in builds
    ]
    columns += [
        Column(
            f"{b} vs {first}" if several else "separated?",
            lambda r, b=b: r["separated"].get(b),
            fmt_separated,
            text=True,
        )
        for b in later
    ]
    columns += [_rate(b, f"{baseline} tok/s ({clocks.get(b) or 'own clock'})", "baseline_tokens_per_s") for b in builds]
    columns += [
        _rate(b, f"{baseline} tok/s (client stream)", "baseline_client_tokens_per_s")
        for b in builds
        if SERVER in clocks.get(b, "").split(" / ")
    ]
    columns += [Column(f"{b} draft length", lambda r, b=b: _budget(r, b), str, text=True) for b in builds]
    columns += [Column(f"{b} tokens per step", lambda r, b=b: r["accepted_length"].get(b), digits(2)) for b in builds]
    columns += [
        Column(
            f"same tokens as {first}" + (f" ({b})" if several else ""),
            lambda r, b=b: r["outputs"].get(b),
            fmt_same_tokens,
            text=True,
        )
        for b in later
    ]
    columns += [Column("settings changed", lambda r: "; ".join(r["changed_settings"]) or "none", str, text=True)]
    return columns


def _settings_rows(comparison: pd.DataFrame, builds: Sequence[str], baseline: str) -> list[dict[str, Any]]:
    """One row per condition but the baseline: the speculative settings each build's log reported for it."""
    rows: dict[str, dict[str, Any]] = {}
    for r in records(comparison[comparison.condition != baseline]):
        row = rows.setdefault(r["condition"], {"condition": r["condition"], "values": {b: {} for b in builds}})
        for build, settings in r["settings"].items():
            row["values"][build].update(settings)
    return list(rows.values())


def _settings_note(comparison: pd.DataFrame) -> Note:
    """What the logs say about the settings: the ones that differ (a default that changed: the flags are the
    same), that they agree, or that no server logged any."""
    changed = list(dict.fromkeys(c for cs in comparison.changed_settings for c in cs))
    if not any(len(settings) > 1 for settings in comparison.settings):
        return Note(
            "The speculative settings are read from llama-server's logs and compared between llama.cpp builds: "
            "this run has no two llama.cpp builds that measured the same condition (vLLM and an endpoint say theirs "
            "in their own words, in each cell's server log)."
        )
    if changed:
        return Note(
            "Settings the builds' logs report differently for the same condition (the same flags: a default that "
            "changed): " + "; ".join(changed) + ".",
            "warn",
        )
    if not any(s for settings in comparison.settings for s in settings.values()):
        return Note(
            "No build's server logged its effective speculative settings (no settings lines among the log lines "
            "the cells kept): the logs name no changed default."
        )
    return Note("Every speculative setting the servers logged is the same in every build.")


def _settings_text(settings: Mapping[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in settings.items()) or "none logged"


def _served_by(cells: pd.DataFrame) -> str:
    """What served a build's cells: its llama-server binaries (sha256), or vLLM or an endpoint and where its speed is
    from."""
    sources = ", ".join(sorted(set(cells.timings_source.dropna()))) if "timings_source" in cells else ""
    if _endpoint_cells(cells).any():
        return f"an endpoint this run did not start (speed from the {sources or 'n/a'})"
    if "engine" in cells and (cells.engine == VLLM).any():
        return f"vLLM (speed from the {sources or 'n/a'})"
    values = sorted(set(cells.server_sha256.dropna()))
    return "llama-server sha256 " + (", ".join(v[:12] for v in values) or "n/a")


def _endpoint_cells(cells: pd.DataFrame) -> pd.Series:
    """Which cells an endpoint served (none in a table from before the engine column)."""
    return cells.engine.isin(USER_RUN) if "engine" in cells else pd.Series(False, index=cells.index)


def endpoint_note(cells: pd.DataFrame, descriptions: Mapping[str, str]) -> str | None:
    """The report's first words when an endpoint served any cell: which, and what measuring a server this run did not
    start gives up; None when every cell had its own fresh llama-server."""
    served = cells[_endpoint_cells(cells)]
    if served.empty:
        return None
    builds = sorted(set(served.build))
    where = "; ".join(f"{b}: {descriptions.get(b) or 'an endpoint'}" for b in builds)
    return (
        f"{len(served)} cells were measured on a server this run did not start ({where}). For them there is no fresh "
        "server per cell, no command line of ours, no check of the weights it serves; contention is judged on this "
        "machine only; what the server said about itself (version, model, flags) is in each cell's record "
        "(server.endpoint.reported)."
    )


def _left_out_note(left_out: Sequence[Sequence[str]]) -> list[Note]:
    """One line per condition a build does not serve, with the reason."""
    if not left_out:
        return []
    return [Note("Not measured: " + "; ".join(f"{c} on {b} ({why})" for b, c, why in left_out) + ".", "warn")]


def build_comparison_sections(
    by_build: Mapping[str, Mapping[str, pd.DataFrame]],
    baseline: str,
    descriptions: Mapping[str, str] | None = None,
    left_out: Sequence[Sequence[str]] = (),
) -> list[Section]:
    """The "Builds compared" sections from each build's tables (one machine's), builds in mapping order; none for
    fewer than two builds. ``left_out``: [build, condition, why] for each condition a build does not serve."""
    builds = list(by_build)
    if len(builds) < 2:
        return []
    comparison = compare_builds(by_build, baseline)
    descriptions = descriptions or {}
    facts = [
        Note(
            f"**{b}**: {descriptions.get(b) or 'no description'}; {len(by_build[b]['cells'])} cells; served by "
            f"{_served_by(by_build[b]['cells'])}"
        )
        for b in builds
    ]
    settings_rows = _settings_rows(comparison, builds, baseline)
    return [
        Section(
            "builds",
            "Builds compared",
            [
                Note(
                    f"{len(builds)} builds, each summarised on its own cells only: a multiplier divides a "
                    f"build's tokens/s by the same build's {baseline} (mean over mean, its 95 % interval and the "
                    f"study's verdict rule). Builds are *separated* where their intervals do not overlap. Outputs "
                    f"at temperature 0 are compared token by token with {builds[0]}'s of the same prompt and repeat "
                    "(by text where a server sends no token ids, the whitespace at its ends aside: a chat API trims "
                    "it). "
                    f"The sections after this one show the first build, **{builds[0]}**."
                ),
                _sampling_note(comparison, builds),
                Note(
                    f"Tokens/s of {baseline} by each build's own clock (llama-server's timings, vLLM's per-request "
                    "metrics; the client stream where the server reports none) and, beside it, by the client "
                    "stream's clock, the same for every "
                    "build: compare engines' absolute speeds on that one. The draft length is what each build's "
                    "server was set to (its answer, flags or log), with what it drafted per verification step by "
                    "its counts."
                ),
                _settings_note(comparison),
                *_left_out_note(left_out),
            ],
            Table(_columns(builds, baseline, clocks_of(comparison)), records(comparison)),
            items=facts,
        ),
        Section(
            "builds-settings",
            "Speculative settings each build's server logged",
            [Note("The effective values from each server's start-up log lines (as logged), per condition.")],
            Table(
                [
                    CONDITION,
                    *[Column(b, lambda r, b=b: r["values"][b], _settings_text, text=True) for b in builds],
                ],
                settings_rows,
            ),
        ),
    ]
