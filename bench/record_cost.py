"""Benchmark: what keeping the server's counters and the stream's chunk arrivals costs. For every cell record of a
finished run: its bytes as written, and as written without ``server.metrics`` and the chunk arrivals (what a
version 8 record held); then the time to build the per-cell table from all of them, with and without those fields
(median of several builds). Not a test: it prints figures.

    python bench/record_cost.py --workdir DIR [--builds 5]

Run it under the machine's CPU lock on a shared machine (flock /tmp/cpu.lock ...).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from specbench.analysis.record_reader import as_current  # noqa: E402
from specbench.analysis.record_rows import cell_table  # noqa: E402
from specbench.core.steps.files import read_json  # noqa: E402

NEW_TIMING = ("chunk_ms", "chunk_tokens")


def as_written(record: dict) -> int:
    """The bytes ``write_json_atomic`` writes for the record."""
    return len((json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))


def without_new_fields(record: dict) -> dict:
    """The record without the counters and the chunk arrivals, as a version 8 record."""
    old = copy.deepcopy(record)
    old["server"].pop("metrics", None)
    for key in NEW_TIMING:
        old["response"]["client_timing"].pop(key, None)
    old["record_version"] = 8
    return old


def build_time(records: list[tuple[str, dict]], builds: int) -> float:
    """Median seconds of ``cell_table`` over the records."""
    times = []
    for _ in range(builds):
        start = time.perf_counter()
        cell_table(records, "off")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True, help="a finished run's working directory")
    parser.add_argument("--builds", type=int, default=5)
    args = parser.parse_args(argv)
    paths = sorted((args.workdir / "results/cells").rglob("r*.json"))
    records = [(str(p.relative_to(args.workdir)), read_json(p)) for p in paths]
    if not records:
        raise SystemExit(f"no cell records under {args.workdir}/results/cells")
    now = [as_written(r) for _, r in records]
    before = [as_written(without_new_fields(r)) for _, r in records]
    chunks = [len(r["response"]["client_timing"].get("chunk_ms") or []) for _, r in records]
    print(f"{len(records)} cell records; chunks per cell: median {statistics.median(chunks):.0f}, max {max(chunks)}")
    print(
        f"bytes per cell: without the new fields median {statistics.median(before):.0f} (mean "
        f"{statistics.fmean(before):.0f}); with them median {statistics.median(now):.0f} (mean "
        f"{statistics.fmean(now):.0f}); added per cell: median "
        f"{statistics.median(n - b for n, b in zip(now, before, strict=True)):.0f} "
        f"({statistics.fmean(now) / statistics.fmean(before) - 1:+.1%} of the mean record)"
    )
    old = [(path, as_current(without_new_fields(r))) for path, r in records]
    build_time(old, 1)  # imports and caches warm
    t_old, t_now = build_time(old, args.builds), build_time(records, args.builds)
    print(
        f"table build ({args.builds} builds, median): without the new fields {t_old * 1000:.0f} ms, with them "
        f"{t_now * 1000:.0f} ms ({t_now / t_old - 1:+.1%})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
