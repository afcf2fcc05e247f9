"""What the preflight reads from this machine: free disk, a program's path, the CUDA version of an nvcc, the NVIDIA
GPUs (NVML), write access, what huggingface_hub's cache holds, the hub's answer about each planned download
(reachable, allowed, the files' sizes) and whether a git host answers, the network questions asked side by side with
a timeout each."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from specbench.preflight.writes import Download

# One try at the hub; a try that times out or fails in transport is made once more before 'unreachable', so a slow
# hub (or one dropped connection) is told from one that is down.
HUB_TIMEOUT_S = 10.0
HUB_TRIES = 2
# `git ls-remote` of a git host; asked beside the hub, so it adds no time to a preflight that asks the hub too.
GIT_TIMEOUT_S = 10.0
NVCC_TIMEOUT_S = 10.0


def existing_ancestor(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (where it would be created)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def mount_point(path: Path) -> Path:
    """The mount point of the filesystem ``path`` (or where it would be created) is on."""
    path = existing_ancestor(path).resolve()
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


def free_space(path: Path) -> tuple[str, float]:
    """The filesystem ``path`` goes to (its mount point) and its free bytes for this user."""
    return str(mount_point(path)), float(shutil.disk_usage(existing_ancestor(path)).free)


def writable(path: Path) -> bool:
    """Whether this user can write ``path`` (or create it: its nearest existing ancestor is a writable folder)."""
    target = existing_ancestor(path)
    return target.is_dir() and os.access(target, os.W_OK | os.X_OK)


def size_of(path: Path) -> float | None:
    """A file's size, or a folder's (its files, links followed), in bytes; None when absent."""
    if path.is_file():
        return float(path.stat().st_size)
    if path.is_dir():
        return float(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()))
    return None


def locate(
    names: Sequence[str], paths: Sequence[str] = (), env: str | None = None, given: Sequence[str] = ()
) -> str | None:
    """Where a program is: a path the build is given (None when that one is not there: CMake would fail), the file
    an environment variable names, one of ``names`` on PATH, or a known path."""
    if given:
        return given[0] if os.access(given[0], os.X_OK) else None
    if env and os.environ.get(env):
        named = os.environ[env].split()[0]
        return shutil.which(named) or (named if os.access(named, os.X_OK) else None)
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return next((p for p in paths if os.access(p, os.X_OK)), None)


def hub_cache() -> Path:
    """huggingface_hub's cache folder (HF_HUB_CACHE, HF_HOME)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def xet_cache() -> Path:
    """Where hf-xet keeps its chunk cache (HF_XET_CACHE, under HF_HOME)."""
    from huggingface_hub import constants

    return Path(constants.HF_XET_CACHE)


def xet_limit() -> float:
    """The hf-xet chunk cache's size limit: HF_XET_CHUNK_CACHE_SIZE_BYTES, its 10 GB default otherwise."""
    from specbench.preflight.writes import XET_CHUNK_CACHE_BYTES

    try:
        return float(os.environ["HF_XET_CHUNK_CACHE_SIZE_BYTES"])
    except (KeyError, ValueError):
        return XET_CHUNK_CACHE_BYTES


def repo_folder(cache: Path, download: Download) -> Path:
    """A repository's folder in huggingface_hub's cache."""
    return cache / f"{download.repo_type}s--{download.repo.replace('/', '--')}"


def in_cache(cache: Path, download: Download) -> bool:
    """Whether the cache holds a snapshot of the download's revision (a commit, or a branch it has resolved)."""
    folder = repo_folder(cache, download)
    commit = download.revision
    ref = folder / "refs" / download.revision
    if ref.is_file():
        commit = ref.read_text(encoding="utf-8").strip()
    return (folder / "snapshots" / commit).is_dir()


def cached_bytes(cache: Path, download: Download) -> float:
    """What the cache already holds of a repository (its blobs, complete or not)."""
    blobs = repo_folder(cache, download) / "blobs"
    return float(sum(p.stat().st_size for p in blobs.iterdir() if p.is_file())) if blobs.is_dir() else 0.0


def offline() -> bool:
    """Whether HF_HUB_OFFLINE forbids huggingface_hub to use the network."""
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() not in ("", "0", "false", "no", "off")


def token_set() -> bool:
    """Whether huggingface_hub has a token (HF_TOKEN, or one saved by `hf auth login`)."""
    from huggingface_hub import get_token

    return get_token() is not None


@dataclass(frozen=True)
class HubAnswer:
    """What the hub said about one download: 'ok' (with the files' total size), 'denied' (private or gated, no
    token with access), 'no-revision', 'unreachable'; ``detail`` is the error's first line."""

    status: str
    size: float | None = None
    detail: str = ""


def ask_hub(
    download: Download, timeout_s: float = HUB_TIMEOUT_S, tries: int = HUB_TRIES, endpoint: str | None = None
) -> HubAnswer:
    """The hub's file list of a download's revision (sizes included), asked again while it is 'unreachable' (a
    timeout, a transport or server error), ``tries`` times in all; ``endpoint``: huggingface_hub's (HF_ENDPOINT) if
    None."""
    answer = HubAnswer("unreachable", detail="not asked")
    for _ in range(tries):
        answer = _ask_hub_once(download, timeout_s, endpoint)
        if answer.status != "unreachable":
            return answer
    return replace(answer, detail=f"{answer.detail} ({_tries(tries)} of {timeout_s:g} s each)")


def _tries(tries: int) -> str:
    return f"{tries} {'try' if tries == 1 else 'tries'}"


def _ask_hub_once(download: Download, timeout_s: float, endpoint: str | None) -> HubAnswer:
    """One request for the file list of a download's revision."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        info = HfApi(endpoint=endpoint).repo_info(
            download.repo,
            revision=download.revision,
            repo_type=download.repo_type,
            files_metadata=True,
            timeout=timeout_s,
        )
    except RevisionNotFoundError as error:
        return HubAnswer("no-revision", detail=_first_line(error))
    except RepositoryNotFoundError as error:  # also gated (GatedRepoError) and private repositories
        return HubAnswer("denied", detail=_first_line(error))
    except HfHubHTTPError as error:
        return HubAnswer("unreachable", detail=_first_line(error))
    except Exception as error:  # transport errors (httpx, httpx2), timeouts, DNS: the hub is not there
        return HubAnswer("unreachable", detail=f"{type(error).__name__}: {_first_line(error)}")
    sizes = [s.size for s in info.siblings or [] if s.size is not None]
    return HubAnswer("ok", float(sum(sizes)) if sizes else None)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]


def ask_hub_all(
    downloads: Sequence[Download],
    ask: Callable[[Download], HubAnswer] = ask_hub,
    deadline_s: float = HUB_TIMEOUT_S * HUB_TRIES + 1.0,
) -> dict[Download, HubAnswer]:
    """Every download's answer, asked side by side; one that has not answered by the deadline (every try's timeout,
    and a second) is 'unreachable'."""
    if not downloads:
        return {}
    pool = ThreadPoolExecutor(max_workers=len(downloads), thread_name_prefix="specbench-preflight-hub")
    futures = {d: pool.submit(ask, d) for d in downloads}
    wait(futures.values(), timeout=deadline_s)
    pool.shutdown(wait=False, cancel_futures=True)
    return {
        d: f.result() if f.done() else HubAnswer("unreachable", detail=f"no answer within {deadline_s:g} s")
        for d, f in futures.items()
    }


def gpus() -> Mapping[str, Any]:
    """NVML's view of the NVIDIA GPUs (specbench.contention.nvml.device_info: 'nvml' 'ok' or 'unavailable')."""
    from specbench.contention.nvml import device_info

    return device_info()


_NVCC_RELEASE = re.compile(r"^Cuda compilation tools, release (\d+)\.(\d+)\b", re.MULTILINE)


def nvcc_release(text: str) -> str | None:
    """The CUDA version in ``nvcc --version``'s output ('Cuda compilation tools, release 12.4, V12.4.131' -> '12.4');
    None when it names none."""
    match = _NVCC_RELEASE.search(text)
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def nvcc_version(nvcc: str, timeout_s: float = NVCC_TIMEOUT_S) -> str | None:
    """The CUDA version of the toolkit whose nvcc is at ``nvcc`` (``nvcc --version``); None when it does not run or
    names no version."""
    try:
        result = subprocess.run(
            [nvcc, "--version"], capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return nvcc_release(result.stdout) if result.returncode == 0 else None


@dataclass(frozen=True)
class GitAnswer:
    """Whether a git host answered ``git ls-remote`` about a repository; ``detail``: git's error, or the timeout."""

    ok: bool
    detail: str = ""


def ask_git(url: str, timeout_s: float = GIT_TIMEOUT_S) -> GitAnswer:
    """``git ls-remote <url> HEAD`` (one ref, however many the repository has), never waiting for a password: no
    terminal (a session of its own) and GIT_TERMINAL_PROMPT=0; git and its helpers are killed at the timeout."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        process = subprocess.Popen(
            ["git", "ls-remote", url, "HEAD"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        return GitAnswer(False, f"git did not run: {error}")
    try:
        _, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return GitAnswer(False, f"no answer within {timeout_s:g} s")
    if process.returncode == 0:
        return GitAnswer(True)
    return GitAnswer(False, _git_error(stderr) or f"git ls-remote exited with {process.returncode}")


def _git_error(stderr: str) -> str:
    """git's first 'fatal:' line (else its first line), without the prefix."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = next((line for line in lines if line.startswith("fatal:")), lines[0] if lines else "")
    return fatal.removeprefix("fatal:").strip()[:200]


def ask_git_all(urls: Sequence[str], ask: Callable[[str], GitAnswer] = ask_git) -> dict[str, GitAnswer]:
    """Every repository's answer, asked side by side (each ask has its own timeout)."""
    if not urls:
        return {}
    with ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="specbench-preflight-git") as pool:
        return dict(zip(urls, pool.map(ask, urls), strict=True))
