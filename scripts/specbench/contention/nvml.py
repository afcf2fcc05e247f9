"""The GPUs through NVML: one sample of every device and its compute processes (``NvmlSampler``), and the devices'
static facts (``device_info``); no driver means unavailable, never an error."""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

from specbench.contention.cpu import cpu_load
from specbench.contention.samples import Sample

_MIB = 1024 * 1024


# nvmlInit errors that mean "no NVIDIA driver here" rather than "NVML is broken".
_NO_DRIVER_ERRORS = ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded")


def _load_pynvml() -> ModuleType:
    """Import pynvml without its deprecation warning (tests replace this to fake NVML)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import pynvml

    return pynvml


def error_text(exc: BaseException) -> str:
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
        return device, f"device {index} processes: {error_text(exc)}"
    device["processes"] = [{"pid": int(p.pid), "used_memory_mb": _mib(p.usedGpuMemory)} for p in processes]
    return device, None


def _read_devices(nv: ModuleType, indices: list[int] | None) -> tuple[list[dict[str, Any]], str | None]:
    """All watched devices, and the joined errors of those whose handle or process list failed."""
    try:
        wanted = list(range(nv.nvmlDeviceGetCount())) if indices is None else list(indices)
    except nv.NVMLError as exc:
        return [], f"nvmlDeviceGetCount: {error_text(exc)}"
    devices, errors = [], []
    for index in wanted:
        try:
            handle = nv.nvmlDeviceGetHandleByIndex(index)
        except nv.NVMLError as exc:
            errors.append(f"device {index}: {error_text(exc)}")
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
                self._state, self.unavailable_reason = "unavailable", error_text(exc)
            return error_text(exc)
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


# What a cell records for NVML when its build's backend is not CUDA: NVML is not asked at all.
NVML_NOT_USED: dict[str, Any] = {
    "nvml": "not used",
    "error": "the build's backend is not CUDA",
    "driver": None,
    "cuda_driver_version": None,
    "devices": [],
}


def device_info() -> dict[str, Any]:
    """Driver, CUDA driver version and the devices' static facts; never raises, ``nvml`` 'unavailable' on failure."""
    info: dict[str, Any] = {
        "nvml": "unavailable",
        "error": None,
        "driver": None,
        "cuda_driver_version": None,
        "devices": [],
    }
    try:
        nv = _load_pynvml()
        nv.nvmlInit()
    except Exception as exc:
        info["error"] = error_text(exc)
        return info
    try:
        info["nvml"] = "ok"
        info["driver"] = _text(_guarded(nv, nv.nvmlSystemGetDriverVersion))
        cuda = _guarded(nv, nv.nvmlSystemGetCudaDriverVersion)
        info["cuda_driver_version"] = None if not cuda else f"{cuda // 1000}.{cuda % 1000 // 10}"
        for index in range(_guarded(nv, nv.nvmlDeviceGetCount) or 0):
            info["devices"].append(_static_device(nv, index))
    except Exception as exc:
        info["error"] = error_text(exc)
    finally:
        with contextlib.suppress(Exception):
            nv.nvmlShutdown()
    return info


def _static_device(nv: ModuleType, index: int) -> dict[str, Any]:
    """A device's identity and the facts that bound its decode speed (memory size, bus width, memory clock)."""
    handle = _guarded(nv, nv.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return {
            "index": index,
            "uuid": None,
            "name": None,
            "memory_total_mb": None,
            "memory_bus_width_bits": None,
            "max_mem_clock_mhz": None,
            "compute_capability": None,
        }
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
