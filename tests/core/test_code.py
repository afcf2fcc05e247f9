"""A rule's code: the import closure of its entry script, the fingerprint cells record, the workflow's commit."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specbench.core.plan.code import fingerprint, import_closure, manifest, workflow_commit
from support.paths import REPO

SCRIPTS = REPO / "scripts"
PACKAGE = SCRIPTS / "specbench"


def _names(script: str) -> set[str]:
    return {p.name for p in import_closure(SCRIPTS / script)}


def _stages(script: str) -> set[str]:
    """The sub-packages a script's closure reaches ('' for the package's own __init__ and __main__)."""
    return {
        p.relative_to(PACKAGE).parts[0] if len(p.relative_to(PACKAGE).parts) > 1 else ""
        for p in import_closure(SCRIPTS / script)
        if p.is_relative_to(PACKAGE)
    }


def _third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    return names


def _module_graph() -> dict[str, set[str]]:
    """Every package module's imports of other package modules (function-level imports included), by dotted name."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        deps = {".".join(p.relative_to(PACKAGE).with_suffix("").parts) for p in import_closure_of_file(path)}
        graph[name] = deps - {name}
    return graph


def import_closure_of_file(path: Path) -> set[Path]:
    """The package modules one file imports directly (not transitively), and no __init__.py it passes through."""
    from specbench.core.plan.code import _imported_modules, _module_file

    found = {_module_file(PACKAGE, dotted) for dotted in _imported_modules(path, PACKAGE)}
    return {p for p in found if p is not None and p.name != "__init__.py"}


def test_the_measurement_rules_code_is_the_measurement_contention_and_core_only() -> None:
    """An edit anywhere else (the GSM8K scorer, the log parser, the table, the report) reruns no cell."""
    assert _stages("run_cells.py") == {"", "core", "contention", "engines", "measure"}
    assert _stages("condition_setup.py") <= {"", "core", "engines", "measure"}
    # an explanation talks to a server (engines, measure) and interprets nothing: the table reads its answers
    assert _stages("explain_divergence.py") == {"", "core", "engines", "measure"}
    assert "explain.py" not in _names("run_cells.py")  # explaining never changes what measures a cell
    assert {"divergence.py", "explanations.py"} <= _names("aggregate.py")
    closure = _names("run_cells.py")
    assert {
        "run_cells.py",
        "runner.py",
        "cell_record.py",
        "client.py",
        "server_process.py",
        "guard.py",
        "watch.py",
        "contended.py",
    } <= closure
    assert not closure & {"gsm8k.py", "server_log.py", "derived.py", "cell_table.py"}
    used = set().union(*(_third_party(p) for p in import_closure(SCRIPTS / "run_cells.py")))
    assert not used & {"pandas", "pyarrow", "matplotlib", "scipy"}, used


def test_the_table_and_report_do_not_reach_the_measurement_code() -> None:
    for script in ("aggregate.py", "import_cells.py", "report.py"):
        assert not _stages(script) & {"measure", "contention"}, script
    assert {"gsm8k.py", "server_log.py"} <= _names("aggregate.py")
    # the summaries are computed once, by the tables step; the report reads its files
    assert "summaries.py" in _names("tables.py")
    assert "summaries.py" not in _names("aggregate.py") | _names("report.py")
    assert _stages("llama_cpp_build.py") == {"", "core", "llama_cpp"}


def test_every_stage_imports_only_the_stages_before_it() -> None:
    """pyproject.toml's import-linter contracts (the allowed directions between stages), checked by ``lint-imports``
    over the package, indirect imports included."""
    lint = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS)}
    done = subprocess.run([str(lint), "--no-cache"], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "KEPT" in done.stdout and "BROKEN" not in done.stdout, done.stdout


def test_closure_follows_relative_and_absolute_imports(tmp_path: Path) -> None:
    package = tmp_path / "specbench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import x\n")
    (package / "b.py").write_text("from . import c\nx = 1\n")
    (package / "c.py").write_text("import json\n")
    (package / "unused.py").write_text("")
    (tmp_path / "entry.py").write_text("import specbench.a\n")
    assert [p.name for p in import_closure(tmp_path / "entry.py")] == [
        "entry.py",
        "__init__.py",
        "a.py",
        "b.py",
        "c.py",
    ]


def test_fingerprint_changes_with_content_not_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first = fingerprint([a, b])
    assert fingerprint([b, a]) == first and len(first) == 64
    a.write_text("x = 1  # edited\n")
    assert fingerprint([a, b]) != first


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    for name in ("Snakefile", "rules/common.smk", "results/.gitkeep", "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def test_the_code_manifest_carries_the_same_fingerprint_as_the_files(tmp_path: Path) -> None:
    files = [tmp_path / "b.py", tmp_path / "a.py"]
    for i, path in enumerate(files):
        path.write_text(f"x = {i}\n")
    record = manifest("run.py", files)
    assert record["fingerprint"] == fingerprint(files)  # what the aggregate checks cell records against
    assert list(record["files"]) == sorted(str(p) for p in files)
    files[0].write_text("x = 2\n")
    assert manifest("run.py", files)["fingerprint"] != record["fingerprint"]


def test_workflow_commit_is_dirty_only_for_the_workflows_own_files(clone: Path) -> None:
    clean = workflow_commit(clone)
    assert len(clean) == 40
    (clone / "results/.gitkeep").unlink()  # what a first run in a fresh clone did
    (clone / "README.md").write_text("notes")
    assert workflow_commit(clone) == clean
    (clone / "rules/common.smk").write_text("changed")
    assert workflow_commit(clone) == clean + "-dirty"
    assert workflow_commit(clone.parent / "not-a-repo") == "unknown"


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_closure_resolves_sub_packages_at_any_depth(tmp_path: Path) -> None:
    """Dotted and relative imports in nested modules, and each sub-package's __init__.py: editing any of these
    files must rerun the rule whose script reaches it (the closure once kept only the first part of a name)."""
    _package(
        tmp_path,
        {
            "specbench/__init__.py": "",
            "specbench/core/__init__.py": "",
            "specbench/core/files.py": "import json\n",
            "specbench/core/util.py": "",
            "specbench/core/unused.py": "",
            "specbench/measure/__init__.py": "",
            "specbench/measure/cell.py": "from ..core.files import x\nfrom . import server\nfrom .record import make\n",
            "specbench/measure/server.py": "from specbench.core import util\n",
            "specbench/measure/record.py": "import specbench.deep.inner.leaf\n",
            "specbench/deep/__init__.py": "",
            "specbench/deep/inner/__init__.py": "",
            "specbench/deep/inner/leaf.py": "from ...core.files import y\n",
            "entry.py": "from specbench.measure.cell import run\n",
        },
    )
    closure = [p.relative_to(tmp_path).as_posix() for p in import_closure(tmp_path / "entry.py")]
    assert closure == [
        "entry.py",
        "specbench/__init__.py",
        "specbench/core/__init__.py",
        "specbench/core/files.py",
        "specbench/core/util.py",
        "specbench/deep/__init__.py",
        "specbench/deep/inner/__init__.py",
        "specbench/deep/inner/leaf.py",
        "specbench/measure/__init__.py",
        "specbench/measure/cell.py",
        "specbench/measure/record.py",
        "specbench/measure/server.py",
    ]


def test_fingerprint_names_files_by_their_place_in_the_package(tmp_path: Path) -> None:
    """Two modules of one name in different sub-packages are two files, and a copy of the workflow elsewhere gives
    the same fingerprint."""
    for root in (tmp_path / "a", tmp_path / "b"):
        _package(
            root,
            {
                "specbench/__init__.py": "",
                "specbench/x/__init__.py": "",
                "specbench/x/model.py": "v = 1\n",
                "specbench/y/__init__.py": "",
                "specbench/y/model.py": "v = 2\n",
            },
        )
    files = {root: sorted(root.rglob("*.py")) for root in (tmp_path / "a", tmp_path / "b")}
    assert fingerprint(files[tmp_path / "a"]) == fingerprint(files[tmp_path / "b"])
    (tmp_path / "b/specbench/x/model.py").write_text("v = 2\n")
    (tmp_path / "b/specbench/y/model.py").write_text("v = 1\n")  # the same contents, swapped between packages
    assert fingerprint(files[tmp_path / "a"]) != fingerprint(files[tmp_path / "b"])


def test_the_repository_root_is_found_from_any_depth(tmp_path: Path) -> None:
    from specbench.core.steps.repo import REPO_ROOT, find_repo_root

    assert (REPO_ROOT / "Snakefile").is_file() and REPO_ROOT == REPO
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "config").mkdir()
    deep = tmp_path / "scripts/specbench/a/b"
    deep.mkdir(parents=True)
    assert find_repo_root(deep) == tmp_path == find_repo_root(tmp_path)
    with pytest.raises(FileNotFoundError):
        find_repo_root(tmp_path.parent)


def test_the_package_has_no_import_cycle() -> None:
    graph = _module_graph()
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                return [*path, node, dep]
            if dep not in state and (cycle := visit(dep, [*path, node])):
                return cycle
        state[node] = "done"
        return None

    cycles = [c for node in sorted(graph) if node not in state and (c := visit(node, []))]
    assert not cycles, " -> ".join(cycles[0])


# A ceiling, not a target: modules are cut by job, and a module past this surely holds more than one.
MODULE_CEILING = 1000


def test_no_module_is_past_the_ceiling() -> None:
    lengths = {p.relative_to(PACKAGE).as_posix(): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    long = {name: n for name, n in lengths.items() if n > MODULE_CEILING}
    assert not long, long


def test_entry_scripts_only_read_snakemake_and_call_one_function() -> None:
    """Every rule's script is glue: imports, names for parts of ``snakemake``, and one call into the package; no
    control flow, definitions or second call of its own."""
    for script in sorted(SCRIPTS.glob("*.py")):
        body = ast.parse(script.read_text()).body
        calls = [n for n in body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
        other = [
            type(n).__name__
            for n in body
            if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))
            and n not in calls
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
        ]
        assert len(calls) == 1 and not other, (script.name, len(calls), other)
        names = {n.id for a in body if isinstance(a, ast.Assign) for n in ast.walk(a.value) if isinstance(n, ast.Name)}
        assert names <= {"snakemake", "globals", "Path", "hasattr", "getattr", "inp", "out", "params", "log"}, names
