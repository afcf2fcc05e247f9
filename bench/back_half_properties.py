"""Benchmark: the back-half property of tests/report/test_back_half_properties.py (summaries, claims and
predictions, figures, Markdown and HTML report, provenance on generated per-cell tables, support.back_half) run on
many more tables than CI tries. Prints how many tables it tried, how many distinct shapes
(support.cell_tables.shape_of) and the time; exits 1 with the failing table's draws on the first violation. Not a
test: it prints figures.

    python bench/back_half_properties.py                      # 300 tables, derandomized (the same ones every time)
    python bench/back_half_properties.py --examples 2000 --seed 7
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]

from hypothesis import given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from support.back_half import (  # noqa: E402
    BENCH_PROFILE,
    SETUPS,
    check_back_half,
)
from support.cell_tables import GeneratedRun, cell_tables, shape_of  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=300, help="tables to try (default 300)")
    parser.add_argument("--seed", type=int, help="a random seed instead of the derandomized sequence")
    args = parser.parse_args()
    tried, shapes = 0, set()

    @settings(settings.get_profile(BENCH_PROFILE), max_examples=args.examples, derandomize=args.seed is None)
    @given(run=cell_tables(), setup=st.sampled_from(SETUPS))
    def prop(run: GeneratedRun, setup: str) -> None:
        nonlocal tried
        tried += 1
        shapes.add((shape_of(run), setup))
        with tempfile.TemporaryDirectory(prefix="back-half-") as root:
            check_back_half(run, Path(root), setup)

    started = time.monotonic()
    failed = False
    try:
        (seed(args.seed)(prop) if args.seed is not None else prop)()
    except Exception as error:  # the property's violation, with hypothesis's report of the table
        print(f"FAILED: {type(error).__name__}: {error}", file=sys.stderr)
        failed = True
    wall = time.monotonic() - started
    print(
        f"back half: {tried} tables tried, {len(shapes)} distinct shapes, {wall:.0f} s "
        f"({wall / max(tried, 1):.2f} s per table)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
