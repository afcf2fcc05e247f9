"""Hypothesis strategies for per-cell tables of every shape a run can produce (``cell_tables``): 1 to many runs per
cell, equal and near-equal speeds, near-zero and huge effects, acceptance 0 and 1, missing conditions, tasks or
repeats, one task, one method, no baseline cells, one temperature or several, several machines and builds, imported
cells, prompt sets, sweeps, and the fields a record can lack left empty. Each example is a ``GeneratedRun``: the rows
(as ``cell_table.frame_of`` takes them) and what the config around them says (orders, machines, builds, sweeps,
the cells it expected), with ``shape``, a short description of its kind of table for counting distinct shapes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml
from hypothesis import strategies as st

from specbench.core.config.backends import WATCH_NONE
from specbench.core.config.sweeps import sweep_member
from specbench.core.plan.cells import DEFAULT_MACHINE, ONE_PROMPT, Cell
from support.paths import REPO

STUDY = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
BASELINE = STUDY["baseline"]
STUDY_TASKS = list(STUDY["tasks"])
METHODS = [c for c in STUDY["conditions"] if c != BASELINE]
EXTRA_TASK = "notes"  # a task no claim names
SWEEP, SWEEP_FLAG, SWEEP_VALUES = "draft", "--spec-draft-n-max", (4, 8, 16)
PROMPT_SETS = ((ONE_PROMPT,), ("short", "long"), ("a", "b", "c"))
TEMPERATURES = ((0.0,), (1.0,), (0.0, 1.0), (0.0, 0.7, 1.0))
MACHINES = ((DEFAULT_MACHINE,), ("a100", "h200"))
IMPORTED = "lab"  # the label of an imported run
BUILDS = ((), ("b8000",), ("b8000", "b8100"))
# a condition's true multiplier: equal, near-equal (beyond any printed digit), near-zero and huge effects
EFFECTS = {"equal": 1.0, "near-equal": 1.0 + 1e-12, "small": 1.03, "huge": 60.0, "tiny": 0.02, "double": 2.0}
NOISE = {"none": 0.0, "near-none": 1e-9, "study": 0.02, "ten-times": 0.2}  # the runs' coefficient of variation
BASE_SPEEDS = (0.05, 15.0, 90.0, 8000.0)  # the baseline's tokens/s
ACCEPTANCE = ("nothing drafted", "none accepted", "all accepted", "every token accepted", "some accepted")
IDENTITY = ("identical", "differs", "shorter", "empty")
# groups of fields a record can lack (old records, no metrics endpoint, no stream, no log line, ...)
MAX_CELLS = 160  # a larger table takes longer, and has no shape a smaller one lacks
OPTIONAL = ("latency", "positions", "spec", "client", "timing", "gsm8k", "shares", "times", "divergence", "sampling")


@dataclass(frozen=True)
class GeneratedRun:
    """A run's per-cell rows and what its config says around them."""

    rows: list[dict[str, Any]]
    baseline: str
    tasks: tuple[str, ...]  # the config's tasks, in order
    conditions: tuple[str, ...]  # the config's conditions (the baseline and the sweep's members too), in order
    machines: tuple[str, ...]  # the machines' labels, the imported run's last (rule report's MACHINE_LABELS)
    builds: tuple[str, ...]
    imported: tuple[str, ...]  # the labels of imported runs
    sweeps: Mapping[str, Mapping[str, Any]]  # swept condition -> {of, flag, value}
    expected_cells: list[str]  # every cell the config asks for (those measured here, not the imported ones)
    shape: tuple[Any, ...] = field(default=())
    draws: Any = None  # the choices it was made of (its repr is the example's)

    def __repr__(self) -> str:
        return f"GeneratedRun({len(self.rows)} cells, {self.draws!r})"


def _cell_file(cell: Cell, imported: bool) -> str:
    path = cell.path
    return path.replace("results/cells/", "results/imports/", 1) if imported else path


def _tokens(kind: str, reference: list[int], rng: np.random.Generator) -> list[int]:
    """A temperature-0 output against the baseline's ``reference``."""
    if kind == "identical" or not reference:
        return list(reference)
    if kind == "empty":
        return []
    if kind == "shorter":
        return reference[: max(1, len(reference) // 2)]
    at = int(rng.integers(0, len(reference)))
    return [*reference[:at], reference[at] + 1, *reference[at + 1 :]]


def _acceptance(kind: str, predicted: int, rng: np.random.Generator) -> tuple[int, int]:
    """(drafted, accepted) of a method's cell."""
    if kind == "nothing drafted" or predicted == 0:
        return 0, 0
    drafted = int(rng.integers(1, 3 * predicted + 1))
    if kind == "none accepted":
        return drafted, 0
    if kind == "all accepted":
        drafted = min(drafted, predicted - 1) or 1
        return drafted, drafted
    if kind == "every token accepted":  # as many accepted as generated: no target step left (tokens/step n/a)
        return max(drafted, predicted), predicted
    return drafted, int(rng.integers(0, min(drafted, predicted) + 1))


def _positions(accepted: int, rng: np.random.Generator) -> dict[str, Any]:
    """The server's own counts: per draft position how many steps accepted beyond it."""
    width = int(rng.integers(1, 5))
    per_position = sorted((int(v) for v in rng.multinomial(accepted, [1 / width] * width)), reverse=True)
    steps = max(per_position[0], 1) + int(rng.integers(0, 4))
    return {
        "verification_steps": steps,
        "counted_drafted": steps * width,
        "counted_accepted": sum(per_position),
        "counted_predicted": steps + sum(per_position),
        "accepted_per_position": per_position,
        "mean_accepted_length": 1 + sum(per_position) / steps,
        "logged_mean_length": 1 + sum(per_position) / steps,
    }


def _latency(predicted: int, rng: np.random.Generator) -> dict[str, Any]:
    chunks = max(1, min(predicted, 40))
    arrivals = np.cumsum(rng.exponential(20.0, chunks)).tolist()
    gaps = np.diff(arrivals)
    return {
        "chunk_ms": arrivals,
        "chunk_tokens": [1] * chunks,
        "ttft_ms": arrivals[0],
        **{
            f"itl_{name}_ms": float(np.percentile(gaps, q)) if len(gaps) else None
            for name, q in (("median", 50), ("p90", 90), ("p99", 99))
        },
    }


@dataclass(frozen=True)
class _Draws:
    """The discrete choices that make a table's shape (the values themselves come from a seeded generator)."""

    tasks: tuple[str, ...]
    prompts: Mapping[str, tuple[str, ...]]
    methods: tuple[str, ...]
    sweep: bool
    baseline_cells: bool
    temperatures: tuple[float, ...]
    machines: tuple[str, ...]
    imported: bool
    builds: tuple[str, ...]
    # the last of several builds: 'no' (llama.cpp), 'ids' or 'text' (an endpoint, sending ids or not), 'vllm' (a vLLM
    # build started here: ids sent, speed from the stream)
    endpoint: str
    repeats: int
    uneven: bool  # some cells' repeats missing
    empty_answers: bool  # some cells answered nothing (0 tokens/s)
    missing_groups: bool  # some task x condition x temperature with no cell at all
    effects: Mapping[str, str]
    noise: str
    base_speed: float
    acceptance: Mapping[str, str]
    identity: Mapping[str, str]
    absent: frozenset[str]
    partly_absent: bool
    contention: bool
    warm_scope: str
    seed: int


@st.composite
def _draws(draw: st.DrawFn) -> _Draws:
    tasks = tuple(draw(st.lists(st.sampled_from([*STUDY_TASKS, EXTRA_TASK]), min_size=1, max_size=5, unique=True)))
    prompts = {
        task: draw(st.sampled_from(PROMPT_SETS)) if draw(st.integers(0, 3)) == 0 else (ONE_PROMPT,) for task in tasks
    }
    methods = tuple(draw(st.lists(st.sampled_from(METHODS), min_size=0, max_size=len(METHODS), unique=True)))
    sweep = draw(st.integers(0, 4)) == 0
    members = [sweep_member(SWEEP, v) for v in SWEEP_VALUES] if sweep else []
    conditions = [*methods, *members]
    return _Draws(
        tasks=tasks,
        prompts=prompts,
        methods=methods,
        sweep=sweep,
        baseline_cells=draw(st.integers(0, 5)) > 0,
        temperatures=draw(st.sampled_from(TEMPERATURES)),
        machines=draw(st.sampled_from(MACHINES)),
        imported=draw(st.integers(0, 4)) == 0,
        builds=draw(st.sampled_from(BUILDS)),
        endpoint=draw(st.sampled_from(["no", "ids", "text", "vllm"])),
        repeats=draw(st.integers(1, 5)),
        uneven=draw(st.integers(0, 3)) == 0,
        empty_answers=draw(st.integers(0, 5)) == 0,
        missing_groups=draw(st.integers(0, 3)) == 0,
        effects={c: draw(st.sampled_from(sorted(EFFECTS))) for c in conditions},
        noise=draw(st.sampled_from(sorted(NOISE))),
        base_speed=draw(st.sampled_from(BASE_SPEEDS)),
        acceptance={c: draw(st.sampled_from(ACCEPTANCE)) for c in conditions},
        identity={c: draw(st.sampled_from(IDENTITY)) for c in [BASELINE, *conditions]},
        absent=frozenset(draw(st.sets(st.sampled_from(OPTIONAL)))),
        partly_absent=draw(st.booleans()),
        contention=draw(st.booleans()),
        warm_scope=draw(st.sampled_from(["task", "condition"])),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def _row(
    d: _Draws, rng: np.random.Generator, cell: Cell, path: str, speed: float, tokens: list[int], imported: bool
) -> dict[str, Any]:
    """One cell's row: its figures, counts and how it was measured, with the absent fields left out."""
    method = cell.condition != BASELINE
    predicted = int(rng.integers(1, 400)) if speed > 0 else 0
    drafted, accepted = (
        _acceptance(d.acceptance.get(cell.condition, "nothing drafted"), predicted, rng) if method else (0, 0)
    )
    decode_ms = 1000.0 * predicted / speed if speed > 0 else float(rng.uniform(0.1, 5))
    warm = cell.condition.endswith("-warm")
    row: dict[str, Any] = {
        "machine": cell.machine,
        "build": cell.build,
        "task": cell.task,
        "prompt": cell.prompt,
        "condition": cell.condition,
        "temperature": cell.temperature,
        "repeat": cell.repeat,
        "tokens_per_s": speed,
        "predicted_n": predicted,
        "decode_ms": decode_ms,
        "prompt_n": int(rng.integers(1, 2000)),
        "prompt_ms": float(rng.uniform(1, 500)),
        "draft_n": drafted,
        "draft_n_accepted": accepted,
        "acceptance_rate": accepted / drafted if drafted else None,
        "tokens": tokens,
        "content": "".join(f" w{t}" for t in tokens) + (" " if tokens and cell.repeat % 2 else ""),
        "engine": "llama.cpp",
        "timings_source": "server",
        "token_ids": True,
        "seed": 1000 + cell.repeat,
        "attempt": 1 + (int(rng.integers(0, 2)) if d.contention else 0),
        "rejected_attempts": int(rng.integers(0, 3)) if d.contention else 0,
        "quiet_waits": int(rng.integers(0, 2)) if d.contention else 0,
        "quiet_wait_s": float(rng.uniform(0, 30)) if d.contention else 0.0,
        "backend": "cuda" if cell.machine != DEFAULT_MACHINE else "cpu",
        "gpu_watch": WATCH_NONE if d.contention and cell.machine == DEFAULT_MACHINE else None,
        "server_pid": int(rng.integers(100, 60000)),
        "server_shared": warm,
        "server_position": cell.repeat if warm else 1,
        "server_scope": d.warm_scope if warm else "fresh",
        "chat_template": "gguf",
        "server_sha256": "ab" * 32,
        "model_sha256": "cd" * 32,
        "prompt_sha256": "ef" * 32,
        "code_fingerprint": "imported" if imported else "current",
        "cell_file": path,
        "server_log": path.replace(".json", ".server.log"),
        "gpu_samples": path.replace(".json", ".gpu.jsonl"),
    }
    if row["rejected_attempts"]:
        row["rejected_reasons"] = ["cpu busy"] * row["rejected_attempts"]
    if _endpoint(d, cell):  # vLLM or a server the user runs: no binary of ours; its text trimmed, its ids sent or not
        engine = "vllm" if d.endpoint == "vllm" else "endpoint"
        row.update(engine=engine, server_sha256=None, content=row["content"].strip())
        row["timings_source"] = "client stream" if engine == "vllm" else str(rng.choice(["server", "client stream"]))
        if d.endpoint == "text":
            row.update(token_ids=False, tokens=[])

    def present(group: str) -> bool:
        return group not in d.absent or (d.partly_absent and bool(rng.integers(0, 2)))

    if present("client"):
        row["client_tokens_per_s"] = speed * float(rng.uniform(0.95, 1.0))
    if present("timing"):
        wall = decode_ms / 1000 + float(rng.uniform(0.1, 3))
        row.update(cell_wall_s=wall, server_ready_s=0.5, request_wall_s=wall - 0.5, loadavg_1m_at_end=1.0)
        row["overhead_s"] = wall - (row["prompt_ms"] + decode_ms) / 1000
    if present("times"):
        start = dt.datetime(2026, 11, 29, tzinfo=dt.UTC) + dt.timedelta(seconds=int(rng.integers(0, 86400)))
        row.update(started_at=start, ended_at=start + dt.timedelta(seconds=decode_ms / 1000 + 1))
    if method and drafted and present("positions"):
        row.update(_positions(accepted, rng))
    if predicted and present("latency"):
        row.update(_latency(predicted, rng))
    if present("shares"):
        row.update(from_prompt_share=float(rng.uniform(0, 1)), from_output_share=float(rng.uniform(0, 0.3)))
    if method and present("spec"):
        row.update(
            spec_implementations=[cell.condition],
            spec_n_max=16 if cell.build.endswith("100") else 8,
            spec_settings=[{"implementation": cell.condition, "key": "n_max", "value": "8"}],
        )
        row.update(draft_length=row["spec_n_max"], draft_length_source=str(rng.choice(["argv", "log", "response"])))
    if method and row.get("verification_steps"):
        row["drafted_per_step"] = drafted / row["verification_steps"]
        row["counts_source"] = "response" if row["engine"] == "vllm" else "/metrics"
    if present("sampling"):
        row["sampling"] = f"top_k={20 if _endpoint(d, cell) else 40} top_p=0.95 min_p=0.05 repeat_penalty=1.0"
    if cell.task == "gsm8k" and present("gsm8k"):
        total = 3
        correct = int(rng.integers(0, total + 1))
        row.update(
            gsm8k_correct=correct,
            gsm8k_answered=total,
            gsm8k_total=total,
            gsm8k_wrong=[{"problem": p, "extracted": "1", "reference": "2"} for p in range(1, total - correct + 1)],
        )
    return row


def _endpoint(d: _Draws, cell: Cell) -> bool:
    """Whether vLLM or an endpoint served the cell: the last of several builds, when the draws make it one."""
    return d.endpoint != "no" and len(d.builds) > 1 and cell.build == d.builds[-1]


def _divergence(row: dict[str, Any], reference: list[int], d: _Draws, rng: np.random.Generator) -> None:
    """What an explanation says of a temperature-0 output that differs from its reference (when it was explained:
    only a llama.cpp build's)."""
    if row["temperature"] != 0.0 or row["tokens"] == reference or "divergence" in d.absent:
        return
    if row["engine"] != "llama.cpp":
        return
    kind = str(rng.choice(["near-tie", "disagreement", "length", "replay differs"]))
    row.update(
        explanation_file=row["cell_file"].replace(".json", ".explain.json"),
        divergence_kind=kind,
        divergence_text=None if kind == "length" else " a",
        divergence_reference_text=" b",
        divergence_before="x",
        margin_sequential=None if kind == "length" else float(rng.uniform(0, 2)),
        margin_batched=None if kind == "length" else float(rng.uniform(0, 2)),
        rank_sequential=None if kind == "length" else int(rng.integers(1, 5)),
        divergence_flipped=kind == "near-tie",
        replay_matches=kind != "replay differs",
    )


def _expand(d: _Draws) -> GeneratedRun:
    """The rows of the draws: every machine x build x task x prompt x condition x temperature x repeat that ran."""
    rng = np.random.default_rng(d.seed)
    members = {sweep_member(SWEEP, v): {"of": SWEEP, "flag": SWEEP_FLAG, "value": v} for v in SWEEP_VALUES}
    swept = members if d.sweep else {}
    conditions = (BASELINE, *d.methods, *swept)
    measured = [c for c in conditions if c != BASELINE or d.baseline_cells]
    labels = (*d.machines, *((IMPORTED,) if d.imported else ()))
    builds = d.builds or ("",)
    cv = NOISE[d.noise]
    every = [(t, c, temp) for t in d.tasks for c in measured for temp in d.temperatures]
    rows = []
    for machine in labels:
        groups = every
        if d.missing_groups and len(every) > 1:  # a task, condition or temperature that did not run (here)
            gone = set(rng.choice(len(every), size=int(rng.integers(1, len(every))), replace=False).tolist())
            groups = [g for i, g in enumerate(every) if i not in gone]
        imported = machine == IMPORTED
        machine_speed = d.base_speed * (1.0 if machine in (DEFAULT_MACHINE, "a100") else 2.5)
        for build in builds if not imported else ("",):
            references: dict[tuple[str, str, int], list[int]] = {}
            for task, condition, temperature in groups:
                effect = 1.0 if condition == BASELINE else EFFECTS[d.effects[condition]]
                for prompt in d.prompts[task]:
                    for repeat in range(1, d.repeats + 1):
                        cell = Cell(task, condition, temperature, repeat, machine, prompt, build)
                        if d.uneven and repeat > 1 and rng.integers(0, 3) == 0:
                            continue
                        speed = machine_speed * effect * float(np.exp(cv * rng.standard_normal()))
                        if d.empty_answers and rng.integers(0, 4) == 0:  # EOS first: no token, 0 tokens/s
                            speed = 0.0
                        tokens: list[int] = []
                        if temperature == 0.0:
                            key = (task, prompt, repeat)
                            reference = references.setdefault(key, list(range(int(rng.integers(1, 30)))))
                            kind = d.identity.get(condition, "identical")
                            tokens = _tokens(
                                kind if condition != BASELINE or repeat > 1 else "identical", reference, rng
                            )
                        path = _cell_file(cell, imported)
                        row = _row(d, rng, cell, path, speed, tokens, imported)
                        _divergence(row, references.get((task, prompt, repeat), []), d, rng)
                        rows.append(row)
    expected = [  # the config's matrix: what did not run is missing
        Cell(task, condition, temperature, repeat, machine, prompt, build).path
        for machine in d.machines
        for build in builds
        for task in d.tasks
        for prompt in d.prompts[task]
        for condition in conditions
        for temperature in d.temperatures
        for repeat in range(1, d.repeats + 1)
    ]
    shape = (
        len(d.tasks),
        max(len(p) for p in d.prompts.values()),
        len(d.methods),
        d.sweep,
        d.baseline_cells,
        d.temperatures,
        d.machines,
        d.imported,
        d.builds,
        min(d.repeats, 3),
        d.uneven,
        d.empty_answers,
        d.missing_groups,
        tuple(sorted(set(d.effects.values()))),
        d.noise,
        tuple(sorted(set(d.acceptance.values()))),
        tuple(sorted(d.absent)),
    )
    return GeneratedRun(
        rows=rows,
        baseline=BASELINE,
        tasks=tuple(dict.fromkeys([*STUDY_TASKS, *d.tasks])),
        conditions=tuple(dict.fromkeys([*STUDY["conditions"], *swept])),
        machines=labels,
        builds=d.builds,
        imported=(IMPORTED,) if d.imported else (),
        sweeps=swept,
        expected_cells=expected,
        shape=shape,
        draws=d,
    )


def cell_tables() -> st.SearchStrategy[GeneratedRun]:
    """Runs of every shape the pipeline can emit (see the module docstring); at least one cell each, at most
    MAX_CELLS."""
    return _draws().map(_expand).filter(lambda run: 0 < len(run.rows) <= MAX_CELLS)


def shape_of(run: GeneratedRun) -> tuple[Any, ...]:
    """The kind of table a run is (its discrete choices), for counting distinct shapes."""
    return run.shape


def names(run: GeneratedRun) -> dict[str, Sequence[str]]:
    """The config's tasks and conditions, as the claims files are checked against them."""
    return {"tasks": list(run.tasks), "conditions": list(run.conditions)}
