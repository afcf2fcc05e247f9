"""Benchmark: does ``--metrics`` (and reading ``/metrics`` before and after the request, as a cell does) change the
measured tokens/s? Paired runs of the same cell's setup, alternating without (A) and with (B), round after round:
each run a fresh llama-server of the cell's recorded argv (with ``--metrics`` removed for A, added for B) answering
the record's ``/completion`` body. Prints each run's server-reported tokens/s, then per cell the ratio B / A of the
means with the spread of the per-round ratios. Not a test: it prints figures.

    python bench/metrics_overhead.py --workdir DIR --cell results/cells/local/<models>/essay/mtp/t0.0/r1.json --rounds 6
    python bench/metrics_overhead.py --workdir DIR --cell C1 C2 --save tests/data/metrics   # keep one B run's scrapes

Run it under the machine's CPU lock on a shared machine (flock /tmp/cpu.lock ...): other work moves tokens/s.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests")]

from _common import spread  # noqa: E402

from specbench.core.steps.files import read_json  # noqa: E402
from specbench.engines.client import stream_completion  # noqa: E402
from specbench.engines.metrics_scrape import METRICS_FLAG  # noqa: E402
from specbench.engines.server_process import start_server  # noqa: E402
from specbench.measure.cell_record import last_log_section, speculative_lines  # noqa: E402
from specbench.measure.replay import recorded_args  # noqa: E402


def one_run(record: dict, workdir: Path, log: Path, with_metrics: bool) -> dict:
    """The record's request on a fresh server of its argv, with or without ``--metrics``; with it, ``/metrics`` is
    read right before and right after the request, as a cell reads it."""
    binary, args = recorded_args(record["server"]["argv"], workdir)
    args = [a for a in args if a != METRICS_FLAG] + ([METRICS_FLAG] if with_metrics else [])
    with start_server(binary, args, log, 600.0) as server, httpx.Client(timeout=600.0) as client:
        before = httpx.get(f"{server.url}/metrics", timeout=10).text if with_metrics else ""  # a connection of its own
        response, _ = stream_completion(client, server.url, record["request"]["completion"])
        after = httpx.get(f"{server.url}/metrics", timeout=10).text if with_metrics else ""
    return {
        "tokens_per_s": float(response["timings"]["predicted_per_second"]),
        "timings": response["timings"],
        "metrics_text": (before, after),
        "log_lines": speculative_lines(last_log_section(log.read_text(errors="replace"))),
        "tokens": response.get("tokens", []) == record["response"]["tokens"],
    }


def paired_interval(ratios: list[float]) -> tuple[float, float]:
    """95 % t-interval of the geometric mean of the per-round ratios (the rounds are the pairs)."""
    logs = [math.log(r) for r in ratios]
    if len(logs) < 2:
        return math.nan, math.nan
    half = stats.t.ppf(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    mean = statistics.fmean(logs)
    return math.exp(mean - half), math.exp(mean + half)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True, help="a finished run's working directory")
    parser.add_argument("--cell", nargs="+", required=True, help="cell files, relative to the working directory")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--save", type=Path, help="write one B run's /metrics text and speculative log lines here")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    scratch = Path(tempfile.mkdtemp(prefix="bench-metrics-"))
    for cell in args.cell:
        record = read_json(workdir / cell)
        a_runs, b_runs, ratios = [], [], []
        print(f"{cell} (recorded {record['response']['timings']['predicted_per_second']:.1f} tok/s)")
        print(f"{'round':>5}  {'order':>5}  {'A tok/s (no --metrics)':>22}  {'B tok/s (--metrics)':>19}  B/A")
        for round_ in range(1, args.rounds + 1):
            order = (False, True) if round_ % 2 else (True, False)  # A B, then B A: neither always goes first
            runs = {m: one_run(record, workdir, scratch / f"{m}.log", m) for m in order}
            a, b = runs[False], runs[True]
            a_runs.append(a["tokens_per_s"])
            b_runs.append(b["tokens_per_s"])
            ratios.append(b["tokens_per_s"] / a["tokens_per_s"])
            label = "AB" if order[0] is False else "BA"
            same = "" if a["tokens"] and b["tokens"] else "  (tokens differ from the record's)"
            print(f"{round_:>5}  {label:>5}  {a_runs[-1]:>22.2f}  {b_runs[-1]:>19.2f}  {ratios[-1]:.3f}{same}")
            if args.save and round_ == 1:
                name = Path(cell).parent.parent.name + "-" + Path(cell).parents[2].name
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / f"{name}.before.metrics.txt").write_text(b["metrics_text"][0])
                (args.save / f"{name}.after.metrics.txt").write_text(b["metrics_text"][1])
                (args.save / f"{name}.log.txt").write_text("\n".join(b["log_lines"]) + "\n")
                (args.save / f"{name}.timings.json").write_text(json.dumps(b["timings"], indent=2) + "\n")
        low, high = paired_interval(ratios)
        print(
            f"A: {spread(a_runs, 2)} tok/s; B: {spread(b_runs, 2)} tok/s; B/A of the means "
            f"{statistics.fmean(b_runs) / statistics.fmean(a_runs):.4f}; per-round B/A median "
            f"{statistics.median(ratios):.4f}, range {min(ratios):.4f}-{max(ratios):.4f}; geometric mean "
            f"{math.exp(statistics.fmean(math.log(r) for r in ratios)):.4f}, 95 % interval {low:.4f}-{high:.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
