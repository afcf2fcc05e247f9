"""A cell runner's setup and recorded attempt outcomes, without a server: what the attempt and device tests share."""

from __future__ import annotations

from pathlib import Path

from specbench.contention.samples import Verdict
from specbench.core.plan.cells import Cell
from specbench.engines.client import Exchange
from specbench.measure.condition_setup import Setup

CELL = Cell("essay", "off", 0.0, 1)
TIMINGS = {"prompt_n": 10, "prompt_ms": 5.0, "predicted_n": 4, "predicted_ms": 40.0, "predicted_per_second": 100.0}


def setup_of(tmp_path: Path, attempts: int = 3, quiet_timeout_s: float = 0.0) -> Setup:
    return Setup(
        condition="off",
        server_binary=tmp_path / "llama-server",
        build_manifest={"binaries": {"llama-server": {"sha256": "ab"}}},
        model_path=tmp_path / "m.gguf",
        model_manifest={"sha256": "cd", "mtp": {"present": False}},
        draft_path=None,
        draft_manifest=None,
        prompt_manifests={"essay": {"sha256": "ef", "messages": [{"role": "user", "content": "hi"}]}},
        server_args=["-m", "m.gguf"],
        requires=[],
        max_tokens={"essay": 4},
        reasoning=False,
        base_seed=0,
        startup_timeout_s=1,
        request_timeout_s=1,
        server_log=tmp_path / "server.log",
        gpu_samples=tmp_path / "gpu.jsonl",
        code_fingerprint="c0de",
        max_attempts=attempts,
        quiet_timeout_s=quiet_timeout_s,
    )


def outcome(contended: bool, pid: int, speed: float) -> tuple[list[dict], Verdict]:
    exchange = Exchange(
        {},
        "p",
        {},
        {"content": "x", "tokens": [1, 2, 3, 4], "timings": {**TIMINGS, "predicted_per_second": speed}},
        {"request_wall_s": 0.1, "decode_tokens_per_s": speed},
    )
    result = {
        "cell": CELL,
        "exchange": exchange,
        "position": 1,
        "wall_s": 1.0,
        "ready_s": 0.5,
        "started_at": "a",
        "ended_at": "b",
        "metrics": None,
        "loadavg": [0.5, 0.5, 0.5],
        "server": {"pid": pid, "port": 1, "argv": ["s"]},
    }
    verdict = Verdict(
        contended=contended,
        reason="pid 7781 in 3 sample(s) (during)" if contended else "clean",
        foreign_pids=[7781] if contended else [],
        samples=3,
        failed_samples=0,
        nvml="ok",
    )
    return [result], verdict
