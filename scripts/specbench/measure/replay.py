"""A cell measured again by hand, outside the workflow: a fresh ``llama-server`` started with the argv the cell's record
holds (on a free port of its own, 127.0.0.1), the record's ``/completion`` body sent again, and what came back set
beside what the record says (the same tokens? the server's decode rate). bench/replay_cell.py prints it between
pipeline runs of the same cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from specbench.core.records.explanations import first_difference
from specbench.engines.client import stream_completion
from specbench.engines.server_process import start_server

_OWN_FLAGS = ("--host", "--port")  # the cell's address: the replay picks its own


def recorded_args(argv: list[str], workdir: Path) -> tuple[Path, list[str]]:
    """The binary and arguments of a recorded server argv without its address, paths made absolute against the
    working directory the workflow ran in."""

    def resolved(arg: str) -> str:
        path = workdir / arg
        return str(path) if not Path(arg).is_absolute() and path.exists() else arg

    args, skip = [], False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in _OWN_FLAGS:
            skip = True
        else:
            args.append(resolved(arg))
    return Path(resolved(argv[0])), args


def replay(record: dict[str, Any], workdir: Path, log: Path, timeout_s: float = 600.0) -> dict[str, Any]:
    """Serve the record's request once more on a server of its own argv; the tokens and rate beside the record's."""
    binary, args = recorded_args(record["server"]["argv"], workdir)
    body = record["request"]["completion"]
    env = ((record["server"].get("environment") or {}).get("set")) or None  # what its build set for it
    with start_server(binary, args, log, timeout_s, env=env) as server, httpx.Client(timeout=timeout_s) as client:
        response, _ = stream_completion(client, server.url, body)
    tokens, recorded = list(response.get("tokens", [])), list(record["response"]["tokens"])
    return {
        "cell": record["cell"]["label"],
        "argv": [str(binary), *args],
        "tokens_per_s": float(response["timings"]["predicted_per_second"]),
        "recorded_tokens_per_s": float(record["response"]["timings"]["predicted_per_second"]),
        "tokens": len(tokens),
        "recorded_tokens": len(recorded),
        "identical": tokens == recorded,
        "first_difference": first_difference(tokens, recorded),
    }
