"""The code behind a rule: an entry script's import closure within the specbench package, and its fingerprint.

Rules declare these files as inputs, so editing a module reruns exactly the rules whose scripts import it
(directly or through other modules), and cached rules' keys include them; cell records carry the fingerprint."""

from __future__ import annotations

import ast
import functools
import hashlib
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import write_json_atomic

PACKAGE = "specbench"


def _module_file(package_root: Path, dotted: str) -> Path | None:
    """The file of ``specbench.<dotted>``: a module ``a/b.py`` or a package ``a/b/__init__.py`` ('' is the package
    root's ``__init__.py``); None when there is neither."""
    base = package_root.joinpath(*dotted.split(".")) if dotted else package_root
    candidates = (base.with_suffix(".py"), base / "__init__.py") if dotted else (base / "__init__.py",)
    return next((c for c in candidates if c.is_file()), None)


def _own_package(path: Path, package_root: Path) -> list[str]:
    """The package a file belongs to, as parts below the package root ([] for the root and for entry scripts)."""
    try:
        relative = path.parent.relative_to(package_root)
    except ValueError:
        return []
    return list(relative.parts)


@functools.cache
def _imported_modules(path: Path, package_root: Path) -> frozenset[str]:
    """The specbench modules one file imports, as dotted names below the package ('' is the package itself):
    ``import specbench.a.b``, ``from specbench.a import b`` (b a module or a name of a), ``from .b import x``,
    ``from ..c import y`` and ``from . import d`` at any depth. Cached per file: the workflow asks for the closures
    of a dozen scripts that share most modules."""
    found: set[str] = set()
    own = _own_package(path, package_root)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(
                a.name.removeprefix(PACKAGE).lstrip(".")
                for a in node.names
                if a.name == PACKAGE or a.name.startswith(f"{PACKAGE}.")
            )
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            if node.module != PACKAGE and not (node.module or "").startswith(f"{PACKAGE}."):
                continue
            parts = (node.module or "").split(".")[1:]
        else:
            if node.level - 1 > len(own):
                continue  # above the package: not ours
            parts = own[: len(own) - (node.level - 1)] + (node.module.split(".") if node.module else [])
        base = ".".join(parts)
        found.add(base)
        for alias in node.names:  # `from a import b` imports the module a.b when there is one
            child = f"{base}.{alias.name}" if base else alias.name
            if _module_file(package_root, child) is not None:
                found.add(child)
    return frozenset(found)


def _with_parents(dotted: str) -> list[str]:
    """A module and every package above it (importing a.b.c runs the package root's, a's and a.b's __init__)."""
    parts = dotted.split(".") if dotted else []
    return [".".join(parts[:i]) for i in range(len(parts) + 1)]


@functools.cache
def import_closure(script: Path) -> tuple[Path, ...]:
    """The script and every specbench file it needs, transitively: each imported module and the ``__init__.py`` of
    every package on its path (sorted). A script outside the package finds it beside itself (scripts/specbench)."""
    package_root = script.parent / PACKAGE if (script.parent / PACKAGE).is_dir() else _package_root_of(script)
    seen: set[Path] = {script}
    todo = [script]
    while todo:
        for dotted in _imported_modules(todo.pop(), package_root):
            for name in _with_parents(dotted):
                module = _module_file(package_root, name)
                if module is not None and module not in seen:
                    seen.add(module)
                    todo.append(module)
    return tuple(sorted(seen))


def _package_root_of(path: Path) -> Path:
    """The top of the package that holds ``path``: its folder, and upwards while the folder above is a package."""
    root = path.parent
    while (root.parent / "__init__.py").is_file():
        root = root.parent
    return root


def _label(path: Path) -> str:
    """A file's name in a fingerprint: its path from the package's folder on ('specbench/engines/server_process.py'), or
    its bare name outside the package (an entry script), so that a copy of the workflow elsewhere fingerprints
    the same while two modules of one name in different sub-packages stay apart."""
    inside = [parent for parent in path.parents if parent.name == PACKAGE and (parent / "__init__.py").is_file()]
    return path.relative_to(inside[0].parent).as_posix() if inside else path.name


def fingerprint(paths: Iterable[str | Path]) -> str:
    """sha256 over the files' labels (see ``_label``) and contents (order-independent)."""
    digest = hashlib.sha256()
    for path in sorted((Path(p) for p in paths), key=_label):
        digest.update(_label(path).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def manifest(entry: str, paths: Iterable[Path]) -> dict[str, object]:
    """An entry script's code as a record: each file's sha256 and the ``fingerprint`` over all of them."""
    files = sorted(Path(p) for p in paths)
    return {
        "entry": entry,
        "files": {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
        "fingerprint": fingerprint(files),
    }


# What a clone of the workflow holds (the workflow profiles too: they select the logger plugin and set resources)
WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "envs", "report", "profiles")


def workflow_commit(base: Path) -> str:
    """The workflow's git commit, with '-dirty' when the workflow's own tracked files (not results or other files
    of the clone) have uncommitted changes; 'unknown' outside git."""
    try:
        head = subprocess.run(["git", "-C", str(base), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "-C", str(base), "status", "--porcelain", "--untracked-files=no", "--", *WORKFLOW_FILES],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def code_manifest_step(entry: str, code: Sequence[Path], out: Path, log: Path) -> None:
    """Rule code_manifest: the manifest of an entry script's code, one input that stands for its files."""
    with logged_to(log):
        record = manifest(entry, code)
        write_json_atomic(out, record)
        print(f"{entry}: {len(record['files'])} files, fingerprint {record['fingerprint']}")
