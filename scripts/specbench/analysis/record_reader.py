"""Reading cell records: every record version the table can read, as the current one.

Version 10 records say which engine served the cell (``provenance.engine``: llama.cpp, or an endpoint the user runs)
and which API answered (``response.api``: llama-server's ``completion``, or an endpoint's ``chat-completions``, whose
response holds the chat stream's own fields); version 9 records are read as version 10 served by llama.cpp through
``completion``.

Version 9 records keep the server's speculative counters before and after the request and the arrival of every
streamed chunk; version 8 records are read as version 9 without them (``server.metrics`` None, no chunk arrivals:
the columns made from them are empty). Version 8 records name the build's backend, the devices llama.cpp listed and
how the GPU was watched, the waits for a quiet machine between contended attempts, and the cell's ``prompt``
coordinate (the member of a task's prompt set); version 7 records are read as version 8 with the backend their
build's ``cuda`` flag says, no device list (not taken then), the watch that backend and their NVML state imply, no
waits (they made none) and prompt '' (every task had one prompt then; the path is the same). Version 7 records hold
only what was measured. Version 6 records hold the same raw facts in other places (the speculative log lines inside
``server.speculative``, the references inside ``task_check``, the wall times among the derived ``figures``), so they
are read as version 7 by moving those fields; what they derived themselves (the GSM8K score, the parsed settings) is
left out and computed again like any other record's. Older versions are refused."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from specbench.core.config.backends import backend_of, watch_of
from specbench.core.plan.cells import ONE_PROMPT
from specbench.core.records.version import RECORD_VERSION
from specbench.core.steps.files import read_json

READABLE_VERSIONS = (6, 7, 8, 9, RECORD_VERSION)
_TIMING = ("cell_wall_s", "server_ready_s", "request_wall_s", "loadavg_1m_at_end")


class RecordVersionError(ValueError):
    """A record of a version this table cannot read."""


def as_current(record: dict[str, Any]) -> dict[str, Any]:
    """The record in the current version's layout (a copy where it had to change); raise RecordVersionError for a
    version that cannot be read."""
    version = record.get("record_version")
    if version == RECORD_VERSION:
        return record
    if version == 9:
        return _from_9(record)
    if version == 8:
        return _from_9(_from_8(record))
    if version == 7:
        return _from_9(_from_8(_from_7(record)))
    if version != 6:
        raise RecordVersionError(f"record version {version} cannot be read (readable: {list(READABLE_VERSIONS)})")
    server = {k: v for k, v in record["server"].items() if k != "speculative"}
    server["log_lines"] = list((record["server"].get("speculative") or {}).get("lines") or [])
    check = record.get("task_check")
    upgraded = {k: v for k, v in record.items() if k not in ("task_check", "figures")}
    return _from_9(
        _from_8(
            _from_7(
                {
                    **upgraded,
                    "record_version": 7,
                    "server": server,
                    "references": [{"row": None, "reference": p["reference"]} for p in check["per_problem"]]
                    if check
                    else None,
                    "timing": {key: record["figures"].get(key) for key in _TIMING},
                }
            )
        )
    )


def _from_9(record: dict[str, Any]) -> dict[str, Any]:
    """A version 9 record as version 10: served by llama.cpp, answered by llama-server's ``/completion``."""
    return {
        **record,
        "record_version": RECORD_VERSION,
        "provenance": {**record["provenance"], "engine": "llama.cpp"},
        "response": {**record["response"], "api": "completion"},
    }


def _from_8(record: dict[str, Any]) -> dict[str, Any]:
    """A version 8 record as version 9: no counters read from the server, no chunk arrivals."""
    return {**record, "record_version": 9, "server": {**record["server"], "metrics": None}}


def _from_7(record: dict[str, Any]) -> dict[str, Any]:
    """A version 7 record as version 8: its build's backend, no llama.cpp device list, the watch it implies, no
    waits for a quiet machine, the one prompt coordinate."""
    llama = dict(record["provenance"].get("llama_cpp") or {})
    backend = backend_of(llama)
    llama = {**{k: v for k, v in llama.items() if k != "cuda"}, "backend": backend}
    contention = dict(record.get("contention") or {})
    contention.update(gpu_watch=watch_of(backend, contention.get("nvml") != "unavailable"), backend=backend)
    return {
        **record,
        "record_version": 8,
        "provenance": {**record["provenance"], "llama_cpp": llama},
        "machine": {**record.get("machine", {}), "backend": backend, "llama_devices": None},
        "contention": contention,
        "quiet_waits": [],
        "cell": {**record["cell"], "prompt": ONE_PROMPT},
    }


def load_records(paths: Sequence[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """Every cell file once, as (path, record in the current layout)."""
    return [(str(p), as_current(read_json(Path(p)))) for p in paths]
