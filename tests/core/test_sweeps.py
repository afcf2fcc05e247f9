"""Sweeps: a condition declared over one flag's values expands, when the config is validated, into ordinary
conditions named for the value (own setup, own cells); the report plots the multiplier against the value."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml
from snakemake.utils import update_config

from specbench.analysis.cell_table import frame_of
from specbench.analysis.summaries import tables
from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.config.sweeps import sweep_member, sweeps_of
from specbench.core.plan.cells import selected_cells
from specbench.core.plan.resources import server_resources
from specbench.engines.llama_server import server_args
from specbench.report.figures import style as figure_style
from specbench.report.figures.sweep_figure import sweep_figure
from specbench.report.sections.variations import sweep_sections
from support.config import STUDY_CONDITIONS
from support.paths import REPO

NGRAM_SWEEP = {
    "args": ["--spec-type", "ngram-mod"],
    "description": "n-gram",
    "sweep": {"flag": "--spec-ngram-mod-n-max", "values": [16, 64, 128]},
}


def _with_sweep(config: dict, **extra) -> dict:
    config["conditions"]["ngram-n-max"] = copy.deepcopy(NGRAM_SWEEP) | extra
    config["select"] = {"conditions": ["off", "ngram-n-max"]}
    return config


def test_a_sweep_becomes_one_ordinary_condition_per_value(study_config: dict) -> None:
    config = validate_config(_with_sweep(study_config), REPO)
    members = ["ngram-n-max-16", "ngram-n-max-64", "ngram-n-max-128"]
    assert "ngram-n-max" not in config["conditions"]
    assert list(config["conditions"])[-3:] == members  # in the sweep's place and order
    assert config["select"]["conditions"] == ["off", *members]
    member = config["conditions"]["ngram-n-max-64"]
    assert member["args"] == ["--spec-type", "ngram-mod", "--spec-ngram-mod-n-max", "64"]
    assert member["swept"] == {"of": "ngram-n-max", "flag": "--spec-ngram-mod-n-max", "value": 64}
    assert member["description"] == "n-gram (--spec-ngram-mod-n-max 64)" and member["server"] == "fresh"
    assert server_args(config, "ngram-n-max-128", REPO)[-2:] == ["--spec-ngram-mod-n-max", "128"]
    assert {c.condition for c in selected_cells(config)} == {"off", *members}
    assert validate_config(config, REPO)["conditions"] == config["conditions"]  # a second validation changes nothing


def test_the_study_config_keeps_its_published_conditions(study_config: dict) -> None:
    config = validate_config(study_config, REPO)
    assert list(config["conditions"]) == STUDY_CONDITIONS
    assert not any("swept" in c for c in config["conditions"].values())


def test_the_study_sweeps_config_plans_dflash_and_mtp_draft_lengths(study_config: dict) -> None:
    update_config(study_config, yaml.safe_load((REPO / "config/study-sweeps.yaml").read_text()))
    config = validate_config(study_config, REPO)
    swept = {name: c["swept"]["value"] for name, c in config["conditions"].items() if "swept" in c}
    assert swept == {
        "dflash-n-max-3": 3,
        "dflash-n-max-7": 7,
        "dflash-n-max-15": 15,
        "mtp-n-max-1": 1,
        "mtp-n-max-2": 2,
        "mtp-n-max-3": 3,
        "mtp-n-max-5": 5,
    }
    assert set(config["select"]["conditions"]) == {"off", *swept}
    assert config["conditions"]["dflash-n-max-7"]["requires"] == ["draft"]
    assert server_args(config, "dflash-n-max-7", REPO)[-2:] == ["--spec-draft-n-max", "7"]


def test_resources_set_for_a_sweep_apply_to_each_of_its_conditions(study_config: dict) -> None:
    config = _with_sweep(study_config)
    config["resources"] = {
        "conditions": {
            "ngram-n-max": {"slurm_partition": "small"},
            "ngram-n-max-128": {"slurm_partition": "big"},
            "off": {"slurm_partition": "default"},
        }
    }
    config = validate_config(config, REPO)
    partition = server_resources(config, config["select"]["conditions"], 1)["slurm_partition"]
    assert partition("local", "ngram-n-max-16") == "small" and partition("local", "ngram-n-max-128") == "big"
    assert partition("local", "off") == "default"


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"sweep": {"flag": "--spec-type", "values": [1]}}, "conditions.ngram-n-max.sweep.flag", "already in"),
        ({"sweep": {"flag": "--x", "values": ["A b"]}}, "conditions.ngram-n-max.sweep.values", "not valid"),
        ({"sweep": {"flag": "--x", "values": []}}, "conditions.ngram-n-max.sweep.values", "should be non-empty"),
        ({"sweep": {"flags": "--x", "values": [1]}}, "conditions.ngram-n-max.sweep.flags", "unknown key"),
    ],
)
def test_a_bad_sweep_names_its_key(study_config: dict, change: dict, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as error:
        validate_config(_with_sweep(study_config, **change), REPO)
    assert error.value.key == key and words in str(error.value)


def test_a_member_name_may_not_take_an_existing_conditions(study_config: dict) -> None:
    study_config["conditions"]["ngram-n-max-16"] = {"args": []}
    with pytest.raises(ConfigError, match="makes the condition 'ngram-n-max-16', which already exists"):
        validate_config(_with_sweep(study_config), REPO)
    assert sweep_member("x", 0.5) == "x-0p5"


def _swept_tables() -> tuple[dict, dict]:
    rows = []
    for task, base in (("file-rewrite", 50.0), ("essay", 90.0)):
        rows += [
            {
                "task": task,
                "condition": "off",
                "temperature": 0.0,
                "repeat": r,
                "tokens_per_s": base + r,
                "cell_file": f"{task}/off/{r}",
            }
            for r in (1, 2, 3)
        ]
        for value, gain in ((16, 1.2), (64, 2.0), (128, 2.4)):
            rows += [
                {
                    "task": task,
                    "condition": f"ngram-n-max-{value}",
                    "temperature": 0.0,
                    "repeat": r,
                    "tokens_per_s": base * gain + r,
                    "draft_n": 100,
                    "draft_n_accepted": 90,
                    "cell_file": f"{task}/{value}/{r}",
                }
                for r in (1, 2, 3)
            ]
    swept = {
        f"ngram-n-max-{v}": {"of": "ngram-n-max", "flag": "--spec-ngram-mod-n-max", "value": v} for v in (16, 64, 128)
    }
    return tables(frame_of(rows, "off"), "off"), swept


def test_the_report_shows_each_sweep_value_per_task_with_its_interval(monkeypatch) -> None:
    summaries, swept = _swept_tables()
    assert list(sweeps_of(swept)) == ["ngram-n-max"]
    [section] = sweep_sections(summaries["summary"], summaries["acceptance"], swept)
    assert section.title == "Sweep 'ngram-n-max': --spec-ngram-mod-n-max"
    rows = [(r["task"], r["value"]) for r in section.table.rows]
    assert rows == [
        ("essay", 16),
        ("essay", 64),
        ("essay", 128),
        ("file-rewrite", 16),
        ("file-rewrite", 64),
        ("file-rewrite", 128),
    ]
    assert all(
        r["rate"] == pytest.approx(0.9) and r["speedup_ci_low"] < r["speedup"] < r["speedup_ci_high"]
        for r in section.table.rows
    )
    drawn: list = []
    original = figure_style.render
    monkeypatch.setattr(
        "specbench.report.figures.sweep_figure.render",
        lambda fig: drawn.extend(line for ax in fig.axes for line in ax.lines) or original(fig),
    )
    png = sweep_figure(summaries["summary"], "ngram-n-max", swept, "off", ["file-rewrite", "essay"])
    assert png.startswith(figure_style.PNG_SIGNATURE)
    ys = sorted(
        np.round(np.asarray(line.get_ydata(), dtype=float), 2).tolist()
        for line in drawn
        if len(line.get_ydata()) == 3 and line.get_marker() not in ("_", "|", "None", "none", "")
    )
    expected = summaries["summary"].set_index(["task", "condition"]).speedup
    assert ys == sorted(
        [[round(expected[(t, f"ngram-n-max-{v}")], 2) for v in (16, 64, 128)] for t in ("file-rewrite", "essay")]
    )
