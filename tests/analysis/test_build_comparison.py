"""Builds compared (analysis.build_comparison) on constructed cells of two builds: summaries per build only,
intervals separated or not, and the report's "Builds compared" section."""

from __future__ import annotations

import re

import pytest

from specbench.analysis.build_comparison import compare_builds, separated
from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import combined_builds, tables, tables_by_build
from specbench.core.results.judged import Comparability, Fact
from specbench.report.contents import build_report
from specbench.report.document import Facts
from specbench.report.markdown import render_markdown
from specbench.report.provenance import row_id
from specbench.report.sections.builds_compared import build_comparison_sections, fmt_same_tokens


def _rows() -> list[dict]:
    """Two builds: 'old' decodes off at 100 and mtp at 150 tokens/s by the server's clock; 'new' off at 200 and mtp
    at 210 by the client stream's (its mtp run r2 gives other tokens than old's); the client stream sees 90 % of each;
    their logs give mtp's n_max (its draft length) as 3 and 4; their requests stated top_k 40 and 20."""
    rows = []
    for build, speeds, n_max in (("old", {"off": 100.0, "mtp": 150.0}, 3), ("new", {"off": 200.0, "mtp": 210.0}, 4)):
        for condition, speed in speeds.items():
            for repeat, wobble in enumerate((-1.0, 0.0, 1.0), start=1):
                tokens = [1, 2, 3] if not (build == "new" and condition == "mtp" and repeat == 2) else [1, 2, 4]
                settings = [{"implementation": "draft-mtp", "key": "n_max", "value": str(n_max)}]
                rows.append(
                    {
                        "build": build,
                        "task": "essay",
                        "condition": condition,
                        "temperature": 0.0,
                        "repeat": repeat,
                        "tokens_per_s": speed + wobble,
                        "predicted_n": 100,
                        "tokens": tokens,
                        "spec_settings": settings if condition == "mtp" else [],
                        "timings_source": "server" if build == "old" else "client stream",
                        "client_tokens_per_s": 0.9 * (speed + wobble),
                        "draft_length": n_max if condition == "mtp" else None,
                        "drafted_per_step": n_max - 0.25 if condition == "mtp" else None,
                        "sampling": f"top_k={40 if build == 'old' else 20} top_p=0.95",
                        "server_sha256": build[0] * 64,
                        "model_sha256": "m" * 64,
                        "code_fingerprint": "c" * 64,
                        "cell_file": f"results/cells/local/{build}/essay/{condition}/t0.0/r{repeat}.json",
                    }
                )
    return rows


def test_a_multiplier_never_divides_one_builds_cells_by_anothers_baseline() -> None:
    cells = frame_of(_rows(), "off")
    with pytest.raises(ValueError, match="one build"):
        tables(cells, "off")
    by_build = tables_by_build(cells, "off", ["local"], ["old", "new"])
    assert list(by_build) == ["old", "new"]
    for build, expected in (("old", 1.5), ("new", 1.05)):
        summary = by_build[build]["local"]["summary"].set_index("condition")
        assert summary.loc["mtp", "speedup"] == pytest.approx(expected)
        assert all(f"/{build}/" in c for c in summary.loc["mtp", "cells"])
        assert set(summary.build) == {build}
    # identity against the same build's baseline: new's r2 differs from new's off, old's mtp does not
    identity = {b: t["local"]["identity"].set_index("condition") for b, t in by_build.items()}
    assert identity["old"].loc["mtp", "all_identical"] and identity["new"].loc["mtp", "differing_repeats"] == [2]
    csv = combined_builds(by_build)["summary"]
    assert list(csv.columns[:3]) == ["machine", "build", "task"] and set(csv.build) == {"old", "new"}
    assert row_id("speedup", csv.iloc[0].to_dict()).endswith(f"~{csv.iloc[0].build}")
    # a run without builds: no build column, ids as they were
    plain = frame_of([{**r, "build": ""} for r in _rows() if r["build"] == "old"], "off")
    alone = combined_builds(tables_by_build(plain, "off", ["local"]))["summary"]
    assert "build" not in alone.columns and row_id("speedup", alone.iloc[0].to_dict()) == "speedup-essay-mtp-t0.0"


def test_intervals_are_separated_only_when_they_do_not_overlap() -> None:
    assert separated((1.4, 1.6), (1.0, 1.1)) is True
    assert separated((1.0, 1.2), (1.1, 1.3)) is False
    assert separated((float("nan"), 1.2), (1.1, 1.3)) is None


def test_builds_compared_on_constructed_data() -> None:
    cells = frame_of(_rows(), "off")
    by_build = {b: t["local"] for b, t in tables_by_build(cells, "off", ["local"], ["old", "new"]).items()}
    comparison = compare_builds(by_build, "off").set_index("condition")
    mtp = comparison.loc["mtp"]
    assert mtp.speedup == pytest.approx({"old": 1.5, "new": 1.05})
    assert mtp.ci_low["old"] > mtp.ci_high["new"] and mtp.separated == {"new": True}
    assert mtp.baseline_tokens_per_s == pytest.approx({"old": 100.0, "new": 200.0})
    assert mtp.clock == {"old": "server", "new": "client stream"}
    assert mtp.baseline_client_tokens_per_s == pytest.approx({"old": 90.0, "new": 180.0})
    assert mtp.draft_length == {"old": "3", "new": "4"} and comparison.loc["off"].draft_length == {"old": "", "new": ""}
    assert mtp.drafted_per_step == pytest.approx({"old": 2.75, "new": 3.75})
    assert mtp.sampling == {"old": "top_k=40 top_p=0.95", "new": "top_k=20 top_p=0.95"}
    assert mtp.outputs == {"new": {"compared": 3, "identical": 2, "first_differences": [2], "by": "tokens"}}
    assert comparison.loc["off"].outputs["new"]["identical"] == 3
    assert mtp.changed_settings == ["draft-mtp: n_max: 3 (old) -> 4 (new)"]
    assert comparison.loc["off"].changed_settings == [] and comparison.loc["off"].separated == {"new": None}
    assert fmt_same_tokens(mtp.outputs["new"]) == "no: 1/3 differ (first at token 2)"
    # new's mtp at 1.5x too: the intervals overlap, the builds are not separated
    same = [
        {**r, "tokens_per_s": 300.0 + r["repeat"]} if (r["build"], r["condition"]) == ("new", "mtp") else r
        for r in _rows()
    ]
    loose = {b: t["local"] for b, t in tables_by_build(frame_of(same, "off"), "off", ["local"]).items()}
    assert compare_builds(loose, "off").set_index("condition").loc["mtp"].separated == {"new": False}


def _markdown(by_build: dict) -> str:
    first = next(iter(by_build.values()))
    facts = Facts(
        name="two builds",
        baseline="off",
        comparability=Comparability([Fact("GPU", "A100", "CPU", False)], "CPU (x86_64, 2 cores)"),
        environment={},
        device={},
        model_bytes=1_000_000_000,
    )
    opening = build_comparison_sections(by_build, "off", {"old": "the old one", "new": "the new one"})
    return render_markdown(build_report(first, facts=facts, claims=None, numbers={}, opening=opening))


def test_the_report_opens_with_builds_compared() -> None:
    by_build = {b: t["local"] for b, t in tables_by_build(frame_of(_rows(), "off"), "off", ["local"]).items()}
    text = _markdown(by_build)
    sections = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert sections[0] == "Builds compared"
    table = text.split("## Builds compared", 1)[1].split("\n## ", 1)[0]
    assert "old multiplier [95 %]" in table and "new multiplier [95 %]" in table
    mtp = next(line for line in table.splitlines() if line.startswith("| essay | mtp"))
    assert re.search(r"1\.50x \[\d\.\d\d-\d\.\d\d\] faster", mtp) and re.search(r"1\.05x \[\d\.\d\d-\d\.\d\d\]", mtp)
    assert "separated" in mtp and "no: 1/3 differ" in mtp and "n_max: 3 (old) -> 4 (new)" in mtp
    header = next(line for line in table.splitlines() if line.startswith("| task"))
    # each build's own clock, and the client stream's for the one whose own clock is the server's
    assert "old off tok/s (server)" in header and "new off tok/s (client stream)" in header
    assert "old off tok/s (client stream)" in header and header.count("(client stream)") == 2
    assert "| 3 (2.75 drafted/step) | 4 (3.75 drafted/step) |" in mtp
    assert "| 90.0 |" in mtp  # old's off by the client stream's clock
    assert "stated different sampling: old: top_k=40 top_p=0.95; new: top_k=20 top_p=0.95" in table
    assert "draft-mtp: n_max: 3 (old) -> 4 (new)" in table  # the changed default, named in the note
    assert "the new one" in table and "n" * 12 in table  # what each build is, and its server's sha256
    settings = text.split("## Speculative settings each build's server logged", 1)[1].split("\n## ", 1)[0]
    assert "draft-mtp: n_max=3" in settings and "draft-mtp: n_max=4" in settings
    one = {"old": by_build["old"]}
    assert "Builds compared" not in _markdown(one)  # one build: no comparison


def test_an_endpoint_without_token_ids_is_compared_by_its_text() -> None:
    """An endpoint that sends no ids ('new' here) is compared by text, the whitespace at its ends aside (a chat API
    trims it): same words, same output; its own identity with its baseline is not judged (no ids to compare)."""
    words = {(1, 2, 3): " one two three", (1, 2, 4): " one two four"}
    rows = []
    for row in _rows():
        if row["build"] == "new":
            text = words[tuple(row["tokens"])].strip()
            row = {**row, "tokens": [], "token_ids": False, "content": text, "engine": "endpoint"}
        else:
            row = {**row, "token_ids": True, "content": words[tuple(row["tokens"])], "engine": "llama.cpp"}
        rows.append(row)
    by_build = {
        b: t["local"] for b, t in tables_by_build(frame_of(rows, "off"), "off", ["local"], ["old", "new"]).items()
    }
    comparison = compare_builds(by_build, "off").set_index("condition")
    assert comparison.loc["off"].outputs == {
        "new": {"compared": 3, "identical": 3, "first_differences": [], "by": "text"}
    }
    assert comparison.loc["mtp"].outputs == {
        "new": {"compared": 3, "identical": 2, "first_differences": [8], "by": "text"}
    }
    assert fmt_same_tokens(comparison.loc["mtp"].outputs["new"]) == "no: 1/3 differ by text (first at character 8)"
    new_cells = by_build["new"]["cells"]
    assert new_cells.identical.isna().all()  # not compared with its own baseline: it sent no ids
