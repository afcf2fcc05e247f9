"""The newcomer's documents hold to the repository: every path they name exists in a clone, every relative link
points at a file and heading that exist, every Snakemake option and sub-command they use exists, their config
examples pass the schema, and their `snakemake` commands plan in a fresh clone (a dry run, offline)."""

from __future__ import annotations

import copy
import re
import shlex
import subprocess
import sys
from functools import cache
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.prompt_sets import expand_prompt_set
from specbench.core.config.schema import load_schema, validate_document
from support.paths import REPO

DOCS = [
    "README.md",
    "config/README.md",
    "docs/usage.md",
    "docs/clusters.md",
    "docs/builds-and-models.md",
    "docs/development.md",
    "docs/backends.md",
    "docs/study.md",
    "bench/README.md",
]
# What the workflow makes or the user adds: named in the documents, never in a clone
MADE = ("results/", "resources/", "logs/", "benchmarks/", ".snakemake/", ".venv/")
_FENCE = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"(?<![\w./-])(\.?[\w-]+(?:/[\w.*-]+)*(?:/|\.(?:ya?ml|md|py|txt|jsonl|smk|rst|sh|png)))(?![\w/-])")


@cache
def tracked() -> frozenset[str]:
    """The files of a clone (git's index) and the folders above them."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    return frozenset(files) | {str(Path(f).parents[i]) + "/" for f in files for i in range(len(Path(f).parents) - 1)}


def _code(name: str) -> list[str]:
    """The inline code spans and fenced blocks of a document."""
    text = (REPO / name).read_text()
    return [m.group(2) for m in _FENCE.finditer(text)] + _SPAN.findall(_FENCE.sub("", text))


def _named_paths(name: str) -> set[str]:
    """Paths into the repository a document names in code: those whose first part is one of its top-level entries."""
    tops = {entry.split("/")[0] for entry in tracked()}
    found = set()
    for code in _code(name):
        for path in _PATH.findall(code):
            if path.split("/")[0] in tops and not path.startswith(MADE) and "*" not in path:
                found.add(path)
    return found


@pytest.mark.parametrize("name", DOCS)
def test_every_path_a_document_names_is_in_a_clone(name: str) -> None:
    paths = _named_paths(name)
    assert paths, f"{name} names no path at all?"
    missing = sorted(p for p in paths if p not in tracked() and p.rstrip("/") + "/" not in tracked())
    assert not missing, f"{name} names {missing}, which a clone does not have"


def _commands(name: str) -> list[list[str]]:
    """Every `snakemake ...` command of a document (inline or a line of a shell block), as argv."""
    found = []
    for code in _code(name):
        for line in code.splitlines():
            line = re.sub(r"^(?:[A-Z_]+=\S+ )+", "", line.split("  #")[0].strip())
            for part in re.split(r" && | then ", line):
                if part.startswith("snakemake "):
                    found.append(shlex.split(part.replace("<", "").replace(">", "")))
    return found


@cache
def snakemake_help() -> str:
    return subprocess.run([sys.executable, "-m", "snakemake", "--help"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("name", DOCS)
def test_every_snakemake_option_a_document_uses_exists(name: str) -> None:
    options = {arg.split("=")[0] for argv in _commands(name) for arg in argv if arg.startswith("-")}
    unknown = sorted(o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", snakemake_help()))
    assert not unknown, f"{name}: snakemake has no option {unknown}"


def test_the_provenance_command_exists() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "specbench", "provenance", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "scripts")},
    )
    assert result.returncode == 0 and "--check" in result.stdout, result.stderr


def test_the_documents_config_examples_pass_the_schema(study_config: dict) -> None:
    """Each YAML block of the documents (a backend, two builds, one's own model, its chat template, several
    machines, a prompt set), merged over the study config, is a valid config (a bare `off` would fail here)."""
    blocks = [m.group(2) for name in DOCS for m in _FENCE.finditer((REPO / name).read_text()) if m.group(1) == "yaml"]
    assert len(blocks) >= 5
    for block in blocks:
        merged, schema = copy.deepcopy(study_config), load_schema()
        update_config(merged, yaml.safe_load(block))
        expand_prompt_set(merged, schema)  # tasks taken from a public prompt set, as validate_config does first
        validate_document(merged, schema)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this repository (its committed files, as a newcomer gets them)."""
    dest = tmp_path_factory.mktemp("clone") / "specbench"
    subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], check=True, capture_output=True)
    return dest


def _bash_blocks(name: str = "README.md") -> list[str]:
    return [m.group(2) for m in _FENCE.finditer((REPO / name).read_text()) if m.group(1) == "bash"]


# The README's first runnable block: from a fresh clone, the environment and the tiny demo in one line.
DEMO_LINE = (
    "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && "
    ".venv/bin/snakemake --cores 1 all --configfile config/tiny.yaml"
)


def test_the_readmes_study_command_is_cores_1_all() -> None:
    """The study runs as its user types it: one job at a time (the build still gets every CPU: core/test_plan.py)."""
    assert _section_commands("README.md", "Run the study")[0] == "snakemake --cores 1 all"


def test_the_readmes_first_block_sets_up_and_runs_the_demo_in_one_line(clone: Path) -> None:
    """The first shell block is one line: a venv, the pinned packages into it (snakemake among them, at the version
    these tests run), and that venv's snakemake running the tiny demo, which plans in a fresh clone."""
    assert _bash_blocks()[0].strip() == DEMO_LINE
    venv, install, run = DEMO_LINE.split(" && ")
    assert shlex.split(venv)[-1] == ".venv" and shlex.split(install)[:2] == [".venv/bin/pip", "install"]
    requirements = (clone / shlex.split(install)[-1]).read_text()
    assert f"snakemake=={version('snakemake')}\n" in requirements
    argv = shlex.split(run)
    assert argv[0] == ".venv/bin/snakemake"
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *argv[1:], "-n"], cwd=clone, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "rule llama_cpp_build:" in result.stdout and "rule report:" in result.stdout  # the whole demo is planned


def test_the_documents_snakemake_commands_plan_in_a_fresh_clone(clone: Path) -> None:
    """The shell-block commands of the README and the documents it links (the study, the tiny GPU check, SmolLM2),
    as a dry run where the newcomer types them (the clone; the default profile is read, and --cores 1 on the line
    wins over it); the SLURM profile's command only needs its profile, which the paths test checks."""
    commands = [
        shlex.split(line)
        for name in DOCS
        for block in _bash_blocks(name)
        for line in block.splitlines()
        if line.startswith("snakemake ") and "profiles/slurm" not in line
    ]
    assert ["snakemake", "--cores", "1", "all"] in commands
    assert any("config/tiny-gpu.yaml" in argv for argv in commands) and any(
        "config/smollm2.yaml" in a for a in commands
    )
    for argv in commands:
        result = subprocess.run([sys.executable, "-m", *argv, "-n"], cwd=clone, capture_output=True, text=True)
        assert result.returncode == 0, f"{' '.join(argv)}: {result.stderr[-2000:]}"
        assert "Using workflow specific profile profiles/default" in result.stdout + result.stderr
        assert "rule llama_cpp_build:" in result.stdout + result.stderr  # a whole run is planned


def _section_commands(name: str, heading: str) -> list[str]:
    """The bash blocks of one section (``## heading``) of a document."""
    text = (REPO / name).read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(2).strip() for m in _FENCE.finditer(section) if m.group(1) == "bash"]


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but hyphens and underscores dropped, spaces as
    hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(name: str) -> set[str]:
    """The anchors of a Markdown file's headings (a repeated heading gets -1, -2, ... as on GitHub)."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", (REPO / name).read_text()), re.MULTILINE):
        slug, n = _slug(heading), 1
        while slug in anchors:
            slug, n = f"{_slug(heading)}-{n}", n + 1
        anchors.add(slug)
    return anchors


def _links(name: str) -> list[str]:
    """The link targets of a Markdown file outside its code."""
    text = _SPAN.sub("", _FENCE.sub("", (REPO / name).read_text()))
    return _LINK.findall(text)


@pytest.mark.parametrize("name", sorted(f for f in tracked() if f.endswith(".md")))
def test_every_relative_link_points_at_a_file_and_heading_of_a_clone(name: str) -> None:
    broken = []
    for target in _links(name):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        resolved = "/".join(_normalise(f"{Path(name).parent.as_posix()}/{path}")) if path else name
        if resolved not in tracked() and resolved + "/" not in tracked():
            broken.append(f"{target} (no {resolved} in a clone)")
        elif anchor and (not resolved.endswith(".md") or anchor not in _anchors(resolved)):
            broken.append(f"{target} (no heading #{anchor} in {resolved})")
    assert not broken, f"{name} links to {broken}"


def _normalise(path: str) -> list[str]:
    """A relative path's parts with '..' and '.' resolved (one above the repository stays '..': no file of a clone)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part not in ("", "."):  # '..' above the root is kept
            parts.append(part)
    return parts


def test_the_readme_links_every_document_where_to_go_next() -> None:
    """Every document under docs/, the config's and the benchmarks' README are linked from "Where to go next"."""
    section = (REPO / "README.md").read_text().split("\n## Where to go next\n", 1)[1].split("\n## ", 1)[0]
    linked = {target.partition("#")[0] for target in _LINK.findall(section)}
    documents = {f for f in tracked() if f.startswith("docs/") and f.endswith(".md")}
    missing = sorted((documents | {"config/README.md", "bench/README.md"}) - linked)
    assert not missing, f"the README's 'Where to go next' does not link {missing}"


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    [command] = _section_commands("README.md", "Tests")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert command in ci, "the README's test command is not a line of .ci/run"
    assert command.endswith("-m pytest"), "the test command must run the whole test suite"
    assert command in (REPO / "docs" / "development.md").read_text()


# What `--sdm` takes for each of the catalog's software deployment methods
SDM_ARGS = {"conda": "conda", "apptainer": "apptainer", "apptainer+conda": "conda apptainer"}


def test_the_catalog_file_claims_only_what_is_tested() -> None:
    """`.snakemake-workflow-catalog.yml` asks for no flag, as the README's study command passes none but --cores; it
    marks a software deployment method only where a test runs the workflow with it (`--sdm`), and the report only
    where a test makes `snakemake --report`."""
    usage = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    flags = usage["mandatory-flags"]["flags"]
    assert flags in ([], "", None), f"the catalog asks for {flags!r}"
    study = _section_commands("README.md", "Run the study")[0]
    assert [arg for arg in shlex.split(study)[1:] if arg.startswith("-")] == ["--cores"]
    tests = "\n".join(
        path.read_text() for path in sorted((REPO / "tests").rglob("*.py")) if path.name != Path(__file__).name
    )
    deployment = usage["software-stack-deployment"]
    assert set(deployment) == set(SDM_ARGS)
    for method, works in deployment.items():
        words = '", "'.join(SDM_ARGS[method].split())
        runs = any(f'"{flag}", "{words}"' in tests for flag in ("--sdm", "--software-deployment-method"))
        assert runs or not works, f"the catalog says the workflow runs with --sdm {SDM_ARGS[method]}; no test does"
    assert usage["report"] == ('"--report"' in tests)


def test_the_offline_recipe_downloads_what_the_study_pins(study_config: dict) -> None:
    """docs/usage.md's 'Without internet' fills the cache at each pinned revision, so the offline run finds it."""
    section = (REPO / "docs" / "usage.md").read_text().split("\n## Without internet\n", 1)[1].split("\n## ", 1)[0]
    text = " ".join(section.split())
    pins = [(m["hf"]["repo"], m["hf"]["revision"]) for m in study_config["models"].values()]
    gsm8k = study_config["tasks"]["gsm8k"]["dataset"]
    pins.append((gsm8k["repo"], gsm8k["revision"]))
    for repo, revision in pins:
        assert re.search(rf"hf download {re.escape(repo)} (--repo-type dataset )?--revision {revision}\b", text), repo
