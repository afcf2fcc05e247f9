"""Build llama.cpp's binaries with CMake for one backend and write the build manifest (source, flags, backend, the
devices ``llama-server --list-devices`` saw, CUDA architectures, compiler, the binaries' sha256); install them where
the cells run them."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from specbench.core.config.backends import NO_DEVICE_HINTS, backend_of, cmake_options, devices_of, list_devices
from specbench.core.steps.commands import run_command
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import read_json, sha256_file, write_json_atomic
from specbench.llama_cpp.source import SOURCE_INFO, SourceError


def host_cpu() -> str:
    """The CPU model, so a natively tuned build is not reused on a different processor."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _compiler(build_dir: Path) -> dict[str, str]:
    cache = build_dir / "CMakeCache.txt"
    compilers: dict[str, str] = {}
    if cache.is_file():
        for line in cache.read_text(errors="replace").splitlines():
            for key in ("CMAKE_CXX_COMPILER:", "CMAKE_C_COMPILER:", "CMAKE_CUDA_COMPILER:"):
                if line.startswith(key):
                    compilers[key.split(":")[0]] = line.split("=", 1)[1]
    cxx = compilers.get("CMAKE_CXX_COMPILER")
    if cxx:
        version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()
        compilers["cxx_version"] = version[0] if version else ""
    return compilers


_GENCODE = re.compile(r"(?:--generate-code[= ]|-gencode[= ])arch=compute_(\w+),code=(\[[^\]]*\]|[\w,]+)")


def cuda_architectures(work_dir: Path) -> list[str]:
    """The CUDA architectures the build compiled for, as CMake spells them ('90-real' machine code, '80-virtual'
    PTX), read from the nvcc flags CMake generated: what the build chose (llama.cpp's defaults or 'native', which
    CMake resolves to the GPUs it saw while configuring), not what was asked for. Empty when nothing was found."""
    found: set[str] = set()
    for pattern in ("**/flags.make", "build.ninja", "**/build.ninja"):
        for path in sorted(work_dir.glob(pattern)):
            for match in _GENCODE.finditer(path.read_text(errors="replace")):
                for code in match.group(2).strip("[]").split(","):
                    kind, _, arch = code.strip().partition("_")
                    if arch and kind in ("sm", "compute"):
                        found.add(f"{arch}-{'real' if kind == 'sm' else 'virtual'}")
    return sorted(found, key=lambda entry: (int(re.sub(r"\D", "", entry.split("-")[0]) or 0), entry))


def build_env(source: Path) -> dict[str, str]:
    """The environment CMake runs in: llama.cpp's build info asks git for the tree's commit, which may come from
    the tree's own repository (the git route) but never from one the tree sits inside (an unpacked archive in the
    workflow's clone would otherwise report the workflow's commit and commit count as llama.cpp's build)."""
    return {**os.environ, "GIT_CEILING_DIRECTORIES": str(source.resolve().parent)}


_TYPED_PATH = re.compile(r"^(-D[A-Za-z0-9_]+:(?:PATH|FILEPATH)=)(.+)$")


def absolute_paths(cmake_args: list[str], base: Path) -> list[str]:
    """``-DX:PATH=dir`` and ``-DX:FILEPATH=file`` given relative, made absolute against ``base`` (the working
    directory; CMake itself would take them relative to the source folder it is reading)."""
    out = []
    for arg in cmake_args:
        match = _TYPED_PATH.match(arg)
        value = match.group(2) if match else ""
        out.append(f"{match.group(1)}{(base / value).resolve()}" if match and not Path(value).is_absolute() else arg)
    return out


def build(
    source: Path, work_dir: Path, out_dir: Path, cmake_args: list[str], backend: str, targets: list[str], jobs: int
) -> dict[str, Any]:
    """Configure and build ``targets`` for ``backend``; copy the binaries to ``out_dir/bin`` and write
    ``out_dir/manifest.json``."""
    argv = [*absolute_paths(cmake_args, Path.cwd()), *cmake_options(backend)]
    cuda = backend == "cuda"
    started = time.monotonic()
    env = build_env(source)
    run_command(["cmake", "-S", str(source), "-B", str(work_dir), *argv], env=env, error=SourceError)
    run_command(
        ["cmake", "--build", str(work_dir), "--parallel", str(jobs), "--target", *targets], env=env, error=SourceError
    )
    bin_dir = out_dir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    binaries = {}
    for target in targets:
        built = work_dir / "bin" / target
        if not built.is_file():
            raise SourceError(f"target {target} was not produced at {built}")
        shutil.copy2(built, bin_dir / target)
        binaries[target] = {"path": f"bin/{target}", "sha256": sha256_file(bin_dir / target)}
    version, devices = "", None
    if "llama-server" in targets:
        result = subprocess.run([str(bin_dir / "llama-server"), "--version"], capture_output=True, text=True)
        version = (result.stdout + result.stderr).strip()
        devices = list_devices(bin_dir / "llama-server")
    manifest = {
        "source": _read_source_info(source),
        "cmake_args": argv,
        "backend": backend,
        # What the build's llama-server lists on the machine that built it (cells list again where they run).
        "devices": devices,
        # Checked by every cell against its GPU's compute capability: a build is never silently used on a GPU
        # it has no code for.
        "cuda_architectures": cuda_architectures(work_dir) if cuda else [],
        "targets": targets,
        "compiler": _compiler(work_dir),
        "host_cpu": host_cpu(),
        "server_version": version,
        "binaries": binaries,
        "build_seconds": round(time.monotonic() - started, 1),
        "jobs": jobs,
    }
    write_json_atomic(out_dir / "manifest.json", manifest)
    return manifest


def install(build_dir: Path, out_dir: Path) -> dict[str, Any]:
    """Copy the built binaries to ``out_dir`` (executable) with the manifest, refusing any whose sha256 differs."""
    manifest = read_json(build_dir / "manifest.json")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, binary in manifest["binaries"].items():
        target = out_dir / name
        shutil.copyfile(build_dir / binary["path"], target)
        if sha256_file(target) != binary["sha256"]:
            raise SourceError(f"{build_dir / binary['path']} does not match the sha256 in its build manifest")
        target.chmod(0o755)
        manifest["binaries"][name] = {**binary, "path": name}
    write_json_atomic(out_dir / "manifest.json", manifest)
    return manifest


# What to check when a GPU build lists none of its devices where it was built; CUDA's own: a driver that supports
# the toolkit's CUDA version (the preflight's "CUDA toolkit and driver" row compares them).
BUILD_DEVICE_HINTS = {
    **NO_DEVICE_HINTS,
    "cuda": "check that nvidia-smi lists a GPU, that CUDA_VISIBLE_DEVICES (if set) names one, and that the driver "
    "supports the CUDA version of the nvcc the build used (nvcc --version against nvidia-smi's CUDA Version)",
}


def check_build_devices(manifest: dict[str, Any], build_dir: Path, build_log: Path) -> None:
    """Raise SourceError when a GPU build's llama-server listed none of its backend's devices where it was built
    (the manifest's ``devices``): its cells would run on the CPU. A build without llama-server listed nothing."""
    backend, listed = backend_of(manifest), manifest.get("devices")
    if backend == "cpu" or listed is None or devices_of(backend, listed.get("devices") or []):
        return
    shown = "; ".join(line.strip() for line in str(listed.get("output") or "").splitlines()[-4:]) or "no output"
    raise SourceError(
        f"the {backend} build lists no {backend} device where it was built (llama-server --list-devices: {shown}; "
        f"build log: {build_log}): {BUILD_DEVICE_HINTS[backend]}; then remove {build_dir} and run again to build it "
        "anew"
    )


def _read_source_info(source: Path) -> dict[str, Any]:
    return read_json(source / SOURCE_INFO)


def build_step(
    source: Path,
    work_dir: Path,
    out: Path,
    *,
    cmake_args: list[str],
    backend: str,
    targets: list[str],
    jobs: int,
    log: Path,
) -> None:
    """Configure and build the targets, then write the build manifest."""
    with logged_to(log):
        manifest = build(source, work_dir, out, cmake_args, backend, targets, jobs)
        print("built:", manifest["binaries"])
        print("devices:", (manifest["devices"] or {}).get("output"))


def install_step(build_dir: Path, out: Path, log: Path, build_log: Path) -> None:
    """The binaries the cells run, executable, checked against the build manifest; a GPU build that listed no
    device of its backend is refused in one line naming the build's log (``build_log``)."""
    with logged_to(log):
        try:
            check_build_devices(read_json(build_dir / "manifest.json"), build_dir, build_log)
        except SourceError as error:
            fail(f"llama.cpp install: {error}", log)
        manifest = install(build_dir, out)
        print("installed:", sorted(manifest["binaries"]))
