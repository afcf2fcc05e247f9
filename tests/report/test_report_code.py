"""The report rule's code is what renders: it reads the tables, the judged claims and the figures' index from their
files, so no judge, figure or writer of those files is in its code input (the import closure of its entry script,
rules/common.smk's ``code``), and an edit of one reruns the report only through the file it changes."""

from __future__ import annotations

import ast

from specbench.core.plan.code import import_closure
from support.paths import REPO

SCRIPTS = REPO / "scripts"
PACKAGE = SCRIPTS / "specbench"


def _closure(script: str) -> set[str]:
    """An entry script's code input, as paths below the package ('report.py' for the script itself)."""
    return {
        p.relative_to(PACKAGE).as_posix() if p.is_relative_to(PACKAGE) else p.name
        for p in import_closure(SCRIPTS / script)
    }


def _step(script: str) -> set[str]:
    """The package modules an entry script imports itself, the entry helpers every script shares (core/steps)
    aside: the step that writes its rule's files."""
    tree = ast.parse((SCRIPTS / script).read_text())
    found = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    modules = {m.removeprefix("specbench.").replace(".", "/") + ".py" for m in found if m.startswith("specbench.")}
    return {m for m in modules if not m.startswith("core/steps/")}


def test_the_reports_code_input_has_no_judge_figure_or_writer() -> None:
    report = _closure("report.py")
    judging = {p for p in _closure("claims.py") if p.startswith("claims/")} - {"claims/__init__.py", "claims/claim.py"}
    judges = {f"claims/{p.name}" for p in (PACKAGE / "claims").glob("*judge*.py")}
    assert "claims/evaluate.py" in judging and judges and judges <= judging
    assert not judging & report, judging & report
    drawing = {p for p in _closure("figures.py") if p.startswith("report/figures/")}
    assert len(drawing) > 1 and not {p for p in report if p.startswith("report/figures/")}
    writers = _step("tables.py") | _step("claims.py") | _step("figures.py")
    assert len(writers) == 3 and not writers & report, writers & report
    assert {"core/results/judged.py", "report/figure_index.py", "core/results/tables.py"} <= report


def test_the_report_renders_without_matplotlib() -> None:
    """Drawing is the figures rule's: the report's text needs no plotting library."""
    for path in import_closure(SCRIPTS / "report.py"):
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in imported if m.split(".")[0] == "matplotlib"}, path
