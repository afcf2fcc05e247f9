"""The progress lines (plugins/snakemake-logger-plugin-specbench): their words, and what a real Snakemake run with
the plugin selected by the workflow profile prints: each running job's last log line and log path, and the cells
measured with the time left."""

from __future__ import annotations

import io
import logging
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from snakemake.logging import ColorizingTextHandler
from snakemake_logger_plugin_specbench import write_between
from snakemake_logger_plugin_specbench.lines import PREFIX, cells_line, duration, estimate_left, last_progress

from support.paths import REPO

CMAKE = (
    "[ 98%] Building CXX object tools/server/CMakeFiles/llama-server-impl.dir/server.cpp.o\n"
    "[100%] Linking CXX executable ../../bin/llama-server\n"
)
BAR = (
    "model.safetensors:   0%|          | 0.00/1.2G [00:00<?, ?B/s]\rmodel.safetensors:  45%|\x1b[32m####\x1b[0m"
    "      | 540M/1.2G [00:08<00:10, 67.1MB/s]\r"
)


def test_the_last_line_of_a_log_is_its_progress() -> None:
    assert last_progress(CMAKE) == "[100%] Linking CXX executable ../../bin/llama-server"
    assert last_progress(BAR) == "model.safetensors:  45%|####      | 540M/1.2G [00:08<00:10, 67.1MB/s]"
    assert last_progress("x" * 300).endswith("...") and len(last_progress("x" * 300)) == 110
    assert last_progress("\n\n") == "(no output yet)"


def test_the_time_left_comes_from_each_rules_finished_jobs() -> None:
    durations = {"cell": [2.0, 4.0], "cell_sequence": [10.0]}
    left = estimate_left(durations, {"cell": 3, "cell_sequence": 2, "condition_sequence": 1})
    assert left == pytest.approx(3 * 3.0 + 2 * 10.0 + 1 * 16 / 3)
    assert estimate_left({}, {"cell": 3}) is None
    assert [duration(s) for s in (45, 420, 7500)] == ["45 s", "7 min", "2 h 05 min"]


def test_the_cells_line() -> None:
    line = cells_line(31, [4.0, 4.2], 12, 40, 420.0)
    assert line == f"{PREFIX} cells 31 measured in 12 of 40 jobs (4.1 s a cell); about 7 min left"
    assert cells_line(0, [], 0, 4, None).endswith("in 0 of 4 jobs; time left: after the first job")
    assert cells_line(4, [1.0], 3, 3, 0.0) == f"{PREFIX} cells 4 measured in 3 of 3 jobs (1.0 s a cell)"


class _HeldStream(io.StringIO):
    """A stream whose first write waits until it is let go: Snakemake's handler caught between a line's message
    and its newline."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.go = threading.Event(), threading.Event()

    def write(self, text: str) -> int:
        if not self.inside.is_set():
            self.inside.set()
            self.go.wait(10)
        return super().write(text)


def test_a_progress_line_never_lands_inside_one_of_snakemakes_lines() -> None:
    stream = _HeldStream()
    handler = ColorizingTextHandler(nocolor=True, stream=stream)
    logger = logging.Logger("snakemake.logging.test")
    logger.addHandler(handler)
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, "Finished jobid: 3", None, None)
    snakemake_line = threading.Thread(target=handler.handle, args=(record,))
    ours = threading.Thread(target=write_between, args=(stream, f"{PREFIX} cells 2\n", logger))
    snakemake_line.start()
    assert stream.inside.wait(10)
    ours.start()
    ours.join(0.5)  # were it not held back, it would write now, between the message and its newline
    stream.go.set()
    snakemake_line.join(10)
    ours.join(10)
    assert stream.getvalue().splitlines() == ["Finished jobid: 3", f"{PREFIX} cells 2"]


# A build that writes its log, then nothing for a while; two fresh cells and a sequence job of two cells, each
# writing a record with its wall time; a job of another rule whose log lies elsewhere.
SNAKEFILE = r"""
rule all:
    input:
        expand("results/cells/m/off/r{r}.json", r=[1, 2]),
        expand("results/cells/m/mtp/r{r}.json", r=[1, 2]),
        "results/other.txt",


rule build:
    output:
        "built.txt",
    log:
        "logs/llama_cpp/build.log",
    shell:
        "printf '[ 10%%] Building\\n[100%%] Linking CXX executable llama-server\\n' > {log}; sleep 4; touch {output}"


rule cell:
    input:
        "built.txt",
    output:
        "results/cells/m/off/r{r}.json",
    log:
        server="logs/off/r{r}.server.log",
        run="logs/off/r{r}.log",
    shell:
        "echo 'server up' > {log.server}; echo 'cell off r{wildcards.r}' > {log.run}; sleep 1; "
        "echo '{{\"timing\": {{\"cell_wall_s\": 0.5}}}}' > {output}"


rule cell_sequence:
    input:
        "built.txt",
    output:
        expand("results/cells/m/mtp/r{r}.json", r=[1, 2]),
    log:
        "logs/mtp/warm.log",
    shell:
        "echo 'cells mtp' > {log}; sleep 1; "
        "for f in {output}; do echo '{{\"timing\": {{\"cell_wall_s\": 2.0}}}}' > $f; done"


rule other:
    output:
        "results/other.txt",
    log:
        "logs/builds/b2/extra.log",
    shell:
        "echo 'fetching extra build b2' > {log}; sleep 3; touch {output}"
"""
FAST = ["--logger-specbench-interval", "0.2", "--logger-specbench-first", "1", "--logger-specbench-every", "1"]


def _snakemake(work: Path, *args: str) -> list[str]:
    """Snakemake in ``work`` (the repository's default workflow profile beside its Snakefile, so the plugin is the
    one that profile selects); the progress lines it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", *FAST, *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return [line for line in done.stderr.splitlines() if line.startswith(PREFIX)]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    shutil.copytree(REPO / "profiles" / "default", tmp_path / "profiles" / "default")
    return tmp_path


def test_a_run_shows_each_running_jobs_log_and_the_cells_with_the_time_left(work: Path) -> None:
    lines = _snakemake(work, "--logger-specbench-cells-every", "0")
    build = [ln for ln in lines if ln.startswith(f"{PREFIX} build, ")]
    assert len(build) >= 2, lines  # a quiet job's line comes again while it runs, with the time so far
    assert build[0].endswith(" so far: [100%] Linking CXX executable llama-server  [logs/llama_cpp/build.log]"), build
    seconds = [int(re.search(r", (\d+) s so far", ln).group(1)) for ln in build]
    assert seconds == sorted(seconds) and seconds[-1] > seconds[0], build
    assert any(ln.endswith("fetching extra build b2  [logs/builds/b2/extra.log]") for ln in lines), lines
    cells = [ln for ln in lines if ln.startswith(f"{PREFIX} cells ")]
    # the time left comes once a rule with jobs still to run has been seen: which cell job Snakemake runs first decides
    first = rf"{PREFIX} cells \d measured in 1 of \d jobs \(\d\.\d s a cell\)(; about \d+ s left)?"
    assert re.fullmatch(first, cells[0]), cells
    assert cells[-1] == f"{PREFIX} cells 4 measured in 3 of 3 jobs (1.2 s a cell)"  # (0.5 + 0.5 + 2 + 2) / 4


def test_a_rerun_counts_the_cells_it_measures_again(work: Path) -> None:
    _snakemake(work)
    lines = _snakemake(work, "--forcerun", "cell_sequence")
    assert [ln for ln in lines if ln.startswith(f"{PREFIX} cells ")] == [
        f"{PREFIX} cells 2 measured in 1 of 1 jobs (2.0 s a cell)"
    ]
    assert not any(ln.startswith(f"{PREFIX} build") for ln in lines)  # nothing else ran
