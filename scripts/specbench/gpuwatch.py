"""Watch the GPUs (and the CPU) while a cell's llama-server lives, and judge whether the cell was contended.

Samples go to a JSON-lines file beside the cell. ``judge`` is the pure decision on a sequence of samples:

* contended when any sample (``before`` or ``during``) lists a GPU compute process whose pid is not allowed
  (the server's pid, its children); process lists are read from every sample, failed ones included;
* contended, when ``max_foreign_cpu`` is given, when the CPU time that processes outside the cell (outside the
  cell script's own process tree, which holds the server) used during the request window, as a share of the
  machine's CPU time (all CPUs) over that window, exceeds it. The window runs from the sample marked
  ``request-start`` to the last marked ``request-end`` (the whole watch when no sample is marked). The CPU time
  is the machine's busy time from /proc/stat minus the cell's own (from /proc/<pid>/stat), so processes that
  came and went between two samples count too; the biggest foreign users are named from per-process deltas;
* contended, only when ``max_load_per_cpu`` is given, when any sample's 1-minute load average divided by the
  CPU count exceeds it (the server's own threads count towards the load, so the threshold must allow for them);
* failed samples (NVML errors) alone never make a cell contended; the verdict counts them, and when every
  sample failed (or none was taken) while NVML was available the verdict's ``nvml`` is ``"blind"``;
* when NVML is unavailable (no driver) GPU processes are not watched, the verdict's ``nvml`` is
  ``"unavailable"`` and the cell is accepted unless the CPU load judgement says otherwise;
* only the cell's own devices are judged (``watched``: their UUIDs, None for all): on a shared node another job's
  process on another GPU is not contention.

Which devices are the cell's: ``select_devices`` matches ``CUDA_VISIBLE_DEVICES`` (what SLURM or the user assigned)
to NVML's devices by UUID or index, and ``check_build_covers`` refuses a device whose compute capability the
llama.cpp build was not compiled for.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

PHASES = ("before", "during")
MARKS = (None, "request-start", "request-end")
_MIB = 1024 * 1024
# nvmlInit errors that mean "no NVIDIA driver here" rather than "NVML is broken".
_NO_DRIVER_ERRORS = ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded")


@dataclass(frozen=True)
class Sample:
    """One look at the GPUs and the CPU load; ``ok`` is False when NVML failed to answer."""

    t: float
    phase: str
    ok: bool
    error: str | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)
    loadavg_1m: float | None = None
    cpu_count: int | None = None
    mark: str | None = None  # "request-start" | "request-end" | None
    cpu_busy_s: float | None = None  # the machine's busy CPU seconds since boot (all CPUs, /proc/stat)
    cpu_own_s: float | None = None  # CPU seconds of the cell script's process tree (live and reaped)
    cpu_top: list[dict[str, Any]] | None = None  # biggest other processes since the previous sample

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-able dict: one line of the samples file."""
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Sample:
        """Read back what ``to_json`` wrote; missing optional fields become None or []."""
        load, cpus = d.get("loadavg_1m"), d.get("cpu_count")
        return cls(
            t=float(d["t"]),
            phase=str(d["phase"]),
            ok=bool(d["ok"]),
            error=d.get("error"),
            devices=copy.deepcopy(list(d.get("devices") or [])),
            loadavg_1m=None if load is None else float(load),
            cpu_count=None if cpus is None else int(cpus),
            mark=d.get("mark"),
            cpu_busy_s=None if d.get("cpu_busy_s") is None else float(d["cpu_busy_s"]),
            cpu_own_s=None if d.get("cpu_own_s") is None else float(d["cpu_own_s"]),
            cpu_top=copy.deepcopy(d.get("cpu_top")),
        )


@dataclass(frozen=True)
class Verdict:
    """Whether a cell attempt was contended, why, and how well it was watched."""

    contended: bool
    reason: str
    foreign_pids: list[int]
    samples: int
    failed_samples: int
    nvml: str  # "ok" | "unavailable" | "blind"
    foreign_cpu: dict[str, Any] | None = None  # share, cpu_s, window_s, top (measured even when not judged)

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-able dict."""
        return asdict(self)


def read_samples(path: Path) -> list[Sample]:
    """The samples of a JSON-lines file written by ``GpuWatch`` (blank lines skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [Sample.from_json(json.loads(line)) for line in lines if line.strip()]


# --- the pure decision -------------------------------------------------------------------------------------------


def _foreign_sightings(samples: Sequence[Sample], allowed: set[int],
                       watched: Collection[str] | None = None) -> dict[int, list[str]]:
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
        return list(samples[starts[0]:ends[-1] + 1])
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
            entry = users.setdefault(int(proc["pid"]), {"pid": int(proc["pid"]), "comm": proc["comm"], "cpu_s": 0.0})
            entry["cpu_s"] += float(proc["cpu_s"])
    top = sorted(users.values(), key=lambda u: -u["cpu_s"])[:3]
    return {"share": cpu_s / (span * last.cpu_count), "cpu_s": round(cpu_s, 3), "window_s": round(span, 3),
            "cpu_count": last.cpu_count, "top": [{**u, "cpu_s": round(u["cpu_s"], 2)} for u in top]}


def _foreign_cpu_reason(measured: dict[str, Any], threshold: float) -> str:
    """'other processes used 0.48 of the CPU time > 0.25 (1.9 CPU-s in 2.0 s on 2 CPUs; pid 7 yes 1.0 s)'."""
    top = ", ".join(f"pid {u['pid']} {u['comm']} {u['cpu_s']:.1f} s" for u in measured["top"])
    return (f"other processes used {measured['share']:.2f} of the CPU time > {threshold:g} "
            f"({measured['cpu_s']:.1f} CPU-s in {measured['window_s']:.1f} s on {measured['cpu_count']} CPUs"
            f"{'; ' + top if top else ''})")


def _clean_reason(nvml: str, n: int) -> str:
    """Why an uncontended cell is accepted, by how well it was watched."""
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
) -> Verdict:
    """Decide whether a cell attempt was contended from its samples (pure; the rules are in the module docstring)."""
    n = len(samples)
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
    reason = "contended: " + "; ".join(reasons) if contended else _clean_reason(nvml, n)
    if notes:
        reason += f" ({'; '.join(notes)})"
    return Verdict(contended, reason, sorted(seen), n, failed, nvml, measured)


# --- taking samples ----------------------------------------------------------------------------------------------


def cpu_load() -> tuple[float | None, int | None]:
    """The 1-minute load average and the CPU count (None where the OS does not say)."""
    try:
        load: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    return load, os.cpu_count()


_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat(pid: str) -> tuple[str, int, int, int, int] | None:
    """(comm, ppid, start ticks, own CPU ticks, reaped children's CPU ticks) of a process, None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is the state (field 3 of proc(5)): utime 14, stime 15, cutime 16, cstime 17, starttime 22
    return comm, int(fields[1]), int(fields[19]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def _machine_busy_ticks() -> int | None:
    """Busy ticks of all CPUs since boot: user + nice + system + irq + softirq (not idle, iowait or steal)."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    return user + nice + system + irq + softirq


class CpuSampler:
    """The machine's busy CPU time and the share of it used by one process tree (``root``: the cell script,
    whose descendants include the server), plus the biggest other users since the previous call."""

    def __init__(self, root: int | None = None) -> None:
        self.root = os.getpid() if root is None else root
        self._previous: dict[tuple[int, int], int] = {}
        self._previous_t: float | None = None

    def __call__(self) -> dict[str, Any]:
        busy = _machine_busy_ticks()
        if busy is None or not Path("/proc/self/stat").exists():
            return {}
        procs: dict[int, tuple[str, int, int, int, int]] = {}
        with contextlib.suppress(OSError):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    stat = _proc_stat(entry.name)
                    if stat is not None:
                        procs[int(entry.name)] = stat
        children: dict[int, list[int]] = {}
        for pid, stat in procs.items():
            children.setdefault(stat[1], []).append(pid)
        own, todo = set(), [self.root]
        while todo:
            pid = todo.pop()
            if pid in procs and pid not in own:
                own.add(pid)
                todo.extend(children.get(pid, []))
        own_ticks = sum(procs[pid][3] + procs[pid][4] for pid in own)
        now, current, deltas = time.time(), {}, []
        # a process first seen now counts whole if it started after the previous call (else it was missed: skip)
        since = None if self._previous_t is None else (self._previous_t - _boot_time()) * _CLK_TCK
        for pid, (comm, _ppid, start, ticks, _reaped) in procs.items():
            if pid in own:
                continue
            current[(pid, start)] = ticks
            before = self._previous.get((pid, start))
            if since is None or (before is None and start < since):
                continue
            delta = ticks - (before or 0)
            if delta > 0:
                deltas.append({"pid": pid, "comm": comm, "cpu_s": round(delta / _CLK_TCK, 2)})
        self._previous, self._previous_t = current, now
        deltas.sort(key=lambda d: -d["cpu_s"])
        return {"cpu_busy_s": busy / _CLK_TCK, "cpu_own_s": own_ticks / _CLK_TCK, "cpu_top": deltas[:5]}


def _boot_time() -> float:
    """The machine's boot time (seconds since the epoch, /proc/stat's btime)."""
    with open("/proc/stat", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def _load_pynvml() -> ModuleType:
    """Import pynvml without its deprecation warning (tests replace this to fake NVML)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import pynvml

    return pynvml


def _err(exc: BaseException) -> str:
    """'NVMLError_Timeout: Timeout' — the class name says more than NVML's message alone."""
    return f"{type(exc).__name__}: {exc}"


def _is_no_driver(exc: BaseException) -> bool:
    """True for the nvmlInit errors that mean this machine has no NVIDIA driver."""
    return any(cls.__name__ in _NO_DRIVER_ERRORS for cls in type(exc).__mro__)


def _text(value: Any) -> str | None:
    """NVML strings come as str or bytes depending on the binding."""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _mib(n_bytes: int | None) -> float | None:
    """Bytes to MiB (what nvidia-smi calls MiB), None stays None."""
    return None if n_bytes is None else round(n_bytes / _MIB, 1)


def _guarded(nv: ModuleType, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, or None when NVML says no (unsupported field, no permission, …)."""
    try:
        return fn(*args)
    except nv.NVMLError:
        return None


def _read_device(nv: ModuleType, index: int, handle: Any) -> tuple[dict[str, Any], str | None]:
    """One device's fields (None where unsupported) and an error only if its process list failed."""
    util = _guarded(nv, nv.nvmlDeviceGetUtilizationRates, handle)
    mem = _guarded(nv, nv.nvmlDeviceGetMemoryInfo, handle)
    power_mw = _guarded(nv, nv.nvmlDeviceGetPowerUsage, handle)
    device: dict[str, Any] = {
        "index": index,
        "uuid": _text(_guarded(nv, nv.nvmlDeviceGetUUID, handle)),
        "name": _text(_guarded(nv, nv.nvmlDeviceGetName, handle)),
        "utilization_gpu": None if util is None else util.gpu,
        "utilization_mem": None if util is None else util.memory,
        "memory_used_mb": None if mem is None else _mib(mem.used),
        "memory_total_mb": None if mem is None else _mib(mem.total),
        "sm_clock_mhz": _guarded(nv, nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_SM),
        "mem_clock_mhz": _guarded(nv, nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_MEM),
        "temperature_c": _guarded(nv, nv.nvmlDeviceGetTemperature, handle, nv.NVML_TEMPERATURE_GPU),
        "power_w": None if power_mw is None else power_mw / 1000.0,
        "processes": None,
    }
    try:
        processes = nv.nvmlDeviceGetComputeRunningProcesses(handle)
    except nv.NVMLError as exc:
        return device, f"device {index} processes: {_err(exc)}"
    device["processes"] = [{"pid": int(p.pid), "used_memory_mb": _mib(p.usedGpuMemory)} for p in processes]
    return device, None


def _read_devices(nv: ModuleType, indices: list[int] | None) -> tuple[list[dict[str, Any]], str | None]:
    """All watched devices, and the joined errors of those whose handle or process list failed."""
    try:
        wanted = list(range(nv.nvmlDeviceGetCount())) if indices is None else list(indices)
    except nv.NVMLError as exc:
        return [], f"nvmlDeviceGetCount: {_err(exc)}"
    devices, errors = [], []
    for index in wanted:
        try:
            handle = nv.nvmlDeviceGetHandleByIndex(index)
        except nv.NVMLError as exc:
            errors.append(f"device {index}: {_err(exc)}")
            continue
        device, error = _read_device(nv, index, handle)
        devices.append(device)
        if error:
            errors.append(error)
    return devices, "; ".join(errors) or None


class NvmlSampler:
    """The default sampler: NVML initialised once (lazily), one ``Sample`` per call; never raises on NVML errors.

    No driver (library not found, driver not loaded, pynvml missing) makes NVML *unavailable*: samples are then
    ``ok`` with no devices. Any other nvmlInit error is retried at each sample and recorded as a failed sample.
    """

    def __init__(self, device_indices: list[int] | None = None) -> None:
        self._indices = device_indices
        self._nv: ModuleType | None = None
        self._state = "new"  # "new" | "ok" | "unavailable" | "closed" (was ok, shut down; a call initialises again)
        self.unavailable_reason: str | None = None
        self._lock = threading.Lock()

    def _init(self) -> str | None:
        """Initialise NVML unless done or known unavailable; None when ready, else why not."""
        if self._state == "ok":
            return None
        if self._state == "unavailable":
            return self.unavailable_reason
        try:
            nv = _load_pynvml()
        except ImportError as exc:
            self._state, self.unavailable_reason = "unavailable", f"pynvml not importable: {exc}"
            return self.unavailable_reason
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            if _is_no_driver(exc):
                self._state, self.unavailable_reason = "unavailable", _err(exc)
            return _err(exc)
        self._nv, self._state = nv, "ok"
        return None

    @property
    def nvml_available(self) -> bool:
        """False only when this machine has no usable NVIDIA driver (tries nvmlInit if not yet done)."""
        with self._lock:
            if self._state == "new":
                self._init()
            return self._state != "unavailable"

    def __call__(self, phase: str) -> Sample:
        """Take one sample of all watched devices plus the CPU load."""
        load, cpus = cpu_load()
        with self._lock:
            t = time.time()
            error = self._init()
            if self._state == "unavailable":
                return Sample(t, phase, True, None, [], load, cpus)
            if self._nv is None:
                return Sample(t, phase, False, f"nvmlInit: {error}", [], load, cpus)
            devices, error = _read_devices(self._nv, self._indices)
        return Sample(t, phase, error is None, error, devices, load, cpus)

    def close(self) -> None:
        """nvmlShutdown, if nvmlInit succeeded; a later call initialises again."""
        with self._lock:
            if self._nv is not None:
                with contextlib.suppress(self._nv.NVMLError):
                    self._nv.nvmlShutdown()
                self._nv, self._state = None, "closed"


def device_info() -> dict[str, Any]:
    """Driver, CUDA driver version and the devices' static facts; never raises, ``nvml`` 'unavailable' on failure."""
    info: dict[str, Any] = {"nvml": "unavailable", "error": None, "driver": None, "cuda_driver_version": None,
                            "devices": []}
    try:
        nv = _load_pynvml()
        nv.nvmlInit()
    except Exception as exc:
        info["error"] = _err(exc)
        return info
    try:
        info["nvml"] = "ok"
        info["driver"] = _text(_guarded(nv, nv.nvmlSystemGetDriverVersion))
        cuda = _guarded(nv, nv.nvmlSystemGetCudaDriverVersion)
        info["cuda_driver_version"] = None if not cuda else f"{cuda // 1000}.{cuda % 1000 // 10}"
        for index in range(_guarded(nv, nv.nvmlDeviceGetCount) or 0):
            info["devices"].append(_static_device(nv, index))
    except Exception as exc:
        info["error"] = _err(exc)
    finally:
        with contextlib.suppress(Exception):
            nv.nvmlShutdown()
    return info


def _static_device(nv: ModuleType, index: int) -> dict[str, Any]:
    """A device's identity and the facts that bound its decode speed (memory size, bus width, memory clock)."""
    handle = _guarded(nv, nv.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return {"index": index, "uuid": None, "name": None, "memory_total_mb": None,
                "memory_bus_width_bits": None, "max_mem_clock_mhz": None, "compute_capability": None}
    mem = _guarded(nv, nv.nvmlDeviceGetMemoryInfo, handle)
    return {
        "index": index,
        "uuid": _text(_guarded(nv, nv.nvmlDeviceGetUUID, handle)),
        "name": _text(_guarded(nv, nv.nvmlDeviceGetName, handle)),
        "memory_total_mb": None if mem is None else _mib(mem.total),
        "memory_bus_width_bits": _guarded(nv, nv.nvmlDeviceGetMemoryBusWidth, handle),
        "max_mem_clock_mhz": _guarded(nv, nv.nvmlDeviceGetMaxClockInfo, handle, nv.NVML_CLOCK_MEM),
        "compute_capability": _capability(_guarded(nv, nv.nvmlDeviceGetCudaComputeCapability, handle)),
    }


def _capability(value: Any) -> str | None:
    """NVML's (major, minor) as '9.0'."""
    return None if not value else f"{int(value[0])}.{int(value[1])}"


# --- which devices are the cell's ---------------------------------------------------------------------------------


class DeviceError(RuntimeError):
    """The assigned GPU cannot be identified, or the llama.cpp build was not compiled for it."""


def parse_visible_devices(value: str | None) -> list[str] | None:
    """``CUDA_VISIBLE_DEVICES`` as a list of entries; None when unset (CUDA then uses every device).

    CUDA stops reading at the first empty entry; an empty value hides every device.
    """
    if value is None:
        return None
    entries = []
    for entry in value.split(","):
        entry = entry.strip()
        if not entry:
            break
        entries.append(entry)
    return entries


def _match(entry: str, devices: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The one device an entry names: an NVML index, or a UUID ('GPU-…'/'MIG-…', a unique prefix as CUDA allows)."""
    if entry.isdigit():
        found = [d for d in devices if d.get("index") == int(entry)]
    elif entry.startswith(("GPU-", "MIG-")):
        found = [d for d in devices if d.get("uuid") and str(d["uuid"]).startswith(entry)]
    else:
        raise DeviceError(f"CUDA_VISIBLE_DEVICES entry {entry!r} is neither an index nor a GPU UUID")
    if len(found) != 1:
        listed = ", ".join(f"{d.get('index')}={d.get('uuid')}" for d in devices) or "none"
        what = "matches no" if not found else "matches more than one"
        raise DeviceError(f"CUDA_VISIBLE_DEVICES entry {entry!r} {what} NVML device (NVML lists {listed})")
    return found[0]


def select_devices(visible: list[str] | None, devices: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The NVML devices (``device_info()['devices']`` entries) the cell's server will use, in CUDA's order.

    ``visible`` is ``parse_visible_devices(CUDA_VISIBLE_DEVICES)``: None selects every device. A UUID names its
    device exactly. An index is NVML's, which enumerates by PCI bus id: the same as CUDA's when
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, and as SLURM's (its GPU indices follow the device files, in bus order); in a
    job confined to its own GPUs (cgroup) both see only those, numbered from 0. An entry that names no device, or
    a device twice, is an error rather than a guess: the watch must not judge some other GPU.
    """
    if visible is None:
        return list(devices)
    chosen: list[dict[str, Any]] = []
    for entry in visible:
        device = _match(entry, devices)
        if any(d is device for d in chosen):
            raise DeviceError(f"CUDA_VISIBLE_DEVICES names device {device.get('uuid')} twice")
        chosen.append(device)
    return chosen


def _arch(entry: str) -> tuple[int, str, str]:
    """'86-real' -> (86, '', 'real'); '90a' -> (90, 'a', 'both'); '75-virtual' -> (75, '', 'virtual')."""
    name, _, kind = entry.strip().partition("-")
    digits = name.rstrip("abf")
    if not digits.isdigit() or kind not in ("", "real", "virtual"):
        raise DeviceError(f"CUDA architecture {entry!r} is not understood (expected e.g. 86, 86-real, 90a-virtual)")
    return int(digits), name[len(digits):], kind or "both"


def arch_covers(architectures: Sequence[str], capability: str) -> bool:
    """Whether code built for ``architectures`` (CMAKE_CUDA_ARCHITECTURES entries, resolved: no 'native' or
    'all') runs on a device of compute capability ``capability`` ('8.6').

    Machine code (real) for sm_XY runs on X.Z with Z >= Y; arch-specific code (sm_90a) only on exactly X.Y.
    PTX (virtual) for compute_XY is compiled by the driver for any device of capability >= X.Y.
    """
    major, minor = (int(part) for part in capability.split("."))
    device = major * 10 + minor
    for entry in architectures:
        arch, suffix, kind = _arch(entry)
        if kind in ("real", "both") and arch // 10 == major and (arch == device if suffix else arch <= device):
            return True
        if kind in ("virtual", "both") and not suffix and arch <= device:
            return True
    return False


def check_build_covers(architectures: Sequence[str] | None, devices: Sequence[dict[str, Any]]) -> None:
    """Refuse devices the CUDA build has no code for (``architectures``: the build manifest's resolved list)."""
    if not devices:
        return
    if not architectures:
        raise DeviceError("the llama.cpp build does not record its CUDA architectures, so it cannot be checked "
                          "against this GPU; rebuild it")
    unresolved = [a for a in architectures if a.split("-")[0] in ("native", "all", "all-major")]
    if unresolved:
        raise DeviceError(f"the build records CUDA architectures {list(architectures)}, not resolved to numbers")
    for device in devices:
        capability = device.get("compute_capability")
        if capability is None:
            raise DeviceError(f"NVML gives no compute capability for device {device.get('uuid')}")
        if not arch_covers(architectures, capability):
            raise DeviceError(
                f"the llama.cpp build has code for CUDA architectures {list(architectures)} only, but device "
                f"{device.get('index')} ({device.get('name')}, {device.get('uuid')}) has compute capability "
                f"{capability}: build for it (llama_cpp.cmake_args -DCMAKE_CUDA_ARCHITECTURES=...) or run elsewhere"
            )


def assigned_devices(info: dict[str, Any], environ: Mapping[str, str], architectures: Sequence[str] | None,
                     cuda: bool) -> list[dict[str, Any]]:
    """The devices a cell uses (``info``: ``device_info()``), checked against a CUDA build's architectures.

    No NVML (no driver) or a CPU build: none. Raises ``DeviceError`` when the assignment cannot be matched.
    """
    if info.get("nvml") != "ok" or not cuda:
        return []
    devices = select_devices(parse_visible_devices(environ.get("CUDA_VISIBLE_DEVICES")), info.get("devices", []))
    check_build_covers(architectures, devices)
    return devices


# --- the watch ---------------------------------------------------------------------------------------------------


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
            return Sample(time.time(), phase, False, f"sampler raised {_err(exc)}", [], load, cpus)

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

    def verdict(self, allowed_pids: Collection[int], *, max_load_per_cpu: float | None = None,
                max_foreign_cpu: float | None = None) -> Verdict:
        """``judge`` applied to this watch's samples."""
        return judge(self.samples, allowed_pids, nvml_available=self.nvml_available,
                     max_load_per_cpu=max_load_per_cpu, max_foreign_cpu=max_foreign_cpu)

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
