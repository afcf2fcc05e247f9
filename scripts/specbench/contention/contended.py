"""Whether a cell attempt was contended: ``judge``, the pure decision on a sequence of samples:

* contended when any sample (``before`` or ``during``) lists a GPU compute process whose pid is not allowed
  (the server's pid, its children); process lists are read from every sample, failed ones included;
* contended, when ``max_foreign_cpu`` is given, when the CPU time that processes outside the cell (outside the
  cell script's own process tree, which holds the server) used during the request window, as a share of the
  machine's CPU time (all CPUs) over that window, exceeds it. The window runs from the sample marked
  ``request-start`` to the last marked ``request-end`` (the whole watch when no sample is marked). The CPU time
  is the machine's busy time minus the cell's own (both from psutil's CPU times), so processes that
  came and went between two samples count too; the biggest foreign users are named from per-process deltas;
* contended, only when ``max_load_per_cpu`` is given, when any sample's 1-minute load average divided by the
  CPU count exceeds it (the server's own threads count towards the load, so the threshold must allow for them);
* failed samples (NVML errors) alone never make a cell contended; the verdict counts them, and when every
  sample failed (or none was taken) while NVML was available the verdict's ``nvml`` is ``"blind"``;
* when NVML is unavailable (no driver) GPU processes are not watched, the verdict's ``nvml`` is
  ``"unavailable"`` and the cell is accepted unless the CPU load judgement says otherwise;
* on a backend without per-process GPU accounting (metal, hip, vulkan: ``gpu_watch`` 'unwatched') and on a CUDA build
  without NVML, the cell is recorded as not watched (CPU contention is still judged); a CPU build ('cpu') uses no GPU;
* only the cell's own devices are judged (``watched``: their UUIDs, None for all): on a shared node another job's
  process on another GPU is not contention."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from specbench.contention.samples import Sample, Verdict
from specbench.core.config.backends import WATCH_CPU, WATCH_NONE, watch_of


def _foreign_sightings(
    samples: Sequence[Sample], allowed: set[int], watched: Collection[str] | None = None
) -> dict[int, list[str]]:
    """Each foreign pid on a watched device (all when ``watched`` is None) with the phases of the samples."""
    seen: dict[int, list[str]] = {}
    for sample in samples:
        for device in sample.devices:
            if watched is not None and device.get("uuid") not in watched:
                continue
            for process in device.get("processes") or []:
                pid = int(process["pid"])
                if pid not in allowed:
                    seen.setdefault(pid, []).append(sample.phase)
    return seen


def _foreign_reason(seen: dict[int, list[str]]) -> str:
    """'foreign GPU process pid 7 in 3 sample(s) (before, during)' for each pid."""
    parts = [f"pid {pid} in {len(ph)} sample(s) ({', '.join(dict.fromkeys(ph))})" for pid, ph in sorted(seen.items())]
    return "foreign GPU process " + "; ".join(parts)


def _worst_load(samples: Sequence[Sample]) -> tuple[float, Sample] | None:
    """The highest load per CPU over the samples that recorded both load and CPU count."""
    loads = [(s.loadavg_1m / s.cpu_count, s) for s in samples if s.loadavg_1m is not None and s.cpu_count]
    return max(loads, key=lambda pair: pair[0]) if loads else None


def _load_reason(load: float, sample: Sample, threshold: float) -> str:
    """'CPU load 1.50 per CPU > 1 (1-min loadavg 24.00 over 16 CPUs, during sample)'."""
    return (
        f"CPU load {load:.2f} per CPU > {threshold:g} "
        f"(1-min loadavg {sample.loadavg_1m:.2f} over {sample.cpu_count} CPUs, {sample.phase} sample)"
    )


def _window(samples: Sequence[Sample]) -> list[Sample]:
    """The samples of the request window (first 'request-start' .. last 'request-end'), else all of them."""
    starts = [i for i, s in enumerate(samples) if s.mark == "request-start"]
    ends = [i for i, s in enumerate(samples) if s.mark == "request-end"]
    if starts and ends and ends[-1] > starts[0]:
        return list(samples[starts[0] : ends[-1] + 1])
    return list(samples)


def foreign_cpu(samples: Sequence[Sample]) -> dict[str, Any] | None:
    """CPU used by processes other than the cell's over its request window: seconds, the window, the share of the
    machine's CPU time (seconds / (window x CPUs)) and the biggest users; None when not recorded."""
    window = [s for s in _window(samples) if s.cpu_busy_s is not None and s.cpu_own_s is not None]
    if len(window) < 2 or not window[-1].cpu_count:
        return None
    first, last = window[0], window[-1]
    span = last.t - first.t
    if span <= 0:
        return None
    cpu_s = max(0.0, (last.cpu_busy_s - first.cpu_busy_s) - (last.cpu_own_s - first.cpu_own_s))  # type: ignore[operator]
    users: dict[int, dict[str, Any]] = {}
    for sample in window[1:]:
        for proc in sample.cpu_top or []:
            entry = users.setdefault(
                int(proc["pid"]),
                {"pid": int(proc["pid"]), "comm": proc["comm"], "command": proc.get("command"), "cpu_s": 0.0},
            )
            entry["cpu_s"] += float(proc["cpu_s"])
            entry["command"] = entry["command"] or proc.get("command")
    top = sorted(users.values(), key=lambda u: -u["cpu_s"])[:3]
    return {
        "share": cpu_s / (span * last.cpu_count),
        "cpu_s": round(cpu_s, 3),
        "window_s": round(span, 3),
        "cpu_count": last.cpu_count,
        "top": [{**u, "cpu_s": round(u["cpu_s"], 2)} for u in top],
    }


def _foreign_cpu_reason(measured: dict[str, Any], threshold: float) -> str:
    """'other processes used 0.48 of the CPU time > 0.25 (1.9 CPU-s in 2.0 s on 2 CPUs; busiest: pid 7 yes
    (yes) 1.0 s)'."""
    top = ", ".join(f"{_who(u)} {u['cpu_s']:.1f} s" for u in measured["top"])
    return (
        f"other processes used {measured['share']:.2f} of the CPU time > {threshold:g} "
        f"({measured['cpu_s']:.1f} CPU-s in {measured['window_s']:.1f} s on {measured['cpu_count']} CPUs"
        f"{'; busiest: ' + top if top else ''})"
    )


def _who(user: dict[str, Any]) -> str:
    """'pid 7 python (python -c while True: pass)': the pid, the process name and, where known, its command."""
    command = user.get("command")
    return f"pid {user['pid']} {user['comm']}" + (f" ({command})" if command and command != user["comm"] else "")


def busiest(verdict: Verdict) -> str:
    """The busiest other processes of a verdict in plain words: 'pid 7 python (python -c ...) using 0.98 of a CPU,
    GPU process pid 9 on the cell's GPU'; '' when it names none."""
    measured = verdict.foreign_cpu or {}
    window = measured.get("window_s") or 0.0
    parts = [f"{_who(u)} using {u['cpu_s'] / window:.2f} of a CPU" for u in measured.get("top", []) if window > 0]
    parts += [f"GPU process pid {pid} on the cell's GPU" for pid in verdict.foreign_pids]
    return ", ".join(parts)


def _clean_reason(nvml: str, n: int, gpu_watch: str, backend: str, cpu_judged: bool) -> str:
    """Why an uncontended cell is accepted, by how well it was watched."""
    cpu = "CPU contention judged" if cpu_judged else "CPU contention recorded, not judged"
    if gpu_watch == WATCH_CPU:
        return f"accepted: CPU backend, no GPU used; {cpu}"
    if gpu_watch == WATCH_NONE and backend != "cuda":
        return f"accepted: GPU not watched on this backend ({backend}: no per-process GPU accounting); {cpu}"
    if nvml == "unavailable":
        return "accepted: NVML unavailable, GPU processes not watched"
    if nvml == "blind":
        return f"blind: all {n} sample(s) failed, GPU processes not seen" if n else "blind: no sample taken"
    return f"clean: no GPU process other than the allowed pids in {n} sample(s)"


def judge(
    samples: Sequence[Sample],
    allowed_pids: Collection[int],
    *,
    nvml_available: bool,
    max_load_per_cpu: float | None = None,
    watched: Collection[str] | None = None,
    max_foreign_cpu: float | None = None,
    backend: str = "cuda",
) -> Verdict:
    """Decide whether a cell attempt was contended from its samples (pure; the rules are in the module docstring)."""
    n = len(samples)
    gpu_watch = watch_of(backend, nvml_available)
    failed = sum(not s.ok for s in samples)
    nvml = "unavailable" if not nvml_available else ("blind" if failed == n else "ok")
    seen = _foreign_sightings(samples, set(allowed_pids), None if watched is None else set(watched))
    reasons = [_foreign_reason(seen)] if seen else []
    notes = []
    if max_load_per_cpu is not None:
        worst = _worst_load(samples)
        if worst is None:
            notes.append("CPU load not recorded")
        elif worst[0] > max_load_per_cpu:
            reasons.append(_load_reason(*worst, max_load_per_cpu))
    measured = foreign_cpu(samples)
    if max_foreign_cpu is not None:
        if measured is None:
            notes.append("CPU time of other processes not recorded")
        elif measured["share"] > max_foreign_cpu:
            reasons.append(_foreign_cpu_reason(measured, max_foreign_cpu))
    if failed and nvml != "blind":
        notes.append(f"{failed} of {n} sample(s) failed")
    contended = bool(reasons)
    reason = (
        "contended: " + "; ".join(reasons)
        if contended
        else _clean_reason(nvml, n, gpu_watch, backend, max_foreign_cpu is not None)
    )
    if notes:
        reason += f" ({'; '.join(notes)})"
    return Verdict(contended, reason, sorted(seen), n, failed, nvml, measured, gpu_watch, backend)
