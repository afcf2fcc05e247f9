"""A Hugging Face hub snapshot (model or dataset) through huggingface_hub, with one line that says what to do when the
hub cannot be reached (no internet, or ``HF_HUB_OFFLINE`` without the files in the cache)."""

from __future__ import annotations

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


def snapshot(
    repo: str, revision: str, *, repo_type: str = "model", patterns: Sequence[str] | None = None, local: str
) -> Path:
    """The snapshot folder of ``repo`` at ``revision`` (downloaded, or from the cache; HF_HOME, HF_TOKEN and
    HF_HUB_OFFLINE act through huggingface_hub). Raises HubUnreachable naming the repo, the cause and what to do
    instead (``local``: how to do without the hub, for this kind of input)."""
    import httpx
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(
            snapshot_download(
                repo_id=repo,
                revision=revision,
                repo_type=repo_type,
                allow_patterns=list(patterns) if patterns else None,
            )
        )
    except (LocalEntryNotFoundError, httpx.TransportError) as error:
        offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False")
        cause = (
            "HF_HUB_OFFLINE is set and the Hugging Face cache does not hold it"
            if offline
            else f"the Hugging Face hub could not be reached ({str(error).splitlines()[0][:160]})"
        )
        raise HubUnreachable(
            f"{repo_type} {repo}@{revision}: {cause}. What to do: "
            f"{_what_to_do(repo, repo_type, revision, patterns, local)}"
        ) from None
