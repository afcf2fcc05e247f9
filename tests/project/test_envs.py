"""Every rule's conda env (envs/*.yaml) has what the rule's script imports, statically and in a real venv; where
conda is installed, conda makes one env (the build's) and the same checks run in it.

Conda channels are out of reach here, so each env is emulated by a plain venv of exactly its pip packages
(conda-only entries such as cmake or git are the system's), cached under the test cache keyed by the package
list. The import check does not run a rule: it executes each entry script with a stub ``snakemake`` object
that stops the script at its first use (after its imports), then replays every import statement the script
can reach (the lazy ones inside functions too), found by a static walk over scripts/specbench.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
import yaml

from support.paths import REPO, TEST_CACHE
from support.rules import Rule, workflow_rules

SCRIPTS = REPO / "scripts"
PACKAGE = "specbench"
VENV_CACHE = TEST_CACHE / "envs"
ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))
# Conda-only dependencies and the executable that stands in for each on this machine (None: nothing to check).
SYSTEM_STANDINS = {"python": None, "pip": None, "cmake": "cmake", "make": "make", "cxx-compiler": "c++", "git": "git"}
MODULE_UNIT = "<module>"


def normalize(dist: str) -> str:
    """A distribution name in PEP 503 normal form."""
    return re.sub(r"[-_.]+", "-", dist).lower()


# --- envs/*.yaml and requirements.txt ---


def conda_dependencies(env_file: Path) -> list[str]:
    """The env's conda (non-pip) dependency specs."""
    return [dep for dep in yaml.safe_load(env_file.read_text())["dependencies"] if isinstance(dep, str)]


def pip_packages(env_file: Path) -> list[str]:
    """The env's pip requirement lines, in file order."""
    deps = yaml.safe_load(env_file.read_text())["dependencies"]
    return [line for dep in deps if isinstance(dep, dict) for line in dep.get("pip", [])]


def requirement_name(line: str) -> str:
    """The normalized distribution name of a requirement line such as ``PyYAML==6.0.4``."""
    return normalize(re.split(r"[\s<>=!~;\[]", line.strip(), maxsplit=1)[0])


def requirements_pins() -> dict[str, str]:
    """{normalized name: 'name==version'} of requirements.txt."""
    lines = (line.split("#")[0].strip() for line in (REPO / "requirements.txt").read_text().splitlines())
    return {requirement_name(line): line for line in lines if line and not line.startswith("-")}


def package_key(env_file: Path) -> str:
    """sha256 of the env's pip package list and this Python's version: the venv cache key."""
    text = "\n".join(sorted(pip_packages(env_file))) + f"\npython {sys.version_info[0]}.{sys.version_info[1]}\n"
    return hashlib.sha256(text.encode()).hexdigest()


# --- the static import closure of a script over scripts/specbench ---


@dataclass
class Unit:
    """A module's top-level def or class (or its module-level code): the imports it runs, the names it uses."""

    imports: list[tuple[str, str, str]] = field(default_factory=list)  # (absolute statement, module, where)
    names: set[tuple[str, ...]] = field(default_factory=set)  # Name ids and attribute chains it reads


@dataclass
class Module:
    """One parsed module: its units, and the names its module-level imports bind."""

    units: dict[str, Unit]
    bindings: dict[str, tuple[str, str | None]]  # local name -> (module, attribute or None for the module)


def module_path(module: str) -> Path | None:
    """The file of a specbench module (or of an entry script given as a path), None if there is none."""
    if module.endswith(".py"):
        return Path(module)
    base = SCRIPTS.joinpath(*module.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def _absolute(node: ast.ImportFrom, module: str) -> str:
    """The absolute module an ``ImportFrom`` names, relative imports resolved inside ``module``'s package."""
    if not node.level:
        return node.module or ""
    is_package = str(module_path(module)).endswith("__init__.py")
    parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """True for an import under ``if TYPE_CHECKING:`` or in a ``try`` that catches ImportError (not required)."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.If) and "TYPE_CHECKING" in ast.unparse(parent.test) and node in parent.body:
            return True
        if (
            isinstance(parent, ast.Try)
            and node in parent.body
            and any(
                h.type is None or re.search(r"\b(ImportError|ModuleNotFoundError)\b", ast.unparse(h.type))
                for h in parent.handlers
            )
        ):
            return True
        node = parent
    return False


def _names(node: ast.AST) -> Iterator[tuple[str, ...]]:
    """Every name read in ``node``, as a chain (``sb.config.x`` -> ('sb', 'config', 'x'); ``x`` -> ('x',))."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield (sub.id,)
        elif isinstance(sub, ast.Attribute):
            chain, value = [sub.attr], sub.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name):
                yield (value.id, *reversed(chain))


def _import_time_parts(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """The parts of a top-level def or class that run at import time."""
    if isinstance(stmt, ast.ClassDef):
        body = [s for s in stmt.body if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
        methods = [s for s in stmt.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
        return [
            *stmt.decorator_list,
            *stmt.bases,
            *stmt.keywords,
            *body,
            *(part for m in methods for part in _import_time_parts(m)),
        ]
    return [*stmt.decorator_list, *stmt.args.defaults, *(d for d in stmt.args.kw_defaults if d)]


@cache
def parse_module(module: str) -> Module:
    """Split a module into units and record each unit's imports (relative ones made absolute) and names."""
    path = module_path(module)
    if path is None:  # not a specbench module: importing it fails, which the venv check reports
        return Module({}, {})
    tree = ast.parse(path.read_text(), filename=str(path))
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    units: dict[str, Unit] = {MODULE_UNIT: Unit()}
    bindings: dict[str, tuple[str, str | None]] = {}
    for stmt in tree.body:
        is_def = isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        unit = units.setdefault(stmt.name, Unit()) if is_def else units[MODULE_UNIT]
        unit.names.update(_names(stmt))
        if is_def:  # what runs when the module is imported: decorators, defaults, bases, a class body
            units[MODULE_UNIT].names.update(chain for node in _import_time_parts(stmt) for chain in _names(node))
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Import | ast.ImportFrom) or _guarded(node, parents):
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    unit.imports.append((ast.unparse(ast.Import([alias])), alias.name, where))
                    if not is_def:
                        bindings[alias.asname or alias.name.split(".")[0]] = (
                            alias.name if alias.asname else alias.name.split(".")[0],
                            None,
                        )
            elif node.module != "__future__":
                target = _absolute(node, module)
                for alias in node.names:
                    unit.imports.append((f"from {target} import {alias.name}", target, where))
                    if not is_def:
                        bindings[alias.asname or alias.name] = (target, alias.name)
    return Module(units, bindings)


def _is_first_party(module: str) -> bool:
    """True for specbench and its submodules."""
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def reachable_imports(script: Path) -> list[tuple[str, str, str]]:
    """Every import statement that running ``script`` can execute: its own, and those of the specbench
    module-level code and functions/classes it can reach by name (a function's lazy imports count only
    if something reachable uses that function). Each as (absolute statement, module, where)."""
    seen: set[tuple[str, str]] = set()
    todo = [(str(script), MODULE_UNIT)]
    found: list[tuple[str, str, str]] = []

    def reach(module: str, unit: str) -> None:
        if (module, unit) not in seen:
            seen.add((module, unit))
            todo.append((module, unit))

    def reach_import(module: str, attribute: str | None) -> None:
        for i in range(1, module.count(".") + 2):  # importing a.b.c runs a, a.b, a.b.c
            reach(".".join(module.split(".")[:i]), MODULE_UNIT)
        if attribute is not None:
            submodule = f"{module}.{attribute}"
            if module_path(submodule):
                reach(submodule, MODULE_UNIT)
            else:
                reach_name(module, (attribute,))

    def reach_name(module: str, chain: tuple[str, ...]) -> None:
        parsed = parse_module(module)
        if chain[0] in parsed.units:
            reach(module, chain[0])
        elif chain[0] in parsed.bindings:
            target, attribute = parsed.bindings[chain[0]]
            if _is_first_party(target):
                rest = chain[1:] if attribute is None else (attribute, *chain[1:])
                while rest and module_path(f"{target}.{rest[0]}"):  # sb.core.config.x -> specbench.core.config.load, x
                    target, rest = f"{target}.{rest[0]}", rest[1:]
                reach_import(target, None)
                if rest:
                    reach_name(target, rest)

    seen.add(todo[0])
    while todo:
        module, unit_name = todo.pop()
        reach(module, MODULE_UNIT)
        unit = parse_module(module).units.get(unit_name)
        if unit is None:
            continue
        for statement, target, where in unit.imports:
            found.append((statement, target, where))
            if _is_first_party(target):
                attribute = statement.split(" import ")[1] if statement.startswith("from ") else None
                reach_import(target, attribute)
        for chain in unit.names:
            reach_name(module, chain)
    return sorted(set(found), key=lambda item: (item[2].split(":")[0], int(item[2].split(":")[1]), item[0]))


def third_party_modules(script: Path) -> dict[str, str]:
    """{top-level third-party module: where it is first imported} of everything ``script`` can import."""
    modules: dict[str, str] = {}
    for _, target, where in reachable_imports(script):
        top = target.split(".")[0]
        if not _is_first_party(target) and top not in sys.stdlib_module_names:
            modules.setdefault(top, where)
    return modules


def missing_from_env(rule: Rule) -> list[str]:
    """One line per module ``rule``'s script needs whose distribution its env lacks."""
    have = {requirement_name(line) for line in pip_packages(rule.env)}
    distributions = packages_distributions()
    problems = []
    for module, where in sorted(third_party_modules(rule.script).items()):
        dists = distributions.get(module)
        if not dists:
            problems.append(
                f"rule {rule.name} ({rule.source}): script {rule.script.relative_to(REPO)} imports "
                f"'{module}' ({where}), which no installed distribution provides; add it to "
                "requirements.txt so it can be mapped to one"
            )
        elif not have & {normalize(d) for d in dists}:
            problems.append(
                f"rule {rule.name} ({rule.source}): script {rule.script.relative_to(REPO)} imports "
                f"'{module}' ({where}), but env {rule.env.relative_to(REPO)} lacks "
                f"{' or '.join(sorted(set(dists)))}"
            )
    return problems


# --- venvs emulating the envs ---


def env_venv(env_file: Path) -> Path:
    """A venv of exactly the env's pip packages, built once per package list under the test cache."""
    key = package_key(env_file)
    venv = VENV_CACHE / f"{env_file.stem}-{key[:16]}"
    done = venv / "specbench-env-complete"
    VENV_CACHE.mkdir(parents=True, exist_ok=True)
    with open(VENV_CACHE / f"{env_file.stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file() and done.read_text() == key:
            return venv
        for stale in VENV_CACHE.glob(f"{env_file.stem}-*"):  # older package lists, and a half-built venv
            shutil.rmtree(stale)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(venv / "bin" / "python"),
                "install",
                "--no-input",
                "--no-compile",
                "--disable-pip-version-check",
                "-q",
                *pip_packages(env_file),
            ],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, f"pip could not install {env_file.name}'s packages:\n{result.stderr[-4000:]}"
        done.write_text(key)
    return venv


IMPORT_CHECK = r"""
import json, runpy, sys, traceback

spec = json.loads(sys.stdin.read())
sys.path.insert(0, spec["scripts_dir"])


class StubReached(BaseException):
    '''The script read the snakemake object: every import above that line has run.'''


class Stub:
    def __getattr__(self, name):
        raise StubReached(name)


failures = []
for script in spec["scripts"]:
    try:
        runpy.run_path(script, init_globals={"snakemake": Stub()}, run_name="__specbench_import_check__")
    except StubReached:
        pass
    except Exception:
        failures.append(f"running {script} up to its first use of snakemake:\n{traceback.format_exc(limit=-3)}")
for statement, where in spec["imports"]:
    try:
        exec(statement, {})
    except Exception as error:
        failures.append(f"{statement}  ({where}): {type(error).__name__}: {error}")
print(json.dumps(failures))
"""

PREAMBLE_CHECK = r"""
import json, sys

sys.path.extend(json.loads(sys.argv[1]))
import pickle
snakemake = pickle.loads(bytes.fromhex(sys.argv[2]))
from snakemake.logging import logger
from snakemake.iocontainers import Snakemake
assert isinstance(snakemake, Snakemake) and snakemake.rule == "preamble-check"
print(sys.modules["snakemake"].__file__)
"""


def rules_using(env_file: Path) -> list[Rule]:
    """The rules whose conda env is ``env_file``."""
    return [rule for rule in workflow_rules() if rule.env == env_file.resolve()]


# --- tests ---


def test_every_script_rule_names_an_existing_env() -> None:
    rules = workflow_rules()
    assert rules, "no rule with a script: found in rules/*.smk"
    problems = [
        f"rule {r.name} ({r.source}): {what}"
        for r in rules
        for what in (
            ["has a script: but no conda: env"]
            if r.env is None
            else [f"conda env {r.env} does not exist"]
            if not r.env.is_file()
            else [f"script {r.script} does not exist"]
            if not r.script.is_file()
            else []
        )
    ]
    assert not problems, "\n".join(problems)


def test_rule_scripts_import_only_what_their_env_has() -> None:
    problems = [line for rule in workflow_rules() if rule.env and rule.env.is_file() for line in missing_from_env(rule)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("env_file", ENV_FILES, ids=lambda p: p.name)
def test_env_pip_packages_are_pinned_as_in_requirements(env_file: Path) -> None:
    pins = requirements_pins()
    problems = [
        f"{env_file.name}: '{line}' is not requirements.txt's '{pins.get(requirement_name(line))}'"
        for line in pip_packages(env_file)
        if pins.get(requirement_name(line)) != line.strip()
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("env_file", ENV_FILES, ids=lambda p: p.name)
def test_env_conda_only_dependencies_are_provided_by_the_system(env_file: Path) -> None:
    problems = []
    for spec in conda_dependencies(env_file):
        name, version = re.fullmatch(r"([^\s=<>!]+)\s*=*\s*(.*)", spec).groups()
        if name not in SYSTEM_STANDINS:
            problems.append(f"{env_file.name}: conda-only '{spec}' has no stand-in here; add one to SYSTEM_STANDINS")
        elif SYSTEM_STANDINS[name] and not shutil.which(SYSTEM_STANDINS[name]):
            problems.append(f"{env_file.name}: '{spec}' stands for the system's {SYSTEM_STANDINS[name]}, not found")
        elif name == "python" and version and version.rstrip(".*") != f"{sys.version_info[0]}.{sys.version_info[1]}":
            problems.append(f"{env_file.name}: python={version}, but the venvs here get {sys.version.split()[0]}")
    assert not problems, "\n".join(problems)


def import_failures(python: Path, env_file: Path) -> list[str]:
    """What fails when ``python`` runs the scripts of the rules using ``env_file`` up to their first use of snakemake,
    then every import those scripts can reach."""
    scripts = sorted({rule.script for rule in rules_using(env_file)})
    imports = sorted({(s, w) for script in scripts for s, _, w in reachable_imports(script)}, key=lambda i: i[1])
    spec = {"scripts_dir": str(SCRIPTS), "scripts": [str(s) for s in scripts], "imports": imports}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = subprocess.run(
        [str(python), "-c", IMPORT_CHECK],
        input=json.dumps(spec),  # on stdin: the spec outgrows one argument's limit (128 KiB)
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**env, "MPLBACKEND": "Agg"},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.splitlines()[-1])


def preamble_run(python: Path) -> subprocess.CompletedProcess:
    """Snakemake's script preamble (the host's sys.path appended, the snakemake object unpickled, snakemake.logging
    imported), run by ``python``."""
    from snakemake.common import get_snakemake_searchpaths
    from snakemake.iocontainers import InputFiles, Log, OutputFiles, Params, ResourceList, Snakemake, Wildcards

    obj = Snakemake(
        InputFiles(),
        OutputFiles(),
        Params(),
        Wildcards(),
        1,
        ResourceList(),
        Log(),
        {},
        "preamble-check",
        0,
        str(SCRIPTS),
    )
    return subprocess.run(
        [
            str(python),
            "-c",
            PREAMBLE_CHECK,
            json.dumps(get_snakemake_searchpaths()),
            pickle.dumps(obj, protocol=4).hex(),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )


@pytest.mark.parametrize("env_file", ENV_FILES, ids=lambda p: p.name)
def test_env_imports_resolve(env_file: Path) -> None:
    failures = import_failures(env_venv(env_file) / "bin" / "python", env_file)
    assert not failures, f"in a venv of exactly {env_file.name}'s pip packages:\n" + "\n".join(failures)


@pytest.mark.parametrize("env_file", ENV_FILES, ids=lambda p: p.name)
def test_snakemake_preamble_runs_in_env(env_file: Path) -> None:
    """Snakemake's script preamble appends the host Snakemake's sys.path, unpickles the snakemake object
    and imports snakemake.logging: the env's own python must manage that without the snakemake package."""
    result = preamble_run(env_venv(env_file) / "bin" / "python")
    assert result.returncode == 0, f"Snakemake's script preamble fails in {env_file.name}:\n{result.stderr[-4000:]}"


# The env conda makes where it is installed: the build's, whose conda-only entries (CMake, a compiler, git) are what
# a venv of the pip packages cannot stand for
CONDA_ENV = REPO / "envs" / "build.yaml"


@pytest.mark.skipif(
    shutil.which("conda") is None,
    reason="conda is not on PATH (nor its channels reachable here): the envs are checked as venvs of their pip "
    "packages, their conda-only entries as the system's programs",
)
def test_conda_makes_the_build_env_as_snakemake_does() -> None:
    """Conda makes envs/build.yaml with the command Snakemake's `--software-deployment-method conda` runs; its CMake
    is the pinned minor version, its compiler and git run, and the build rules' scripts import and start in it."""
    key = hashlib.sha256(CONDA_ENV.read_bytes()).hexdigest()[:16]
    prefix = TEST_CACHE / "conda" / f"{CONDA_ENV.stem}-{key}"
    if not (prefix / "conda-meta" / "history").is_file():
        shutil.rmtree(prefix, ignore_errors=True)
        create = ["conda", "env", "create", "--quiet", "--no-default-packages", "--file", str(CONDA_ENV)]
        done = subprocess.run([*create, "--prefix", str(prefix)], capture_output=True, text=True)
        assert done.returncode == 0, f"conda could not make {CONDA_ENV.name}:\n{done.stderr[-4000:]}"
    pinned = next(spec.split("=", 1)[1] for spec in conda_dependencies(CONDA_ENV) if spec.startswith("cmake="))
    versions = {}
    for program in ("cmake", "c++", "git"):
        found = subprocess.run([str(prefix / "bin" / program), "--version"], capture_output=True, text=True)
        assert found.returncode == 0, f"{program} of the conda env: {found.stderr[-2000:]}"
        versions[program] = found.stdout
    assert f"cmake version {pinned}." in versions["cmake"], versions["cmake"]
    failures = import_failures(prefix / "bin" / "python", CONDA_ENV)
    assert not failures, f"in the conda env of {CONDA_ENV.name}:\n" + "\n".join(failures)
    assert preamble_run(prefix / "bin" / "python").returncode == 0
