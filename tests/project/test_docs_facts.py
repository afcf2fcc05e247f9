"""The numbers and lists the documents state hold to the config and the tree: the study's matrix and every cell count
(from the plan), the rule files, the stages of the package and of the tests, and the config files config/README.md
lists. Each statement is found by its pattern, so a wrong number or a missing name fails, and so does a statement
reworded out of the pattern's reach."""

from __future__ import annotations

import copy
import re

import yaml
from snakemake.utils import update_config

from specbench.core.config.load import validate_config
from specbench.core.plan.cells import selected_cells
from support.paths import REPO

USER_DOCS = ("README.md", "config/README.md", "docs/usage.md", "docs/clusters.md", "docs/builds-and-models.md")
ALL_DOCS = ("README.md", "config/README.md", *(str(p.relative_to(REPO)) for p in sorted((REPO / "docs").glob("*.md"))))
MATRIX = re.compile(r"(\d+) tasks x (\d+) conditions x (\d+) temperatures x (\d+) repeats")
# Folders of tests/ that are not a stage's
NOT_STAGES = {"workflow", "project", "support", "data"}


def flat(*names: str) -> str:
    """The documents' text with every run of whitespace one space (statements wrap across lines)."""
    return " ".join(" ".join((REPO / name).read_text().split()) for name in names)


def _after(text: str, pattern: str, what: str) -> str:
    found = re.search(pattern, text)
    assert found, f"{what} is no longer stated in the form this test reads ({pattern})"
    return found.group(1)


def _backticked(text: str) -> list[str]:
    """The `names` in ``text`` outside parentheses ('`preflight` (what the `onstart` runs)' -> ['preflight'])."""
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)
    return re.findall(r"`(\w+)`", text)


def _merged(study_config: dict, *names: str) -> dict:
    config = copy.deepcopy(study_config)
    for name in names:
        update_config(config, yaml.safe_load((REPO / "config" / name).read_text()))
    return validate_config(config, REPO)


def test_every_matrix_the_documents_state_is_the_study_configs(study_config: dict) -> None:
    """'4 tasks x 7 conditions x 2 temperatures x 3 repeats', wherever stated, is config/config.yaml's selection."""
    study = _merged(study_config)
    selected = study["select"].get("conditions") or list(study["conditions"])
    planned = (len(study["tasks"]), len(selected), len(study["temperatures"]), study["repeats"])
    stated = {name: [tuple(int(n) for n in m) for m in MATRIX.findall(flat(name))] for name in ALL_DOCS}
    assert stated["README.md"] and stated["config/README.md"], "the README or config/README.md states no matrix"
    wrong = {name: matrix for name, found in stated.items() for matrix in found if matrix != planned}
    assert not wrong, f"the study config plans {planned} (tasks, conditions, temperatures, repeats): {wrong}"


def test_the_counts_the_documents_state_come_from_the_plan(study_config: dict) -> None:
    """Every cell count the README and the user's documents state for a shipped config is the plan's
    (``selected_cells``), as is the README's product of the study's factors and the demo's servers as bench/README.md
    measured them; a count written by hand once said 96 where the study config plans 144."""
    study, tiny = _merged(study_config), _merged(study_config, "tiny.yaml")
    smollm2 = _merged(study_config, "tiny.yaml", "smollm2.yaml")
    readme = _after(flat("README.md"), r"runs the (\d+) cells of `config/config.yaml`", "the study's cell count")
    assert int(readme) == len(selected_cells(study))
    demo = re.search(
        r"\| (\d+) cells \((\d+) fresh servers, (\d+) warm ones answering (\d+) each", flat("bench/README.md")
    )
    assert demo, "bench/README.md no longer states the demo's cell count in the form this test reads"
    total, fresh, servers, each = (int(g) for g in demo.groups())
    warm = [c for c in selected_cells(tiny) if tiny["conditions"][c.condition].get("server") == "warm"]
    assert [total, fresh, servers * each] == [len(selected_cells(tiny)), total - len(warm), len(warm)]
    planned = {len(selected_cells(config)) for config in (study, tiny, smollm2)}
    stated = {int(n.replace(",", "")) for n in re.findall(r"\b(\d[\d,]*) cells\b", flat(*USER_DOCS))}
    assert len(selected_cells(smollm2)) in stated, "docs/builds-and-models.md no longer states SmolLM2's cell count"
    assert stated <= planned, f"stated {sorted(stated)}, planned {sorted(planned)}"


def test_the_rule_files_the_development_guide_lists_are_the_workflows() -> None:
    listed = _after(
        flat("docs/development.md"), r"`rules/\*\.smk`: the workflow, one file per stage \(([^)]*)\)", "the rule files"
    )
    files = {path.stem for path in (REPO / "rules").glob("*.smk")}
    included = set(re.findall(r'^include: "rules/(\w+)\.smk"', (REPO / "Snakefile").read_text(), re.MULTILINE))
    assert set(_backticked(listed)) == files == included, (sorted(_backticked(listed)), sorted(files), sorted(included))


def test_the_stages_the_development_guide_lists_are_the_package_and_test_folders() -> None:
    text = flat("docs/development.md")
    package = _after(text, r"`scripts/specbench/` has one sub-package per stage: (.*?)\. Dependencies", "the stages")
    tests = _after(text, r"`tests/` mirrors the package: one folder per stage \((.*?)\) holding", "the test folders")
    packages = {p.name for p in (REPO / "scripts" / "specbench").iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in (REPO / "tests").iterdir() if p.is_dir() and p.name not in NOT_STAGES | {"__pycache__"}}
    assert set(_backticked(package)) == packages, sorted(set(_backticked(package)) ^ packages)
    assert set(re.findall(r"`(\w+)`", tests)) == folders, sorted(set(re.findall(r"`(\w+)`", tests)) ^ folders)


def test_the_config_readme_lists_every_config_file() -> None:
    """Its table of files names each config/*.yaml and the tasks folder, and nothing else."""
    rows = re.findall(r"^\| (`[^|]+`) \|", (REPO / "config" / "README.md").read_text(), re.MULTILINE)
    listed = {name for row in rows for name in re.findall(r"`([^`]+)`", row)}
    present = {p.name for p in (REPO / "config").glob("*.yaml")} | {"tasks/"}
    assert listed == present, (
        f"listed but absent: {sorted(listed - present)}; absent from the table: {sorted(present - listed)}"
    )
