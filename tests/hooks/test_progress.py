"""What the user sees while the workflow runs (specbench.hooks.progress): the working stage's last log line, and
the cells done / total with the time left estimated from the records' wall times."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import pytest

from specbench.hooks.progress import (
    PREFIX,
    ProgressWatch,
    cells_line,
    duration,
    estimate_left,
    last_progress,
    pace_of,
    running_outputs,
)

CMAKE = (
    "[ 98%] Building CXX object tools/server/CMakeFiles/llama-server-impl.dir/server.cpp.o\n"
    "[100%] Linking CXX executable ../../bin/llama-server\n"
)
BAR = (
    "model.safetensors:   0%|          | 0.00/1.2G [00:00<?, ?B/s]\rmodel.safetensors:  45%|\x1b[32m####\x1b[0m"
    "      | 540M/1.2G [00:08<00:10, 67.1MB/s]\r"
)


def test_the_time_left_comes_from_each_conditions_measured_cells() -> None:
    walls = {"off": [2.0, 4.0], "mtp": [10.0]}
    assert estimate_left(walls, {"off": 3, "mtp": 2, "dflash": 1}) == pytest.approx(3 * 3.0 + 2 * 10.0 + 1 * 16 / 3)
    assert estimate_left({}, {"off": 3}) is None
    assert [duration(s) for s in (45, 420, 7500)] == ["45 s", "7 min", "2 h 05 min"]


def test_the_pace_of_finishing_cells_scales_the_estimate() -> None:
    local = [(100.0, 3.0), (104.0, 3.0), (108.0, 3.0), (112.0, 3.0)]  # 1 s of job overhead between 3-s cells
    assert pace_of(local[:2]) == 1.0 and pace_of(local) == pytest.approx(4 / 3)
    cluster = [(100.0, 8.0), (101.0, 8.0), (102.0, 8.0), (103.0, 8.0), (104.0, 8.0)]  # 8-s cells, 8 at once
    assert pace_of(list(reversed(cluster))) == pytest.approx(1 / 8)
    assert estimate_left({"off": [3.0]}, {"off": 10}, pace_of(local)) == pytest.approx(40.0)


def test_the_cells_line() -> None:
    line = cells_line(37, 144, {"off": [4.0, 4.2]}, {"off": 107}, 2)
    assert line == f"{PREFIX} cells 37 of 144 done (2 measured now; 4.1 s a cell); about 7 min left"
    assert cells_line(0, 4, {}, {"off": 4}, 0).endswith("time left: after the first cell")
    assert cells_line(4, 4, {"off": [1.0]}, {}, 4).endswith("(4 measured now; 1.0 s a cell)")


def test_the_last_line_of_a_log_is_its_progress() -> None:
    assert last_progress(CMAKE) == "[100%] Linking CXX executable ../../bin/llama-server"
    assert last_progress(BAR) == "model.safetensors:  45%|####      | 540M/1.2G [00:08<00:10, 67.1MB/s]"
    assert last_progress("x" * 300).endswith("...") and len(last_progress("x" * 300)) == 110


def _record(work: Path, path: str, wall: float) -> None:
    (work / path).parent.mkdir(parents=True, exist_ok=True)
    (work / path).write_text(json.dumps({"record_version": 8, "timing": {"cell_wall_s": wall}}))


def test_the_watch_reports_new_cells_and_growing_stage_logs(tmp_path: Path) -> None:
    cells = [(f"results/cells/local/essay/{c}/t0.0/r{r}.json", c) for c in ("off", "mtp") for r in (1, 2)]
    _record(tmp_path, cells[0][0], 3.0)  # from an earlier run: counted as done, its wall time used
    log = tmp_path / "logs/llama_cpp/build.log"
    log.parent.mkdir(parents=True)
    log.write_text("[ 10%] Building C object ggml/src/ggml.c.o\n")
    os.utime(log, (1, 1))
    now = [100.0]
    out = io.StringIO()
    watch = ProgressWatch(cells, workdir=tmp_path, out=out, clock=lambda: now[0])
    watch.poll()
    assert out.getvalue() == ""  # nothing measured in this run yet, the build log not written since
    assert watch.poll() is None and cells_line(1, 4, {"off": [3.0]}, {"off": 1, "mtp": 2}, 0).endswith("9 s left")
    log.write_text(CMAKE)  # the build goes on
    now[0] = 101.0
    watch.poll()
    _record(tmp_path, cells[2][0], 9.0)
    now[0] = 105.0  # within cells_every_s of the build line... but the first cells line comes at once
    watch.poll()
    assert out.getvalue().splitlines() == [
        f"{PREFIX} llama.cpp build, 0 s so far: [100%] Linking CXX executable ../../bin/llama-server  "
        "[logs/llama_cpp/build.log]",
        f"{PREFIX} cells 2 of 4 done (1 measured now; 6.0 s a cell); about 12 s left",
    ]
    _record(tmp_path, cells[1][0], 3.0)
    now[0] = 110.0  # the count changed within cells_every_s of the last cells line: shown later
    watch.poll()
    assert len(out.getvalue().splitlines()) == 2
    _record(tmp_path, cells[3][0], 9.0)
    watch.stop()  # the last look: everything done, shown at once
    assert out.getvalue().splitlines()[-1] == f"{PREFIX} cells 4 of 4 done (3 measured now; 6.0 s a cell)"


def test_a_cell_file_this_run_makes_again_is_not_done_until_rewritten(tmp_path: Path) -> None:
    """After an edit of the measurement code the old cell files are still there until each job runs: counting them
    as done said 'cells 75 of 216 done' when every cell was to be measured again."""
    cells = [(f"results/cells/local/essay/off/t0.0/r{r}.json", "off") for r in (1, 2, 3)]
    for path, _ in cells:
        _record(tmp_path, path, 4.0)
        os.utime(tmp_path / path, ns=(10**18, 10**18))
    now = [100.0]
    out = io.StringIO()
    watch = ProgressWatch(cells, remade={cells[1][0], cells[2][0]}, workdir=tmp_path, out=out, clock=lambda: now[0])
    watch.poll()
    assert out.getvalue() == ""  # nothing written by this run yet
    (tmp_path / cells[1][0]).unlink()  # Snakemake removes an out-of-date output before its job runs
    watch.poll()
    _record(tmp_path, cells[1][0], 6.0)
    watch.poll()
    assert out.getvalue().splitlines() == [f"{PREFIX} cells 2 of 3 done (1 measured now; 4.5 s a cell); about 4 s left"]
    _record(tmp_path, cells[2][0], 6.0)  # rewritten in place: a new modification time
    watch.stop()
    assert out.getvalue().splitlines()[-1] == f"{PREFIX} cells 3 of 3 done (2 measured now; 4.8 s a cell)"


def test_a_stage_whose_job_still_runs_is_shown_though_its_log_is_quiet(tmp_path: Path) -> None:
    """A long compile writes nothing for minutes: while Snakemake marks the build's output incomplete (its job runs),
    the line comes again with the time so far; once the job is done, no more."""
    log = tmp_path / "logs/llama_cpp/build.log"
    log.parent.mkdir(parents=True)
    marker = tmp_path / ".snakemake/incomplete" / base64.urlsafe_b64encode(b"resources/llama.cpp/build").decode()
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    assert running_outputs(tmp_path) == {"resources/llama.cpp/build"}
    now, out = [0.0], io.StringIO()
    watch = ProgressWatch([], workdir=tmp_path, out=out, clock=lambda: now[0])
    log.write_text(CMAKE.splitlines()[0] + "\n")
    for t in (0.0, 30.0, 60.0):
        now[0] = t
        watch.poll()
    assert [line.split(" so far")[0] for line in out.getvalue().splitlines()] == [
        f"{PREFIX} llama.cpp build, 0 s",
        f"{PREFIX} llama.cpp build, 30 s",
        f"{PREFIX} llama.cpp build, 60 s",
    ]
    marker.unlink()
    now[0] = 120.0
    watch.poll()
    assert len(out.getvalue().splitlines()) == 3
