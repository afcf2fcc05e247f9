"""What reruns after an edit: `snakemake -n` job counts per invalidation case, on a small tiny-model matrix.

Runs a copy of a workflow (this checkout, or any other, e.g. an older commit for a before/after comparison) once,
then for each case makes a real edit, takes the dry run's job counts, and undoes the edit (content and mtime); prints
a table of the jobs per rule each case would rerun, and a second of why each of those rules reruns, from the dry
run's reasons: ``code`` where the edited module is the rule's own code (an input), ``files`` where it reads a file
another rerun job writes. The back half's cases (the default):

* a figure (report/figures/multiplier_figure.py)  * a judge (claims/sizes_judge.py)  * a summary (analysis/summaries.py)

and with ``--every-case`` also: measurement code (the client), the GSM8K scorer, the server log's parser, and trying
another model in the same directory (it fails verification) and switching back. Modules are found by name anywhere in
the package, so an older checkout (modules elsewhere) is measured with the same rows.

    python bench/invalidation.py                          # this checkout
    python bench/invalidation.py --workflow /tmp/old      # a checkout of another commit (git worktree add ...)
    python bench/invalidation.py --reuse /tmp/invalidation-x/work   # start from a kept run's work (no new build)
    python bench/invalidation.py --touch                  # every output made empty, nothing run (a minute)

``--touch`` replaces the first run: every output the run would make (``snakemake --summary``) is created empty (a
folder where its name has no suffix), all with one time, no job run. What a dry run reruns after an edit depends on
the DAG and the files' times only, so the back half's cases read as after a real run (not the other cases: trying
another model needs a real GGUF).

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
import time
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


Why = dict[str, str]  # rule -> why it reruns


def _why(text: str, edited: Path) -> Why:
    """Per rule the dry run would run (its last job), why: 'code' (the edited file is one of its inputs: its code),
    'files' (an input another job remakes: the reason Snakemake gives first), or both."""
    out = {}
    for rule, block in re.findall(r"^(?:local)?rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.MULTILINE | re.DOTALL):
        inputs = next(iter(re.findall(r"^\s*input: (.*)$", block, re.MULTILINE)), "")
        reason = next(iter(re.findall(r"^\s*reason: (.*)$", block, re.MULTILINE)), "")
        kinds = ["code"] * (str(edited) in inputs.split(", ")) + ["files"] * ("updated by another job" in reason)
        out[rule] = "+".join(kinds) or "other"
    return out


def _dry_run(workflow: Path, work: Path, configs: list[Path]) -> str:
    result = _snakemake(workflow, work, configs, "--dry-run")
    if result.returncode != 0:
        raise SystemExit(f"dry run failed:\n{result.stderr[-3000:]}")
    return result.stdout + result.stderr


def _plan(workflow: Path, work: Path, configs: list[Path]) -> dict[str, int]:
    return _counts(_dry_run(workflow, work, configs))


def _mark_done(workflow: Path, work: Path, configs: list[Path]) -> subprocess.CompletedProcess:
    """Every output of the run created empty, all with one time (newer than the workflow's files): up to date."""
    listing = _snakemake(workflow, work, configs, "--summary")
    now = time.time()
    for line in listing.stdout.splitlines()[1:] if listing.returncode == 0 else []:
        path = work / line.split("\t")[0]
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        else:
            path.mkdir(parents=True, exist_ok=True)
        os.utime(path, (now, now))
    return listing


def _edit_and_plan(path: Path, workflow: Path, work: Path, configs: list[Path]) -> tuple[dict[str, int], Why]:
    """The jobs per rule a dry run would run after an edit of ``path``, and why each rule reruns (``_why``)."""
    text, stat = path.read_text(), path.stat()
    path.write_text(text + "\n# edited by bench/invalidation.py\n")
    try:
        planned = _dry_run(workflow, work, configs)
        return _counts(planned), _why(planned, path)
    finally:
        path.write_text(text)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _module(package: Path, names: str) -> Path | None:
    """The first package module (at the top or in a sub-package) that one of these '|'-separated file names or
    relative paths ends with, so an older checkout's layout finds its own (None when there is none)."""
    for name in names.split("|"):
        found = sorted(p for p in package.rglob("*.py") if p.as_posix().endswith("/" + name))
        if found:
            return found[0]
    return None


# (row label, module file names) of each edit case: today's layout first, then an older checkout's
BACK_HALF_CASES = (
    ("a figure", "figures/multiplier_figure.py|figures/cell_figures.py|figures/run.py|figures.py"),
    ("a judge", "claims/sizes_judge.py|judges.py"),
    ("a summary", "analysis/speed.py|summaries.py"),
)
OTHER_CASES = (("measurement code", "client.py"), ("GSM8K scorer", "gsm8k.py"), ("server-log parser", "server_log.py"))


def table(rows: list[tuple[str, dict[str, int]]] | list[tuple[str, dict[str, str]]]) -> str:
    """The cases as rows, every rule any case reruns as a column (its job count, or why; '.' for none)."""
    rules = sorted({rule for _, counts in rows for rule in counts})
    label_width = max(len(label) for label, _ in rows)
    widths = [max(len(rule), 3, *(len(str(counts.get(rule, "."))) for _, counts in rows)) for rule in rules]
    lines = [" " * label_width + "  " + "  ".join(r.rjust(w) for r, w in zip(rules, widths, strict=True))]
    for label, counts in rows:
        cells = [str(counts.get(rule, ".")).rjust(w) for rule, w in zip(rules, widths, strict=True)]
        lines.append(label.ljust(label_width) + "  " + "  ".join(cells))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--every-case", action="store_true", help="also the measurement cases and another model")
    parser.add_argument("--keep", action="store_true", help="keep the run's copy (its results) and say where")
    parser.add_argument("--reuse", type=Path, help="a kept run's work folder to start from (the first run updates it)")
    parser.add_argument("--touch", action="store_true", help="mark every output done instead of running the jobs")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="invalidation-"))
    workflow, work = root / "workflow", root / "work"
    workflow.mkdir()
    for name in FILES:
        source = args.workflow / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, workflow / name)
    if args.reuse:
        shutil.copytree(args.reuse, work, symlinks=True)
    else:
        work.mkdir()
    override = work / "bench.yaml"
    override.write_text(yaml.safe_dump(MATRIX))
    configs = [workflow / "config" / "tiny.yaml", override]
    if args.touch and args.every_case:
        parser.error("--every-case needs a real run (another model's GGUF): leave out --touch")
    first = _mark_done(workflow, work, configs) if args.touch else _snakemake(workflow, work, configs)
    if first.returncode != 0:
        raise SystemExit(f"the first run failed:\n{first.stderr[-3000:]}")
    package = workflow / "scripts" / "specbench"
    rows = [("nothing edited", _plan(workflow, work, configs))]
    reasons = []
    for label, name in (*BACK_HALF_CASES, *(OTHER_CASES if args.every_case else ())):
        path = _module(package, name)
        counts, why = _edit_and_plan(path, workflow, work, configs)
        rows.append((f"{label} ({path.relative_to(package)})", counts))
        reasons.append((rows[-1][0], {rule: kind for rule, kind in why.items() if rule != "all"}))
    if args.every_case:
        rows.append(_another_model(workflow, work, configs))
    print(f"workflow: {args.workflow}  (matrix: {MATRIX['select']}, {MATRIX['repeats']} repeats)")
    print("jobs per rule that a dry run would run after each edit:")
    print(table(rows))
    print("why each rule reruns (code: the edited module is its code; files: it reads what a rerun job rewrites):")
    print(table(reasons))
    if args.keep:
        print(f"kept: {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _another_model(workflow: Path, work: Path, configs: list[Path]) -> tuple[str, dict[str, int]]:
    """Try the draft GGUF as the target in the same directory (it fails verification), then plan the study's again."""
    drafts = sorted(work.glob("resources/models/**/*.gguf"))
    draft = next(p for p in drafts if "draft" in str(p))
    other = work / "other.yaml"
    other.write_text(yaml.safe_dump({"models": {"target": {"source": "gguf", "gguf": {"path": str(draft)}}}}))
    tried = _snakemake(workflow, work, [*configs, other])
    return (f"another model tried (exit {tried.returncode}), then back", _plan(workflow, work, configs))


if __name__ == "__main__":
    raise SystemExit(main())
