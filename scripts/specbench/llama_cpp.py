"""Obtain llama.cpp at a pinned commit (git or a checksummed source archive) and build it with CMake."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx

from .core.files import read_json, sha256_file, write_json_atomic

SOURCE_INFO = ".specbench-source.json"


class SourceError(RuntimeError):
    """The source could not be obtained or is not what the config pinned."""


def _run(argv: list[str], capture: bool = False, env: dict[str, str] | None = None) -> str:
    """Run a command, echoing it; its output streams to the log (or is returned with ``capture``)."""
    print("+", " ".join(argv), file=sys.stderr, flush=True)
    sys.stderr.flush()
    result = subprocess.run(argv, stdout=subprocess.PIPE if capture else sys.stderr, stderr=sys.stderr, text=True,
                            env=env)
    if result.returncode != 0:
        raise SourceError(f"command failed ({result.returncode}): {' '.join(argv)}")
    return result.stdout if capture else ""


def verify_sha256(path: Path, expected: str) -> str:
    """Check a file against the pinned sha256; return it."""
    actual = sha256_file(path)
    if actual != expected:
        raise SourceError(f"{path}: sha256 is {actual}, but the config pins {expected}")
    return actual


def fetch_pypi_sdist(package: str, version: str, sha256: str, dest: Path) -> None:
    """Download a PyPI source distribution with pip (no install, no dependencies) and verify it."""
    with tempfile.TemporaryDirectory() as tmp:
        _run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", package,
             "-d", tmp, f"{package}=={version}"]
        )
        files = sorted(Path(tmp).iterdir())
        if len(files) != 1:
            raise SourceError(f"pip download of {package}=={version} gave {[f.name for f in files]}")
        verify_sha256(files[0], sha256)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(files[0]), dest)


def fetch_archive(url: str, sha256: str, dest: Path) -> None:
    """Copy a local archive or download one over HTTPS, then verify its sha256."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    if url.startswith(("http://", "https://")):
        with httpx.stream("GET", url, follow_redirects=True, timeout=60.0) as response, open(partial, "wb") as out:
            response.raise_for_status()
            for block in response.iter_bytes(1 << 20):
                out.write(block)
    else:
        shutil.copyfile(Path(url).expanduser(), partial)
    verify_sha256(partial, sha256)
    partial.replace(dest)


def _extract(archive: Path, into: Path) -> None:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(into, filter="data")


def extract_source(archive: Path, sha256: str, subdir: str, dest: Path, origin: dict[str, Any]) -> dict[str, Any]:
    """Unpack the archive's llama.cpp tree into ``dest`` and record what it is (``origin``: the config's route)."""
    verify_sha256(archive, sha256)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        _extract(archive, Path(tmp))
        roots = [p for p in Path(tmp).iterdir()]
        top = roots[0] if len(roots) == 1 and roots[0].is_dir() else Path(tmp)
        tree = top / subdir if subdir else top
        if not (tree / "CMakeLists.txt").is_file():
            raise SourceError(f"{archive}: no CMakeLists.txt under '{subdir or '.'}' (set llama_cpp.source.subdir)")
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(tree), dest)
    info = {**origin, "sha256": sha256, "subdir": subdir, "commit": None}
    write_json_atomic(dest / SOURCE_INFO, info)
    return info


def git_checkout(url: str, commit: str, dest: Path, label: str | None = None) -> dict[str, Any]:
    """Clone ``url``, check out ``commit`` (short or full) and verify that HEAD is exactly that commit."""
    if dest.exists():
        shutil.rmtree(dest)
    _run(["git", "clone", "--no-checkout", "--filter=blob:none", url, str(dest)])
    full = _run(["git", "-C", str(dest), "rev-parse", "--verify", f"{commit}^{{commit}}"], capture=True).strip()
    _run(["git", "-C", str(dest), "checkout", "--detach", full])
    head = _run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture=True).strip()
    if not head.startswith(commit) or head != full:
        raise SourceError(f"checked out {head}, but the config pins {commit}")
    info = {"kind": "git", "url": url, "commit": head, "label": label, "sha256": None}
    write_json_atomic(dest / SOURCE_INFO, info)
    return info


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


def build(source: Path, work_dir: Path, out_dir: Path, cmake_args: list[str], cuda: bool, targets: list[str],
          jobs: int) -> dict[str, Any]:
    """Configure and build ``targets``; copy the binaries to ``out_dir/bin`` and write ``out_dir/manifest.json``."""
    argv = [*cmake_args, f"-DGGML_CUDA={'ON' if cuda else 'OFF'}"]
    started = time.monotonic()
    env = build_env(source)
    _run(["cmake", "-S", str(source), "-B", str(work_dir), *argv], env=env)
    _run(["cmake", "--build", str(work_dir), "--parallel", str(jobs), "--target", *targets], env=env)
    bin_dir = out_dir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    binaries = {}
    for target in targets:
        built = work_dir / "bin" / target
        if not built.is_file():
            raise SourceError(f"target {target} was not produced at {built}")
        shutil.copy2(built, bin_dir / target)
        binaries[target] = {"path": f"bin/{target}", "sha256": sha256_file(bin_dir / target)}
    version = ""
    if "llama-server" in targets:
        result = subprocess.run([str(bin_dir / "llama-server"), "--version"], capture_output=True, text=True)
        version = (result.stdout + result.stderr).strip()
    manifest = {
        "source": _read_source_info(source),
        "cmake_args": argv,
        "cuda": cuda,
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


def _read_source_info(source: Path) -> dict[str, Any]:
    return read_json(source / SOURCE_INFO)
