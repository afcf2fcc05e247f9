"""The code behind a rule: an entry script's import closure within the specbench package, and its fingerprint.

Rules declare these files as inputs, so editing a module reruns exactly the rules whose scripts import it
(directly or through other modules), and cached rules' keys include them; cell records carry the fingerprint."""

from __future__ import annotations

import ast
import functools
import hashlib
import subprocess
from collections.abc import Iterable
from pathlib import Path

PACKAGE = "specbench"


@functools.cache
def _imported_modules(path: Path) -> frozenset[str]:
    """Names of the specbench modules one file imports (``from specbench.x``, ``from .x``, ``from . import x``).
    Cached per file: the workflow asks for the closures of a dozen scripts that share most modules."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and module.split(".")[0] != PACKAGE:
                continue
            base = module.removeprefix(PACKAGE).lstrip(".")
            if base:
                found.add(base.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith(f"{PACKAGE}."))
    return frozenset(found)


@functools.cache
def import_closure(script: Path) -> tuple[Path, ...]:
    """The script and every specbench module it needs, transitively (sorted; the package's __init__ included)."""
    package = script.parent / PACKAGE if (script.parent / PACKAGE).is_dir() else script.parent
    seen: set[Path] = {script}
    todo = [script]
    while todo:
        for name in _imported_modules(todo.pop()):
            module = package / f"{name}.py"
            if module.is_file() and module not in seen:
                seen.add(module)
                todo.append(module)
    init = package / "__init__.py"
    if len(seen) > 1 and init.is_file():
        seen.add(init)
    return tuple(sorted(seen))


def fingerprint(paths: Iterable[str | Path]) -> str:
    """sha256 over the files' names and contents (order-independent)."""
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def manifest(entry: str, paths: Iterable[Path]) -> dict[str, object]:
    """An entry script's code as a record: each file's sha256 and the ``fingerprint`` over all of them."""
    files = sorted(Path(p) for p in paths)
    return {"entry": entry, "files": {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
            "fingerprint": fingerprint(files)}


WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "envs", "report")


def workflow_commit(base: Path) -> str:
    """The workflow's git commit, with '-dirty' when the workflow's own tracked files (not results or other files
    of the clone) have uncommitted changes; 'unknown' outside git."""
    try:
        head = subprocess.run(["git", "-C", str(base), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True)
        dirty = subprocess.run(["git", "-C", str(base), "status", "--porcelain", "--untracked-files=no", "--",
                                *WORKFLOW_FILES], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
