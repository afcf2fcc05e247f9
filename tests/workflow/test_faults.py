"""Faults on purpose, on real runs (tiny model, CPU): kill Snakemake, SIGTERM the job, kill the server, take its
port, fill or freeze the disk, start a second workflow, load the CPU. After each: no lost or half-written cell,
no orphan process, and the next plain run completes the matrix.

One small matrix (1 task x 2 conditions x 1 repeat, 128 tokens) runs once for the module; each fault test then
breaks one cell of it and checks what is left."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import psutil
import pytest

from specbench.core.plan.cells import Cell
from specbench.core.steps.files import read_json, sha256_text
from specbench.engines import server_process as server_module
from specbench.engines.server_process import listening_addresses
from specbench.measure.condition_setup import Setup
from specbench.measure.runner import run_cells
from support.paths import OUTPUT_CACHE, REPO
from support.workflow import (
    BACK_HALF,
    fail_message,
    frozen,
    job_counts,
    live_processes,
    llama_server_pids_using,
    llama_servers_in,
    planned,
    signal_mask,
    snakemake,
    write_yaml,
)

TINY = REPO / "config" / "tiny.yaml"
TASK = "essay"
CONDITIONS = ["off", "ngram-mod"]
SECRET = "hf_specbench_marker_7d1f0c"  # HF_TOKEN during every run here: it must land in no file
SETTINGS = {
    "name": "fault tests",
    # BF16, not Q4_K_M: on some CPUs llama-server b11223 crashes (general protection fault) on the tiny model's
    # quantized tied embeddings; the faults here do not depend on the quantization.
    "models": {"target": {"quant": "BF16"}},
    "select": {"tasks": [TASK], "conditions": CONDITIONS},
    "temperatures": [0.0],
    "repeats": 1,
    "max_tokens": 128,
    # This machine may be shared with other work; CPU contention is judged in its own test below.
    "measurement": {"max_foreign_cpu": None, "max_attempts": 3},
}
# the cell broken mid-generation (128 tokens: seconds of decoding), in its models folder
CELL = planned([TINY, SETTINGS], Cell(TASK, "off", 0.0, 1))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The small matrix, complete, in a fresh working directory."""
    work = tmp_path_factory.mktemp("faults")
    override = write_yaml(work / "faults.yaml", SETTINGS)
    env = {"HF_TOKEN": SECRET, "HF_HUB_OFFLINE": "1"}
    configs = [TINY, override]
    result = snakemake(work, ["all"], configs, env=env, start_from="tiny-models")
    assert result.returncode == 0, fail_message(result)
    model = next(work.glob("resources/models/tiny-target-*/BF16.gguf"))
    return {"work": work, "configs": configs, "env": env, "model": model}


def _argv(run: dict, targets: list[str], *extra: str) -> tuple[list[str], dict[str, str]]:
    argv = [
        sys.executable,
        "-m",
        "snakemake",
        *targets,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(run["work"]),
        "--cores",
        "2",
        "--cache",
        *extra,
        "--configfile",
        *map(str, run["configs"]),
    ]
    return argv, {**os.environ, "SNAKEMAKE_OUTPUT_CACHE": str(OUTPUT_CACHE), **run["env"]}


@contextlib.contextmanager
def _started(run: dict, targets: list[str], *extra: str) -> Iterator[subprocess.Popen]:
    """A Snakemake run in the background (its own session, as a terminal or a batch job would start it)."""
    argv, env = _argv(run, targets, *extra)
    proc = subprocess.Popen(
        argv,
        cwd=run["work"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _server_log(run: dict, cell: Cell) -> Path:
    return run["work"] / cell.path.replace(".json", ".server.log")


def _break(run: dict) -> Path:
    """Remove the cell's file and server log, so that what the test sees next is from its own run."""
    cell_file = run["work"] / CELL.path
    cell_file.unlink()
    _server_log(run, CELL).unlink(missing_ok=True)
    return cell_file


def _wait_for(what: str, check: Callable[[], bool], timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


# The requests a server answers before the cell's own: its warm-up (tiny.yaml keeps server.warmup_tokens' default)
REQUESTS_BEFORE_THE_CELL = 1


def _generating(run: dict, cell: Cell, attempt: int = 1) -> Callable[[], bool]:
    """True once this run's server of the given attempt has started generating the cell's own answer (its log says
    so: the slot's task after the warm-up's)."""
    log = _server_log(run, cell)

    def check() -> bool:
        if not log.exists():
            return False
        text = log.read_text(errors="replace")
        header = f"--- specbench: attempt {attempt} of "
        return header in text and text.split(header, 1)[1].count("processing task") > REQUESTS_BEFORE_THE_CELL

    return check


def _processes_under(path: Path) -> list[tuple[int, str]]:
    """Processes (pid, command line) whose command line mentions ``path``: a cell's bash, script and server."""
    return [(pid, " ".join(argv)) for pid, argv, _ in live_processes() if str(path) in " ".join(argv)]


def _orphans(run: dict) -> list[tuple[int, str]]:
    """Anything still running for this working directory: Snakemake's job scripts or a server on its model."""
    scripts = _processes_under(run["work"] / ".snakemake" / "scripts")
    servers = [(pid, "llama-server") for pid in llama_servers_in(run["work"])]
    return scripts + servers


def _no_partial_files(run: dict) -> list[Path]:
    return [p for p in (run["work"] / "results").rglob(".*") if p.is_file() and ".tmp" in p.name]


def _plan(run: dict) -> dict[str, int]:
    argv, env = _argv(run, ["all"], "--dry-run")
    result = subprocess.run(argv, cwd=run["work"], env=env, capture_output=True, text=True)
    assert result.returncode == 0, fail_message(result)
    return job_counts(result.stdout + result.stderr)


def _resume(run: dict) -> subprocess.CompletedProcess:
    """The next plain run of the whole matrix."""
    return snakemake(run["work"], ["all"], run["configs"], env=run["env"])


# --- the faults ----------------------------------------------------------------------------------------------------


@pytest.mark.workflow
def test_server_listens_on_loopback_only_and_kill_9_of_snakemake_leaves_nothing_running(run: dict) -> None:
    """Snakemake killed and left unreaped (a zombie, as under an init that never reaps): its cell stops within a
    second (the server gets its SIGTERM while frozen, so the answer cannot complete first), no record is written."""
    cell_file = _break(run)
    with _started(run, [CELL.path]) as proc:
        _wait_for("the server to generate", _generating(run, CELL))
        [server_pid] = llama_servers_in(run["work"])
        listening = listening_addresses(server_pid)
        assert listening and all(address == "127.0.0.1" for address, _ in listening), listening
        with frozen(server_pid, hold_s=0.0):  # the answer cannot complete before the script sees Snakemake die
            os.kill(proc.pid, signal.SIGKILL)  # Snakemake only: its job's bash, script and server are left alone
            killed = time.monotonic()
            _wait_for(
                "the cell to stop its server", lambda: signal.SIGTERM in signal_mask(server_pid, "ShdPnd"), timeout_s=10
            )
            reacted_s = time.monotonic() - killed
            assert psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE  # not reaped: this test is its parent
        _wait_for("the cell's script and server to stop", lambda: not _orphans(run), timeout_s=30)
        assert psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE
        proc.wait(timeout=10)
    print(f"kill -9 of Snakemake (unreaped) -> SIGTERM to the cell's server after {reacted_s:.2f} s")
    assert reacted_s < 1.0, reacted_s  # the parent watch looks every 0.5 s
    assert not cell_file.exists() and not _no_partial_files(run)
    # Snakemake's lock outlives a kill -9; Snakemake says to unlock (docs/usage.md says the same).
    locked = _resume(run)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr, fail_message(locked)
    unlock = snakemake(run["work"], ["all"], run["configs"], "--unlock", env=run["env"])
    assert unlock.returncode == 0, fail_message(unlock)
    # only the interrupted cell, and the explanation that reads it (it is ngram-mod's reference)
    assert _plan(run) == {"cell": 1, "explain_divergence": 1, "aggregate": 1, **BACK_HALF, "all": 1}
    resumed = _resume(run)
    assert resumed.returncode == 0, fail_message(resumed)
    assert read_json(cell_file)["attempt"] == 1 and not _orphans(run)


@pytest.mark.workflow
def test_sigterm_of_the_job_stops_the_cell_and_says_what_to_run(run: dict) -> None:
    cell_file = _break(run)
    with _started(run, [CELL.path]) as proc:
        _wait_for("the server to generate", _generating(run, CELL))
        [server_pid] = llama_servers_in(run["work"])
        with frozen(server_pid):  # the answer cannot complete before the signal lands
            os.killpg(proc.pid, signal.SIGTERM)  # a batch scheduler's time-out: every process of the job
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    line = next((ln for ln in stderr.splitlines() if ln.startswith("specbench: ")), "")
    assert line.startswith(f"specbench: cells {CELL.label}: stopped (received signal SIGTERM)"), stderr[-3000:]
    assert "run the same snakemake command again" in line
    assert not _orphans(run) and not cell_file.exists() and not _no_partial_files(run)
    assert _plan(run) == {"cell": 1, "explain_divergence": 1, "aggregate": 1, **BACK_HALF, "all": 1}
    resumed = _resume(run)
    assert resumed.returncode == 0, fail_message(resumed)
    assert cell_file.exists() and not _orphans(run)


@pytest.mark.workflow
def test_server_killed_mid_generation_is_recorded_and_measured_again(run: dict) -> None:
    cell_file = _break(run)
    with _started(run, [CELL.path]) as proc:
        _wait_for("the server to generate", _generating(run, CELL))
        [server_pid] = llama_servers_in(run["work"])
        os.kill(server_pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr[-4000:]
    record = read_json(cell_file)
    assert record["attempt"] == 2
    [failed] = record["rejected_attempts"]
    assert failed["outcome"] == "failed" and failed["server_pid"] == server_pid
    assert failed["reason"] == f"llama-server (pid {server_pid}) was killed by SIGKILL during the request"
    assert record["server"]["pid"] != server_pid
    assert record["response"]["timings"]["predicted_n"] > 0
    log = (run["work"] / f"logs/{CELL.path.replace('.json', '.log')}").read_text()
    assert f"cell {CELL.label}: attempt 1 of 3 failed: llama-server (pid {server_pid}) was killed" in log
    assert not _orphans(run)


@pytest.mark.workflow
def test_a_second_workflow_in_the_same_directory_is_refused(run: dict) -> None:
    cell_file = _break(run)
    with _started(run, [CELL.path]) as first:
        _wait_for("the server to generate", _generating(run, CELL))
        [server_pid] = llama_servers_in(run["work"])
        with frozen(server_pid, hold_s=0.0):  # the first cannot finish (and unlock) before the second has tried
            second = _resume(run)
        assert second.returncode != 0
        assert "LockException" in second.stderr or "cannot be locked" in second.stderr, fail_message(second)
        _, stderr = first.communicate(timeout=180)
    assert first.returncode == 0, stderr[-3000:]
    assert read_json(cell_file)["attempt"] == 1 and not _orphans(run)


def _setup(run: dict, cell: Cell, tmp_path: Path, **changes: object) -> Setup:
    """The Setup the workflow gave this cell, from its files, with logs in ``tmp_path``."""
    work = run["work"]
    record = read_json(work / cell.path)
    argv = record["server"]["argv"]
    bin_dir = work / "resources/llama.cpp/bin"
    model_manifest = read_json(next(work.glob("results/models/tiny-target-*.json")))
    setup = Setup(
        condition=cell.condition,
        server_binary=bin_dir / "llama-server",
        build_manifest=read_json(bin_dir / "manifest.json"),
        model_path=run["model"],
        model_manifest=model_manifest,
        draft_path=None,
        draft_manifest=None,
        prompt_manifests={cell.task: read_json(work / f"results/prompts/{cell.task}.json")},
        server_args=[str(work / a) if a.startswith("resources/") else a for a in argv[1 : argv.index("--host")]],
        requires=[],
        max_tokens={cell.task: 16},
        reasoning=False,
        base_seed=1000,
        startup_timeout_s=120,
        request_timeout_s=120,
        server_log=tmp_path / "server.log",
        gpu_samples=tmp_path / "gpu.jsonl",
        code_fingerprint="test",
        max_attempts=3,
    )
    return Setup(**{**setup.__dict__, **changes})


class _Impostor(BaseHTTPRequestHandler):
    """A process that is not llama-server but answers like a healthy one."""

    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.requests.append(f"GET {self.path}")
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"status": "ok"}')

    def do_POST(self) -> None:
        self.requests.append(f"POST {self.path}")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.workflow
def test_a_port_taken_before_the_server_binds_is_never_talked_to(
    run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    impostor = ThreadingHTTPServer(("127.0.0.1", 0), _Impostor)
    taken = impostor.server_address[1]
    thread = threading.Thread(target=impostor.serve_forever, daemon=True)
    thread.start()
    ports = iter([taken])
    real_free_port = server_module.free_port
    monkeypatch.setattr(server_module, "free_port", lambda: next(ports, None) or real_free_port())
    try:
        [record] = run_cells(_setup(run, CELL, tmp_path), [CELL])
    finally:
        impostor.shutdown()
        impostor.server_close()
    assert _Impostor.requests == []  # nothing was sent to a process the cell did not start
    assert record["attempt"] == 2 and record["server"]["port"] != taken
    [failed] = record["rejected_attempts"]
    assert failed["outcome"] == "failed"
    # llama-server binds within milliseconds of starting: it either fails to bind (and exits) or, had it been
    # slower, the socket check finds the port held by another process before anything is sent.
    assert f"port {taken} on 127.0.0.1 is held by pid {os.getpid()}" in failed["reason"], failed["reason"]
    assert not llama_server_pids_using(run["model"])


@pytest.mark.workflow
def test_a_prompt_longer_than_the_context_fails_at_once_with_the_servers_reason(run: dict, tmp_path: Path) -> None:
    setup = _setup(run, CELL, tmp_path)
    long_prompt = {**setup.prompt_manifests[TASK], "messages": [{"role": "user", "content": "word " * 6000}]}
    setup = Setup(**{**setup.__dict__, "prompt_manifests": {TASK: long_prompt}})
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        run_cells(setup, [CELL])
    message = str(caught.value)
    assert type(caught.value).__name__ == "CellError"
    assert message.startswith(f"cell {TASK}/off/t0.0/r1: the server refused the request: ")
    assert "context" in message and message.endswith(f"read {tmp_path / 'server.log'}")
    assert (tmp_path / "server.log").read_text().count("--- specbench: attempt") == 1  # not retried
    assert time.monotonic() - started < 60 and not llama_server_pids_using(run["model"])


@pytest.mark.workflow
def test_a_socket_that_cannot_be_checked_fails_the_cell_at_once(
    run: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the server's sockets cannot be read (macOS, hidepid, another user): no /health is asked, no attempt
    waits for the start-up timeout, and the cell fails at once naming why (a new server would fail the same way)."""

    def denied(self: psutil.Process, kind: str = "inet") -> list:
        raise psutil.AccessDenied(self.pid, self.name())

    monkeypatch.setattr(psutil.Process, "net_connections", denied)
    setup = _setup(run, CELL, tmp_path, startup_timeout_s=600)
    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        run_cells(setup, [CELL])
    message = str(caught.value)
    assert type(caught.value).__name__ == "CellError"
    assert message.startswith(f"cell {TASK}/off/t0.0/r1: cannot check that llama-server (pid "), message
    assert "cannot be read here (AccessDenied" in message and "another attempt would fail the same way" in message
    assert message.endswith(f"read {tmp_path / 'server.log'}")
    assert (tmp_path / "server.log").read_text().count("--- specbench: attempt") == 1  # not retried
    assert time.monotonic() - started < 60 and not llama_server_pids_using(run["model"])  # not the 600 s timeout


def _immutable(path: Path, on: bool) -> bool:
    """chattr +i / -i (root ignores permission bits; an immutable directory refuses new entries even to root)."""
    return subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True).returncode == 0


@pytest.mark.workflow
def test_a_read_only_results_directory_leaves_no_partial_record(run: dict) -> None:
    cell_file = _break(run)
    folder = cell_file.parent
    if not shutil.which("chattr") or not _immutable(folder, True) or not _immutable(folder, False):
        pytest.skip("chattr +i is not permitted here (needs CAP_LINUX_IMMUTABLE on ext4/xfs)")
    try:
        with _started(run, [CELL.path]) as proc:
            _wait_for("the server to generate", _generating(run, CELL))
            assert _immutable(folder, True)
            _, stderr = proc.communicate(timeout=180)
    finally:
        _immutable(folder, False)
    assert proc.returncode != 0
    line = next((ln for ln in stderr.splitlines() if ln.startswith("specbench: ")), "")
    assert line.startswith(f"specbench: cells {CELL.label}: could not write its files: "), stderr[-3000:]
    assert "Operation not permitted" in line and "no cell file was written" in line
    assert not cell_file.exists() and not _no_partial_files(run) and not _orphans(run)
    resumed = _resume(run)
    assert resumed.returncode == 0, fail_message(resumed)


@pytest.mark.workflow
def test_a_full_disk_leaves_no_partial_record(run: dict) -> None:
    cell_file = _break(run)
    folder = cell_file.parent
    saved = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)")
    try:
        with _started(run, [CELL.path]) as proc:
            _wait_for("the server to generate", _generating(run, CELL))
            filler = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                with contextlib.suppress(OSError):
                    while True:
                        os.write(filler, b"\0" * 65536)
            finally:
                os.close(filler)
            _, stderr = proc.communicate(timeout=180)
        assert not [p for p in folder.iterdir() if p.name.endswith(".json") or ".tmp" in p.name]
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)
    for name, data in saved.items():
        if not (folder / name).exists():
            (folder / name).write_bytes(data)
    assert proc.returncode != 0
    line = next((ln for ln in stderr.splitlines() if ln.startswith("specbench: ")), "")
    assert f"cells {CELL.label}" in line or f"cell {CELL.label}" in line, stderr[-3000:]
    assert "No space left on device" in line
    assert not cell_file.exists() and not _no_partial_files(run) and not _orphans(run)
    resumed = _resume(run)
    assert resumed.returncode == 0, fail_message(resumed)


def _secret_files(root: Path) -> list[Path]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                if SECRET.encode() in handle.read():
                    hits.append(path)
    return hits


@pytest.mark.workflow
def test_the_hf_token_lands_in_no_record_log_or_report(run: dict, tmp_path: Path) -> None:
    report = tmp_path / "report.zip"
    made = snakemake(run["work"], [], run["configs"], "--report", str(report), env=run["env"])
    assert made.returncode == 0, fail_message(made)
    assert report.stat().st_size > 0
    assert SECRET.encode() not in report.read_bytes()
    unpacked = tmp_path / "report"
    shutil.unpack_archive(report, unpacked)
    assert _secret_files(unpacked) == []
    for folder in ("results", "logs", "benchmarks", ".snakemake/log", ".snakemake/metadata"):
        assert _secret_files(run["work"] / folder) == [], folder


# --- damaged inputs: refused before any cell, naming the file ----------------------------------------------------


def _only_cell(
    work: Path, override: Path, env: dict[str, str], plan: list[Path | dict] | None = None
) -> subprocess.CompletedProcess:
    """Ask for one 'off' cell of a fresh working directory with ``override`` merged over the tiny config; ``plan``:
    the configs that name the cell's models folder, where ``override`` itself is refused before any job."""
    target = planned(plan or [TINY, override], Cell(TASK, "off", 0.0, 1))
    return snakemake(work, [target.path], [TINY, override], env=env)


def _nothing_downstream(work: Path) -> None:
    assert not list(work.glob("results/cells/**/*.json")) and not list(work.glob("results/models/*.json"))
    assert not (work / "results/summary.csv").exists()


@pytest.mark.workflow
@pytest.mark.parametrize("damage", ["truncated", "corrupt header"])
def test_a_damaged_gguf_is_refused_naming_the_file(run: dict, tmp_path: Path, damage: str) -> None:
    data = run["model"].read_bytes()
    broken = tmp_path / "model.gguf"
    broken.write_bytes(data[: len(data) * 2 // 3] if damage == "truncated" else b"XXXX" + data[4:])
    work = tmp_path / "work"
    work.mkdir()
    override = write_yaml(
        work / "bad.yaml",
        {
            "models": {"target": {"source": "gguf", "gguf": {"path": str(broken)}}},
            "select": {"tasks": [TASK], "conditions": ["off"]},
            "temperatures": [0.0],
            "repeats": 1,
        },
    )
    result = _only_cell(work, override, run["env"])
    assert result.returncode != 0
    line = next((ln for ln in result.stderr.splitlines() if ln.startswith("specbench: model 'target': ")), "")
    assert str(broken) in line, fail_message(result)
    assert "is not a readable GGUF file" in line or (damage == "truncated" and "is truncated" in line), line
    _nothing_downstream(work)
    assert not (work / "results/cells").exists()  # no cell was started


@pytest.mark.workflow
def test_a_source_archive_with_the_wrong_sha256_is_refused_naming_the_file(run: dict, tmp_path: Path) -> None:
    archive = tmp_path / "llama.cpp.tar.gz"
    shutil.make_archive(str(tmp_path / "llama.cpp"), "gztar", root_dir=REPO / "config")
    work = tmp_path / "work"
    work.mkdir()
    override = write_yaml(
        work / "bad.yaml",
        {
            "llama_cpp": {"source": "archive", "archive": {"url": str(archive), "sha256": "0" * 64}},
            "select": {"tasks": [TASK], "conditions": ["off"]},
            "temperatures": [0.0],
            "repeats": 1,
        },
    )
    result = _only_cell(work, override, run["env"], plan=[TINY])  # the archive is no part of the models folder
    assert result.returncode != 0
    assert "config error at 'llama_cpp.archive.sha256': " in result.stderr, fail_message(result)
    assert f"source archive '{archive}' has sha256 " in result.stderr and f"not the pinned {'0' * 64}" in result.stderr
    assert not (work / "resources").exists()  # refused before any job
    assert not (work / "resources/llama.cpp/source-archive").exists()
    assert not (work / "resources/llama.cpp/bin").exists()
    _nothing_downstream(work)


def _without_chat_template(model: Path, dest: Path) -> Path:
    """A copy of ``model`` without tokenizer.chat_template, made with the gguf package's own metadata tool (a base
    model's GGUF, such as Gemma 3 270M's, carries none)."""
    tool = [sys.executable, "-m", "gguf.scripts.gguf_new_metadata"]
    subprocess.run(
        [*tool, "--remove-metadata", "tokenizer.chat_template", "--force", str(model), str(dest)],
        check=True,
        capture_output=True,
    )
    return dest


@pytest.mark.workflow
def test_a_gguf_without_a_chat_template_is_refused_until_the_config_says_how_to_render(
    run: dict, tmp_path: Path
) -> None:
    bare = _without_chat_template(run["model"], tmp_path / "bare.gguf")
    work = tmp_path / "work"
    work.mkdir()

    def with_template(setting: str | None, goal: str = "all") -> subprocess.CompletedProcess:
        target = {"source": "gguf", "gguf": {"path": str(bare)}, **({"chat_template": setting} if setting else {})}
        override = {
            "models": {"target": target},
            "select": {"tasks": [TASK], "conditions": ["off"]},
            "temperatures": [0.0],
            "repeats": 1,
            "max_tokens": 32,
            "measurement": {"max_foreign_cpu": None},
        }
        return snakemake(work, [goal], [TINY, write_yaml(work / "bare.yaml", override)], env=run["env"])

    def one_line(result: subprocess.CompletedProcess) -> str:
        assert result.returncode != 0
        lines = [ln for ln in result.stderr.splitlines() if ln.startswith("specbench: ")]
        assert len(lines) == 1, fail_message(result)
        return lines[0]

    # the default (the GGUF's own template): refused by the verify step, one line naming the key, no cell
    line = one_line(with_template(None))
    assert line.startswith(f"specbench: model 'target': {bare} has no tokenizer.chat_template"), line
    assert "models.target.chat_template" in line and "none" in line
    _nothing_downstream(work)
    assert not (work / "results/cells").exists()
    # a name this build has not built in: refused by the cell before any server starts
    line = one_line(with_template("gemma3"))
    assert "models.target.chat_template is 'gemma3', which is not a template" in line and "gemma," in line, line
    placed_cell = planned([TINY, work / "bare.yaml"], Cell(TASK, "off", 0.0, 1))  # the bare GGUF's models folder
    cell = work / placed_cell.path
    server_log = _server_log({"work": work}, placed_cell)
    assert not cell.exists()
    assert not server_log.exists() or "--- specbench: attempt" not in server_log.read_text()  # no server started
    # a built-in template by name, then none: each runs, and the record says which rendered the prompt (the report
    # too, for the first: its line for each setting is tests/core/test_chat_template.py's)
    for setting in ["chatml", "none"]:
        result = with_template(setting, "all" if setting == "chatml" else placed_cell.path)
        assert result.returncode == 0, fail_message(result)
        record = read_json(cell)
        assert record["request"]["chat_template"] == {"setting": setting, "gguf_template_sha256": None}
        argv, prompt = record["server"]["argv"], record["request"]["prompt"]
        assert record["request"]["completion"]["prompt"] == prompt and record["response"]["tokens"]
        if setting == "chatml":
            assert argv[argv.index("--jinja") :].count("--no-jinja") == 1
            assert argv[argv.index("--chat-template") + 1] == "chatml"
            assert prompt.startswith("<|im_start|>user\n") and prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
        else:
            assert "--chat-template" not in argv and record["request"]["apply_template"] is None
            messages = [{"role": "user", "content": prompt}]  # the prompt is the task's one message, as it is
            assert (
                sha256_text(json.dumps(messages, sort_keys=True, ensure_ascii=False))
                == (record["provenance"]["prompt_sha256"])
            )
            assert "<|im_start|>" not in prompt
        if setting == "chatml":
            report = (work / "results/report.md").read_text()
            said = "llama-server's built-in 'chatml' (--no-jinja --chat-template chatml): 1 cell(s)"
            assert f"| chat template | {said} |" in report, report[:3000]


@pytest.mark.workflow
@pytest.mark.parametrize("damage", ["truncated shard", "missing shard"])
def test_a_damaged_hf_cache_is_refused_naming_the_file(run: dict, tmp_path: Path, damage: str) -> None:
    from support.hub_cache import populate_hf_cache, sharded_checkpoint

    hf_home = tmp_path / "hf"
    repo = "specbench-test/sharded"
    commit = populate_hf_cache(hf_home, repo, sharded_checkpoint(tmp_path / "checkpoint"))
    snapshot = hf_home / f"hub/models--specbench-test--sharded/snapshots/{commit}"
    if damage == "truncated shard":
        blob = (snapshot / "model-00001-of-00002.safetensors").resolve()
        blob.write_bytes(blob.read_bytes()[:1000])
        expected = "model-00001-of-00002.safetensors is truncated or damaged"
    else:
        (snapshot / "model-00002-of-00002.safetensors").unlink()
        expected = "shard model-00002-of-00002.safetensors listed in model.safetensors.index.json is missing"
    work = tmp_path / "work"
    work.mkdir()
    override = write_yaml(
        work / "bad.yaml", {"models": {"target": {"source": "hf", "hf": {"repo": repo, "revision": commit}}}}
    )
    model_id = f"specbench-test--sharded@{commit}"
    result = snakemake(
        work,
        [f"results/models/{model_id}.download.json"],
        [TINY, override],
        env={**run["env"], "HF_HOME": str(hf_home)},
    )
    assert result.returncode != 0
    line = next((ln for ln in result.stderr.splitlines() if ln.startswith("specbench: ")), "")
    assert line.startswith(f"specbench: {repo}@{commit}: {expected}"), fail_message(result)
    assert not (work / f"results/models/{model_id}.download.json").exists()
    assert not (work / f"resources/models/{model_id}/hf").exists()


# --- CPU contention (last: it runs its cell with other measurement settings) ------------------------------------


def _foreign_share(seconds: float) -> float:
    """The share of the machine's CPU time used by processes other than this one over ``seconds``."""
    from specbench.contention.cpu import CpuSampler

    sampler = CpuSampler()
    first, t0 = sampler(), time.time()
    time.sleep(seconds)
    last, t1 = sampler(), time.time()
    used = (last["cpu_busy_s"] - first["cpu_busy_s"]) - (last["cpu_own_s"] - first["cpu_own_s"])
    return used / ((t1 - t0) * (os.cpu_count() or 1))


def _hogs(seconds: float | None) -> list[subprocess.Popen]:
    """One busy loop per CPU, each ending by itself after ``seconds`` (None: until killed)."""
    loop = (
        "while True: pass"
        if seconds is None
        else f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass"
    )
    return [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(os.cpu_count() or 1)]


def _stop(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        hog.kill()
        hog.wait()


def _judged(run: dict, **measurement: float) -> dict:
    """The run with CPU contention judged (a config file, not --config: Snakemake's --config leaves a nested value's
    numbers as text)."""
    path = write_yaml(
        run["work"] / "contention.yaml", {"measurement": {"max_foreign_cpu": 0.25, "max_attempts": 4, **measurement}}
    )
    return {**run, "configs": [*run["configs"], path]}


def _cell_beside_hogs(
    run: dict, hog_s: float | None, quiet_timeout_s: float
) -> tuple[Path, int, str, list[subprocess.Popen], float]:
    """Break the cell, run it with CPU contention judged (3 s quiet windows) and start the hogs once its server
    generates; (the cell file, Snakemake's exit code, its stderr, the hogs, when they started). Skipped on a busy
    machine."""
    quiet = _foreign_share(3.0)
    if quiet > 0.1:
        pytest.skip(
            f"the machine is busy with other work ({quiet:.2f} of its CPU time): contention cannot be staged on it"
        )
    cell_file = _break(run)
    hogs: list[subprocess.Popen] = []
    try:
        with _started(_judged(run, quiet_window_s=3, quiet_timeout_s=quiet_timeout_s), [CELL.path]) as proc:
            _wait_for("the server to generate", _generating(run, CELL))
            started = time.time()
            hogs = _hogs(hog_s)
            _, stderr = proc.communicate(timeout=300)
    finally:
        _stop(hogs)
    return cell_file, proc.returncode, stderr, hogs, started


@pytest.mark.workflow
@pytest.mark.alone  # it judges CPU contention: nothing else may run beside it
def test_a_cpu_hog_mid_cell_makes_the_cell_wait_for_quiet_then_measure_clean(run: dict) -> None:
    cell_file, returncode, stderr, hogs, hogs_started = _cell_beside_hogs(run, hog_s=10, quiet_timeout_s=120)
    assert returncode == 0, stderr[-4000:]
    record = read_json(cell_file)
    first = record["rejected_attempts"][0]
    assert first["attempt"] == 1 and first["outcome"] == "contended"
    assert "other processes used" in first["reason"], first
    assert any(f"pid {hog.pid} python" in first["busiest"] for hog in hogs), first
    # one wait after attempt 1 (more only if other work on the machine contended a later attempt too)
    wait, *later = record["quiet_waits"]
    print(
        json.dumps(
            {
                "rejected": record["rejected_attempts"],
                "quiet_waits": record["quiet_waits"],
                "kept": {
                    "attempt": record["attempt"],
                    "started_at": record["started_at"],
                    "contention": record["contention"]["reason"],
                },
            },
            indent=1,
        )
    )
    assert wait["after_attempt"] == 1 and wait["quiet"] and wait["why"] == first["reason"], wait
    assert wait["window_s"] == 3 and wait["waited_s"] >= 2.9 and not wait["last"]["contended"]
    assert record["attempt"] == 2 + len(later) and record["contention"]["contended"] is False
    assert record["contention"]["foreign_cpu"]["share"] <= 0.25
    # the clean attempt's request started only after the hogs had ended (each ran 10 s from its own start)
    assert dt.datetime.fromisoformat(record["started_at"]).timestamp() > hogs_started + 10
    samples = [json.loads(line) for line in (run["work"] / record["gpu_samples"]).read_text().splitlines()]
    waited_after = {w["after_attempt"] for w in record["quiet_waits"]}
    assert {s["attempt"] for s in samples if s["phase"] == "wait"} == waited_after
    assert not _orphans(run)


@pytest.mark.workflow
@pytest.mark.alone  # it judges CPU contention: nothing else may run beside it
def test_a_cpu_hog_that_outlasts_the_bound_fails_the_cell_naming_it(run: dict) -> None:
    cell_file, returncode, stderr, hogs, _ = _cell_beside_hogs(run, hog_s=None, quiet_timeout_s=8)
    assert returncode != 0
    line = next((ln for ln in stderr.splitlines() if ln.startswith("specbench: ")), "")
    print(line)
    assert line.startswith(
        f"specbench: cell {CELL.label}: the machine was not quiet for 3 s within "
        "measurement.quiet_timeout_s = 8 s of waiting after attempt 1 was contended: other "
        "processes used "
    ), stderr[-3000:]
    name = Path(sys.executable).name  # the hog's process name: the interpreter as invoked (python, python3)
    assert any(f"pid {hog.pid} {name} ({sys.executable} -c while True: pass) using " in line for hog in hogs), line
    assert "run the same snakemake command again" in line
    assert not cell_file.exists() and not _no_partial_files(run) and not _orphans(run)
    resumed = _resume(run)  # the machine quiet again: the same command measures the cell
    assert resumed.returncode == 0, fail_message(resumed)
    assert read_json(cell_file)["quiet_waits"] == []
