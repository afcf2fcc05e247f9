"""Config validation: the study config passes; each kind of mistake fails naming its key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.config.sources import llama_source, model_source
from support.paths import REPO


def test_study_config_is_valid_and_gets_defaults(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    assert config["baseline"] == "off"
    assert config["temperatures"] == [0.0, 1.0]
    assert config["repeats"] == 3 and config["max_tokens"] == 1024 and config["reasoning"] is False
    assert config["conditions"]["off"]["requires"] == []  # default filled in
    assert config["server"]["args"] == ["-ngl", "99", "-fa", "on", "--parallel", "1", "-c", "16384", "--jinja"]
    assert llama_source(config) == {
        "kind": "git",
        "url": "https://github.com/ggml-org/llama.cpp",
        "commit": "4da6337767f973e2b4d0797e5b323d77d8565e4a",
        "label": "llama.cpp commit 4da6337 (build b11223)",
    }
    assert model_source(config, "target") == {
        "kind": "hf",
        "repo": "Qwen/Qwen3.5-9B",
        "revision": "c202236235762e1c871ad0ccb60c8ee5ba337b9a",
    }
    assert config["models"]["target"]["require_mtp"] is True


def test_tiny_config_merges_over_study(study_config: dict) -> None:
    tiny = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    update_config(study_config, tiny)
    config = validate_config(study_config, REPO)
    assert llama_source(config)["kind"] == "pypi-sdist"
    assert llama_source(config)["sha256"].startswith("c480f03b")
    assert model_source(config, "target") == {"kind": "tiny", "seed": 0, "weights": "agree"}
    assert set(config["conditions"]) >= {"off", "ngram-mod", "mtp", "dflash"}


def test_tiny_gpu_config_merges_over_tiny(study_config: dict) -> None:
    tiny, gpu = (yaml.safe_load((REPO / "config" / name).read_text()) for name in ("tiny.yaml", "tiny-gpu.yaml"))
    update_config(study_config, tiny)
    update_config(study_config, gpu)
    config = validate_config(study_config, REPO)
    assert config["llama_cpp"]["backend"] == "cuda"
    assert "-DCMAKE_CUDA_ARCHITECTURES=native" in config["llama_cpp"]["cmake_args"]
    assert llama_source(config)["kind"] == "pypi-sdist"  # tiny.yaml's source, unchanged
    assert model_source(config, "target") == {"kind": "tiny", "seed": 0, "weights": "agree"}


@pytest.mark.parametrize(
    ("mutate", "key", "words"),
    [
        (
            lambda c: c["conditions"].__setitem__("ngram", {"args": ["--spec-type", "ngram-mdo"]}),
            "conditions.ngram.args",
            "did you mean 'ngram-mod'",
        ),
        (lambda c: c.__setitem__("conditons", {}), "conditons", "did you mean 'conditions'"),
        (lambda c: c.__setitem__("baseline", "of"), "baseline", "not one of the conditions"),
        (lambda c: c.__setitem__("temperatures", [0.0, -1.0]), "temperatures.1", "less than the minimum"),
        (
            lambda c: c["tasks"]["essay"].__setitem__("prompt", "config/tasks/nope.txt"),
            "tasks.essay.prompt",
            "does not exist",
        ),
        (
            lambda c: c["tasks"]["file-rewrite"]["inputs"].__setitem__("source", "missing.py"),
            "tasks.file-rewrite.inputs.source",
            "does not exist",
        ),
        (
            lambda c: c["tasks"]["file-rewrite"].__setitem__("inputs", {}),
            "tasks.file-rewrite.inputs",
            "placeholders without a value: ['source']",
        ),
        (lambda c: c["server"]["args"].extend(["--host", "0.0.0.0"]), "server.args", "binds 127.0.0.1"),
        (lambda c: c["conditions"]["dflash"].__setitem__("requires", []), "conditions.dflash.requires", "add 'draft'"),
        (lambda c: c.__setitem__("repeats", 0), "repeats", "less than the minimum"),
        (lambda c: c["llama_cpp"]["git"].__setitem__("commit", "not-a-sha"), "llama_cpp.git.commit", "hex"),
        (lambda c: c["models"]["target"].__setitem__("source", "gguf"), "models.target.gguf", "required"),
        (
            lambda c: c["models"]["draft"]["hf"].__setitem__("revision", "main"),
            "models.draft.hf.revision",
            "'main' is not valid: the full 40-hex commit SHA",
        ),
        (lambda c: c["preflight"].__setitem__("headroom", -0.1), "preflight.headroom", "less than the minimum"),
        (lambda c: c["models"].pop("draft"), "conditions.dflash.requires", "models.draft is not set"),
        (lambda c: c["select"].__setitem__("conditions", ["ngram-mod"]), "select.conditions", "baseline"),
        (lambda c: c["select"].__setitem__("tasks", ["esay"]), "select.tasks", "did you mean 'essay'"),
        (lambda c: c["conditions"].__setitem__("Bad Name", {"args": []}), "conditions", "Bad Name"),
        (lambda c: c.__setitem__("warm_scope", "study"), "warm_scope", "'study'"),
        (
            lambda c: c.__setitem__("resources", {"rules": {"cell": {"threads": 4}}}),
            "resources.rules",
            "unknown key",
        ),
        (
            lambda c: c.__setitem__("resources", {"conditions": {"mpt": {"slurm_partition": "a"}}}),
            "resources.conditions",
            "'mpt' is not a condition of this workflow (did you mean 'mtp'?)",
        ),
        (lambda c: c["llama_cpp"].__setitem__("cuda", False), "llama_cpp.cuda", "write `backend: cpu`"),
        (lambda c: c["llama_cpp"].__setitem__("backend", "rocm"), "llama_cpp.backend", "'rocm' is not one of"),
        (
            lambda c: c["llama_cpp"]["cmake_args"].append("-DGGML_VULKAN=ON"),
            "llama_cpp.cmake_args",
            "set by llama_cpp.backend ('cuda' here)",
        ),
    ],
)
def test_mistakes_name_their_key(study_config: dict, mutate, key: str, words: str) -> None:
    mutate(study_config)
    with pytest.raises(ConfigError) as caught:
        validate_config(study_config, REPO)
    assert caught.value.key == key, str(caught.value)
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"config error at '{key}'")


def test_ready_gguf_path_must_exist(study_config: dict, tmp_path: Path) -> None:
    study_config["models"]["target"].update({"source": "gguf", "gguf": {"path": str(tmp_path / "x.gguf")}})
    with pytest.raises(ConfigError, match="models.target.gguf.path"):
        validate_config(study_config, REPO)
    (tmp_path / "x.gguf").write_bytes(b"GGUF")
    study_config["models"]["draft"] = {"source": "gguf", "gguf": {"path": str(tmp_path / "x.gguf")}}
    assert model_source(validate_config(study_config, REPO), "target")["path"] == str(tmp_path / "x.gguf")


def test_a_gguf_target_cannot_have_a_draft_converted_against_it(study_config: dict, tmp_path) -> None:
    ready = tmp_path / "target.gguf"
    ready.write_bytes(b"GGUF")
    study_config["models"]["target"] = {"source": "gguf", "gguf": {"path": str(ready)}, "require_mtp": True}
    with pytest.raises(ConfigError) as error:
        validate_config(study_config, REPO)
    assert error.value.key == "models.draft.source" and "--target-model-dir" in str(error.value)
    study_config["select"] = {"conditions": ["off", "mtp"]}  # no condition needs the draft: nothing to convert
    validate_config(study_config, REPO)


def test_warm_scope_defaults_to_one_server_per_task(study_config: dict) -> None:
    assert validate_config(copy.deepcopy(study_config), REPO)["warm_scope"] == "task"  # as config.yaml says
    study_config.pop("warm_scope")
    assert validate_config(study_config, REPO)["warm_scope"] == "task"  # the schema's default
    study_config["warm_scope"] = "condition"
    assert validate_config(study_config, REPO)["warm_scope"] == "condition"


@pytest.mark.parametrize(
    ("text", "key", "quoted"),
    [
        ("select: {conditions: [off, mtp]}", "select.conditions.0", '"off"'),  # the README's own shape, unquoted
        ("baseline: off", "baseline", '"off"'),
        ("conditions: {on: {args: []}}", "conditions", '"on"'),
    ],
)
def test_a_bare_yaml_boolean_where_a_name_belongs_says_to_quote_it(
    study_config: dict, text: str, key: str, quoted: str
) -> None:
    """YAML 1.1 reads off/no/false (and on/yes/true) as booleans: the error says so and what to write instead."""
    update_config(study_config, yaml.safe_load(text))
    with pytest.raises(ConfigError) as caught:
        validate_config(study_config, REPO)
    assert caught.value.key == key, str(caught.value)
    assert "YAML reads a bare" in str(caught.value) and f"write the name in quotes, e.g. {quoted}" in str(caught.value)
