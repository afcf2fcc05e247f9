"""The rule names the package uses (specbench.core.plan.rule_names) and those the profiles set are rules of the
workflow, and every rule whose script starts a server or a llama.cpp build has the machine to itself under the
default profile.

Which scripts start one is read from the code: a static walk from the entry script through the package's functions
it can reach by name, looking for a process started to outlive the call (``subprocess.Popen``: a server) or a
``cmake --build`` command line."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import yaml

from specbench.core.plan import rule_names
from support.paths import REPO
from support.rules import all_rule_names, workflow_rules

SCRIPTS = REPO / "scripts"
PACKAGE = "specbench"
PROFILES = REPO / "profiles"

# --- what a rule's script can reach, by name ---

Binding = tuple[Path, str | None]  # a module file, and a name in it (None: the module itself)


def _module_file(dotted: str) -> Path | None:
    base = SCRIPTS.joinpath(*dotted.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


@cache
def _parsed(path: Path) -> tuple[ast.Module, dict[str, ast.AST], dict[str, Binding]]:
    """A file's tree, its top-level defs, classes and assigned names (a registry of engines is a dict of instances:
    reaching it reaches each class, and so its methods), and what its package imports bind."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    defs: dict[str, ast.AST] = {}
    bindings: dict[str, Binding] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defs.update({t.id: node for t in targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == PACKAGE:
            for alias in node.names:
                submodule = _module_file(f"{node.module}.{alias.name}")
                origin = (submodule, None) if submodule else (_module_file(node.module), alias.name)
                bindings[alias.asname or alias.name] = origin
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.split(".")[0] == PACKAGE:
                    bindings[alias.asname] = (_module_file(alias.name), None)
    return tree, defs, bindings


def _referenced(path: Path, node: ast.AST) -> Iterator[tuple[Path, str]]:
    """The package's definitions ``node`` names: its module's own, imported ones, and ``module.name``."""
    _, defs, bindings = _parsed(path)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in defs:
            yield path, sub.id
        elif isinstance(sub, ast.Name) and sub.id in bindings and bindings[sub.id][1] is not None:
            yield bindings[sub.id]
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
            module, name = bindings.get(sub.value.id, (None, ""))
            if module is not None and name is None:
                yield module, sub.attr


def _starts(node: ast.AST) -> str | None:
    """What ``node`` itself starts: a server (a process left running, ``subprocess.Popen``) or a build."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "Popen":
            return "a server"
        if isinstance(sub, ast.List | ast.Tuple):
            words = [e.value for e in sub.elts if isinstance(e, ast.Constant)]
            if words[:1] == ["cmake"] and "--build" in words:
                return "a build"
    return None


def _methods(node: ast.AST) -> dict[str, ast.AST]:
    """A class's methods by name (none for anything else)."""
    if not isinstance(node, ast.ClassDef):
        return {}
    return {m.name: m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}


def _attributes(node: ast.AST) -> set[str]:
    """Every ``x.name`` that ``node`` spells: the methods it may call."""
    return {sub.attr for sub in ast.walk(node) if isinstance(sub, ast.Attribute)}


def started_by(script: Path) -> dict[str, str]:
    """{'module.py:function': what it starts} for every definition of the package that ``script`` can reach by name
    and that starts a server or a build. A class reached (an engine in a registry) reaches those of its methods whose
    name the walk meets as an attribute (``engine.serve``), not every method it has."""
    tree = _parsed(script)[0]
    todo, seen, found = list(_referenced(script, tree)), set(), {}
    called, classes = _attributes(tree), []
    while todo:
        path, name = todo.pop()
        if (path, name) in seen:
            continue
        seen.add((path, name))
        _, defs, bindings = _parsed(path)
        owner, _, method = name.partition(".")
        node = _methods(defs[owner]).get(method) if method and owner in defs else defs.get(name)
        if node is not None and _methods(node):  # a class: its methods as they are called
            classes.append((path, name, _methods(node)))
            todo.extend((path, f"{name}.{m}") for m in _methods(node) if m in called)
            node = ast.Module(body=[b for b in node.body if b not in _methods(node).values()], type_ignores=[])
        if node is not None:
            if what := _starts(node):
                found[f"{path.relative_to(SCRIPTS)}:{name}"] = what
            todo.extend(_referenced(path, node))
            new = _attributes(node) - called
            called |= new
            todo.extend((p, f"{c}.{m}") for p, c, methods in classes for m in methods if m in new)
        elif name in bindings and bindings[name][1] is not None:  # a name the module imports and passes on
            todo.append(bindings[name])
    return found


def package_rule_names() -> set[str]:
    """Every rule name the package spells: the string constants of specbench.core.plan.rule_names."""
    return {value for key, value in vars(rule_names).items() if key.isupper() and isinstance(value, str)}


def _profile(name: str) -> dict:
    return yaml.safe_load((PROFILES / name / "config.yaml").read_text())


def alone_in_default_profile() -> set[str]:
    """The rules the default profile gives the whole of its global resource machine_share."""
    profile = _profile("default")
    whole = profile["resources"]["machine_share"]
    return {rule for rule, res in profile["set-resources"].items() if (res or {}).get("machine_share") == whole}


# --- tests ---


def test_every_rule_name_the_package_uses_is_a_rule_of_the_workflow() -> None:
    names = package_rule_names()
    made_of_them = {*rule_names.SCOPE_OF_CELL_RULE, *rule_names.TINY_CHECKPOINT.values(), *rule_names.ALONE_RULES}
    assert made_of_them <= names, sorted(made_of_them - names)
    missing = sorted(names - all_rule_names())
    assert not missing, f"specbench.core.plan.rule_names names rules the workflow does not define: {missing}"


def test_every_rule_the_profiles_set_is_a_rule_of_the_workflow() -> None:
    for profile in ("default", "slurm"):
        settings = _profile(profile)
        named = {*settings.get("set-threads", {}), *settings.get("set-resources", {})}
        assert named, profile
        assert named <= all_rule_names(), (profile, sorted(named - all_rule_names()))


def test_the_walk_finds_the_scripts_that_start_a_server_or_a_build() -> None:
    """The detector itself: the cell script starts a server, the build script a build, the install (beside the build
    in one module) and the quantization neither."""
    assert set(started_by(SCRIPTS / "run_cells.py").values()) == {"a server"}
    assert set(started_by(SCRIPTS / "llama_cpp_build.py").values()) == {"a build"}
    assert started_by(SCRIPTS / "llama_cpp_install.py") == started_by(SCRIPTS / "quantize.py") == {}


def test_every_rule_that_starts_a_server_or_a_build_has_the_machine_to_itself() -> None:
    """A rule whose script starts a server or a build is in the default profile's set that claims the whole of
    machine_share, so no other job runs beside it; that set is the package's ALONE_RULES."""
    starting = {rule.name: started_by(rule.script) for rule in workflow_rules()}
    starting = {name: found for name, found in starting.items() if found}
    assert {"cell", "explain_divergence", "llama_cpp_build"} <= set(starting), sorted(starting)
    alone = alone_in_default_profile()
    missing = {name: found for name, found in starting.items() if name not in alone}
    assert not missing, (
        f"these rules start a server or a build but do not claim the whole of machine_share in "
        f"profiles/default/config.yaml's set-resources; give each the whole there, and add it to "
        f"specbench.core.plan.rule_names.ALONE_RULES: {missing}"
    )
    assert alone == set(rule_names.ALONE_RULES), sorted(alone ^ set(rule_names.ALONE_RULES))
    assert set(rule_names.SERVER_RULES) >= {name for name, found in starting.items() if "a server" in found.values()}
