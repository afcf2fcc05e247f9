"""Benchmark: every estimator that gives an interval or a verdict, run on simulated runs with a known truth. Prints,
per estimator, truth, noise and runs a side: the coverage of its nominal 95 % intervals, how often the point estimate
lies inside its own interval (it must be always), and how often it decides wrongly (a word where the truth is a tie,
or the other side's word). Targets: coverage 93-97 %, estimate inside 100 %, a wrong 'decides' at a tie <= 5 %.

    python bench/calibration.py                # every estimator, the default draws (a few minutes on 2 cores)
    python bench/calibration.py --draws 200    # quicker, coarser
    python bench/calibration.py --old --draws 200   # the old thesis statistic too (slow: 1,000 bootstrap draws each)

Runs are normal around their true mean tokens/s with the given CV (0.025: repeats on a quiet machine; 0.25: ten
times that), 2 or 3 runs per condition and per baseline. A category (analysis/category_interval.py: a task's prompts
x repeats) draws its prompts' true log multipliers N(mu, tau^2), tau 0, 0.1 or 0.3, for 2, 5 or 10 prompts, and is
judged on covering exp(mu) (and with unbalanced repeats too). Acceptance rates have no verdict of their own (claims
compare them with a tolerance band); of their intervals only the category's estimate inside its own is checked.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from specbench.analysis import thesis, thesis_fit  # noqa: E402
from specbench.analysis.category_interval import category_multipliers  # noqa: E402
from specbench.analysis.intervals import ratio_interval  # noqa: E402
from specbench.analysis.verdict_rule import verdict  # noqa: E402
from specbench.claims.judge_inputs import METRICS  # noqa: E402
from specbench.claims.ordering_judge import _Measured  # noqa: E402

NOISE = (0.025, 0.25)  # CV of tokens/s between repeats: the study's level and ten times it
RUNS = (2, 3)
BASE = 100.0  # the baseline's true tokens/s
OLD_COMMIT = (
    "8a4f9c1adf67ed7d1e74b7231438bf60f563e633"  # the last commit with the mean |log difference| thesis statistic
)

# True log multipliers (tasks x methods; NaN: not measured)
STUDY = np.log([[6.25, 1.78, 3.35], [1.0, 1.5, 2.27], [1.0, 1.5, np.nan], [1.0, 1.04, 0.66]])
TRUTHS = {
    "study 4x3": STUDY,
    "study 2x3": STUDY[[0, 3]],
    "task effect 0": np.log([[1.0, 1.5, 2.5]] * 4),
    "method effect 0": np.log([[1.0] * 3, [2.0] * 3, [0.7] * 3, [1.3] * 3]),
    "tie, large": 0.1 * np.add.outer(np.arange(3.0), np.arange(3.0)),  # tau = beta, old ratio = 1 too
    "tie, small": 0.02 * np.add.outer(np.arange(3.0), np.arange(3.0)),
}


def runs_of(mean: float, cv: float, n: int, rng: np.random.Generator, size: tuple[int, ...] = ()) -> np.ndarray:
    return mean * (1 + cv * rng.standard_normal((*size, n)))


def rate(count: int, total: int) -> str:
    return "   n/a" if total == 0 else f"{100 * count / total:5.1f}%"


def scenarios() -> Iterator[tuple[float, int]]:
    return itertools.product(NOISE, RUNS)


# --------------------------------------------------------------------------------------------------------------------
# The multiplier, the verdict rule, orderings


def multiplier(draws: int, rng: np.random.Generator) -> None:
    print("\n## Multiplier: Welch t-interval on the log ratio of means (analysis/intervals.py)")
    print(f"{'truth':>8} {'cv':>6} {'runs':>4} {'coverage':>9} {'inside':>7}")
    for truth, (cv, n) in itertools.product((1.0, 1.5, 6.25, 0.66), scenarios()):
        covered = inside = 0
        for _ in range(draws):
            a, b = runs_of(BASE * truth, cv, n, rng), runs_of(BASE, cv, n, rng)
            r = a.mean() / b.mean()
            low, high = ratio_interval(r, a.std(ddof=1) / a.mean(), n, b.std(ddof=1) / b.mean(), n)
            covered += low <= truth <= high
            inside += low <= r <= high
        print(f"{truth:8.2f} {cv:6.3f} {n:4d} {rate(covered, draws):>9} {rate(inside, draws):>7}")


def verdict_rule(draws: int, rng: np.random.Generator) -> None:
    print("\n## Verdict rule: every run beats every baseline run (analysis/verdict_rule.py; chance 1/20 at 3 vs 3)")
    print(f"{'truth':>8} {'cv':>6} {'runs':>4} {'faster':>7} {'slower':>7} {'none':>7} {'too few':>8} {'wrong':>7}")
    for truth, (cv, n) in itertools.product((1.0, 1.05, 1.5), scenarios()):
        words = Counter(
            verdict(list(runs_of(BASE * truth, cv, n, rng)), list(runs_of(BASE, cv, n, rng))) for _ in range(draws)
        )
        wrong = words["slower"] + (words["faster"] if truth == 1.0 else 0)
        shown = [rate(words[w], draws) for w in ("faster", "slower", "none", "too few runs")]
        print(f"{truth:8.2f} {cv:6.3f} {n:4d} " + " ".join(f"{s:>7}" for s in shown) + f" {rate(wrong, draws):>7}")


def ordering(draws: int, rng: np.random.Generator) -> None:
    print("\n## Ordering of two cells: 95 % intervals apart (claims/ordering_judge.py _Measured.order)")
    print("   tasks: two tasks under one method (own baselines); methods: two methods on one task (one baseline)")
    print(
        f"{'pair':>8} {'truth':>10} {'cv':>6} {'runs':>4} {'ordered':>8} {'reversed':>9} {'not sep.':>9} {'wrong':>7}"
    )
    measured = _Measured.__new__(_Measured)
    measured.metric = METRICS["speedup"]
    for pair, (first, second), (cv, n) in itertools.product(
        ("tasks", "methods"), ((1.0, 1.0), (1.5, 1.0), (1.1, 1.0)), scenarios()
    ):
        words: Counter[int] = Counter()
        for _ in range(draws):
            base_a = runs_of(BASE, cv, n, rng)
            base_b = base_a if pair == "methods" else runs_of(BASE, cv, n, rng)
            bounds = {}
            for name, truth, base in (("a", first, base_a), ("b", second, base_b)):
                own = runs_of(BASE * truth, cv, n, rng)
                r = own.mean() / base.mean()
                bounds[name] = ratio_interval(r, own.std(ddof=1) / own.mean(), n, base.std(ddof=1) / base.mean(), n)
            measured.bounds = bounds
            words[measured.order("a", "b")] += 1
        wrong = words[-1] + (words[1] if first == second else 0)
        shown = [rate(words[k], draws) for k in (1, -1, 0)]
        print(
            f"{pair:>8} {first:4.2f}:{second:<5.2f} {cv:6.3f} {n:4d} {shown[0]:>8} {shown[1]:>9} {shown[2]:>9} "
            f"{rate(wrong, draws):>7}"
        )


# --------------------------------------------------------------------------------------------------------------------
# A category's multiplier over its prompts

TAUS = (0.0, 0.1, 0.3)  # the SD of the prompts' true log multipliers about the category's
PROMPT_COUNTS = (2, 5, 10)
CATEGORY_TRUTH = 1.5  # the category's multiplier: exp(mu), the geometric mean over its population of prompts
UNBALANCED = (3, 2, 1)  # the condition's runs of the prompts in turn in the unbalanced rows (the baseline's: 3)


def category_frame(
    draws: int, prompts: int, tau: float, cv: float, runs: tuple[int, ...], rng: np.random.Generator
) -> pd.DataFrame:
    """``draws`` simulated categories as the tasks of one cells frame: each prompt's true log multiplier drawn
    N(log CATEGORY_TRUTH, tau^2), its runs normal with CV ``cv`` around it, ``runs`` the condition's runs of the
    prompts in turn (the baseline's: the most of them); drafted tokens with a per-prompt acceptance."""
    most = max(runs)
    logs = math.log(CATEGORY_TRUTH) + tau * rng.standard_normal((draws, prompts))
    speeds = {
        "m": runs_of(1.0, cv, most, rng, (draws, prompts)) * BASE * np.exp(logs)[..., None],
        "off": runs_of(BASE, cv, most, rng, (draws, prompts)),
    }
    kept = np.arange(most)[None, :] < np.resize(np.array(runs), prompts)[:, None]  # (prompts, most)
    rates = np.clip(0.6 + 0.1 * rng.standard_normal((draws, prompts, 1)), 0.05, 0.95)
    frames = []
    for condition, values in speeds.items():
        draw, prompt, repeat = np.indices(values.shape).reshape(3, -1)
        keep = kept[prompt, repeat] if condition != "off" else np.ones(len(draw), dtype=bool)
        drafted = np.full(values.shape, 0 if condition == "off" else 200)
        accepted = rng.binomial(drafted, np.broadcast_to(rates, values.shape))
        frame = pd.DataFrame(
            {
                "task": [f"d{d}" for d in draw],
                "prompt": [f"p{q}" for q in prompt],
                "condition": condition,
                "temperature": 0.0,
                "repeat": repeat,
                "tokens_per_s": values.ravel(),
                "draft_n": drafted.ravel(),
                "draft_n_accepted": accepted.ravel(),
            }
        )[keep]
        frames.append(
            frame.assign(cell_file=frame.task + "/" + frame.prompt + f"/{condition}/r" + frame.repeat.astype(str))
        )
    return pd.concat(frames, ignore_index=True)


def category(draws: int, rng: np.random.Generator) -> None:
    print("\n## A category's multiplier: t-interval over its prompts' log multipliers (analysis/category_interval.py)")
    print(f"   truth exp(mu) = {CATEGORY_TRUTH}; prompts' true log multipliers N(mu, tau^2); coverage of exp(mu);")
    print("   inside: the multiplier and the acceptance in their own intervals; share: mean between_prompts_share")
    print(
        f"   (unbalanced: the condition's runs {'/'.join(map(str, UNBALANCED))} per prompt in turn, 3 for the baseline)"
    )
    print(f"{'tau':>5} {'prompts':>7} {'cv':>6} {'runs':>10} {'coverage':>9} {'inside':>7} {'share':>6}")
    grid = [(tau, p, cv, (n,)) for tau, p, (cv, n) in itertools.product(TAUS, PROMPT_COUNTS, scenarios())]
    grid += [(tau, p, 0.25, UNBALANCED) for tau, p in itertools.product((0.0, 0.3), PROMPT_COUNTS)]
    for tau, prompts, cv, runs in grid:
        table = category_multipliers(category_frame(draws, prompts, tau, cv, runs, rng), "off")
        covered = int((table.low.le(CATEGORY_TRUTH) & table.high.ge(CATEGORY_TRUTH)).sum())
        inside = int(
            (
                (table.low <= table.multiplier)
                & (table.multiplier <= table.high)
                & (table.acceptance_low <= table.acceptance)
                & (table.acceptance <= table.acceptance_high)
            ).sum()
        )
        share = table.between_prompts_share.mean()
        label = "unbalanced" if len(runs) > 1 else str(runs[0])
        print(
            f"{tau:5.2f} {prompts:7d} {cv:6.3f} {label:>10} {rate(covered, len(table)):>9} "
            f"{rate(inside, len(table)):>7} {share:6.2f}"
        )


# --------------------------------------------------------------------------------------------------------------------
# The thesis


def simulated_cells(logs: np.ndarray, cv: float, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One simulated run of a matrix: the runs of every cell (tasks, methods, n) and baseline (tasks, n)."""
    tasks, methods = logs.shape
    return {
        "cells": runs_of(1.0, cv, n, rng, (tasks, methods)) * BASE * np.exp(np.nan_to_num(logs))[..., None],
        "base": runs_of(BASE, cv, n, rng, (tasks,)),
    }


def new_figure(logs: np.ndarray, runs: dict[str, np.ndarray]) -> dict:
    """The thesis figures of a simulated run, from the cells' means and log-mean variances (analysis.thesis)."""
    cells, base = runs["cells"], runs["base"]
    n = base.shape[-1]
    cell_mean, base_mean = cells.mean(axis=-1), base.mean(axis=-1)
    measured = np.where(np.isfinite(logs), np.log(cell_mean / base_mean[:, None]), np.nan)
    return thesis.figures(
        measured,
        cells.var(axis=-1, ddof=1) / (n * cell_mean**2),
        np.full(logs.shape, n - 1.0),
        base.var(axis=-1, ddof=1) / (n * base_mean**2),
        np.full(len(base), n - 1.0),
        [f"t{i}" for i in range(logs.shape[0])],
        [f"m{i}" for i in range(logs.shape[1])],
    )


def new_truth(logs: np.ndarray) -> dict[str, float]:
    fit = thesis_fit.design(np.isfinite(logs))
    values = logs[np.isfinite(logs)]
    squares = {name: float(values @ q @ values) for name, q in fit.forms.items()}
    tau, beta = math.sqrt(max(squares["task"], 0.0)), math.sqrt(max(squares["method"], 0.0))
    return {
        "task": tau,
        "method": beta,
        "difference": squares["difference"] if abs(squares["difference"]) > 1e-12 else 0.0,
        "ratio": tau / beta if beta > 1e-12 else math.inf,
    }


def old_module() -> ModuleType:
    """The analysis/thesis.py of OLD_COMMIT (the mean |log difference| with a bootstrap), loaded from git."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{OLD_COMMIT}:scripts/specbench/analysis/thesis.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_thesis.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_thesis", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def old_runner(module: ModuleType) -> tuple[Callable, Callable]:
    def figure(logs: np.ndarray, runs: dict[str, np.ndarray]) -> dict:
        rows = []
        for ti in range(logs.shape[0]):
            for repeat, value in enumerate(runs["base"][ti]):
                rows.append((f"t{ti}", "off", value, repeat))
            for mi in range(logs.shape[1]):
                if np.isfinite(logs[ti, mi]):
                    rows += [(f"t{ti}", f"m{mi}", v, r) for r, v in enumerate(runs["cells"][ti, mi])]
        frame = pd.DataFrame(rows, columns=["task", "condition", "tokens_per_s", "repeat"])
        frame = frame.assign(prompt=None, temperature=0.0, cell_file=[f"c{i}" for i in range(len(frame))])
        row = module.thesis_figure(frame, "off", 0.0, draws=1000, seed=int(rng_seed.integers(1 << 30)))
        row["difference"] = row["ratio"] - 1  # the old rule decides on the ratio against 1
        row["difference_low"], row["difference_high"] = row["ratio_low"] - 1, row["ratio_high"] - 1
        return row

    def truth(logs: np.ndarray) -> dict[str, float]:
        task, method = (float(v) for v in module.effects(logs))
        ratio = task / method if method > 0 else math.inf
        return {
            "task": task,
            "method": method,
            "ratio": ratio,
            "difference": 0.0 if abs(ratio - 1) < 1e-9 else ratio - 1,
        }

    rng_seed = np.random.default_rng(12345)
    return figure, truth


def thesis_bench(name: str, figure: Callable, truth_of: Callable, draws: int, rng: np.random.Generator) -> None:
    print(f"\n## Thesis, {name}")
    print("   coverage of the 95 % intervals of tau (task), beta (method), their ratio and the decision's quantity")
    print("   (new: D = tau^2 - beta^2; old: ratio - 1); inside: every estimate in its interval; wrong: a decision")
    print("   for the side the truth is not on (any decision at a tie); no ratio: draws without a ratio estimate")
    print("   (neither debiased effect above 0; the ratio's coverage counts the other draws)")
    print(
        f"{'truth':>16} {'cv':>6} {'runs':>4} {'task':>7} {'method':>7} {'ratio':>7} {'decide':>7} {'inside':>7} "
        f"{'wrong':>7} {'task':>6} {'method':>6} {'no sep':>6} {'no ratio':>8}"
    )
    for (label, logs), (cv, n) in itertools.product(TRUTHS.items(), scenarios()):
        truth = truth_of(logs)
        covered: Counter[str] = Counter()
        inside = wrong = no_ratio = 0
        words: Counter[str] = Counter()
        for _ in range(draws):
            row = figure(logs, simulated_cells(logs, cv, n, rng))
            for key in ("task", "method", "difference"):
                covered[key] += row[f"{key}_low"] <= truth[key] <= row[f"{key}_high"]
            if math.isinf(truth["ratio"]):
                covered["ratio"] += row["ratio_high"] == math.inf
            else:
                covered["ratio"] += row["ratio_low"] <= truth["ratio"] <= row["ratio_high"]  # NaN: no ratio
            points = [("task", "task_effect"), ("method", "method_effect"), ("difference", "difference")]
            holds = all(row[f"{k}_low"] <= row[p] <= row[f"{k}_high"] for k, p in points)
            if math.isnan(row["ratio"]):
                no_ratio += 1
            else:
                holds = holds and row["ratio_low"] <= row["ratio"] <= row["ratio_high"]
            inside += holds
            word = row["decides"]
            words[word] += 1
            side = truth["difference"]
            wrong += (word == thesis_fit.TASK and side <= 0) or (word == thesis_fit.METHOD and side >= 0)
        cells = [rate(covered[k], draws) for k in ("task", "method")]
        cells += [rate(covered["ratio"], draws - no_ratio), rate(covered["difference"], draws)]
        print(
            f"{label:>16} {cv:6.3f} {n:4d} "
            + " ".join(f"{c:>7}" for c in cells)
            + f" {rate(inside, draws):>7} {rate(wrong, draws):>7} {rate(words[thesis_fit.TASK], draws):>6} "
            f"{rate(words[thesis_fit.METHOD], draws):>6} {rate(words[thesis_fit.SEPARATED_NOT], draws):>6} "
            f"{rate(no_ratio, draws):>8}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=1000, help="simulated runs per truth and scenario")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--old", action="store_true", help="the thesis statistic of OLD_COMMIT too")
    parser.add_argument("--only", choices=("multiplier", "verdict", "ordering", "category", "thesis", "old"), nargs="*")
    args = parser.parse_args()
    everything = ("multiplier", "verdict", "ordering", "category", "thesis", *(["old"] if args.old else []))
    only = set(args.only or everything)
    rng = np.random.default_rng(args.seed)
    print(f"# Calibration by simulation: {args.draws} draws a row, seed {args.seed}")
    if "multiplier" in only:
        multiplier(args.draws, rng)
    if "verdict" in only:
        verdict_rule(args.draws, rng)
    if "ordering" in only:
        ordering(args.draws, rng)
    if "category" in only:
        category(args.draws, rng)
    if "thesis" in only:
        thesis_bench(
            "new: additive decomposition, debiased (analysis/thesis.py)", new_figure, new_truth, args.draws, rng
        )
    if "old" in only:
        figure, truth = old_runner(old_module())
        thesis_bench(f"old: mean |log difference|, bootstrap ({OLD_COMMIT[:7]})", figure, truth, args.draws, rng)
    print("\n## Acceptance rates: no verdict of their own (a tolerance band); the category's: inside its interval")


if __name__ == "__main__":
    main()
