"""Which devices are the cell's: ``select_devices`` matches ``CUDA_VISIBLE_DEVICES`` (what SLURM or the user assigned)
to NVML's devices by UUID or index, and ``check_build_covers`` refuses a device whose compute capability the
llama.cpp build was not compiled for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


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
    return int(digits), name[len(digits) :], kind or "both"


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
        raise DeviceError(
            "the llama.cpp build does not record its CUDA architectures, so it cannot be checked "
            "against this GPU; rebuild it"
        )
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


def assigned_devices(
    info: dict[str, Any], environ: Mapping[str, str], architectures: Sequence[str] | None, cuda: bool
) -> list[dict[str, Any]]:
    """The devices a cell uses (``info``: ``device_info()``), checked against a CUDA build's architectures.

    No NVML (no driver) or a CPU build: none. Raises ``DeviceError`` when the assignment cannot be matched.
    """
    if info.get("nvml") != "ok" or not cuda:
        return []
    devices = select_devices(parse_visible_devices(environ.get("CUDA_VISIBLE_DEVICES")), info.get("devices", []))
    check_build_covers(architectures, devices)
    return devices
