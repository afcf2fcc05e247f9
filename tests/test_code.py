"""A rule's code: the import closure of its entry script, the fingerprint cells record, the workflow's commit."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from specbench.code import fingerprint, import_closure, manifest, workflow_commit

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"


def _names(script: str) -> set[str]:
    return {p.name for p in import_closure(SCRIPTS / script)}


def _third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    return names


def test_cell_runner_closure_is_the_measurement_code_only() -> None:
    closure = _names("run_cells.py")
    assert {"run_cells.py", "cell.py", "client.py", "server.py", "gpuwatch.py", "parse.py", "gsm8k.py"} <= closure
    assert not closure & {"table.py", "summaries.py", "report.py", "html_report.py", "figures.py", "claims.py"}
    used = set().union(*(_third_party(p) for p in import_closure(SCRIPTS / "run_cells.py")))
    assert not used & {"pandas", "pyarrow", "matplotlib"}, used  # scoring GSM8K needs no pandas


def test_report_and_aggregate_closures_do_not_reach_the_measurement_code() -> None:
    assert not _names("aggregate.py") & {"cell.py", "client.py", "server.py", "gpuwatch.py", "figures.py"}
    assert "summaries.py" in _names("aggregate.py") and "summaries.py" in _names("report.py")
    assert not _names("report.py") & {"cell.py", "client.py", "server.py", "gpuwatch.py"}
    assert _names("llama_cpp_build.py") == {"llama_cpp_build.py", "__init__.py", "entry.py", "files.py",
                                            "llama_cpp.py"}


def test_closure_follows_relative_and_absolute_imports(tmp_path: Path) -> None:
    package = tmp_path / "specbench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import x\n")
    (package / "b.py").write_text("from . import c\nx = 1\n")
    (package / "c.py").write_text("import json\n")
    (package / "unused.py").write_text("")
    (tmp_path / "entry.py").write_text("import specbench.a\n")
    assert [p.name for p in import_closure(tmp_path / "entry.py")] == ["entry.py", "__init__.py", "a.py", "b.py",
                                                                         "c.py"]


def test_fingerprint_changes_with_content_not_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first = fingerprint([a, b])
    assert fingerprint([b, a]) == first and len(first) == 64
    a.write_text("x = 1  # edited\n")
    assert fingerprint([a, b]) != first


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


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
