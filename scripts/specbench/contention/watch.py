"""Watch the GPUs (and the CPU) while a cell's llama-server lives: a thread that samples every few seconds, and on
demand, into a JSON-lines file beside the cell (``GpuWatch``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from specbench.contention.contended import judge
from specbench.contention.cpu import CpuSampler, cpu_load
from specbench.contention.nvml import NvmlSampler, error_text
from specbench.contention.samples import MARKS, PHASES, Sample, Verdict

# --- the pure decision -------------------------------------------------------------------------------------------


# --- taking samples ----------------------------------------------------------------------------------------------


# --- which devices are the cell's ---------------------------------------------------------------------------------


# --- the watch ---------------------------------------------------------------------------------------------------


class NoGpuSampler:
    """The sampler of a cell whose GPU cannot be watched per process (or that uses none): the CPU load only."""

    nvml_available = False

    def __call__(self, phase: str) -> Sample:
        load, cpus = cpu_load()
        return Sample(time.time(), phase, True, None, [], load, cpus)


class GpuWatch:
    """Samples every ``interval_s`` in a background thread while its ``with`` block runs, plus once at exit.

    Every sample (also those taken with ``sample_now``) is appended to ``out_path`` as one JSON line, which is
    started afresh when the watch is made. An injected ``sampler`` may expose ``nvml_available``; else True.
    """

    def __init__(
        self,
        out_path: Path,
        interval_s: float = 2.0,
        device_indices: list[int] | None = None,
        sampler: Callable[[str], Sample] | None = None,
        cpu_sampler: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, not {interval_s}")
        self.out_path = Path(out_path)
        self.interval_s = interval_s
        self._sampler: Callable[[str], Sample] = sampler if sampler is not None else NvmlSampler(device_indices)
        self._cpu: Callable[[], dict[str, Any]] = cpu_sampler if cpu_sampler is not None else CpuSampler()
        self._samples: list[Sample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        self.out_path.write_text("", encoding="utf-8")

    @property
    def samples(self) -> list[Sample]:
        """The samples taken so far, in order (a copy)."""
        with self._lock:
            return list(self._samples)

    @property
    def nvml_available(self) -> bool:
        """False when the machine has no NVIDIA driver, so GPU processes cannot be watched."""
        return bool(getattr(self._sampler, "nvml_available", True))

    def _take(self, phase: str) -> Sample:
        """One sample from the sampler; a sampler that raises yields a failed sample, never an exception."""
        try:
            return self._sampler(phase)
        except Exception as exc:
            load, cpus = cpu_load()
            return Sample(time.time(), phase, False, f"sampler raised {error_text(exc)}", [], load, cpus)

    def sample_now(self, phase: str, mark: str | None = None) -> Sample:
        """Take one sample (``mark``: 'request-start' / 'request-end' bound the CPU window), append it as a JSON
        line to ``out_path`` and keep it in memory."""
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, not {phase!r}")
        if mark not in MARKS:
            raise ValueError(f"mark must be one of {MARKS}, not {mark!r}")
        with self._lock:
            sample = self._take(phase)
            try:
                cpu = self._cpu()
            except Exception:  # never let the CPU accounting break a cell; the verdict notes it is missing
                cpu = {}
            sample = replace(sample, mark=mark, **cpu)
            with self.out_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(sample.to_json(), sort_keys=True) + "\n")
                fh.flush()
            self._samples.append(sample)
        return sample

    def verdict(
        self,
        allowed_pids: Collection[int],
        *,
        max_load_per_cpu: float | None = None,
        max_foreign_cpu: float | None = None,
        backend: str = "cuda",
    ) -> Verdict:
        """``judge`` applied to this watch's samples."""
        return judge(
            self.samples,
            allowed_pids,
            nvml_available=self.nvml_available,
            max_load_per_cpu=max_load_per_cpu,
            max_foreign_cpu=max_foreign_cpu,
            backend=backend,
        )

    def _run(self) -> None:
        """The thread: a 'during' sample at once (even if already stopped) and every ``interval_s`` until stopped."""
        while True:
            self.sample_now("during")
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> GpuWatch:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"gpuwatch:{self.out_path.name}", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        try:
            self.sample_now("during")
        finally:
            self.close()

    def close(self) -> None:
        """Release NVML if the default sampler initialised it."""
        if isinstance(self._sampler, NvmlSampler):
            self._sampler.close()
