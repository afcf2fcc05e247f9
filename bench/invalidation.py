"""What reruns after an edit: `snakemake -n` job counts per invalidation case, on a small tiny-model matrix.

Runs a copy of a workflow (this checkout, or any other, e.g. an older commit for a before/after comparison) once,
then for each case makes a real edit, prints the dry run's job counts, and undoes the edit (content and mtime):

* measurement code (the client)  * the GSM8K scorer  * the server log's parser  * the summaries
  * report code (the figures)  * trying another model in the same directory (it fails verification) and switching
  back. Modules are found by name anywhere in the package, so an older checkout (modules side by side, before the
  sub-packages) is measured with the same rows.

    python bench/invalidation.py                          # this checkout
    python bench/invalidation.py --workflow /tmp/old      # a checkout of another commit (git worktree add ...)

The llama.cpp build comes from the between-workflow cache (SNAKEMAKE_OUTPUT_CACHE, default the tests' cache).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FILES = ("Snakefile", "rules", "scripts", "config", "envs", "report")
CACHE = (
    Path(os.environ.get("SPECBENCH_TEST_CACHE", Path.home() / ".cache" / "specbench-tests")) / "snakemake-output-cache"
)
# dflash is selected so that the draft GGUF (the "another model" case's target) is made
MATRIX = {
    "name": "invalidation bench",
    "select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod", "mtp", "dflash"]},
    "temperatures": [0.0],
    "repeats": 2,
    "max_tokens": 32,
}


def _snakemake(workflow: Path, work: Path, configs: list[Path], *extra: str) -> subprocess.CompletedProcess:
    CACHE.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "snakemake",
        "all",
        "--snakefile",
        str(workflow / "Snakefile"),
        "--directory",
        str(work),
        "--cores",
        "2",
        "--cache",
        *extra,
        "--configfile",
        *map(str, configs),
    ]
    return subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, "SNAKEMAKE_OUTPUT_CACHE": str(CACHE)}
    )


def _counts(text: str) -> dict[str, int]:
    block = text.split("Job stats:")[1] if "Job stats:" in text else ""
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)$", block, re.MULTILINE) if m[0] != "total"}


def _plan(workflow: Path, work: Path, configs: list[Path]) -> dict[str, int]:
    result = _snakemake(workflow, work, configs, "--dry-run")
    if result.returncode != 0:
        raise SystemExit(f"dry run failed:\n{result.stderr[-3000:]}")
    return _counts(result.stdout + result.stderr)


def _edit_and_plan(path: Path, workflow: Path, work: Path, configs: list[Path]) -> dict[str, int]:
    text, stat = path.read_text(), path.stat()
    path.write_text(text + "\n# edited by bench/invalidation.py\n")
    try:
        return _plan(workflow, work, configs)
    finally:
        path.write_text(text)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _module(package: Path, name: str) -> Path | None:
    """The package module of that file name, at the top or in a sub-package (None when there is none)."""
    return next(iter(sorted(package.rglob(name))), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="invalidation-"))
    workflow, work = root / "workflow", root / "work"
    workflow.mkdir()
    for name in FILES:
        source = args.workflow / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, workflow / name)
    work.mkdir()
    override = work / "bench.yaml"
    override.write_text(yaml.safe_dump(MATRIX))
    configs = [workflow / "config" / "tiny.yaml", override]
    first = _snakemake(workflow, work, configs)
    if first.returncode != 0:
        raise SystemExit(f"the first run failed:\n{first.stderr[-3000:]}")
    package = workflow / "scripts" / "specbench"
    rows = [("nothing edited", _plan(workflow, work, configs))]
    for label, name in (
        ("measurement code", "client.py"),
        ("GSM8K scorer", "gsm8k.py"),
        ("server-log parser", "server_log.py" if _module(package, "server_log.py") else "parse.py"),
        ("summaries", "summaries.py"),
        ("report code", "figures.py"),
    ):
        path = _module(package, name)
        rows.append((f"{label} ({path.relative_to(package)})", _edit_and_plan(path, workflow, work, configs)))
    drafts = sorted(work.glob("resources/models/**/*.gguf"))
    draft = next(p for p in drafts if "draft" in str(p))
    other = work / "other.yaml"
    other.write_text(yaml.safe_dump({"models": {"target": {"source": "gguf", "gguf": {"path": str(draft)}}}}))
    tried = _snakemake(workflow, work, [*configs, other])
    rows.append((f"another model tried (exit {tried.returncode}), then back", _plan(workflow, work, configs)))
    print(f"workflow: {args.workflow}  (matrix: {MATRIX['select']}, {MATRIX['repeats']} repeats)")
    for label, counts in rows:
        print(f"  {label:52s} {counts or 'nothing to do'}")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
