"""Run cells: a server (fresh per cell, or one warm server for a sequence of cells: a task's repeats, or every cell
of a condition), the requests, a complete record per cell; contended attempts (another process on the GPU, or using
the CPU) and failed ones (the server died, its port was taken, the connection broke) are recorded and run again,
a contended one after waiting for a quiet machine (bounded); failures name the cell and the log."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from specbench.contention.contended import busiest, judge
from specbench.contention.cpu import CpuSampler
from specbench.contention.devices import DeviceError, assigned_devices
from specbench.contention.nvml import NVML_NOT_USED, device_info
from specbench.contention.quiet import QuietWait, wait_for_quiet
from specbench.contention.samples import Sample, Verdict
from specbench.contention.watch import GpuWatch, NoGpuSampler
from specbench.core.config.backends import WATCH_NVML, backend_of, check_drivable, list_devices, watch_of
from specbench.core.config.chat_template import unknown_builtin
from specbench.core.plan.cells import Cell
from specbench.core.records.counters import request_counts
from specbench.engines.endpoint import local_pids
from specbench.engines.metrics_scrape import scrape
from specbench.engines.registry import engine
from specbench.engines.server_process import RunningServer, ServerError, check_identity
from specbench.measure.cell_record import cell_record, last_log_section, machine_info, provenance, speculative_lines
from specbench.measure.condition_setup import Setup
from specbench.measure.requests import AttemptFailed, CellError, ask, asking, warm_up
from specbench.measure.together import ask_together


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def check_requirements(setup: Setup, label: str) -> None:
    """Refuse a condition that needs the model's MTP layer when the model file has none, and a chat template the
    server has not built in, before any server."""
    if "mtp" in setup.requires and not setup.model_manifest.get("mtp", {}).get("present", False):
        raise CellError(
            f"cell {label}: condition '{setup.condition}' needs the model's MTP layer, "
            f"but {setup.model_path} has none (see its model manifest)"
        )
    unknown = unknown_builtin(setup.chat_template, setup.server_binary)
    if unknown:
        raise CellError(f"cell {label}: {unknown}")


def _attempt(setup: Setup, cells: list[Cell], attempt: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One server for ``cells`` in order (one request each), watched from before start to after stop; only the
    cell's own devices (``setup.watched_devices``) are judged.

    Raises AttemptFailed when the server could not be started, was not ours, or died or broke off mid-request;
    CellError when the server refused the request itself (a bad request fails the same way on any server)."""
    results: list[dict[str, Any]] = []
    server_info: dict[str, Any] = {}
    scratch = _scratch(setup.gpu_samples, str(attempt))
    watch = _watch(setup, scratch)
    watch.sample_now("before")
    header = f"--- specbench: attempt {attempt} of {setup.max_attempts}, {_now()} ---"
    served_by = engine(setup.engine)
    try:
        with watch:
            t0 = time.perf_counter()
            with served_by.serve(setup, header) as server:
                ready_s = time.perf_counter() - t0
                server_info = served_by.server_record(server)
                served = server_info.get("model") or (server_info.get("endpoint") or {}).get("model")
                server_info["environment"] = served_by.environment(setup)
                server_info["warmup"] = warm_up(setup, server, served, cells[0].label)
                for position, cell in enumerate(cells, start=1):
                    if isinstance(server, RunningServer):
                        check_identity(server)  # the port is still this server's (it may have died and been taken)
                    before = scrape(server.url)  # the server's counters, read outside the timed window
                    started_at, c0 = _now(), time.perf_counter()
                    watch.sample_now("during", mark="request-start")
                    with asking(setup, server, cell.label):
                        if cell.concurrency is None:
                            exchanges = [ask(setup, server, cell, served)]
                        else:  # a load point: the cell's request from N clients at once
                            exchanges = ask_together(
                                functools.partial(ask, setup, server, cell, served), cell.concurrency
                            )
                    watch.sample_now("during", mark="request-end")
                    wall_s = time.perf_counter() - c0 + (ready_s if position == 1 else 0.0)
                    ended_at = _now()
                    metrics = {"before": before, "after": scrape(server.url)}
                    counted = request_counts(metrics)
                    missing = next(
                        (m for e in exchanges if (m := served_by.acceptance_missing(setup, e.response, counted))), None
                    )
                    if missing:
                        raise CellError(f"cell {cell.label}: {missing}; read {setup.server_log}")
                    results.append(
                        {
                            "cell": cell,
                            "exchange": exchanges[0],
                            "together": exchanges if cell.concurrency is not None else None,
                            "position": position,
                            "wall_s": wall_s,
                            "ready_s": ready_s if position == 1 else 0.0,
                            "started_at": started_at,
                            "ended_at": ended_at,
                            "metrics": metrics,
                            "loadavg": list(os.getloadavg()),
                        }
                    )
    except ServerError as error:
        if error.final:  # another attempt cannot help: the cell fails now, not after the start-up timeout
            raise CellError(f"cell {cells[0].label}: {error}") from error
        raise AttemptFailed(error.reason, server_info.get("pid")) from error
    except (CellError, AttemptFailed):
        raise
    except Exception as error:  # an I/O failure of our own mid-cell: name the cell and the log
        raise CellError(f"cell {cells[0].label}: {type(error).__name__}: {error}; read {setup.server_log}") from error
    finally:
        _keep_samples(setup.gpu_samples, watch, attempt)
        with contextlib.suppress(OSError):  # a read-only folder: the record's own write reports it
            scratch.unlink(missing_ok=True)
    verdict = _judge(setup, watch, watch.samples, set(server_info.get("local_pids") or [server_info["pid"]]))
    return [{**r, "server": server_info} for r in results], verdict


def _scratch(samples: Path, attempt: str) -> Path:
    """Where an attempt's watch writes its samples before they join the cell's samples file ('*': every attempt's)."""
    return samples.with_name(f".{samples.name}.attempt{attempt}")


def _watch(setup: Setup, scratch: Path) -> GpuWatch:
    """The cell's watch, writing to ``scratch``: NVML where the GPU is watched per process, else the CPU load only;
    an endpoint's processes on this machine count as the cell's own, like a server it started."""
    endpoint = {"cpu_sampler": CpuSampler(also=local_pids(setup.endpoint))} if setup.endpoint else {}
    return GpuWatch(
        scratch,
        interval_s=setup.sample_interval_s,
        sampler=None if setup.gpu_watch == WATCH_NVML else NoGpuSampler(),
        **endpoint,
    )


def _judge(setup: Setup, watch: GpuWatch, samples: list[Sample], allowed_pids: set[int]) -> Verdict:
    """The cell's own judgement of ``samples``: its limits, its devices, its backend."""
    return judge(
        samples,
        allowed_pids,
        nvml_available=watch.nvml_available,
        max_load_per_cpu=setup.max_load_per_cpu,
        max_foreign_cpu=setup.max_foreign_cpu,
        watched=setup.watched_devices,
        backend=backend_of(setup.build_manifest),
    )


def _keep_samples(path: Path, watch: GpuWatch, attempt: int) -> None:
    """Append an attempt's samples to the cell's samples file (JSON lines, each tagged with its attempt)."""
    with open(path, "a", encoding="utf-8") as out:
        for sample in watch.samples:
            out.write(json.dumps({"attempt": attempt, "nvml": watch.nvml_available, **sample.to_json()}) + "\n")


def run_cells(setup: Setup, cells: list[Cell]) -> list[dict[str, Any]]:
    """Run ``cells`` on one server, in the order given (one cell: the fresh-server case); measure again after a
    contended or failed attempt, up to ``max_attempts``; return the records (each says which attempt it is and why
    others were not)."""
    served_by = engine(setup.engine)
    gguf = served_by.serves_gguf  # vLLM's and an endpoint's models and templates are checked by themselves
    if gguf:
        check_requirements(setup, cells[0].label)
    unknown = sorted({c.key for c in cells} - (set(setup.prompt_manifests) & set(setup.max_tokens)))
    if unknown:
        raise CellError(f"cell {cells[0].label}: no prompt or max_tokens given for prompt(s) {unknown}")
    backend = backend_of(setup.build_manifest)
    # what this build can drive here, in llama.cpp's own words (vLLM's and an endpoint's are not listed)
    listed = list_devices(setup.server_binary) if gguf and setup.server_binary is not None else {"devices": []}
    gpu = device_info() if backend == "cuda" else dict(NVML_NOT_USED)
    try:  # a device of the build's backend; for CUDA the GPU(s) SLURM or the user assigned, which it has code for
        if gguf:
            check_drivable(backend, listed)
        devices = assigned_devices(gpu, os.environ, setup.build_manifest.get("cuda_architectures"), backend == "cuda")
    except (DeviceError, ValueError) as error:
        raise CellError(f"cell {cells[0].label}: {error}") from error
    clients = cells[0].concurrency  # a job's cells share their load (a load run has no warm condition)
    try:
        served_args = setup.server_args if clients is None else served_by.load_args(setup.server_args, clients)
    except ValueError as error:
        raise CellError(f"cell {cells[0].label}: {error}") from error
    setup = replace(
        setup,
        server_args=served_args,
        watched_devices=tuple(str(d["uuid"]) for d in devices) or None,
        gpu_watch=watch_of(backend, gpu.get("nvml") == "ok"),
    )
    setup.gpu_samples.unlink(missing_ok=True)
    for leftover in setup.gpu_samples.parent.glob(_scratch(setup.gpu_samples, "*").name):
        leftover.unlink(missing_ok=True)  # of a run killed before it could tidy up (SIGKILL by slurmd, OOM)
    setup.server_log.parent.mkdir(parents=True, exist_ok=True)
    setup.server_log.write_bytes(b"")  # attempts append to it
    rejected: list[dict[str, Any]] = []
    waits: list[QuietWait] = []
    for attempt in range(1, setup.max_attempts + 1):
        if rejected and rejected[-1]["outcome"] == "contended" and setup.quiet_timeout_s > 0:
            waits.append(_wait_for_quiet(setup, cells[0].label, rejected[-1], sum(w.waited_s for w in waits)))
            if not waits[-1].quiet:
                raise CellError(_not_quiet_message(setup, cells[0].label, waits))
        try:
            results, verdict = _attempt(setup, cells, attempt)
        except AttemptFailed as failure:
            rejected.append(
                {
                    "attempt": attempt,
                    "outcome": "failed",
                    "reason": failure.reason,
                    "foreign_pids": [],
                    "server_pid": failure.server_pid,
                    "tokens_per_s": [],
                }
            )
            print(
                f"cell {cells[0].label}: attempt {attempt} of {setup.max_attempts} failed: {failure.reason}", flush=True
            )
            continue
        if not verdict.contended:
            log_text = last_log_section(setup.server_log.read_text(encoding="utf-8", errors="replace"))
            shared = {
                "log_lines": speculative_lines(log_text),
                "provenance": provenance(setup),
                "machine": machine_info(gpu, devices, backend, listed["devices"]),
                "quiet_waits": [w.to_json() for w in waits],
            }
            return [cell_record(setup, r, attempt, rejected, verdict, len(cells), shared) for r in results]
        rejected.append(
            {
                "attempt": attempt,
                "outcome": "contended",
                "reason": verdict.reason,
                "foreign_pids": verdict.foreign_pids,
                "busiest": busiest(verdict) or _unnamed(verdict),
                "server_pid": results[0]["server"]["pid"] if results else None,
                "tokens_per_s": [
                    (r["exchange"].response.get("timings") or {}).get("predicted_per_second") for r in results
                ],
            }
        )
        print(
            f"cell {cells[0].label}: attempt {attempt} of {setup.max_attempts} rejected: {verdict.reason}",
            flush=True,
        )
    raise CellError(_give_up_message(setup, cells[0].label, rejected))


def _wait_for_quiet(setup: Setup, label: str, contended: dict[str, Any], waited_s: float) -> QuietWait:
    """Between a contended attempt and the next: wait until a window of ``quiet_window_s`` passes the cell's own
    judgement (no server running, so every other process counts), within what is left of ``quiet_timeout_s``;
    the wait's samples go to the cell's samples file (phase 'wait')."""
    after = contended["attempt"]
    scratch = setup.gpu_samples.with_name(f".{setup.gpu_samples.name}.wait{after}")
    watch = _watch(setup, scratch)
    print(
        f"cell {label}: waiting up to {setup.quiet_timeout_s - waited_s:.0f} s for {setup.quiet_window_s:g} quiet "
        f"seconds after attempt {after} ({contended['reason']})",
        flush=True,
    )

    try:
        wait = wait_for_quiet(
            lambda: watch.sample_now("wait"),
            lambda window: _judge(setup, watch, window, set()),
            after_attempt=after,
            why=contended["reason"],
            window_s=setup.quiet_window_s,
            timeout_s=max(0.0, setup.quiet_timeout_s - waited_s),
            step_s=min(setup.sample_interval_s, setup.quiet_window_s / 4),
        )
    finally:
        _keep_samples(setup.gpu_samples, watch, after)
        watch.close()
        with contextlib.suppress(OSError):
            scratch.unlink(missing_ok=True)
    print(f"cell {label}: {'quiet' if wait.quiet else 'not quiet'} after {wait.waited_s:.1f} s of waiting", flush=True)
    return wait


def _unnamed(verdict: Verdict | None) -> str:
    """Why a contended verdict names no process: unseen users of the CPU, or a load-average judgement."""
    if verdict is not None and (verdict.foreign_cpu or {}).get("cpu_s"):
        return "none visible from here (the CPU time went to processes this cell cannot see: other containers?)"
    return "none named (see the reason)"


def _not_quiet_message(setup: Setup, label: str, waits: list[QuietWait]) -> str:
    """One line: the machine did not become quiet within the bound, the busiest processes, what to do."""
    last = waits[-1]
    verdict = last.last
    if verdict is None:
        used, who = "no window judged", _unnamed(None)
    else:
        share = (verdict.foreign_cpu or {}).get("share")
        used = verdict.reason
        if share is not None and setup.max_foreign_cpu is not None:
            used = (
                f"other processes used {share:.2f} of the CPU time in the last {setup.quiet_window_s:g} s (limit "
                f"{setup.max_foreign_cpu:g})"
            )
        who = busiest(verdict) or _unnamed(verdict)
    return (
        f"cell {label}: the machine was not quiet for {setup.quiet_window_s:g} s within "
        f"measurement.quiet_timeout_s = {setup.quiet_timeout_s:g} s of waiting after attempt "
        f"{last.after_attempt} was contended: {used}; busiest: {who}. Stop them or wait, then run the same "
        f"snakemake command again; see {setup.gpu_samples}"
    )


def _give_up_message(setup: Setup, label: str, rejected: list[dict[str, Any]]) -> str:
    """One line: why the last attempt was not kept, how many were made, and the file to read."""
    last, n = rejected[-1], len(rejected)
    if last["outcome"] == "failed":
        earlier = [r["reason"] for r in rejected[:-1]]
        same = earlier and all(reason == last["reason"] for reason in earlier)
        history = (
            ""
            if not earlier
            else "; earlier attempts failed the same way"
            if same
            else "; earlier: "
            + " / ".join(f"attempt {r['attempt']} {r['outcome']}: {r['reason']}" for r in rejected[:-1])
        )
        return f"cell {label}: {last['reason']} (attempt {n} of {n}{history}); read {setup.server_log}"
    if all(r["outcome"] == "contended" for r in rejected):
        who = last.get("busiest") or "none named"
        return (
            f"cell {label}: all {n} attempts were contended; busiest other processes in the last: {who} "
            f"({last['reason']}); see {setup.gpu_samples}"
        )
    failed = sum(r["outcome"] == "failed" for r in rejected)
    return (
        f"cell {label}: no clean attempt in {n} ({failed} failed, {n - failed} contended; last: {last['reason']}); "
        f"see {setup.gpu_samples} and {setup.server_log}"
    )
