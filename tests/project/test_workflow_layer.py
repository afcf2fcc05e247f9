"""The rule files read only what the Snakefile defines before its includes and names of their own (no include order
to keep), and no two of them define one name."""

from __future__ import annotations

import ast
import builtins
import re
import types
from pathlib import Path

import snakemake.api
import snakemake.workflow
from snakemake.parser import parse
from snakemake.sourcecache import LocalSourceFile

from specbench.workflow import rule_params
from support.config import load_config
from support.paths import REPO

# What Snakemake puts in every Snakefile's namespace besides its own module's names
SNAKEMAKE_GLOBALS = {"workflow", "config", "rules", "checkpoints", "scatter", "gather", "storage", "pathvars"}
INCLUDE = re.compile(r'^include:\s*"(?P<path>[^"]+)"', re.MULTILINE)


def _python(path: Path) -> ast.Module:
    """A Snakefile or rule file as the Python Snakemake makes of it."""
    # the parser closes the file it is handed (its Snakefile is a context manager)
    opener = types.SimpleNamespace(open=lambda f, mode="r": open(f.get_path_or_uri(secret_free=True), mode))  # noqa: SIM115
    source, _ = parse(LocalSourceFile(str(path)), types.SimpleNamespace(sourcecache=opener), {})
    return ast.parse(source)


def _defined(tree: ast.AST) -> set[str]:
    """Every name the code binds: assignments, imports, functions, classes, arguments, loop and except variables."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _top_level(body: list[ast.stmt]) -> set[str]:
    """The names a file assigns at its top level (and under its top-level ifs)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.If):
            names |= _top_level(node.body + node.orelse)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _functions(tree: ast.Module) -> list[str]:
    """The functions a file defines (a rule and a `use rule` compile to functions named __rule_* and __userule_*)."""
    functions = (n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    return [name for name in functions if not name.startswith(("__rule", "__userule"))]


def _read(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _rule_files() -> list[Path]:
    return [REPO / m["path"] for m in INCLUDE.finditer((REPO / "Snakefile").read_text())]


def _before_includes(folder: Path) -> set[str]:
    """What the Snakefile defines before its first include."""
    text = (REPO / "Snakefile").read_text()
    first = INCLUDE.search(text)
    assert first is not None
    head = folder / "Snakefile"
    head.write_text(text[: first.start()])
    return _defined(_python(head))


def test_rule_files_read_only_the_snakefile_and_their_own_names(tmp_path: Path) -> None:
    shared = _before_includes(tmp_path) | SNAKEMAKE_GLOBALS | set(vars(snakemake.workflow)) | set(dir(builtins))
    strays = {}
    for path in _rule_files():
        tree = _python(path)
        unknown = _read(tree) - _defined(tree) - shared
        if unknown:
            strays[path.name] = sorted(unknown)
    assert not strays, f"read, but defined neither in the file nor in the Snakefile before its includes: {strays}"


def test_no_two_rule_files_define_one_name() -> None:
    owner: dict[str, str] = {}
    twice = []
    for path in _rule_files():
        for name in _top_level(_python(path).body):
            if name in owner:
                twice.append(f"{name}: {owner[name]} and {path.name}")
            owner.setdefault(name, path.name)
    assert not twice, twice


def test_rule_files_define_no_functions() -> None:
    """The rules' functions are the plan's (specbench.workflow.plan), where ruff and the tests see them."""
    defined = {p.name: _functions(_python(p)) for p in _rule_files()}
    assert not any(defined.values()), defined


def _rule_params(path: Path) -> dict[str, list[str]]:
    """Each rule's params names as its rule file spells them (a `**` expansion counts as the name '**')."""
    params = {}
    for node in _python(path).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        calls = [d for d in node.decorator_list if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)]
        rule = next((c for c in calls if c.func.attr == "rule"), None)
        for call in calls:
            if rule is not None and call.func.attr == "params":
                name = next(k.value.value for k in rule.keywords if k.arg == "name")
                params[name] = [k.arg or "**" for k in call.keywords]
    return params


def test_back_half_params_are_named_in_the_rules_as_their_settings_take_them() -> None:
    """Each back-half rule's params are name=value lines, the names its settings take (rule_params' dict of it)."""
    config = load_config([REPO / "config/config.yaml"])
    expected = {
        "tables": rule_params.tables_params(config),
        "claims": rule_params.claims_params(config),
        "figures": rule_params.figures_params(config),
        "report": rule_params.report_params(config, expected_cells=[], config_sha256="", workflow_commit=""),
    }
    written = _rule_params(REPO / "rules/report.smk")
    assert {rule: sorted(written[rule]) for rule in expected} == {rule: sorted(p) for rule, p in expected.items()}
