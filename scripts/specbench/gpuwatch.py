"""Watch the GPUs (and the CPU load) while a cell's llama-server lives, and judge whether the cell was contended.

Samples go to a JSON-lines file beside the cell. ``judge`` is the pure decision on a sequence of samples:

* contended when any sample (``before`` or ``during``) lists a GPU compute process whose pid is not allowed
  (the server's pid, its children); process lists are read from every sample, failed ones included;
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

PHASES = ("before", "during")
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
    if failed and nvml != "blind":
        notes.append(f"{failed} of {n} sample(s) failed")
    contended = bool(reasons)
    reason = "contended: " + "; ".join(reasons) if contended else _clean_reason(nvml, n)
    if notes:
        reason += f" ({'; '.join(notes)})"
    return Verdict(contended, reason, sorted(seen), n, failed, nvml)


# --- taking samples ----------------------------------------------------------------------------------------------


def cpu_load() -> tuple[float | None, int | None]:
    """The 1-minute load average and the CPU count (None where the OS does not say)."""
    try:
        load: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):
        load = None
    return load, os.cpu_count()


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
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, not {interval_s}")
        self.out_path = Path(out_path)
        self.interval_s = interval_s
        self._sampler: Callable[[str], Sample] = sampler if sampler is not None else NvmlSampler(device_indices)
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

    def sample_now(self, phase: str) -> Sample:
        """Take one sample, append it as a JSON line to ``out_path`` and keep it in memory."""
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, not {phase!r}")
        with self._lock:
            sample = self._take(phase)
            with self.out_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(sample.to_json(), sort_keys=True) + "\n")
                fh.flush()
            self._samples.append(sample)
        return sample

    def verdict(self, allowed_pids: Collection[int], *, max_load_per_cpu: float | None = None) -> Verdict:
        """``judge`` applied to this watch's samples."""
        return judge(self.samples, allowed_pids, nvml_available=self.nvml_available, max_load_per_cpu=max_load_per_cpu)

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
