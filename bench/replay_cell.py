"""Benchmark: one cell measured by the pipeline and by hand, interleaved. Each round reruns the cell with Snakemake
(``--forcerun`` of its rule), then starts a llama-server of its own with the argv the new record holds and sends the
record's /completion body again (specbench.measure.replay). Prints, per round, both decode rates and whether the hand
run gave the record's tokens, then the spread of each. Not a test: it prints figures.

    python bench/replay_cell.py --workdir <run dir> --cell results/cells/local/<models>/essay.trees/off/t0.0/r1.json \\
        --configfile config/tiny.yaml config/smollm2.yaml --rounds 3

Run it under the machine's CPU lock: other work makes both rates drop (the cell rejects contended attempts, the hand
run does not check).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]

from _common import spread  # noqa: E402

from specbench.core.steps.files import read_json  # noqa: E402
from specbench.measure.replay import replay  # noqa: E402
from support.workflow import snakemake_argv  # noqa: E402


def pipeline_run(workdir: Path, cell: str, configs: list[str], rule: str) -> dict:
    """The cell measured again by the workflow; its new record."""
    argv = snakemake_argv(workdir, [cell], configs, "--forcerun", rule)
    subprocess.run(argv, check=True, cwd=workdir, env=os.environ, capture_output=True)
    return read_json(workdir / cell)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True, help="the working directory the workflow ran in")
    parser.add_argument("--cell", required=True, help="the cell file, relative to the working directory")
    parser.add_argument("--configfile", nargs="+", required=True, help="the configs the workflow ran with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rule", default="cell", help="the cell's rule (cell; a warm cell is one of a sequence)")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    configs = [str(Path(c).resolve()) for c in args.configfile]
    pipeline, by_hand = [], []
    print(f"{'round':>5}  {'pipeline tok/s':>14}  {'by hand tok/s':>13}  {'same tokens':>11}  first difference")
    for round_ in range(1, args.rounds + 1):
        record = pipeline_run(workdir, args.cell, configs, args.rule)
        again = replay(record, workdir, workdir / "logs" / "replay" / f"round{round_}.server.log")
        pipeline.append(again["recorded_tokens_per_s"])
        by_hand.append(again["tokens_per_s"])
        print(
            f"{round_:>5}  {again['recorded_tokens_per_s']:>14.1f}  {again['tokens_per_s']:>13.1f}  "
            f"{'yes' if again['identical'] else 'no':>11}  {again['first_difference']}"
        )
    print(
        f"pipeline: {spread(pipeline, 1)}; by hand: {spread(by_hand, 1)}; "
        f"by hand / pipeline (means): {statistics.fmean(by_hand) / statistics.fmean(pipeline):.3f}"
    )
    print("argv of the last hand run:", " ".join(again["argv"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
