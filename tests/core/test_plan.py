"""What the workflow plans from a config (specbench.core.plan.resources): model identities and files, server argv, and
what
the profiles cannot say of a job's resources (a server job's time limit, keys layered over condition and machine);
the servers run on cluster nodes, and the default profile keeps the jobs that need the machine to themselves apart."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.plan.cells import selected_cells
from specbench.core.plan.models import (
    checkpoint_dir,
    expected_file_type,
    made_gguf,
    model_gguf,
    model_id,
    model_note,
    used_roles,
)
from specbench.core.plan.resources import every_cpu, server_resources, usable_cpus
from specbench.core.plan.rule_names import EVERY_CPU_RULES, SERVER_RULES
from specbench.core.plan.server import conditions_regex, warm_scope, warm_scopes
from specbench.engines.llama_server import server_args
from support.paths import REPO
from support.rules import rule_names

TINY = REPO / "config" / "tiny.yaml"
PROFILES = REPO / "profiles"


def _config(study_config: dict, **changes) -> dict:
    for key, value in changes.items():
        study_config[key] = value
    return validate_config(study_config, REPO)


def test_the_downloads_stay_on_the_submitting_host_and_the_servers_do_not(tmp_path: Path) -> None:
    """Under either warm scope, the downloads and the back half are local rules of a cluster run, no rule that starts
    a server is (tests/project/test_rule_names.py holds every rule name the package and the profiles use)."""
    task = rule_names(tmp_path / "task", [TINY])
    condition = rule_names(tmp_path / "condition", [TINY], {"warm_scope": "condition"})
    assert "cell_sequence" in task.names and "condition_sequence" in condition.names
    assert {"llama_cpp_fetch", "hf_download", "hf_dataset", "aggregate", "report"} <= task.local
    assert not set(SERVER_RULES) & (task.local | condition.local)


def test_a_warm_condition_may_set_its_own_scope(study_config: dict) -> None:
    """The study runs both readings of "one server for every request": ngram-mod-warm per task (the config's
    warm_scope), ngram-mod-warm-all with one server for the whole condition; each cell rule serves only its own."""
    config = _config(study_config)
    assert (warm_scope(config, "ngram-mod-warm"), warm_scope(config, "ngram-mod-warm-all")) == ("task", "condition")
    everything = list(config["conditions"])
    assert warm_scopes(config, everything) == {"task", "condition"}
    # a scope's rule only where the run has a condition of it
    assert warm_scopes(config, ["off", "ngram-mod-warm"]) == {"task"} and warm_scopes(config, ["off"]) == set()
    assert re.fullmatch(conditions_regex(config, "warm", "task"), "ngram-mod-warm")
    assert not re.fullmatch(conditions_regex(config, "warm", "task"), "ngram-mod-warm-all")
    assert re.fullmatch(conditions_regex(config, "warm", "condition"), "ngram-mod-warm-all")
    assert not re.fullmatch(conditions_regex(config, "warm", "condition"), "ngram-mod-warm")
    config = _config(study_config, warm_scope="condition")  # the config's scope: the one of conditions naming none
    assert warm_scopes(config, everything) == {"condition"} and conditions_regex(config, "warm", "task") == "(?!)"


def test_models_are_named_by_their_source_not_their_role(study_config: dict, tmp_path: Path) -> None:
    config = _config(study_config)
    assert model_id(config, "target", REPO).startswith("Qwen--Qwen3.5-9B@")
    assert made_gguf(config, "target", REPO) == f"resources/models/{model_id(config, 'target', REPO)}/Q4_K_M.gguf"
    assert checkpoint_dir(config, "target", REPO).endswith("/hf") and expected_file_type(config, "target") == "Q4_K_M"
    assert expected_file_type(config, "draft") is None and model_note(config) is None
    gguf = tmp_path / "own.gguf"
    gguf.write_bytes(b"GGUF")
    config["models"]["target"] = {**config["models"]["target"], "source": "gguf", "gguf": {"path": str(gguf)}}
    ident = model_id(config, "target", REPO)
    assert ident.startswith("gguf-own.gguf-") and model_gguf(config, "target", REPO) == str(gguf)
    assert expected_file_type(config, "target") is None  # a ready GGUF is taken as it is


def test_server_args_put_the_draft_in_place(study_config: dict) -> None:
    config = _config(study_config)
    args = server_args(config, "dflash", REPO)
    assert args[:2] == ["-m", made_gguf(config, "target", REPO)] and made_gguf(config, "draft", REPO) in args
    assert "{draft}" not in " ".join(args) and args[2 : 2 + len(config["server"]["args"])] == config["server"]["args"]
    assert used_roles(config, selected_cells(config)) == ["target", "draft"]
    config["select"] = {"conditions": ["off", "mtp"]}
    assert used_roles(config, selected_cells(config)) == ["target"]


def test_a_built_in_chat_template_is_served_by_name_after_the_configs_flags(study_config: dict) -> None:
    config = _config(study_config)
    assert config["models"]["target"]["chat_template"] == "gguf"  # the default: the GGUF's own
    shared = 2 + len(config["server"]["args"])
    assert server_args(config, "ngram-mod", REPO)[shared:] == ["--spec-type", "ngram-mod"]
    for setting, flags in [("none", []), ("gemma", ["--no-jinja", "--chat-template", "gemma"])]:
        config["models"]["target"]["chat_template"] = setting
        args = server_args(config, "ngram-mod", REPO)
        assert args[:shared] == ["-m", made_gguf(config, "target", REPO), *config["server"]["args"]]
        assert args[shared:] == [*flags, "--spec-type", "ngram-mod"]  # --no-jinja after the config's --jinja


def test_a_chat_template_that_is_no_name_is_refused_naming_the_key(study_config: dict) -> None:
    study_config["models"]["target"]["chat_template"] = "{% for m in messages %}"
    with pytest.raises(ConfigError, match=r"models\.target\.chat_template"):
        validate_config(study_config, REPO)


def test_server_resources_layer_machine_over_condition(study_config: dict) -> None:
    config = _config(
        study_config,
        machines=[
            {"label": "a100", "resources": {"slurm_partition": "gpu-a100"}},
            {"label": "h200", "resources": {"slurm_partition": "gpu", "mem_mb": 65536}},
        ],
        resources={"conditions": {"mtp": {"mem_mb": 8192}, "off": {"mem_mb": 4096}}},
    )
    planned = server_resources(config, ["off", "mtp"], 1)
    server = config["server"]
    one_cell = int((server["startup_timeout_s"] + server["request_timeout_s"]) / 60) + 1
    wait = -(-config["measurement"]["quiet_timeout_s"] // 60)  # the longest wait for a quiet machine, in minutes
    assert planned["runtime"] == one_cell * config["measurement"]["max_attempts"] + wait
    assert (
        server_resources(config, ["off"], 3)["runtime"] == 3 * one_cell * config["measurement"]["max_attempts"] + wait
    )
    assert planned["mem_mb"]("a100", "mtp") == 8192 and planned["mem_mb"]("a100", "off") == 4096
    assert planned["mem_mb"]("h200", "off") == 65536  # the machine's over the condition's
    assert planned["slurm_partition"]("h200", "off") == "gpu"
    assert set(planned) == {"runtime", "mem_mb", "slurm_partition"}  # nothing else declared: the profile's stand
    with pytest.raises(ConfigError, match=r"\['mem_mb'\].*set them for every machine, or for every condition"):
        server_resources(config, ["off", "mtp", "dflash"], 1)  # dflash has no mem_mb, nor does a100
    config["machines"][1]["resources"] = {}
    with pytest.raises(ConfigError, match=r"'machines'.*\['slurm_partition'\]"):
        server_resources(config, ["off"], 1)


def test_an_explanation_is_planned_as_a_cell_of_the_baseline_on_its_machine(tmp_path: Path) -> None:
    """An explanation starts a server of the baseline's setup on the cell's machine: the machine's resources pick
    its node, the baseline condition's (not the explained cell's) fill the rest, and its time limit is a cell's."""
    override = {
        "machines": [
            {"label": "a100", "resources": {"slurm_partition": "gpu-a100"}},
            {"label": "h200", "resources": {"slurm_partition": "gpu"}},
        ],
        "resources": {"conditions": {"off": {"mem_mb": 16384}, "mtp": {"mem_mb": 8192}}},
        "select": {"tasks": ["essay"], "conditions": ["off", "mtp"]},
        "temperatures": [0.0],
        "repeats": 1,
    }
    jobs = _dry_run_jobs(tmp_path, override)
    explained = [job for job in jobs if job.startswith("explain_divergence:")]
    cells = {job.split("wildcards: machine=")[1].split(",")[0]: job for job in jobs if job.startswith("cell:")}
    assert len(explained) == 2, jobs
    for job in explained:
        machine = job.split("wildcards: machine=")[1].split(",")[0]
        assert "condition=mtp" in job and "mem_mb=16384" in job  # the baseline's, whichever cell it explains
        assert f"slurm_partition={'gpu-a100' if machine == 'a100' else 'gpu'}," in job + ","
        runtime = re.search(r"runtime=(\d+)", job).group(1)
        assert re.search(rf"runtime={runtime}\b", cells[machine])  # a cell's time limit


def _dry_run_jobs(work: Path, override: dict, *extra: str) -> list[str]:
    """The jobs of a dry run of the tiny config with ``override`` merged over it, one text per job ('<rule>: ...')."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "override.yaml").write_text(yaml.safe_dump(override))
    where = ["--snakefile", str(REPO / "Snakefile"), "--directory", str(work)]
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "all", *where, *extra, "--configfile", str(TINY), "override.yaml"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return [job.split("\n[")[0] for job in result.stdout.split("\nrule ")[1:]]


def _planned_cpus(work: Path, cpus: set[int] | None = None) -> dict[str, int]:
    """The resource 'cpus' of each job of EVERY_CPU_RULES in a `--cores 1` dry run of the tiny config from an empty
    directory, run under the affinity mask ``cpus`` (the whole mask when None)."""
    where = ["--snakefile", str(REPO / "Snakefile"), "--directory", str(work)]
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "all", *where, "--configfile", str(TINY)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = {job.split(":", 1)[0]: job.split("\n[")[0] for job in result.stdout.split("\nrule ")[1:]}
    assert set(EVERY_CPU_RULES) <= set(jobs), sorted(jobs)
    found = {name: re.search(r"resources: .*\bcpus=(\d+)", jobs[name]) for name in EVERY_CPU_RULES}
    assert all(found.values()), {name: jobs[name] for name, match in found.items() if not match}
    return {name: int(match.group(1)) for name, match in found.items()}


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_a_cores_1_dry_run_gives_the_build_and_the_quantization_every_cpu(tmp_path: Path) -> None:
    """`snakemake --cores 1 all` (the README's command) plans the build and the quantization with every CPU of the
    process's affinity mask, not the one core Snakemake caps their threads at; under a one-CPU mask, with one."""
    every = usable_cpus()
    if every < 2:
        pytest.skip("one usable CPU: every CPU and --cores 1 are the same here")
    assert _planned_cpus(tmp_path / "all") == {name: every for name in EVERY_CPU_RULES}
    one = {min(os.sched_getaffinity(0))}
    assert _planned_cpus(tmp_path / "one", one) == {name: 1 for name in EVERY_CPU_RULES}


def test_every_cpu_is_local_only_and_reaches_the_tools() -> None:
    """Locally every usable CPU whatever the job's threads; under a cluster executor the job's threads (the config's
    resources). The entry scripts hand the resource to cmake and llama-quantize, never the capped threads."""
    assert every_cpu(True, 1) == usable_cpus() and every_cpu(True, 64) == usable_cpus()
    assert every_cpu(False, 16) == 16 and every_cpu(False, 1) == 1
    for script in ("llama_cpp_build.py", "quantize.py"):
        text = (REPO / "scripts" / script).read_text()
        assert "snakemake.resources.cpus" in text and "snakemake.threads" not in text, script


def test_the_default_profile_keeps_what_needs_the_machine_apart(tmp_path: Path) -> None:
    """Under the default workflow profile a cell, an explanation, the build and the quantization claim the whole of
    the global resource machine_share, every other job one unit of it; `--workflow-profile none` claims nothing."""
    profile = yaml.safe_load((PROFILES / "default" / "config.yaml").read_text())
    whole = profile["resources"]["machine_share"]
    override = {"select": {"tasks": ["essay"], "conditions": ["off", "mtp"]}, "temperatures": [0.0], "repeats": 2}
    jobs = _dry_run_jobs(tmp_path / "default", override)
    claims = {job.split(":", 1)[0]: re.search(r"resources: .*\bmachine_share=(\d+)", job) for job in jobs}
    assert all(claims.values()), [name for name, match in claims.items() if not match]
    alone = {name for name, match in claims.items() if int(match.group(1)) == whole}
    assert alone == {"cell", "explain_divergence", "explain_control", *EVERY_CPU_RULES}, alone
    assert {int(match.group(1)) for name, match in claims.items() if name not in alone} == {1}
    bare = _dry_run_jobs(tmp_path / "none", override, "--workflow-profile", "none", "--cores", "1")
    assert not any("machine_share" in job for job in bare)


def test_the_config_may_not_set_the_workflows_own_cpus_or_threads(study_config: dict) -> None:
    for key in ("cpus", "threads"):
        study_config["resources"] = {"conditions": {"mtp": {key: 8}}}
        with pytest.raises(ConfigError, match=r"resources\.conditions\.mtp.*'cpus' is the workflow's own"):
            validate_config(study_config, REPO)
