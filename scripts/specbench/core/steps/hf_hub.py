"""A Hugging Face hub snapshot (model or dataset) through huggingface_hub, with one line that says what to do when the
hub cannot be reached (no internet, or ``HF_HUB_OFFLINE`` without the files in the cache)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path


class HubUnreachable(RuntimeError):
    """The hub could not be reached and the cache does not hold the snapshot; the message says what to do."""


def _what_to_do(repo: str, repo_type: str, revision: str, patterns: Sequence[str] | None, local: str) -> str:
    include = "".join(f" --include '{p}'" for p in patterns or ())
    kind = " --repo-type dataset" if repo_type == "dataset" else ""
    cache = os.environ.get("HF_HOME") or "~/.cache/huggingface"
    return (
        f"on a machine with internet, fill the cache (`HF_HOME={cache} hf download {repo}{kind} --revision "
        f"{revision}{include}`), bring that HF_HOME here and run with HF_HUB_OFFLINE=1; or {local}"
    )


def unreachable_errors() -> tuple[type[BaseException], ...]:
    """What huggingface_hub raises when the hub cannot be reached: its 'not in the cache either' error, offline mode,
    hf-xet's failed transfers, and the transport errors of its HTTP client (httpx2 in huggingface-hub 2.x, httpx
    before): a refused connection comes back as the first, a reset or broken one as one of the last."""
    from huggingface_hub import errors

    found: list[type[BaseException]] = [errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled]
    found.extend(getattr(errors, name) for name in ("XetDownloadError",) if hasattr(errors, name))
    for client in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(client).TransportError)
        except ImportError:
            continue
    return tuple(found)


def snapshot(
    repo: str, revision: str, *, repo_type: str = "model", patterns: Sequence[str] | None = None, local: str
) -> Path:
    """The snapshot folder of ``repo`` at ``revision`` (downloaded, or from the cache; HF_HOME, HF_TOKEN and
    HF_HUB_OFFLINE act through huggingface_hub). Raises HubUnreachable naming the repo, the cause and what to do
    instead (``local``: how to do without the hub, for this kind of input)."""
    from huggingface_hub import snapshot_download

    try:
        return Path(
            snapshot_download(
                repo_id=repo,
                revision=revision,
                repo_type=repo_type,
                allow_patterns=list(patterns) if patterns else None,
            )
        )
    except unreachable_errors() as error:
        offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False")
        detail = (str(error).strip().splitlines() or [""])[0][:160]
        if type(error).__name__ != "LocalEntryNotFoundError":  # its message names the transport error itself
            detail = f"{type(error).__name__}: {detail}"
        cause = (
            "HF_HUB_OFFLINE is set and the Hugging Face cache does not hold it"
            if offline
            else f"the Hugging Face hub could not be reached ({detail})"
        )
        raise HubUnreachable(
            f"{repo_type} {repo}@{revision}: {cause}. What to do: "
            f"{_what_to_do(repo, repo_type, revision, patterns, local)}"
        ) from None
