"""Benchmark: does explaining a divergence touch a cell's figures? In one run, side by side: a diverging cell's
tokens/s measured alone, and measured right after its explanation (the untimed requests to a server of the
baseline's setup, as the workflow may schedule them between cells), round after round, with each explanation's own
wall time. Not a test: it prints figures (no timed assertion anywhere).

    python bench/explain_overhead.py                       # tiny random model, CPU: a fresh working directory
    python bench/explain_overhead.py --workdir DIR         # a finished run's directory (its first differing cell)
    python bench/explain_overhead.py --workdir DIR --cell results/cells/local/<models>/essay/ngram-mod/t0.0/r1.json

Run it under the machine's CPU lock on a shared machine (flock /tmp/cpu.lock ...): other work moves tokens/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]

from _common import run_tiny  # noqa: E402

from specbench.core.plan.cells import Cell  # noqa: E402
from specbench.core.records.explanations import explanation_path, reference_repeat  # noqa: E402
from specbench.core.steps.files import read_json  # noqa: E402
from specbench.measure.condition_setup import job_setup  # noqa: E402
from specbench.measure.explain import explain  # noqa: E402
from specbench.measure.runner import run_cells  # noqa: E402

# The tiny random target's essay (its speculative outputs diverge from off's), off and ngram-mod, explained
DIVERGING = {
    "models": {"target": {"tiny": {"seed": 0, "weights": "random"}}},
    "temperatures": [0.0],
    "repeats": 1,
    "max_tokens": 256,
    "select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod"]},
    "measurement": {"max_foreign_cpu": None},
}


def differing_cell(workdir: Path) -> Path:
    """The first cell whose explanation found a difference."""
    for record in sorted((workdir / "results/explanations").rglob("r*.json")):
        explained = read_json(record)
        if explained["first_difference"] is not None:
            return Path(explained["cell"]["path"])
    raise SystemExit(f"no explained divergence under {workdir}/results/explanations")


def baseline_cell(cell: Cell, baseline: str, repeat: int, target_sha256: str) -> Cell:
    """The baseline's cell a cell is compared with: same machine, prompt and target (by sha256), in its models
    folder."""
    bare = Cell(cell.task, baseline, 0.0, repeat, cell.machine, cell.prompt, cell.build, models="*")
    for found in sorted(Path().glob(bare.path)):
        if read_json(found)["provenance"]["model"]["sha256"] == target_sha256:
            return Cell.from_path(str(found))
    raise SystemExit(f"no {baseline} cell of the same target beside {cell.path}")


def measure(cell: Cell, scratch: Path) -> float:
    """The cell measured once more (a fresh server of its condition's setup), as the workflow does: its tokens/s."""
    setup = job_setup(
        read_json(Path(f"results/setup/{cell.models}/{cell.condition}.json")),
        [read_json(Path(f"results/prompts/{cell.task}.json"))],
        scope="fresh",
        server_log=scratch / "cell.server.log",
        gpu_samples=scratch / "cell.gpu.jsonl",
    )
    [record] = run_cells(setup, [cell])
    return float(record["response"]["timings"]["predicted_per_second"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, help="a finished run's working directory (default: a new tiny run)")
    parser.add_argument("--cell", type=Path, help="the cell file to measure (default: the first differing one)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--baseline", default="off", help="the config's baseline condition")
    args = parser.parse_args(argv)
    workdir = args.workdir
    if workdir is None:
        workdir = Path(tempfile.mkdtemp(prefix="specbench-explain-"))
        run_tiny(workdir, DIVERGING, args.cores)
    os.chdir(workdir)  # the setups name their files relative to the run's directory
    path = args.cell or differing_cell(Path("."))
    record = read_json(path)
    cell = Cell.from_path(str(path))
    repeat = reference_repeat(cell.condition, cell.repeat, args.baseline)
    reference = baseline_cell(cell, args.baseline, repeat or 1, record["provenance"]["model"]["sha256"])
    baseline = read_json(Path(f"results/setup/{reference.models}/{args.baseline}.json"))
    reference = Path(reference.path)
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir="."))
    print(
        f"cell {cell.label} (recorded {record['response']['timings']['predicted_per_second']:.1f} tok/s), "
        f"reference {reference}, explanation as in {explanation_path(cell)}"
    )
    print(f"{'round':>5}  {'alone tok/s':>12}  {'after explanation tok/s':>24}  {'explanation wall s':>19}")
    alone, after, walls = [], [], []
    for index in range(1, args.rounds + 1):
        alone.append(measure(cell, scratch))
        start = time.perf_counter()
        explained = explain(path, reference, baseline, scratch / "explain.server.log")
        walls.append(time.perf_counter() - start)
        after.append(measure(cell, scratch))
        print(
            f"{index:>5}  {alone[-1]:>12.1f}  {after[-1]:>24.1f}  {walls[-1]:>19.2f}"
            f"  (difference at token {explained['first_difference']}, {len(explained['requests'])} requests)"
        )
    ratio = statistics.median(after) / statistics.median(alone)
    print(
        f"median: alone {statistics.median(alone):.1f} tok/s, after an explanation {statistics.median(after):.1f} "
        f"tok/s (ratio {ratio:.3f}); an explanation took {statistics.median(walls):.2f} s of wall time, outside "
        "every cell's timed window"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
